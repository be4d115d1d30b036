"""The candidates of a reduction: pieces of a model that are valid models themselves.

A candidate keeps a subset of the top-level nodes: its inputs are the values those
nodes consume and do not produce (outer-scope values their subgraph bodies read
included), fed with the real intermediate tensors the whole model computes on the
user's inputs (on a runtime that runs it), its outputs the values they produce that
no kept node consumes. Unused initializers, value_info, local functions and opset
imports go. An If can be replaced by the branch its condition takes, or keep its
branches cut to some of their nodes (what a kept branch node needs from a dropped one
is read from the outer scope). compat/followup/reduce.py searches among them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import helper

Feeds = dict[str, Any]


def intermediates(model: onnx.ModelProto, feeds: Feeds) -> Feeds:
    """Every top-level value the model computes on `feeds`, inputs and initializers
    included: onnxruntime with optimizations off and every value made an output (quick,
    and it runs contrib ops), else onnx's reference evaluator (it runs models the host's
    onnxruntime cannot)."""
    names = [o for n in model.graph.node for o in n.output if o]
    try:
        values = _ort_values(model, names, feeds)
    except Exception as ort_failed:
        try:
            from onnx.reference import ReferenceEvaluator

            values = dict(zip(names, ReferenceEvaluator(model).run(names, feeds), strict=True))
        except Exception as reference_failed:
            raise ValueError(
                "cannot compute the intermediate values to cut the model at: onnxruntime: "
                f"{ort_failed}; onnx's reference evaluator: {reference_failed}"
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


def taken_branch(
    node: onnx.NodeProto, values: Feeds, which: str | None = None
) -> onnx.GraphProto | None:
    """The branch an If node takes on these values, or the one named `which` (None:
    no If, or no condition)."""
    taken = which or taken_name(node, values)
    if not taken:
        return None
    branch: onnx.GraphProto = next(a.g for a in node.attribute if a.name == taken)
    return branch


def taken_name(node: onnx.NodeProto, values: Feeds) -> str:
    """ "then_branch" or "else_branch": the branch an If node takes on these values; ""
    for another node, or an If whose condition was not computed."""
    if node.op_type != "If" or node.domain not in ("", "ai.onnx") or node.input[0] not in values:
        return ""
    return "then_branch" if bool(np.asarray(values[node.input[0]]).item()) else "else_branch"


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
    branch = taken_branch(node, values, which)
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
    branch = taken_branch(flat.graph.node[index], values, which)
    if branch is None or nested >= len(branch.node):
        return None
    return flat if _inline(branch, nested, values, _names(flat.graph)) else None


def node_count(model: onnx.ModelProto) -> int:
    """Nodes at every depth: the top level and the subgraph bodies."""
    return len(model.graph.node) + nodes_in_bodies(model.graph)


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
