"""The scopes of a walked model (compat/corpus/walk.py) and their nodes: a graph, a
subgraph or a local function's body bound to a call (`Scope`), each node with its scope
and path (`Site`), and the indices a detector's questions need (producers, readers,
declared types), built once per scope.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import onnx
from onnx import AttributeProto, TensorProto, helper

#: the names of the default (ai.onnx) domain
DEFAULT_DOMAINS = ("", "ai.onnx")

Key = tuple[str, str]  # a local function's (domain, name)
Functions = Mapping[Key, onnx.FunctionProto]


@dataclass(frozen=True, eq=False)
class Scope:
    """A graph, a subgraph or a local function's body: its nodes and what they see.

    A subgraph sees the values of its enclosing scopes (`parent`). A function body
    walked for a call (`call`, made in `parent`) sees the caller's arguments as its
    inputs; unbound, it sees only its own values. `path` names the scope: `graph`,
    `graph/node 'loop'/body`, `graph/node 'y'/function 'f'`, `function 'f'`; `place`
    is what it adds to its parent's (`/node 'loop'/body`), so that a chain of
    thousands of calls keeps no thousands of ever longer paths.
    """

    place: str
    nodes: Sequence[onnx.NodeProto]
    opsets: Mapping[str, int]
    functions: Functions
    parent: Scope | None = None
    graph: onnx.GraphProto | None = None  # None for a function's body
    function: onnx.FunctionProto | None = None  # the function the scope is in, if any
    call: onnx.NodeProto | None = None  # for a function's body: the call it is bound to
    #: the functions that may reach a call of themselves (None: any may)
    recursive: frozenset[Key] | None = None

    @property
    def path(self) -> str:
        """The scope's name: its parents' places, then its own."""
        places = []
        scope: Scope | None = self
        while scope is not None:
            places.append(scope.place)
            scope = scope.parent
        return "".join(reversed(places))

    @cached_property
    def home(self) -> str:
        """Where the scope is in the protobuf, the same for every call of a function:
        `graph`, `graph/node 'loop'/body`, `function 'd.f'/node 'if'/then_branch`."""
        if self.graph is None:
            function = self.function
            return f"function '{function.domain}.{function.name}'" if function else self.place
        return self.parent.home + self.place if self.parent is not None else self.place

    @cached_property
    def memo(self) -> dict[tuple[str, str], Any]:
        """The answers compat/corpus/values.py keeps for this scope: (question, name)."""
        return {}

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

    def subgraph(self, place: str, graph: onnx.GraphProto) -> Scope:
        """The scope of a graph attribute of one of this scope's nodes (`place`: what
        it adds to this scope's path, `/node 'loop'/body`)."""
        return Scope(
            place,
            graph.node,
            self.opsets,
            self.functions,
            self,
            graph,
            self.function,
            recursive=self.recursive,
        )

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
        opsets = {**self.scope.opsets, **imported_opsets(function.opset_import)}
        where = f"/{label(self.node, self.index)}/function '{function.name}'"
        scope = self.scope
        return Scope(
            where,
            function.node,
            opsets,
            scope.functions,
            scope,
            function=function,
            call=self.node,
            recursive=scope.recursive,
        )

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
                found.append(self.scope.subgraph(f"/{label(self.node, self.index)}/{name}", graph))
        return found


def _graphs(node: onnx.NodeProto) -> list[onnx.GraphProto]:
    return [
        g for a in node.attribute for g in ([a.g] if a.type == AttributeProto.GRAPH else a.graphs)
    ]


def _outer_reads(graph: onnx.GraphProto) -> list[str]:
    """The names a subgraph reads from its enclosing scopes (its implicit inputs), those
    of the subgraphs in it at any depth too."""
    found: dict[str, None] = {}
    pending: list[tuple[onnx.GraphProto, frozenset[str]]] = [(graph, frozenset())]
    while pending:
        inner, enclosing = pending.pop()
        local = {v.name for v in inner.input} | {t.name for t in inner.initializer}
        local |= {out for node in inner.node for out in node.output}
        local |= enclosing  # what a graph between it and `graph` defines
        reads = [n for node in inner.node for n in node.input] + [v.name for v in inner.output]
        found.update((n, None) for n in reads if n and n not in local)
        inside = frozenset(local)
        pending += [(g, inside) for node in inner.node for g in _graphs(node)]
    return list(found)


def _calling(scope: Scope | None, key: Key) -> bool:
    """A call of `key` here is recursive: a function the scope is in (invalid ONNX)."""
    if scope is not None and scope.recursive is not None and key not in scope.recursive:
        return False  # no chain of calls leads from it back to itself
    while scope is not None:
        if scope.function is not None and (scope.function.domain, scope.function.name) == key:
            return True
        scope = scope.parent
    return False


def label(node: onnx.NodeProto, index: int) -> str:
    """How a path names a node: its name, else its first output (unique in a graph)."""
    named = node.name or next((out for out in node.output if out), "")
    return f"node '{named}'" if named else f"node #{index} ({node.op_type})"


def imported_opsets(imports: Sequence[onnx.OperatorSetIdProto]) -> dict[str, int]:
    return {o.domain: o.version for o in imports}


def attribute(scope: Scope, node: onnx.NodeProto, name: str, default: object = None) -> object:
    """The value of `node`'s attribute `name`, `default` when absent. One that refers to
    the function's attribute (`ref_attr_name`) is the call's, else the function's own
    default, else `default` (unknown: an unbound body), through any depth of calls."""
    while True:
        found = next((a for a in node.attribute if a.name == name), None)
        if found is None:
            return default
        if not found.ref_attr_name:
            return helper.get_attribute_value(found)
        body = scope
        while body.graph is not None and body.parent is not None:
            body = body.parent  # from a subgraph out to the function's body
        default = _fallback(body, found, default)
        if body.call is None or body.parent is None:
            return default
        scope = body.parent
        node = body.call
        name = found.ref_attr_name


def _fallback(body: Scope, ref: AttributeProto, default: object) -> object:
    for attr in getattr(body.function, "attribute_proto", ()):
        if attr.name == ref.ref_attr_name:
            return helper.get_attribute_value(attr)
    return default
