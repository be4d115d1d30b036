"""Walking any model for the detectors (`compat.core.case.Detector`): every node, in the
main graph, in the subgraphs of If / Loop / Scan (recursively) and in the bodies of
model-local functions, each with its scope, so a detector asks the questions its bug
needs (which opset is in force, what produces an input, is it a constant, what shape is
declared, who reads a value) without writing its own traversal.

A local function's body is walked once per call, bound to it: the body's inputs are the
caller's arguments, so a constant passed in is still a constant, and a value computed
by a call is computed by the body's node. Runtimes inline local functions before they
optimize, and the bugs follow the computation, not its packaging; a function nobody
calls is walked once, unbound.

Detectors judge models nobody here wrote, in well under a second: this module reads the
protobuf only (onnx, no shape inference, no onnxruntime) and builds each scope's indices
once. What a value is (its producer, a constant, its declared shape, its readers):
compat/corpus/values.py.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

import onnx
from onnx import AttributeProto, TensorProto, helper

#: the names of the default (ai.onnx) domain
DEFAULT_DOMAINS = ("", "ai.onnx")

InputForm = Literal["given", "empty", "omitted"]
Functions = Mapping[tuple[str, str], onnx.FunctionProto]


@dataclass(frozen=True, eq=False)
class Scope:
    """A graph, a subgraph or a local function's body: its nodes and what they see.

    A subgraph sees the values of its enclosing scopes (`parent`). A function body
    walked for a call (`call`, made in `parent`) sees the caller's arguments as its
    inputs; unbound, it sees only its own values. `path` names the scope: `graph`,
    `graph/node 'loop'/body`, `graph/node 'y'/function 'f'`, `function 'f'`.
    """

    path: str
    nodes: Sequence[onnx.NodeProto]
    opsets: Mapping[str, int]
    functions: Functions
    parent: Scope | None = None
    graph: onnx.GraphProto | None = None  # None for a function's body
    function: onnx.FunctionProto | None = None  # the function the scope is in, if any
    call: onnx.NodeProto | None = None  # for a function's body: the call it is bound to

    @cached_property
    def sites(self) -> list[Site]:
        return [Site(node, self, i) for i, node in enumerate(self.nodes)]

    @cached_property
    def producers(self) -> dict[str, Site]:
        return {out: site for site in self.sites for out in site.node.output if out}

    @cached_property
    def readers(self) -> dict[str, list[Site]]:
        """The nodes reading each value: as an input, or in a subgraph (implicitly)."""
        found: dict[str, list[Site]] = {}
        for site in self.sites:
            implicit = (_outer_reads(g) for g in _graphs(site.node)) if site.node.attribute else ()
            for name in dict.fromkeys(
                [*site.node.input, *(n for names in implicit for n in names)]
            ):
                if name:
                    found.setdefault(name, []).append(site)
        return found

    @cached_property
    def initializers(self) -> dict[str, TensorProto]:
        return {t.name: t for t in self.graph.initializer} if self.graph is not None else {}

    @cached_property
    def inputs(self) -> list[str]:
        if self.graph is not None:
            return [v.name for v in self.graph.input]
        return list(self.function.input) if self.function is not None else []

    @cached_property
    def outputs(self) -> list[str]:
        if self.graph is not None:
            return [v.name for v in self.graph.output]
        return list(self.function.output) if self.function is not None else []

    @cached_property
    def declared(self) -> dict[str, onnx.TypeProto]:
        """The declared types: value_info first, then inputs and outputs, which win."""
        infos: list[onnx.ValueInfoProto] = []
        if self.graph is not None:
            infos = [*self.graph.value_info, *self.graph.input, *self.graph.output]
        elif self.function is not None:
            infos = list(getattr(self.function, "value_info", ()))  # IR 10
        return {v.name: v.type for v in infos}

    def opset(self, domain: str = "") -> int | None:
        """The opset of `domain` in force here (the default domain under either name)."""
        if domain in DEFAULT_DOMAINS:
            for name in DEFAULT_DOMAINS:
                if name in self.opsets:
                    return self.opsets[name]
            return None
        return self.opsets.get(domain)

    def subgraph(self, path: str, graph: onnx.GraphProto) -> Scope:
        """The scope of a graph attribute of one of this scope's nodes."""
        return Scope(path, graph.node, self.opsets, self.functions, self, graph, self.function)

    @cached_property
    def _input_names(self) -> frozenset[str]:
        return frozenset(self.inputs)

    def defines(self, name: str) -> bool:
        """`name` is computed, initialized or input here (a bound body's inputs are the
        caller's arguments: defined there)."""
        if name in self.producers or name in self.initializers:
            return True
        return name in self._input_names and (self.graph is not None or self.call is None)

    def outward(self, name: str) -> tuple[Scope, str] | None:
        """Where a lookup of `name` continues when this scope does not compute it: the
        enclosing scope of a subgraph, the caller's argument for a bound function input."""
        if self.graph is not None:
            return (self.parent, name) if self.parent is not None else None
        if self.call is None or self.parent is None or name not in self.inputs:
            return None
        index = self.inputs.index(name)
        argument = self.call.input[index] if index < len(self.call.input) else ""
        return (self.parent, argument) if argument else None


@dataclass(frozen=True, eq=False)
class Site:
    """One node, the scope it reads from, and where it is (`path`)."""

    node: onnx.NodeProto
    scope: Scope
    index: int  # in the scope's nodes

    @property
    def path(self) -> str:
        """`graph/node 'y'`, `graph/node 'loop'/body/node 'x'`: named as `label` says."""
        return f"{self.scope.path}/{label(self.node, self.index)}"

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

    def input(self, index: int) -> str:
        """The name of input `index`, "" when written empty or omitted."""
        return self.node.input[index] if index < len(self.node.input) else ""

    def attribute(self, name: str, default: object = None) -> object:
        """The value of the node's attribute `name` (`default` when absent); one that
        refers to the function's attribute is the call's, or the function's default."""
        return attribute(self.scope, self.node, name, default)

    @cached_property
    def body(self) -> Scope | None:
        """The body of the local function this node calls, bound to this call."""
        key = (self.node.domain, self.node.op_type)
        function = self.scope.functions.get(key)
        if function is None or _calling(self.scope, key):
            return None  # not a call, or a recursive one (invalid ONNX)
        opsets = {**self.scope.opsets, **_opsets(function.opset_import)}
        where = f"{self.path}/function '{function.name}'"
        functions = self.scope.functions
        return Scope(where, function.node, opsets, functions, self.scope, None, function, self.node)

    def subgraphs(self) -> list[Scope]:
        """The scopes of the node's graph attributes (If branches, Loop and Scan bodies)."""
        found = []
        for attr in self.node.attribute:
            graphs: list[tuple[str, onnx.GraphProto]] = []
            if attr.type == AttributeProto.GRAPH:
                graphs = [(attr.name, attr.g)]
            elif attr.type == AttributeProto.GRAPHS:
                graphs = [(f"{attr.name}[{i}]", g) for i, g in enumerate(attr.graphs)]
            for name, graph in graphs:
                found.append(self.scope.subgraph(f"{self.path}/{name}", graph))
        return found


def _graphs(node: onnx.NodeProto) -> list[onnx.GraphProto]:
    return [
        g for a in node.attribute for g in ([a.g] if a.type == AttributeProto.GRAPH else a.graphs)
    ]


def _outer_reads(graph: onnx.GraphProto) -> list[str]:
    """The names a subgraph reads from its enclosing scopes (its implicit inputs)."""
    local = {v.name for v in graph.input} | {t.name for t in graph.initializer}
    local |= {out for node in graph.node for out in node.output}
    reads = [n for node in graph.node for n in node.input]
    reads += [n for node in graph.node for g in _graphs(node) for n in _outer_reads(g)]
    reads += [v.name for v in graph.output]
    return [n for n in dict.fromkeys(reads) if n and n not in local]


def _calling(scope: Scope | None, key: tuple[str, str]) -> bool:
    while scope is not None:
        if scope.function is not None and (scope.function.domain, scope.function.name) == key:
            return True
        scope = scope.parent
    return False


def label(node: onnx.NodeProto, index: int) -> str:
    """How a path names a node: its name, else its first output (unique in a graph)."""
    named = node.name or next((out for out in node.output if out), "")
    return f"node '{named}'" if named else f"node #{index} ({node.op_type})"


def _opsets(imports: Sequence[onnx.OperatorSetIdProto]) -> dict[str, int]:
    return {o.domain: o.version for o in imports}


def _walk(scope: Scope) -> Iterator[Site]:
    for site in scope.sites:
        yield site
        if site.node.attribute:
            for inner in site.subgraphs():
                yield from _walk(inner)
        if scope.functions and site.body is not None:
            yield from _walk(site.body)


def _called(model: onnx.ModelProto) -> set[tuple[str, str]]:
    """The (domain, op_type) of every node anywhere: which functions something calls."""
    found: set[tuple[str, str]] = set()
    pending = [list(model.graph.node), *(list(f.node) for f in model.functions)]
    while pending:
        for node in pending.pop():
            found.add((node.domain, node.op_type))
            for attr in node.attribute:
                pending += [list(g.node) for g in (attr.g, *attr.graphs) if g.node]
    return found


def nodes(model: onnx.ModelProto) -> Iterator[Site]:
    """Every node of the model: the main graph's in order, each followed by its
    subgraphs' and, for a call of a local function, the body bound to it; then the
    bodies of the functions nobody calls."""
    opsets = _opsets(model.opset_import)
    functions = {(f.domain, f.name): f for f in model.functions}
    yield from _walk(Scope("graph", model.graph.node, opsets, functions, graph=model.graph))
    called = _called(model) if model.functions else set()
    for key, function in functions.items():
        if key not in called:
            inner = {**opsets, **_opsets(function.opset_import)}
            where = f"function '{function.name}'"
            yield from _walk(Scope(where, function.node, inner, functions, function=function))


def find(model: onnx.ModelProto, *op_types: str) -> Iterator[Site]:
    """The nodes of the default domain among `op_types`, everywhere in the model."""
    return (site for site in nodes(model) if site.is_op(*op_types))


def with_input(
    model: onnx.ModelProto,
    op_type: str,
    index: int,
    form: InputForm,
    since: int = 1,
    before: int | None = None,
) -> list[Site]:
    """The `op_type` nodes of opsets [since, before) whose input `index` is in `form`:
    the shape of most "an optional input written this way" constructs."""
    return [
        site
        for site in find(model, op_type)
        if site.at(op_type, since=since, before=before) and input_form(site.node, index) == form
    ]


def default_opset(model: onnx.ModelProto) -> int | None:
    """The model's opset of the default domain (None when it imports none)."""
    return Scope("graph", (), _opsets(model.opset_import), {}).opset()


def input_form(node: onnx.NodeProto, index: int) -> InputForm:
    """Whether input `index` is given, present but written "" (empty), or omitted (the
    node has fewer inputs). The two spellings of "absent" differ for some runtimes."""
    if index >= len(node.input):
        return "omitted"
    return "empty" if node.input[index] == "" else "given"


def attribute(scope: Scope, node: onnx.NodeProto, name: str, default: object = None) -> object:
    """The value of `node`'s attribute `name`, `default` when absent. One that refers to
    the function's attribute (`ref_attr_name`) is the call's, else the function's own
    default, else `default` (unknown: an unbound body)."""
    found = next((a for a in node.attribute if a.name == name), None)
    if found is None:
        return default
    if not found.ref_attr_name:
        return helper.get_attribute_value(found)
    body = scope
    while body.graph is not None and body.parent is not None:
        body = body.parent  # from a subgraph out to the function's body
    if body.call is not None and body.parent is not None:
        return attribute(
            body.parent, body.call, found.ref_attr_name, _fallback(body, found, default)
        )
    return _fallback(body, found, default)


def _fallback(body: Scope, ref: AttributeProto, default: object) -> object:
    for attr in getattr(body.function, "attribute_proto", ()):
        if attr.name == ref.ref_attr_name:
            return helper.get_attribute_value(attr)
    return default
