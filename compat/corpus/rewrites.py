"""The same model, spelled another legal way: a catalogue of equivalence-preserving
rewrites. Each is a pure function of a model, returning the rewritten copy and the
names of the nodes (or values) it touched, or None where it does not apply. They need
only onnx, so they run on the host (`python -m compat variants`, `--mutate`).

The seeds' lesson made general: the same computation, spelled differently, breaks on
different releases (Constant value_ints pads, onnxscript #3201; Split with an empty
split input, onnx #5222; Squeeze with an empty axes input, onnxruntime #22035; float16
in int32_data, onnx #1539). Links are those the corpus's families cite.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from compat.core.case import Case
from compat.core.errors import UsageError


@dataclass(frozen=True)
class Applied:
    model: onnx.ModelProto
    where: tuple[str, ...]  # the nodes or values rewritten


@dataclass(frozen=True)
class Rewrite:
    name: str
    description: str
    function: Callable[[onnx.ModelProto], Applied | None]
    reports: tuple[str, ...] = ()
    #: it changes the declared shape annotations themselves: a case that expects
    #: annotation violations or symbolic output shapes does not keep its expectations
    annotations: bool = False


def _copy(model: onnx.ModelProto) -> onnx.ModelProto:
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    return copy


def _label(node: onnx.NodeProto, index: int) -> str:
    return node.name or f"{node.op_type}#{index}"


def _top_opset(model: onnx.ModelProto) -> int:
    return max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), default=0)


def constant_value_attributes(model: onnx.ModelProto) -> Applied | None:
    """Constant(value=1-D int64 / float tensor) -> Constant(value_ints / value_floats)."""
    copy, where = _copy(model), []
    if _top_opset(model) < 12:  # value_ints and friends came with opset 12
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
        where.append(_label(node, index))
    return Applied(copy, tuple(where)) if where else None


def constant_value_tensor(model: onnx.ModelProto) -> Applied | None:
    """Constant(value_ints / value_floats / value_int / value_float) -> Constant(value=)."""
    copy, where = _copy(model), []
    kinds = {"value_ints": np.int64, "value_floats": np.float32,
             "value_int": np.int64, "value_float": np.float32}  # fmt: skip
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
        where.append(_label(node, index))
    return Applied(copy, tuple(where)) if where else None


def initializers_as_constants(model: onnx.ModelProto) -> Applied | None:
    """Every initializer that is not also a graph input -> a Constant node."""
    copy = _copy(model)
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
    copy, where = _copy(model), []
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
    copy, where, opset = _copy(model), [], _top_opset(model)
    for index, node in enumerate(copy.graph.node):
        schema = _schema(node, opset)
        if schema is None or len(node.input) >= len(schema.inputs):
            continue
        formal = schema.inputs[len(node.input)]
        if formal.option != onnx.defs.OpSchema.FormalParameterOption.Optional:
            continue
        node.input.append("")
        where.append(_label(node, index))
    return Applied(copy, tuple(where)) if where else None


def optional_input_omitted(model: onnx.ModelProto) -> Applied | None:
    """Trailing explicit empty inputs are dropped: `Conv(x, W, "")` -> `Conv(x, W)`."""
    copy, where = _copy(model), []
    for index, node in enumerate(copy.graph.node):
        if node.input and node.input[-1] == "":
            names = list(node.input)
            while names and names[-1] == "":
                names.pop()
            del node.input[:]
            node.input.extend(names)
            where.append(_label(node, index))
    return Applied(copy, tuple(where)) if where else None


def _dims(model: onnx.ModelProto) -> list[onnx.TensorShapeProto.Dimension]:
    infos = [*model.graph.input, *model.graph.output, *model.graph.value_info]
    return [
        d for i in infos if i.type.HasField("tensor_type") for d in i.type.tensor_type.shape.dim
    ]


def dim_params_renamed(model: onnx.ModelProto) -> Applied | None:
    """Every symbolic dimension renamed consistently (`N` -> `N_1`): names carry no
    meaning beyond equality."""
    copy = _copy(model)
    named = [d for d in _dims(copy) if d.HasField("dim_param") and d.dim_param]
    if not named:
        return None
    for d in named:
        d.dim_param = f"{d.dim_param}_1"
    return Applied(copy, tuple(sorted({d.dim_param for d in named})))


def value_info_removed(model: onnx.ModelProto) -> Applied | None:
    """The intermediate value annotations dropped: they assert, they do not compute."""
    if not model.graph.value_info:
        return None
    copy = _copy(model)
    where = tuple(v.name for v in copy.graph.value_info)
    del copy.graph.value_info[:]
    return Applied(copy, where)


def value_info_inferred(model: onnx.ModelProto) -> Applied | None:
    """Intermediate value annotations added by onnx's (non-strict) shape inference."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:
        return None
    before = {v.name for v in model.graph.value_info}
    added = tuple(v.name for v in inferred.graph.value_info if v.name not in before)
    return Applied(inferred, added) if added else None


def float16_int32_data(model: onnx.ModelProto) -> Applied | None:
    """float16 initializers stored in raw_data -> the typed field, int32_data."""
    copy, where = _copy(model), []
    for tensor in copy.graph.initializer:
        if tensor.data_type == TensorProto.FLOAT16 and tensor.HasField("raw_data"):
            bits = np.frombuffer(tensor.raw_data, dtype=np.uint16)
            tensor.ClearField("raw_data")
            tensor.int32_data.extend(int(b) for b in bits)
            where.append(tensor.name)
    return Applied(copy, tuple(where)) if where else None


def float16_raw_data(model: onnx.ModelProto) -> Applied | None:
    """float16 initializers stored in int32_data -> raw_data."""
    copy, where = _copy(model), []
    for tensor in copy.graph.initializer:
        if tensor.data_type == TensorProto.FLOAT16 and len(tensor.int32_data):
            bits = np.array(list(tensor.int32_data), dtype=np.uint16)
            tensor.ClearField("int32_data")
            tensor.raw_data = bits.tobytes()
            where.append(tensor.name)
    return Applied(copy, tuple(where)) if where else None


def ir_version_minimum(model: onnx.ModelProto) -> Applied | None:
    """The IR version lowered to the least its opsets need."""
    try:
        least = helper.find_min_ir_version_for(list(model.opset_import), ignore_unknown=True)
    except Exception:
        return None
    if least >= model.ir_version:
        return None
    copy = _copy(model)
    copy.ir_version = least
    return Applied(copy, (f"ir_version {model.ir_version} -> {least}",))


def dim_params_anonymous(model: onnx.ModelProto) -> Applied | None:
    """Symbolic dimensions of outputs and intermediate values made anonymous (inputs keep
    theirs): an anonymous dimension asserts nothing, a named one only equality."""
    copy = _copy(model)
    infos = [*copy.graph.output, *copy.graph.value_info]
    named = [
        (i.name, d)
        for i in infos
        if i.type.HasField("tensor_type")
        for d in i.type.tensor_type.shape.dim
        if d.HasField("dim_param") and d.dim_param
    ]
    if not named:
        return None
    for _, dim in named:
        dim.ClearField("dim_param")
    return Applied(copy, tuple(sorted({name for name, _ in named})))


def _converted(model: onnx.ModelProto, target: int) -> Applied | None:
    from onnx import version_converter

    opset = _top_opset(model)
    if target < 7 or opset == target or len(model.graph.node) == 0:
        return None
    if any(o.domain not in ("", "ai.onnx") for o in model.opset_import):
        return None  # the converter converts the default domain only
    try:
        converted = version_converter.convert_version(model, target)
        onnx.checker.check_model(converted)
    except Exception:
        return None  # no adapter for some op: this rewrite does not apply
    return Applied(converted, (f"opset {opset} -> {target}",))


def opset_up(model: onnx.ModelProto) -> Applied | None:
    """The default-domain opset raised by one with onnx's version converter (attribute
    forms become inputs where the newer opset says so: Squeeze axes, Split split)."""
    return _converted(model, _top_opset(model) + 1)


def opset_down(model: onnx.ModelProto) -> Applied | None:
    """The default-domain opset lowered by one with onnx's version converter."""
    return _converted(model, _top_opset(model) - 1)


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
    if model.ir_version < 8 or _top_opset(model) < 13:
        return None  # model-local functions came with IR version 8
    copy = _copy(model)
    for index, node in enumerate(copy.graph.node):
        if node.domain not in ("", "ai.onnx") or node.op_type == "Constant":
            continue
        if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
               for a in node.attribute):  # fmt: skip
            continue
        if "" in node.input or not node.output:
            continue
        inputs = [f"i{k}" for k in range(len(node.input))]
        outputs = [f"o{k}" for k in range(len(node.output))]
        body = helper.make_node(node.op_type, inputs, outputs)
        body.attribute.extend(node.attribute)
        domain = "compat.outlined"
        function = helper.make_function(
            domain, f"outlined_{node.op_type}", inputs, outputs, [body],
            [helper.make_opsetid("", _top_opset(model))],
        )  # fmt: skip
        call = helper.make_node(function.name, list(node.input), list(node.output),
                                name=node.name, domain=domain)  # fmt: skip
        copy.graph.node.remove(node)
        copy.graph.node.insert(index, call)
        copy.functions.append(function)
        copy.opset_import.append(helper.make_opsetid(domain, 1))
        return Applied(copy, (_label(node, index),))
    return None


CATALOGUE: tuple[Rewrite, ...] = (
    Rewrite("constant_value_attributes", "Constant(value=1-D tensor) -> value_ints / value_floats",
            constant_value_attributes, ("https://github.com/microsoft/onnxscript/pull/3201",)),
    Rewrite("constant_value_tensor", "Constant(value_ints / value_floats / value_int / "
            "value_float) -> Constant(value=tensor)", constant_value_tensor),
    Rewrite("initializers_as_constants", "initializers -> Constant nodes",
            initializers_as_constants),
    Rewrite("constants_as_initializers", "Constant(value=tensor) nodes -> initializers",
            constants_as_initializers),
    Rewrite("optional_input_explicit_empty", 'the next omitted optional input written "" '
            '(Split(x) -> Split(x, ""))', optional_input_explicit_empty,
            ("https://github.com/onnx/onnx/issues/5222",
             "https://github.com/microsoft/onnxruntime/issues/22035")),
    Rewrite("optional_input_omitted", 'trailing "" inputs dropped (Conv(x, W, "") -> '
            "Conv(x, W))", optional_input_omitted),
    Rewrite("dim_params_renamed", "every symbolic dimension renamed consistently",
            dim_params_renamed, annotations=True),
    Rewrite("value_info_removed", "intermediate value annotations dropped", value_info_removed,
            annotations=True),
    Rewrite("value_info_inferred", "intermediate value annotations added by shape inference",
            value_info_inferred, annotations=True),
    Rewrite("float16_int32_data", "float16 initializers: raw_data -> int32_data",
            float16_int32_data, ("https://github.com/onnx/onnx/issues/1539",)),
    Rewrite("float16_raw_data", "float16 initializers: int32_data -> raw_data",
            float16_raw_data),
    Rewrite("ir_version_minimum", "IR version lowered to the least its opsets need",
            ir_version_minimum),
    Rewrite("dim_params_anonymous", "symbolic dimensions of outputs and intermediate values "
            "made anonymous", dim_params_anonymous, annotations=True),
    Rewrite("opset_up", "the default-domain opset raised by one (onnx's version converter)",
            opset_up),
    Rewrite("opset_down", "the default-domain opset lowered by one (onnx's version converter)",
            opset_down),
    Rewrite("functions_inlined", "model-local functions inlined (onnx.inliner)",
            functions_inlined),
    Rewrite("node_outlined", "a node outlined into a model-local function", node_outlined),
)  # fmt: skip
BY_NAME = {r.name: r for r in CATALOGUE}


def select(patterns: str | None) -> tuple[Rewrite, ...]:
    """The rewrites matching a comma-separated list of globs (all when None)."""
    if not patterns:
        return CATALOGUE
    globs = [p.strip() for p in patterns.split(",") if p.strip()]
    chosen = tuple(r for r in CATALOGUE if any(fnmatch.fnmatchcase(r.name, g) for g in globs))
    if not chosen:
        names = ", ".join(BY_NAME)
        raise UsageError(f"--rewrites {patterns}: matches no rewrite; the rewrites are: {names}")
    return chosen


def variants(
    model: onnx.ModelProto, rewrites: tuple[Rewrite, ...] = CATALOGUE
) -> list[tuple[Rewrite, Applied]]:
    """Every rewrite that applies to the model, with its result."""
    found = []
    for rewrite in rewrites:
        applied = rewrite.function(model)
        if applied is not None:
            found.append((rewrite, applied))
    return found


def mutated(case: Case, rewrites: tuple[Rewrite, ...] = CATALOGUE) -> list[Case]:
    """The case spelled every other way that applies (`--mutate`): ids `CASE~REWRITE`,
    the original's inputs, oracle, checks and expectations, known bugs included."""
    symbolic = any(isinstance(d, str) for dims in case.output_shapes.values() for d in dims)
    found = []
    for rewrite, applied in variants(case.model, rewrites):
        if rewrite.annotations and (case.violations or symbolic):
            continue  # its expectations are about the annotations this rewrite changes
        described = f"{case.description} ({rewrite.description})"
        found.append(
            replace(
                case, id=f"{case.id}~{rewrite.name}", model=applied.model, description=described
            )
        )
    return found
