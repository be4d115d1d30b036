"""Rewrites of how the graph computes, spelled another legal way: Constant nodes and
initializers and the attribute a constant's value sits in, float16 values' storage,
optional inputs omitted or written "", a node outlined into a model-local function or
such functions inlined. The catalogue that names them is compat/corpus/rewrites.py;
rewrites of what the model only declares live in compat/corpus/rewrite_declarations.py.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from compat.corpus.rewrite_base import Applied, copied, label, top_opset


def constant_value_attributes(model: onnx.ModelProto) -> Applied | None:
    """Constant(value=1-D int64 / float tensor) -> Constant(value_ints / value_floats)."""
    copy = copied(model)
    where = []
    if top_opset(model) < 12:  # value_ints and friends came with opset 12
        return None
    for index, node in enumerate(copy.graph.node):
        if node.op_type != "Constant" or node.domain not in ("", "ai.onnx"):
            continue
        attrs = {a.name: a for a in node.attribute}
        if set(attrs) != {"value"}:
            continue
        array = numpy_helper.to_array(attrs["value"].t)
        if array.ndim != 1:
            continue
        if array.dtype == np.int64:
            new = helper.make_attribute("value_ints", [int(v) for v in array])
        elif array.dtype == np.float32:
            new = helper.make_attribute("value_floats", [float(v) for v in array])
        else:
            continue
        del node.attribute[:]
        node.attribute.append(new)
        where.append(label(node, index))
    return Applied(copy, tuple(where)) if where else None


def constant_value_tensor(model: onnx.ModelProto) -> Applied | None:
    """Constant(value_ints / value_floats / value_int / value_float) -> Constant(value=)."""
    copy = copied(model)
    where = []
    kinds = {
        "value_ints": np.int64,
        "value_floats": np.float32,
        "value_int": np.int64,
        "value_float": np.float32,
    }
    for index, node in enumerate(copy.graph.node):
        if node.op_type != "Constant" or len(node.attribute) != 1:
            continue
        attr = node.attribute[0]
        if attr.name not in kinds:
            continue
        value = helper.get_attribute_value(attr)
        array = np.array(value, dtype=kinds[attr.name])
        del node.attribute[:]
        node.attribute.append(helper.make_attribute("value", numpy_helper.from_array(array)))
        where.append(label(node, index))
    return Applied(copy, tuple(where)) if where else None


def initializers_as_constants(model: onnx.ModelProto) -> Applied | None:
    """Every initializer that is not also a graph input -> a Constant node."""
    copy = copied(model)
    inputs = {i.name for i in copy.graph.input}
    moved = [t for t in copy.graph.initializer if t.name not in inputs]
    if not moved:
        return None
    nodes = [helper.make_node("Constant", [], [t.name], value=t) for t in moved]
    keep = [t for t in copy.graph.initializer if t.name in inputs]
    del copy.graph.initializer[:]
    copy.graph.initializer.extend(keep)
    old = list(copy.graph.node)
    del copy.graph.node[:]
    copy.graph.node.extend(nodes + old)
    return Applied(copy, tuple(t.name for t in moved))


def constants_as_initializers(model: onnx.ModelProto) -> Applied | None:
    """Every top-level Constant(value=tensor) node -> an initializer."""
    copy = copied(model)
    where = []
    kept = []
    for node in copy.graph.node:
        attrs = [a.name for a in node.attribute]
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx") and attrs == ["value"]:
            tensor = onnx.TensorProto()
            tensor.CopyFrom(node.attribute[0].t)
            tensor.name = node.output[0]
            copy.graph.initializer.append(tensor)
            where.append(node.output[0])
        else:
            kept.append(node)
    if not where:
        return None
    del copy.graph.node[:]
    copy.graph.node.extend(kept)
    return Applied(copy, tuple(where))


def _schema(node: onnx.NodeProto, opset: int) -> onnx.defs.OpSchema | None:
    try:
        return onnx.defs.get_schema(node.op_type, opset, node.domain)
    except Exception:
        return None


def optional_input_explicit_empty(model: onnx.ModelProto) -> Applied | None:
    """A node whose next input is optional and omitted gets it as an explicit empty
    name: `Split(x)` -> `Split(x, "")`, `Squeeze(x)` -> `Squeeze(x, "")`."""
    copy = copied(model)
    where = []
    opset = top_opset(model)
    for index, node in enumerate(copy.graph.node):
        schema = _schema(node, opset)
        if schema is None or len(node.input) >= len(schema.inputs):
            continue
        formal = schema.inputs[len(node.input)]
        if formal.option != onnx.defs.OpSchema.FormalParameterOption.Optional:
            continue
        node.input.append("")
        where.append(label(node, index))
    return Applied(copy, tuple(where)) if where else None


def optional_input_omitted(model: onnx.ModelProto) -> Applied | None:
    """Trailing explicit empty inputs are dropped: `Conv(x, W, "")` -> `Conv(x, W)`."""
    copy = copied(model)
    where = []
    for index, node in enumerate(copy.graph.node):
        if node.input and node.input[-1] == "":
            names = list(node.input)
            while names and names[-1] == "":
                names.pop()
            del node.input[:]
            node.input.extend(names)
            where.append(label(node, index))
    return Applied(copy, tuple(where)) if where else None


def float16_int32_data(model: onnx.ModelProto) -> Applied | None:
    """float16 initializers stored in raw_data -> the typed field, int32_data."""
    copy = copied(model)
    where = []
    for tensor in copy.graph.initializer:
        if tensor.data_type == TensorProto.FLOAT16 and tensor.HasField("raw_data"):
            bits = np.frombuffer(tensor.raw_data, dtype=np.uint16)
            tensor.ClearField("raw_data")
            tensor.int32_data.extend(int(b) for b in bits)
            where.append(tensor.name)
    return Applied(copy, tuple(where)) if where else None


def float16_raw_data(model: onnx.ModelProto) -> Applied | None:
    """float16 initializers stored in int32_data -> raw_data."""
    copy = copied(model)
    where = []
    for tensor in copy.graph.initializer:
        if tensor.data_type == TensorProto.FLOAT16 and len(tensor.int32_data):
            bits = np.array(list(tensor.int32_data), dtype=np.uint16)
            tensor.ClearField("int32_data")
            tensor.raw_data = bits.tobytes()
            where.append(tensor.name)
    return Applied(copy, tuple(where)) if where else None


def functions_inlined(model: onnx.ModelProto) -> Applied | None:
    """Model-local functions inlined into the graph (onnx.inliner)."""
    if not model.functions:
        return None
    from onnx import inliner

    try:
        inlined = inliner.inline_local_functions(model)
    except Exception:
        return None
    return Applied(inlined, tuple(f.name for f in model.functions))


def node_outlined(model: onnx.ModelProto) -> Applied | None:
    """The first default-domain node without subgraphs, outlined into a model-local
    function called in its place."""
    if model.ir_version < 8 or top_opset(model) < 13:
        return None  # model-local functions came with IR version 8
    copy = copied(model)
    for index, node in enumerate(copy.graph.node):
        if node.domain not in ("", "ai.onnx") or node.op_type == "Constant":
            continue
        if any(
            a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
            for a in node.attribute
        ):
            continue
        if "" in node.input or not node.output:
            continue
        inputs = [f"i{k}" for k in range(len(node.input))]
        outputs = [f"o{k}" for k in range(len(node.output))]
        body = helper.make_node(node.op_type, inputs, outputs)
        body.attribute.extend(node.attribute)
        domain = "compat.outlined"
        function = helper.make_function(
            domain,
            f"outlined_{node.op_type}",
            inputs,
            outputs,
            [body],
            [helper.make_opsetid("", top_opset(model))],
        )
        call = helper.make_node(
            function.name, list(node.input), list(node.output), name=node.name, domain=domain
        )
        copy.graph.node.remove(node)
        copy.graph.node.insert(index, call)
        copy.functions.append(function)
        copy.opset_import.append(helper.make_opsetid(domain, 1))
        return Applied(copy, (label(node, index),))
    return None
