"""Walking any model for the detectors (`compat.core.case.Detector`): every node, in the
main graph, in the subgraphs of If / Loop / Scan (at any depth) and in the bodies of
model-local functions, each with its scope, so a detector asks the questions its bug
needs (which opset is in force, what produces an input, is it a constant, what shape is
declared, who reads a value) without writing its own traversal.

A local function's body is walked bound to a call: the body's inputs are the caller's
arguments, so a constant passed in is still a constant, and a value computed by a call
is computed by the body's node. Runtimes inline local functions before they optimize,
and the bugs follow the computation, not its packaging; a function nobody calls is
walked once, unbound. Two calls the body cannot tell apart (the same opsets, attributes,
kinds of argument and readers of its outputs: compat/corpus/signature.py) show
it the same nodes, so it is walked once, for the first of them: the work follows the
model's size, not the number of paths through its calls (25 functions each calling the
next twice are 2^25 paths). The walk keeps its own stack, so a chain of thousands of
nested calls or subgraphs is no recursion.

Detectors judge models nobody here wrote, in well under a second: this module reads the
protobuf only (onnx, no shape inference, no onnxruntime) and builds each scope's indices
once (the scopes and their nodes: compat/corpus/scopes.py). A scan walks its model
once for all its detectors, within a time budget (compat/corpus/session.py). What a
value is (its producer, a constant, its declared shape, its readers):
compat/corpus/values.py.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from typing import Literal

import onnx

from compat.corpus import session
from compat.corpus.scopes import (
    DEFAULT_DOMAINS,
    Functions,
    Key,
    Scope,
    Site,
    attribute,
    imported_opsets,
    label,
)
from compat.corpus.signature import Signatures

__all__ = [
    "DEFAULT_DOMAINS",
    "InputForm",
    "Scope",
    "Site",
    "attribute",
    "find",
    "input_form",
    "label",
    "nodes",
    "with_input",
]

InputForm = Literal["given", "empty", "omitted"]


# -- the walk ---------------------------------------------------------------------------


def _walk(scope: Scope, signatures: Signatures, walked: set[Hashable]) -> Iterator[Site]:
    """The scope's nodes in order, each followed by its subgraphs' and, for a call, by its
    body's when no call of the same signature was walked before (`walked`); on a stack of
    its own, so that depth is no recursion."""
    stack = [iter(scope.sites)]
    while stack:
        site = next(stack[-1], None)
        if site is None:
            stack.pop()
            continue
        session.tick(site)
        yield site
        inner = site.subgraphs() if site.node.attribute else []
        body = site.body if site.scope.functions else None
        if body is not None:
            seen = signatures.of(site)
            if seen not in walked:
                walked.add(seen)
                inner.append(body)
        stack += [iter(each.sites) for each in reversed(inner)]


def _calls(model: onnx.ModelProto) -> dict[Key | None, set[Key]]:
    """The (domain, op_type) of every node of each function (None: the main graph), its
    subgraphs included: which functions each calls."""
    found: dict[Key | None, set[Key]] = {}
    owners = [(None, model.graph.node), *(((f.domain, f.name), f.node) for f in model.functions)]
    for owner, start in owners:
        keys = found.setdefault(owner, set())
        pending = [list(start)]
        while pending:
            for node in pending.pop():
                keys.add((node.domain, node.op_type))
                for attr in node.attribute:
                    pending += [list(g.node) for g in (attr.g, *attr.graphs) if g.node]
    return found


def _recursive(calls: dict[Key | None, set[Key]], functions: Functions) -> frozenset[Key]:
    """The functions from which a chain of calls may come back to a call of themselves:
    those left when the ones calling no other left are taken away, one by one."""
    callees = {key: calls.get(key, set()) & functions.keys() for key in functions}
    left = {key: len(called) for key, called in callees.items()}
    callers: dict[Key, list[Key]] = {key: [] for key in callees}
    for key, called in callees.items():
        for callee in called:
            callers[callee].append(key)
    done = [key for key, count in left.items() if count == 0]
    while done:
        for caller in callers[done.pop()]:
            left[caller] -= 1
            if left[caller] == 0:
                done.append(caller)
    return frozenset(key for key, count in left.items() if count)


def _nodes(model: onnx.ModelProto) -> Iterator[Site]:
    opsets = imported_opsets(model.opset_import)
    functions = {(f.domain, f.name): f for f in model.functions}
    calls = _calls(model) if functions else {}
    recursive = _recursive(calls, functions) if functions else frozenset()
    signatures = Signatures(functions)
    walked = set[Hashable]()
    graph = model.graph
    main = Scope("graph", graph.node, opsets, functions, graph=graph, recursive=recursive)
    yield from _walk(main, signatures, walked)
    called = set().union(*calls.values())
    for key, function in functions.items():
        if key not in called:
            inner = {**opsets, **imported_opsets(function.opset_import)}
            where = f"function '{function.name}'"
            unbound = Scope(
                where, function.node, inner, functions, function=function, recursive=recursive
            )
            yield from _walk(unbound, signatures, walked)


def nodes(model: onnx.ModelProto) -> Iterator[Site]:
    """Every node of the model: the main graph's in order, each followed by its
    subgraphs' and, for a call of a local function, the body bound to it (once per call
    signature); then the bodies of the functions nobody calls. Made once in a scan."""
    scanned = session.current(model)
    if scanned is None:
        return _nodes(model)
    return _again(scanned, _made(scanned, model))


def _made(scanned: session.Session, model: onnx.ModelProto) -> list[Site]:
    """The scan's walk of its model, made the first time it is asked for."""
    if scanned.sites is None:
        scanned.sites = list(_nodes(model))
        for index, site in enumerate(scanned.sites):
            if site.node.domain in DEFAULT_DOMAINS:
                scanned.by_op.setdefault(site.node.op_type, []).append(index)
    return scanned.sites


def _again(scanned: session.Session, sites: list[Site]) -> Iterator[Site]:
    for site in sites:
        scanned.tick(site)
        yield site


def find(model: onnx.ModelProto, *op_types: str) -> Iterator[Site]:
    """The nodes of the default domain among `op_types`, everywhere in the model (in a
    scan, from the walk's index of them)."""
    scanned = session.current(model)
    if scanned is None:
        return (site for site in nodes(model) if site.is_op(*op_types))
    sites = _made(scanned, model)
    found = sorted(i for op in set(op_types) for i in scanned.by_op.get(op, ()))
    return _again(scanned, [sites[i] for i in found])


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


def input_form(node: onnx.NodeProto, index: int) -> InputForm:
    """Whether input `index` is given, present but written "" (empty), or omitted (the
    node has fewer inputs). The two spellings of "absent" differ for some runtimes."""
    if index >= len(node.input):
        return "omitted"
    return "empty" if node.input[index] == "" else "given"
