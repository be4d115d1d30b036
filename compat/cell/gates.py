"""Version gates: skip (at the release's limit, protocol.LIMIT) when the installed onnx
cannot know a model."""

from __future__ import annotations

from compat.cell.verdict import beyond


def model_opset(model):
    for opset in model.opset_import:
        if opset.domain in ("", "ai.onnx"):
            return opset.version
    return 0


def require_onnx_support(model):
    """Skip when the installed onnx cannot know this model's IR or opset."""
    import onnx
    import onnx.defs

    if model.ir_version > onnx.IR_VERSION:
        raise beyond(
            "IR version %d > max %d of onnx %s"
            % (model.ir_version, onnx.IR_VERSION, onnx.__version__)
        )
    opset = model_opset(model)
    if opset > onnx.defs.onnx_opset_version():
        raise beyond(
            "opset %d > max %d of onnx %s"
            % (opset, onnx.defs.onnx_opset_version(), onnx.__version__)
        )
