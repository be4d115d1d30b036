"""A failing model reduced to a smallest model that fails the same way (delta debugging
over its nodes), the first piece of `nox -s triage`.

A candidate keeps a subset of the top-level nodes: its inputs are the values those
nodes consume and do not produce (outer-scope values their subgraph bodies read
included), fed with the real intermediate tensors the whole model computes on the
user's inputs (on a runtime that runs it), its outputs the values they produce that
no kept node consumes. Unused initializers, value_info, local functions and opset
imports go. `fails(model, feeds)` says whether a candidate still shows the same
failure; the caller decides what "the same" is (check, outcome, error class, message).
An If that is still kept is replaced by the branch its condition takes on the user's
inputs when the model still fails that way (the branch's nodes are then reduced like
the rest), else that branch is cut down inside the If; Loop and Scan bodies are kept
whole with their node.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
from onnx import helper

Feeds = dict[str, Any]
Predicate = Callable[[onnx.ModelProto, Feeds], bool]
#: told the smallest model so far and the candidates tried, as the model shrinks
Progress = Callable[[onnx.ModelProto, int], None]


@dataclass(frozen=True)
class Reduced:
    model: onnx.ModelProto
    feeds: Feeds
    tried: int  # candidates evaluated


def intermediates(model: onnx.ModelProto, feeds: Feeds) -> Feeds:
    """Every top-level value the model computes on `feeds`, inputs and initializers
    included: onnx's reference evaluator (it runs models a failing runtime cannot), else
    onnxruntime with optimizations off and every value made an output."""
    names = [o for n in model.graph.node for o in n.output if o]
    try:
        from onnx.reference import ReferenceEvaluator

        values = dict(zip(names, ReferenceEvaluator(model).run(names, feeds), strict=True))
    except Exception as reference_failed:
        try:
            values = _ort_values(model, names, feeds)
        except Exception as ort_failed:
            raise ValueError(
                "cannot compute the intermediate values to cut the model at: onnx's "
                f"reference evaluator: {reference_failed}; onnxruntime: {ort_failed}"
            ) from None
    for tensor in model.graph.initializer:
        values[tensor.name] = onnx.numpy_helper.to_array(tensor)
    return {**values, **feeds}


def _ort_values(model: onnx.ModelProto, names: list[str], feeds: Feeds) -> Feeds:
    import onnxruntime as ort

    every = onnx.ModelProto()
    every.CopyFrom(model)
    declared = {o.name for o in every.graph.output}
    every.graph.output.extend(onnx.ValueInfoProto(name=n) for n in names if n not in declared)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(
        every.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    outputs = [o.name for o in session.get_outputs()]
    return dict(zip(outputs, session.run(outputs, feeds), strict=True))


def outer_names(node: onnx.NodeProto) -> list[str]:
    """The values a node reads: its inputs, and the outer-scope values its subgraph
    bodies (If, Loop, Scan) read without defining them."""
    names = [i for i in node.input if i]
    for attribute in node.attribute:
        graphs = [attribute.g] if attribute.HasField("g") else list(attribute.graphs)
        for graph in graphs:
            defined = {i.name for i in graph.input} | {t.name for t in graph.initializer}
            for inner in graph.node:
                names += [n for n in outer_names(inner) if n not in defined]
                defined.update(o for o in inner.output if o)
    return list(dict.fromkeys(names))


def _functions_used(model: onnx.ModelProto, nodes: list[onnx.NodeProto]) -> list[Any]:
    """The local functions the nodes call, directly or through other functions."""
    by_key = {(f.domain, f.name): f for f in model.functions}
    used: dict[tuple[str, str], Any] = {}
    pending = list(nodes)
    while pending:
        node = pending.pop()
        for attribute in node.attribute:  # bodies call functions too
            for graph in [attribute.g] if attribute.HasField("g") else list(attribute.graphs):
                pending.extend(graph.node)
        key = (node.domain, node.op_type)
        if key in by_key and key not in used:
            used[key] = by_key[key]
            pending.extend(by_key[key].node)
    return [f for f in model.functions if (f.domain, f.name) in used]


def _domains(nodes: list[onnx.NodeProto], functions: list[Any]) -> set[str]:
    found = set()
    pending = [*nodes, *(n for f in functions for n in f.node)]
    while pending:
        node = pending.pop()
        found.add(node.domain)
        for attribute in node.attribute:
            for graph in [attribute.g] if attribute.HasField("g") else list(attribute.graphs):
                pending.extend(graph.node)
    return found


def _value_info(name: str, value: Any) -> onnx.ValueInfoProto:
    array = np.asarray(value)
    elem = helper.np_dtype_to_tensor_dtype(array.dtype)
    return helper.make_tensor_value_info(name, elem, list(array.shape))


def candidate(
    model: onnx.ModelProto, keep: list[int], values: Feeds
) -> tuple[onnx.ModelProto, Feeds] | None:
    """The model of the kept nodes (indices into the graph), with its feeds; None when a
    value it needs was never computed (a subgraph's own value, say)."""
    nodes = [model.graph.node[i] for i in keep]
    produced = {o for n in nodes for o in n.output if o}
    consumed = [i for n in nodes for i in outer_names(n)]
    needed = list(dict.fromkeys(i for i in consumed if i not in produced))
    if any(name not in values for name in needed):
        return None
    later = set(consumed)
    originals = {o.name for o in model.graph.output}
    outputs = [o for n in nodes for o in n.output if o and (o not in later or o in originals)]
    if not outputs:
        return None
    initializers = {t.name: t for t in model.graph.initializer}
    feeds = {name: values[name] for name in needed if name not in initializers}
    # the model's own declarations where a value is the model's input or output (their
    # symbolic dims may be what fails), the real value's type and shape elsewhere
    declared: dict[str, onnx.ValueInfoProto] = {
        v.name: v for v in [*model.graph.input, *model.graph.output]
    }

    def info(name: str) -> onnx.ValueInfoProto:
        if name in declared:
            return declared[name]
        return _value_info(name, values[name]) if name in values else onnx.ValueInfoProto(name=name)

    graph = helper.make_graph(
        list(nodes),
        model.graph.name
        if model.graph.name.endswith("_reduced")
        else f"{model.graph.name}_reduced",
        [info(name) for name in feeds],
        [info(name) for name in outputs],
        [initializers[name] for name in needed if name in initializers],
    )
    functions = _functions_used(model, nodes)
    domains = _domains(nodes, functions) | {f.domain for f in functions}
    domains = {"ai.onnx" if d == "" else d for d in domains} | {"ai.onnx"}
    opsets = [o for o in model.opset_import if (o.domain or "ai.onnx") in domains]
    reduced = helper.make_model(graph, opset_imports=opsets)
    reduced.ir_version = model.ir_version
    reduced.functions.extend(functions)
    return reduced, feeds


def _taken(node: onnx.NodeProto, values: Feeds, which: str | None = None) -> onnx.GraphProto | None:
    """The branch an If node takes on these values, or the one named `which` (None:
    no If, or no condition)."""
    if node.op_type != "If" or node.domain not in ("", "ai.onnx") or node.input[0] not in values:
        return None
    taken = which or (
        "then_branch" if bool(np.asarray(values[node.input[0]]).item()) else "else_branch"
    )
    branch: onnx.GraphProto = next(a.g for a in node.attribute if a.name == taken)
    return branch


def _names(graph: onnx.GraphProto) -> set[str]:
    names = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    return names | {o for n in graph.node for o in n.output if o}


def _inline(
    graph: onnx.GraphProto, index: int, values: Feeds, outside: set[str], which: str | None = None
) -> bool:
    """Replaces If node `index` of `graph` (in place) by the branch it takes (or branch
    `which`), its outputs passed on by Identity nodes; False, leaving the graph alone,
    when it cannot."""
    node = graph.node[index]
    branch = _taken(node, values, which)
    if branch is None or (_names(branch) & (outside | _names(graph))):
        return False
    passed = [
        helper.make_node("Identity", [inner.name], [outer])
        for inner, outer in zip(branch.output, node.output, strict=False)
        if outer
    ]
    nodes = list(graph.node)
    del graph.node[:]
    graph.node.extend([*nodes[:index], *branch.node, *passed, *nodes[index + 1 :]])
    graph.initializer.extend(branch.initializer)
    return True


def inline_if(
    model: onnx.ModelProto,
    index: int,
    values: Feeds,
    nested: int | None = None,
    which: str | None = None,
) -> onnx.ModelProto | None:
    """The model with its top-level If node `index` replaced by the branch its condition
    takes on these values (or, with `nested`, the If node `nested` inside that branch
    replaced by its own taken branch); `which` names the branch of node `index` instead
    (the other one: its values as if the condition were the other way). The branch's
    outputs are passed to the If's outputs by Identity nodes; None when it is no If,
    its condition was not computed, or a name inside the branch is also one outside."""
    flat = onnx.ModelProto()
    flat.CopyFrom(model)
    if nested is None:
        return flat if _inline(flat.graph, index, values, set(), which) else None
    branch = _taken(flat.graph.node[index], values, which)
    if branch is None or nested >= len(branch.node):
        return None
    return flat if _inline(branch, nested, values, _names(flat.graph)) else None


def nodes_in_bodies(graph: onnx.GraphProto) -> int:
    """How many nodes the subgraph bodies of a graph's nodes hold, at every depth."""
    return sum(
        len(body.node) + nodes_in_bodies(body)
        for node in graph.node
        for a in node.attribute
        for body in ([a.g] if a.HasField("g") else list(a.graphs))
    )


def branch_candidate(
    model: onnx.ModelProto,
    index: int,
    keep: list[int],
    values: Feeds,
    feeds: Feeds,
    which: str,
) -> tuple[onnx.ModelProto, Feeds] | None:
    """The model with branch `which` of its If node `index` cut to the branch nodes
    `keep`: a value the kept nodes need from a dropped branch node becomes a graph
    input of the model (read from the outer scope, fed with the real value), a branch
    output a dropped node produced is passed in the same way through an Identity."""
    taken = which
    branch = next(a.g for a in model.graph.node[index].attribute if a.name == taken)
    kept = [branch.node[i] for i in keep]
    produced = {o for n in kept for o in n.output if o} | {t.name for t in branch.initializer}
    inside = {o for n in branch.node for o in n.output if o}
    needed = [v for n in kept for v in outer_names(n) if v in inside and v not in produced]
    passed = []
    for output in branch.output:
        if output.name not in produced:
            needed.append(f"{output.name}__passed")
            passed.append(helper.make_node("Identity", [f"{output.name}__passed"], [output.name]))
    given = {v: values[v.removesuffix("__passed")] for v in dict.fromkeys(needed)}
    if any(v.removesuffix("__passed") not in values for v in given):
        return None
    cut = onnx.ModelProto()
    cut.CopyFrom(model)
    body = next(a for a in cut.graph.node[index].attribute if a.name == taken).g
    del body.node[:]
    body.node.extend([*kept, *passed])
    used = {i for n in body.node for i in outer_names(n)}
    keep_init = [t for t in branch.initializer if t.name in used]
    del body.initializer[:]
    body.initializer.extend(keep_init)
    declared = {i.name for i in cut.graph.input}
    cut.graph.input.extend(_value_info(n, v) for n, v in given.items() if n not in declared)
    return cut, {**feeds, **given}


def reduce(
    model: onnx.ModelProto,
    feeds: Feeds,
    fails: Predicate,
    progress: Progress = lambda model, tried: None,
    values: Feeds | None = None,
) -> Reduced:
    """ddmin over the top-level nodes; then each If still kept is replaced by the branch
    its condition takes when the model still fails that way (ddmin goes on over the
    branch's nodes), else its branches are cut down by ddmin; again from the top while
    the model shrinks. The original must fail. `values`: the model's intermediate
    values when the caller has them."""
    if not fails(model, feeds):
        raise ValueError("the model does not fail this way: nothing to reduce")
    values = values if values is not None else intermediates(model, feeds)
    tried = 0
    while True:
        top, known = model, values
        model, feeds, tried = _ddmin(
            len(top.graph.node),
            lambda keep: candidate(top, keep, known),  # noqa: B023  (called before top changes)
            (model, feeds), fails, progress, tried,
        )  # fmt: skip
        flat = None
        for index in range(len(model.graph.node)):
            inlined = inline_if(model, index, values)
            if inlined is not None:
                tried += 1
                if fails(inlined, feeds):
                    flat = inlined
                    break
        if flat is not None:
            try:
                values = intermediates(flat, feeds)
            except ValueError:
                return Reduced(flat, feeds, tried)
            model = flat
            progress(model, tried)
            continue
        before = _size(model)
        model, feeds, tried = _cut_branches(model, feeds, values, fails, progress, tried)
        if _size(model) >= before:
            return Reduced(*_unused_inputs_dropped(model, feeds, fails), tried)
        values = {**values, **feeds}  # what a cut branch now reads from the outer scope


def _unused_inputs_dropped(
    model: onnx.ModelProto, feeds: Feeds, fails: Predicate
) -> tuple[onnx.ModelProto, Feeds]:
    """The model without graph inputs no node reads (a cut branch leaves some), when it
    still fails that way without them."""
    read = {n for node in model.graph.node for n in outer_names(node)}
    read |= {o.name for o in model.graph.output}
    unused = [i.name for i in model.graph.input if i.name not in read]
    if not unused:
        return model, feeds
    slim = onnx.ModelProto()
    slim.CopyFrom(model)
    kept = [i for i in slim.graph.input if i.name not in unused]
    del slim.graph.input[:]
    slim.graph.input.extend(kept)
    slim_feeds = {k: v for k, v in feeds.items() if k not in unused}
    return (slim, slim_feeds) if fails(slim, slim_feeds) else (model, feeds)


def _size(model: onnx.ModelProto) -> int:
    return len(model.graph.node) + nodes_in_bodies(model.graph)


def _cut_branches(
    model: onnx.ModelProto,
    feeds: Feeds,
    values: Feeds,
    fails: Predicate,
    progress: Progress,
    tried: int,
) -> tuple[onnx.ModelProto, Feeds, int]:
    """ddmin inside both branches of every If that could not be replaced by the branch
    it takes (the taken one first): a branch's own values come from the model with the
    If replaced by that branch, on the same feeds; an If inside a branch is replaced by
    its own taken branch when the model still fails that way."""
    for index in range(len(model.graph.node)):
        node = model.graph.node[index]
        if _taken(node, values) is None:
            continue
        taken = "then_branch" if bool(np.asarray(values[node.input[0]]).item()) else "else_branch"
        other = "else_branch" if taken == "then_branch" else "then_branch"
        for which in (taken, other):
            model, feeds, tried = _cut_branch(
                model, feeds, values, fails, progress, tried, index, which
            )
    return model, feeds, tried


def _cut_branch(
    model: onnx.ModelProto,
    feeds: Feeds,
    values: Feeds,
    fails: Predicate,
    progress: Progress,
    tried: int,
    index: int,
    which: str,
) -> tuple[onnx.ModelProto, Feeds, int]:
    inlined = inline_if(model, index, values, which=which)
    if inlined is None:
        return model, feeds, tried
    try:
        inner = {**values, **intermediates(inlined, feeds)}
    except ValueError:  # that branch does not run on these values
        return model, feeds, tried
    while True:
        current, current_feeds = model, feeds
        size = len(_taken(model.graph.node[index], inner, which).node)  # type: ignore[union-attr]
        model, feeds, tried = _ddmin(
            size,
            lambda keep: branch_candidate(current, index, keep, inner, current_feeds, which),  # noqa: B023
            (model, feeds), fails, progress, tried, least=0,  # a branch may just pass values on
        )  # fmt: skip
        flat = None  # an If inside the branch replaced by the branch it takes
        for nested in range(len(_taken(model.graph.node[index], inner, which).node)):  # type: ignore[union-attr]
            candidate_model = inline_if(model, index, inner, nested, which)
            if candidate_model is not None:
                tried += 1
                if fails(candidate_model, feeds):
                    flat = candidate_model
                    break
        if flat is None:
            return model, feeds, tried
        whole = inline_if(flat, index, inner, which=which)
        try:
            inner = {**inner, **intermediates(whole, feeds)} if whole else inner
        except ValueError:
            return flat, feeds, tried
        model = flat
        progress(model, tried)


def _ddmin(
    size: int,
    build: Callable[[list[int]], tuple[onnx.ModelProto, Feeds] | None],
    start: tuple[onnx.ModelProto, Feeds],
    fails: Predicate,
    progress: Progress,
    tried: int,
    least: int = 1,
) -> tuple[onnx.ModelProto, Feeds, int]:
    """Drops chunks of `size` items while the failure persists (`build(keep)` makes the
    candidate that keeps those, never fewer than `least`), halving the chunk size down
    to single items: the smallest model found, its feeds, the candidates tried in all."""
    keep = list(range(size))
    best = start
    chunk = max(1, len(keep) // 2)
    while True:
        removed = False
        for first in range(0, len(keep), chunk):
            trial = keep[:first] + keep[first + chunk :]
            if len(trial) < least:
                continue
            built = build(trial)
            tried += 1
            if built is not None and fails(*built):
                keep, best, removed = trial, built, True
                progress(best[0], tried)
                break
        if removed:
            chunk = min(chunk, max(1, len(keep) // 2))
            continue
        if chunk == 1:
            return best[0], best[1], tried
        chunk = max(1, chunk // 2)
