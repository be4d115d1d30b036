"""What this venv's onnx reference evaluator and onnxruntime do with the models of the
qdq_reference_opset, batchnorm_legacy_opset, global_max_pool_3d and
lstm_cell_state_output families, asked without onnx-compat: the ground truth of
tests/test_family_truth_reference.py.

    python reference_limits.py FOLDER

FOLDER holds, per case, CASE.onnx (the bytes the matrix ran) and CASE.npz (its inputs
as `in_NAME`, numpy's expected outputs as `out_NAME`). For each case it asks:

- reference: onnx.reference.ReferenceEvaluator(model).run(None, inputs) equals numpy's
  outputs (same shape, allclose at rtol 1e-5, atol 1e-6): "pass"; a different output or
  an exception: "fail"; "No implementation for operator" (the evaluator lacks the op
  version): "skip".
- ort_run: an onnxruntime CPU session at each graph optimization level (disabled,
  basic, extended, all) gives numpy's outputs: "pass"; any level differing or raising:
  "fail".

Prints one JSON line: {"onnx": ..., "onnxruntime": ..., "results": {case: {check:
{"verdict": ..., "detail": ...}}}}. Imports only onnx, onnxruntime and numpy.
"""

import json
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx.reference import ReferenceEvaluator

RTOL, ATOL = 1e-5, 1e-6
LEVELS = {
    "disabled": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
    "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
    "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
    "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
}


def differs(names, got, expected):
    """How the outputs differ from numpy's, or "" when they match."""
    for name, value in zip(names, got, strict=False):
        want = expected[name]
        value = np.asarray(value)
        if value.shape != want.shape:
            return f"{name} has shape {list(value.shape)}, expected {list(want.shape)}"
        if not np.allclose(value, want, rtol=RTOL, atol=ATOL, equal_nan=True):
            return f"{name} differs by {float(np.max(np.abs(value - want))):g} at most"
    return ""


def reference(model, inputs, expected):
    names = [o.name for o in model.graph.output]
    try:
        got = ReferenceEvaluator(model).run(None, inputs)
    except Exception as exc:
        text = f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"
        verdict = "skip" if "No implementation for operator" in text else "fail"
        return {"verdict": verdict, "detail": text[:300]}
    problem = differs(names, got, expected)
    return {"verdict": "fail" if problem else "pass", "detail": problem}


def ort_run(path, inputs, expected):
    problems = []
    for level, value in LEVELS.items():
        options = ort.SessionOptions()
        options.graph_optimization_level = value
        try:
            session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
            names = [o.name for o in session.get_outputs()]
            problem = differs(names, session.run(None, inputs), expected)
        except Exception as exc:
            problem = f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]}"
        if problem:
            problems.append(f"{level}: {problem}")
    return {"verdict": "fail" if problems else "pass", "detail": "; ".join(problems)}


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
