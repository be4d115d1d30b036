"""Walking any model for the detectors (`compat.core.case.Detector`): every node, in the
main graph, in the subgraphs of If / Loop / Scan (recursively) and in model-local
functions, each with its scope, so a detector asks the questions its bug needs (which
opset is in force, what produces an input, is it a constant, what shape is declared)
without writing its own traversal.

Detectors judge models nobody here wrote, in well under a second: this module reads the
protobuf only (onnx and numpy, no shape inference, no onnxruntime), builds each scope's
indices once per walk, and materialises a constant only when asked for its value.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, helper, numpy_helper

#: the names of the default (ai.onnx) domain
DEFAULT_DOMAINS = ("", "ai.onnx")

Dims = tuple[int | str | None, ...]
InputForm = Literal["given", "empty", "omitted"]


@dataclass(frozen=True, eq=False)
class Scope:
    """A graph or a model-local function: its nodes and what they can see.

    A subgraph sees the values of its enclosing scopes (`parent`); a function sees only
    its own. `path` names the scope: `graph`, `graph/node 'loop'/body`, `function 'f'`.
    """

    path: str
    nodes: Sequence[onnx.NodeProto]
    opsets: Mapping[str, int]
    parent: Scope | None = None
    graph: onnx.GraphProto | None = None  # None for a function's body
    function: onnx.FunctionProto | None = None  # the function the scope is in, if any

    @cached_property
    def producers(self) -> dict[str, onnx.NodeProto]:
        return {out: node for node in self.nodes for out in node.output if out}

    @cached_property
    def consumers(self) -> dict[str, list[onnx.NodeProto]]:
        found: dict[str, list[onnx.NodeProto]] = {}
        for node in self.nodes:
            for name in dict.fromkeys(node.input):
                if name:
                    found.setdefault(name, []).append(node)
        return found

    @cached_property
    def initializers(self) -> dict[str, TensorProto]:
        return {t.name: t for t in self.graph.initializer} if self.graph is not None else {}

    @cached_property
    def inputs(self) -> frozenset[str]:
        if self.graph is not None:
            return frozenset(v.name for v in self.graph.input)
        return frozenset(self.function.input) if self.function is not None else frozenset()

    @cached_property
    def outputs(self) -> frozenset[str]:
        if self.graph is not None:
            return frozenset(v.name for v in self.graph.output)
        return frozenset(self.function.output) if self.function is not None else frozenset()

    @cached_property
    def declared(self) -> dict[str, onnx.TypeProto]:
        """The declared types: value_info first, then inputs and outputs, which win."""
        infos: list[onnx.ValueInfoProto] = []
        if self.graph is not None:
            infos = [*self.graph.value_info, *self.graph.input, *self.graph.output]
        return {v.name: v.type for v in infos}

    def opset(self, domain: str = "") -> int | None:
        """The opset of `domain` in force here (the default domain under either name)."""
        if domain in DEFAULT_DOMAINS:
            for name in DEFAULT_DOMAINS:
                if name in self.opsets:
                    return self.opsets[name]
            return None
        return self.opsets.get(domain)

    def owner(self, name: str) -> Scope | None:
        """The innermost scope that defines `name` (node output, initializer or input)."""
        scope: Scope | None = self
        while scope is not None:
            if name in scope.producers or name in scope.initializers or name in scope.inputs:
                return scope
            scope = scope.parent
        return None


@dataclass(frozen=True)
class Site:
    """One node, where it is (`path`), and the scope it reads from."""

    path: str
    node: onnx.NodeProto
    scope: Scope

    @property
    def opset(self) -> int | None:
        """The opset of the node's domain in force where it is."""
        return self.scope.opset(self.node.domain)

    def is_op(self, *op_types: str) -> bool:
        """The node is one of `op_types` of the default domain."""
        return self.node.domain in DEFAULT_DOMAINS and self.node.op_type in op_types

    def at(self, *op_types: str, since: int = 1, before: int | None = None) -> bool:
        """The node is one of `op_types`, with the default-domain opset in `[since, before)`."""
        opset = self.opset
        if not self.is_op(*op_types) or opset is None or opset < since:
            return False
        return before is None or opset < before


def label(node: onnx.NodeProto, index: int) -> str:
    """How a path names a node: its name, else its first output (unique in a graph)."""
    named = node.name or next((out for out in node.output if out), "")
    return f"node '{named}'" if named else f"node #{index} ({node.op_type})"


def _opsets(imports: Sequence[onnx.OperatorSetIdProto]) -> dict[str, int]:
    return {o.domain: o.version for o in imports}


def _walk(scope: Scope) -> Iterator[Site]:
    for index, node in enumerate(scope.nodes):
        where = f"{scope.path}/{label(node, index)}"
        yield Site(where, node, scope)
        for attr in node.attribute:
            graphs: list[tuple[str, onnx.GraphProto]] = []
            if attr.type == AttributeProto.GRAPH:
                graphs = [(attr.name, attr.g)]
            elif attr.type == AttributeProto.GRAPHS:
                graphs = [(f"{attr.name}[{i}]", g) for i, g in enumerate(attr.graphs)]
            for name, graph in graphs:
                inner = Scope(
                    f"{where}/{name}", graph.node, scope.opsets, scope, graph, scope.function
                )
                yield from _walk(inner)


def nodes(model: onnx.ModelProto) -> Iterator[Site]:
    """Every node of the model, main graph first (subgraphs right after the node that
    holds them), then each model-local function's body, whose own opset imports complete
    the model's."""
    model_opsets = _opsets(model.opset_import)
    yield from _walk(Scope("graph", model.graph.node, model_opsets, graph=model.graph))
    for function in model.functions:
        opsets = {**model_opsets, **_opsets(function.opset_import)}
        where = f"function '{function.name}'"
        yield from _walk(Scope(where, function.node, opsets, function=function))


def find(model: onnx.ModelProto, *op_types: str) -> Iterator[Site]:
    """The nodes of the default domain among `op_types`, everywhere in the model."""
    return (site for site in nodes(model) if site.is_op(*op_types))


def default_opset(model: onnx.ModelProto) -> int | None:
    """The model's opset of the default domain (None when it imports none)."""
    return Scope("graph", (), _opsets(model.opset_import)).opset()


def input_form(node: onnx.NodeProto, index: int) -> InputForm:
    """Whether input `index` is given, present but written "" (empty), or omitted (the
    node has fewer inputs). The two spellings of "absent" differ for some runtimes."""
    if index >= len(node.input):
        return "omitted"
    return "empty" if node.input[index] == "" else "given"


def attribute(node: onnx.NodeProto, name: str, default: object = None) -> object:
    """The value of attribute `name`; `default` when absent or when it refers to the
    calling function's attribute (`ref_attr_name`: unknown until the call)."""
    for attr in node.attribute:
        if attr.name == name:
            return default if attr.ref_attr_name else helper.get_attribute_value(attr)
    return default


def producer(scope: Scope, name: str) -> onnx.NodeProto | TensorProto | None:
    """The node computing `name`, or its initializer, looked up outwards from `scope`;
    None for graph inputs, empty names and unknown values."""
    owner = scope.owner(name) if name else None
    if owner is None:
        return None
    if name in owner.producers:
        return owner.producers[name]
    return owner.initializers.get(name)


def constant_node(scope: Scope, name: str) -> onnx.NodeProto | None:
    """The Constant node (default domain) producing `name`, if that is what produces it."""
    made = producer(scope, name)
    if isinstance(made, onnx.NodeProto) and made.op_type == "Constant":
        return made if made.domain in DEFAULT_DOMAINS else None
    return None


def constant_attribute(node: onnx.NodeProto) -> str:
    """The attribute a Constant node holds its value in: value, value_ints, ..."""
    return node.attribute[0].name if node.attribute else ""


def initializer(scope: Scope, name: str) -> TensorProto | None:
    """The initializer `name` when it is a constant: not also a graph input, which a
    caller may override at run time."""
    owner = scope.owner(name) if name else None
    if owner is None or name in owner.producers or name in owner.inputs:
        return None
    return owner.initializers.get(name)


def is_constant(scope: Scope, name: str) -> bool:
    """`name` is an initializer (not overridable) or a Constant node's output."""
    return initializer(scope, name) is not None or constant_node(scope, name) is not None


def _constant_tensor(scope: Scope, name: str) -> TensorProto | None:
    """The TensorProto holding a constant: the initializer, or a Constant's `value`."""
    found = initializer(scope, name)
    if found is not None:
        return found
    node = constant_node(scope, name)
    if node is not None and constant_attribute(node) == "value":
        value: TensorProto = node.attribute[0].t
        return value
    return None


def constant(scope: Scope, name: str) -> np.ndarray | None:
    """The value of a constant input (initializer or Constant node, every attribute form
    but sparse_value), or None when it is not a constant."""
    tensor = _constant_tensor(scope, name)
    if tensor is not None:
        return numpy_helper.to_array(tensor)
    node = constant_node(scope, name)
    if node is None or not node.attribute:
        return None
    attr = node.attribute[0]
    if attr.ref_attr_name or attr.name == "sparse_value":
        return None
    value = helper.get_attribute_value(attr)
    if attr.name in ("value_string", "value_strings"):
        texts = value if isinstance(value, list) else [value]
        strings = np.array([t.decode() if isinstance(t, bytes) else t for t in texts], object)
        return strings if attr.name == "value_strings" else strings.reshape(())
    return np.array(value)


def elem_type(scope: Scope, name: str) -> int | None:
    """The element type of `name` (TensorProto.FLOAT, ...): of its constant, or declared."""
    tensor = _constant_tensor(scope, name)
    if tensor is not None:
        return tensor.data_type
    node = constant_node(scope, name)
    if node is not None:
        forms = {"value_string": TensorProto.STRING, "value_strings": TensorProto.STRING}
        forms |= {"value_float": TensorProto.FLOAT, "value_floats": TensorProto.FLOAT}
        forms |= {"value_int": TensorProto.INT64, "value_ints": TensorProto.INT64}
        return forms.get(constant_attribute(node))
    declared = _declared(scope, name)
    if declared is not None and declared.HasField("tensor_type"):
        return declared.tensor_type.elem_type
    return None


def _declared(scope: Scope, name: str) -> onnx.TypeProto | None:
    current: Scope | None = scope
    while current is not None:
        if name in current.declared:
            return current.declared[name]
        current = current.parent
    return None


def dims(scope: Scope, name: str) -> Dims | None:
    """The shape of `name` as the model shows it: a constant's dims, or the declared
    (annotated) shape, each dim an int, a symbol or None (unknown); None when unknown."""
    tensor = _constant_tensor(scope, name)
    if tensor is not None:
        return tuple(int(d) for d in tensor.dims)
    value = constant(scope, name) if constant_node(scope, name) is not None else None
    if value is not None:
        return tuple(int(d) for d in value.shape)
    declared = _declared(scope, name)
    if declared is None or not declared.HasField("tensor_type"):
        return None
    if not declared.tensor_type.HasField("shape"):
        return None
    found: list[int | str | None] = []
    for dim in declared.tensor_type.shape.dim:
        if dim.HasField("dim_value"):
            found.append(int(dim.dim_value))
        else:
            found.append(dim.dim_param or None)
    return tuple(found)


def consumers(scope: Scope, name: str) -> list[onnx.NodeProto]:
    """The nodes of `scope` (not of its subgraphs) that read `name`."""
    return scope.consumers.get(name, [])


def is_output(scope: Scope, name: str) -> bool:
    """`name` leaves the scope: an output of its graph or of its function's body."""
    return name in scope.outputs
