"""The writer × reader check: runs inside a cell (standard library, onnx, onnxruntime,
numpy only). The model is written here, by this cell's onnx with its defaults."""

from __future__ import annotations

from typing import Any

import numpy as np


def check_default_model(case: Any) -> str:
    """This cell's onnx writes a one-node model with `helper.make_model`'s defaults (its
    IR version and its newest opset); this cell's onnxruntime must load and run it.
    A refusal past the runtime's limits is a skip that says which limit; a refusal
    within them, or a wrong output, is a failure."""
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper

    from compat.cell.session import ort_limits
    from compat.cell.verdict import Verdict, fail, one_line

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "writer", [x], [y])
    model = helper.make_model(graph)  # the writer's defaults, nothing set by hand
    opset = max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    wrote = f"onnx {onnx.__version__} writes IR {model.ir_version}, opset {opset}"
    try:
        session = ort.InferenceSession(
            model.SerializeToString(), providers=["CPUExecutionProvider"]
        )
    except Exception as exc:
        max_ir, max_opset = ort_limits()
        if model.ir_version > max_ir or opset > max_opset:
            raise Verdict(
                "skip",
                "",
                f"{wrote}; onnxruntime {ort.__version__} reads up to IR {max_ir}, "
                f"opset {max_opset}",
            ) from None
        refused = f"{wrote}; onnxruntime {ort.__version__} refuses it: {one_line(exc)}"
        raise fail("load", refused) from None
    got = session.run(None, {"x": np.array([-1.0, 0.0, 2.0], dtype=np.float32)})[0]
    if got.tolist() != [0.0, 0.0, 2.0]:
        raise fail(
            "compare",
            f"{wrote}; onnxruntime {ort.__version__} computes Relu = {got.tolist()!r}",
        )
    return f"{wrote}; onnxruntime {ort.__version__} loads and runs it"
