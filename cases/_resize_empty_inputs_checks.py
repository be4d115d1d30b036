"""Case-specific checks of resize_empty_inputs: a model both packages must reject.

Runs inside every cell: standard library, onnx, onnxruntime and numpy only, Python 3.9.
"""

from __future__ import annotations

from typing import Any


def checker_rejects(case: Any) -> str:
    """Resize-11 declares roi and scales `Single`: an empty name must fail the checker."""
    import onnx
    import onnx.checker
    import onnx.shape_inference

    rejections = (onnx.checker.ValidationError, onnx.shape_inference.InferenceError)
    try:
        onnx.checker.check_model(case.model, full_check=True)
    except rejections as exc:
        first = str(exc).strip().splitlines()[0]
        return f"onnx {onnx.__version__} rejects it: {first}"
    raise AssertionError(
        f"onnx {onnx.__version__} accepts Resize-11 with roi and scales written as ''"
    )


def ort_rejects(case: Any) -> str:
    """onnxruntime must refuse to load it too, rather than guess what '' means."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 4
    try:
        ort.InferenceSession(case.model_path, options, providers=["CPUExecutionProvider"])
    except Exception as exc:
        text = " ".join(str(exc).split())
        return f"onnxruntime {ort.__version__} rejects it: {text[:300]}"
    raise AssertionError(
        f"onnxruntime {ort.__version__} loads Resize-11 with roi and scales written as ''"
    )
