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
inputs when the model still fails that way, and the branch's nodes are reduced in turn;
Loop and Scan bodies are kept whole with their node.
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
#: told the number of nodes kept and the candidates tried so far, as the model shrinks
Progress = Callable[[int, int], None]


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
        f"{model.graph.name}_reduced",
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


def inline_if(model: onnx.ModelProto, index: int, values: Feeds) -> onnx.ModelProto | None:
    """The model with its top-level If node `index` replaced by the branch its condition
    takes on these values, the branch's outputs passed to the If's outputs by Identity
    nodes; None when it is no If, its condition was not computed, or a name inside the
    branch is also a name outside it."""
    node = model.graph.node[index]
    if node.op_type != "If" or node.domain not in ("", "ai.onnx") or node.input[0] not in values:
        return None
    taken = "then_branch" if bool(np.asarray(values[node.input[0]]).item()) else "else_branch"
    branch = next(a.g for a in node.attribute if a.name == taken)
    outside = {i.name for i in model.graph.input} | {t.name for t in model.graph.initializer}
    outside |= {o for n in model.graph.node for o in n.output if o}
    inside = {o for n in branch.node for o in n.output if o} | {t.name for t in branch.initializer}
    if inside & outside:
        return None
    passed = [
        helper.make_node("Identity", [inner.name], [outer])
        for inner, outer in zip(branch.output, node.output, strict=False)
        if outer
    ]
    flat = onnx.ModelProto()
    flat.CopyFrom(model)
    nodes = list(model.graph.node)
    del flat.graph.node[:]
    flat.graph.node.extend([*nodes[:index], *branch.node, *passed, *nodes[index + 1 :]])
    flat.graph.initializer.extend(branch.initializer)
    return flat


def reduce(
    model: onnx.ModelProto,
    feeds: Feeds,
    fails: Predicate,
    progress: Progress = lambda nodes, tried: None,
    values: Feeds | None = None,
) -> Reduced:
    """ddmin over the top-level nodes; then each If still kept is replaced by the branch
    its condition takes (when the model still fails the same way), and ddmin goes on
    over the branch's nodes, until neither shrinks the model. The original must fail.
    `values`: the model's intermediate values when the caller has them."""
    if not fails(model, feeds):
        raise ValueError("the model does not fail this way: nothing to reduce")
    values = values if values is not None else intermediates(model, feeds)
    tried = 0
    while True:
        model, feeds, tried = _ddmin(model, feeds, values, fails, progress, tried)
        flat = None
        for index in range(len(model.graph.node)):
            inlined = inline_if(model, index, values)
            if inlined is not None:
                tried += 1
                if fails(inlined, feeds):
                    flat = inlined
                    break
        if flat is None:
            return Reduced(model, feeds, tried)
        try:
            values = intermediates(flat, feeds)
        except ValueError:
            return Reduced(flat, feeds, tried)
        model = flat
        progress(len(model.graph.node), tried)


def _ddmin(
    model: onnx.ModelProto,
    feeds: Feeds,
    values: Feeds,
    fails: Predicate,
    progress: Progress,
    tried: int,
) -> tuple[onnx.ModelProto, Feeds, int]:
    """Drops chunks of nodes while the failure persists, halving the chunk size down to
    single nodes: the smallest model found, its feeds, the candidates tried in all."""
    keep = list(range(len(model.graph.node)))
    best = (model, feeds)
    chunk = max(1, len(keep) // 2)
    while True:
        removed = False
        for start in range(0, len(keep), chunk):
            trial = keep[:start] + keep[start + chunk :]
            if not trial:
                continue
            built = candidate(model, trial, values)
            tried += 1
            if built is not None and fails(*built):
                keep, best, removed = trial, built, True
                progress(len(keep), tried)
                break
        if removed:
            chunk = min(chunk, max(1, len(keep) // 2))
            continue
        if chunk == 1:
            return best[0], best[1], tried
        chunk = max(1, chunk // 2)
