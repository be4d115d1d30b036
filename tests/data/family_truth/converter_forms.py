"""What this venv's onnx and onnxruntime do with the models of the onehot_forms and
optimizer_numerics families, asked without onnx-compat: the ground truth of
tests/test_family_truth_converters.py.

    python converter_forms.py FOLDER

FOLDER holds, per case, CASE.onnx (the bytes the matrix ran), CASE.npz (its inputs as
`in_NAME`, numpy's expected outputs as `out_NAME`) and CASE.json (`checks`: the checks
the case lists, `rtol`, `atol`, `output_shapes`, `suspects`: optimizer names to try
disabling). For each listed check it asks:

- shape_inference: strict onnx.shape_inference.infer_shapes, then each declared output
  shape equals the inferred one (a dim's value, or its name when it has none).
- reference: ReferenceEvaluator(model).run equals numpy's outputs within the case's
  tolerance ("No implementation for operator": "skip"); reference_strict: the same with
  numpy's DeprecationWarnings as errors.
- ort_run: a CPU session at each level (disabled, basic, extended, all) equals numpy's
  outputs within the tolerance; for each level that differs, the suspect whose disabling
  (`disabled_optimizers=[name]`) makes it match is named `responsible`.
- levels_against_disabled: every level's outputs equal disabled's bit for bit, or
  disabling a suspect makes them so (named in `responsible`); otherwise "fail".

Prints one JSON line: {"onnx": ..., "onnxruntime": ..., "numpy": ..., "results": {case:
{check: {"verdict": ..., "detail": ..., "responsible": [...]}}}}. Imports only onnx,
onnxruntime and numpy.
"""

import json
import sys
import warnings
from pathlib import Path

import numpy as np
import onnx
import onnx.shape_inference
import onnxruntime as ort
from onnx.reference import ReferenceEvaluator

LEVELS = {
    "disabled": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
    "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
    "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
    "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
}


def first_line(exc):
    return f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]}"


def differs(names, got, expected, rtol, atol):
    """How the outputs differ from `expected`, or "" when they match."""
    for name, value in zip(names, got, strict=False):
        want = expected[name]
        value = np.asarray(value)
        if value.shape != want.shape:
            return f"{name} has shape {list(value.shape)}, expected {list(want.shape)}"
        if not np.allclose(value, want, rtol=rtol, atol=atol, equal_nan=True):
            return f"{name} differs by {float(np.max(np.abs(value - want))):g} at most"
    return ""


def shape_inference(model, spec):
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    except Exception as exc:
        return {"verdict": "fail", "detail": first_line(exc)}
    known = {v.name: v for v in list(inferred.graph.output) + list(inferred.graph.value_info)}
    for name, want in spec["output_shapes"].items():
        dims = known[name].type.tensor_type.shape.dim
        got = [d.dim_value if d.HasField("dim_value") else d.dim_param or None for d in dims]
        if got != want:
            return {"verdict": "fail", "detail": f"{name} inferred {got}, expected {want}"}
    return {"verdict": "pass", "detail": ""}


def reference(model, inputs, expected, spec, strict):
    names = [o.name for o in model.graph.output]
    try:
        with warnings.catch_warnings():
            if strict:
                warnings.simplefilter("error", DeprecationWarning)
            got = ReferenceEvaluator(model).run(None, inputs)
    except Exception as exc:
        text = first_line(exc)
        verdict = "skip" if "No implementation for" in text else "fail"
        return {"verdict": verdict, "detail": text}
    problem = differs(names, got, expected, spec["rtol"], spec["atol"])
    return {"verdict": "fail" if problem else "pass", "detail": problem}


def run(path, inputs, level, disabled=()):
    options = ort.SessionOptions()
    options.graph_optimization_level = LEVELS[level]
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(
        str(path), options, providers=["CPUExecutionProvider"], disabled_optimizers=list(disabled)
    )
    return [o.name for o in session.get_outputs()], session.run(None, inputs)


def explained(path, inputs, level, want, tolerance, suspects):
    """The suspects whose disabling alone makes `level` give `want` within `tolerance`."""
    found = []
    for name in suspects:
        names, got = run(path, inputs, level, (name,))
        if not differs(names, got, want, *tolerance):
            found.append(name)
    return found


def ort_run(path, inputs, expected, spec):
    problems, responsible = [], []
    tolerance = (spec["rtol"], spec["atol"])
    for level in LEVELS:
        try:
            names, got = run(path, inputs, level)
        except Exception as exc:
            problems.append(f"{level}: {first_line(exc)}")
            continue
        problem = differs(names, got, expected, *tolerance)
        if problem:
            problems.append(f"{level}: {problem}")
            found = explained(path, inputs, level, expected, tolerance, spec["suspects"])
            responsible.extend(n for n in found if n not in responsible)
    verdict = "fail" if problems else "pass"
    return {"verdict": verdict, "detail": "; ".join(problems), "responsible": responsible}


def levels_against_disabled(path, inputs, spec):
    names, base = run(path, inputs, "disabled")
    want = dict(zip(names, base, strict=False))
    said, responsible, verdict = [], [], "pass"
    for level in list(LEVELS)[1:]:
        problem = differs(*run(path, inputs, level), want, 0.0, 0.0)
        if not problem:
            continue
        found = explained(path, inputs, level, want, (0.0, 0.0), spec["suspects"])
        responsible.extend(n for n in found if n not in responsible)
        verdict = verdict if found else "fail"
        said.append(f"{level}: {problem}")
    return {"verdict": verdict, "detail": "; ".join(said), "responsible": responsible}


CHECKS = ("shape_inference", "reference", "reference_strict", "ort_run", "levels_against_disabled")


def answer(check, path, model, data, spec):
    """What the releases of this venv answer to `check` on one case."""
    inputs, expected = data
    if check == "shape_inference":
        return shape_inference(model, spec)
    if check in ("reference", "reference_strict"):
        return reference(model, inputs, expected, spec, strict=check == "reference_strict")
    if check == "ort_run":
        return ort_run(path, inputs, expected, spec)
    return levels_against_disabled(path, inputs, spec)


def main(folder):
    results = {}
    for path in sorted(folder.glob("*.onnx")):
        arrays = np.load(path.with_suffix(".npz"))
        inputs = {k[3:]: arrays[k] for k in arrays.files if k.startswith("in_")}
        expected = {k[4:]: arrays[k] for k in arrays.files if k.startswith("out_")}
        spec = json.loads(path.with_suffix(".json").read_text())
        model = onnx.load(str(path))
        results[path.stem] = {
            check: answer(check, path, model, (inputs, expected), spec)
            for check in spec["checks"]
            if check in CHECKS
        }
    versions = {"onnx": onnx.__version__, "onnxruntime": ort.__version__}
    print(json.dumps({**versions, "numpy": np.__version__, "results": results}))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
