"""What this venv's onnx reference evaluator and onnxruntime do with the models of the
quantize_rounding_ties family, asked without onnx-compat: the ground truth of
tests/test_family_truth_quantize.py.

    python quantize_ties.py FOLDER

FOLDER holds, per case, CASE.onnx (the bytes the matrix ran) and CASE.npz (its inputs
as `in_NAME`, numpy's expected outputs as `out_NAME`: x / scale rounded half to even,
plus the zero point, saturated). For each case it asks:

- reference: onnx.reference.ReferenceEvaluator(model).run(None, inputs) gives numpy's
  outputs exactly (same dtype, shape and integers): "pass"; anything else, an exception
  included: "fail". Its outputs are reported too (`got`), so a test can say how a tie
  was rounded.
- ort_run: an onnxruntime CPU session at each graph optimization level (disabled,
  basic, extended, all) gives numpy's outputs exactly: "pass"; any level differing or
  raising: "fail". `got` holds the outputs at level `disabled`.

Prints one JSON line: {"onnx": ..., "onnxruntime": ..., "results": {case: {check:
{"verdict": ..., "detail": ..., "got": {output: [ints] or null}}}}}. Imports only onnx,
onnxruntime and numpy.
"""

import json
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx.reference import ReferenceEvaluator

LEVELS = {
    "disabled": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
    "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
    "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
    "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
}


def differs(names, got, expected):
    """How the outputs differ from numpy's, or "" when they are the same integers."""
    for name, value in zip(names, got, strict=False):
        want = expected[name]
        value = np.asarray(value)
        if value.dtype != want.dtype or value.shape != want.shape:
            shapes = f"{value.dtype}{list(value.shape)}, expected {want.dtype}{list(want.shape)}"
            return f"{name} is {shapes}"
        if not np.array_equal(value, want):
            bad = int(np.sum(value != want))
            return f"{name} differs at {bad} of {value.size}: {value.ravel().tolist()}"
    return ""


def _outputs(names, got):
    return {
        name: np.asarray(value).ravel().tolist() for name, value in zip(names, got, strict=False)
    }


def _failed(exc):
    return f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]}"


def reference(model, inputs, expected):
    names = [o.name for o in model.graph.output]
    try:
        got = ReferenceEvaluator(model).run(None, inputs)
    except Exception as exc:
        return {"verdict": "fail", "detail": _failed(exc), "got": None}
    problem = differs(names, got, expected)
    return {
        "verdict": "fail" if problem else "pass",
        "detail": problem,
        "got": _outputs(names, got),
    }


def ort_run(path, inputs, expected):
    problems, seen = [], None
    for level, value in LEVELS.items():
        options = ort.SessionOptions()
        options.graph_optimization_level = value
        try:
            session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
            names = [o.name for o in session.get_outputs()]
            got = session.run(None, inputs)
            problem = differs(names, got, expected)
            seen = seen if seen is not None else _outputs(names, got)
        except Exception as exc:
            problem = _failed(exc)
        if problem:
            problems.append(f"{level}: {problem}")
    return {"verdict": "fail" if problems else "pass", "detail": "; ".join(problems), "got": seen}


def main(folder):
    results = {}
    for path in sorted(folder.glob("*.onnx")):
        arrays = np.load(path.with_suffix(".npz"))
        inputs = {k[3:]: arrays[k] for k in arrays.files if k.startswith("in_")}
        expected = {k[4:]: arrays[k] for k in arrays.files if k.startswith("out_")}
        model = onnx.load(str(path))
        results[path.stem] = {
            "reference": reference(model, inputs, expected),
            "ort_run": ort_run(path, inputs, expected),
        }
    print(
        json.dumps({"onnx": onnx.__version__, "onnxruntime": ort.__version__, "results": results})
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
