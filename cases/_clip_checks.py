"""Case-specific checks of the clip_empty_min family, run inside each cell's worker.

Imports only the standard library, onnx and the in-cell package (compat.cell, staged
into every cell), and stays valid on Python 3.9.
"""

from __future__ import annotations

from typing import Any

import onnx
import onnx.defs
import onnx.shape_inference
from onnx import helper

from compat.cell.compare import tensor_shape  # in the cell: the staged compat.cell


def infer_each_node(case: Any) -> str:
    """`onnx.shape_inference.infer_node_outputs` on every node, fed the types that
    graph-level inference knows for the node's *present* inputs (an omitted
    optional input, written "", has no type), must agree with graph-level inference."""
    model = case.model
    opset = max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    graph = onnx.shape_inference.infer_shapes(model).graph
    types: dict[str, Any] = {}
    for init in graph.initializer:
        types[init.name] = helper.make_tensor_type_proto(init.data_type, list(init.dims))
    for info in list(graph.input) + list(graph.value_info) + list(graph.output):
        types[info.name] = info.type
    notes = []
    for node in graph.node:
        schema = onnx.defs.get_schema(node.op_type, opset, node.domain)
        present = {name: types[name] for name in node.input if name}
        spelled = f"{node.op_type}({', '.join(repr(n) for n in node.input)})"
        try:
            outputs = onnx.shape_inference.infer_node_outputs(schema, node, present)
        except KeyError as exc:
            raise AssertionError(
                f"infer_node_outputs on {spelled} raised KeyError {exc}: the omitted optional "
                f"input is looked up as a value name (onnx {onnx.__version__})"
            ) from None
        for name in node.output:
            if not name:
                continue
            if name not in outputs:
                raise AssertionError(f"infer_node_outputs on {spelled}: nothing for {name!r}")
            got, want = tensor_shape(outputs[name]), tensor_shape(types[name])
            if got != want:
                raise AssertionError(
                    f"infer_node_outputs on {spelled} inferred {got} for {name!r}, "
                    f"graph-level inference {want}"
                )
            notes.append(f"{spelled} -> {name}: {got}")
    return "node-level inference agrees with graph-level: " + "; ".join(notes)
