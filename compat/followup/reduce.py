"""A failing model reduced to a smallest model that fails the same way (delta debugging
over its nodes), the first piece of `nox -s triage`.

A candidate keeps a subset of the top-level nodes: its inputs are the values those
nodes consume and do not produce, fed with the real intermediate tensors the whole
model computes on the user's inputs (on a runtime that runs it), its outputs the values
they produce that no kept node consumes. Unused initializers go, the opsets and
functions stay. `fails(model, feeds)` says whether a candidate still shows the same
failure; the caller decides what "the same" is (check, outcome, error class, message).
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


@dataclass(frozen=True)
class Reduced:
    model: onnx.ModelProto
    feeds: Feeds
    tried: int  # candidates evaluated


def intermediates(model: onnx.ModelProto, feeds: Feeds) -> Feeds:
    """Every top-level value the model computes on `feeds` (onnx's reference evaluator,
    which runs models a failing runtime cannot), inputs and initializers included."""
    from onnx.reference import ReferenceEvaluator

    names = [o for n in model.graph.node for o in n.output if o]
    evaluator = ReferenceEvaluator(model)
    values = dict(zip(names, evaluator.run(names, feeds), strict=True))
    for tensor in model.graph.initializer:
        values[tensor.name] = onnx.numpy_helper.to_array(tensor)
    return {**values, **feeds}


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
    consumed = [i for n in nodes for i in n.input if i]
    needed = list(dict.fromkeys(i for i in consumed if i not in produced))
    if any(name not in values for name in needed):
        return None
    later = {i for n in nodes for i in n.input}
    originals = {o.name for o in model.graph.output}
    outputs = [o for n in nodes for o in n.output if o and (o not in later or o in originals)]
    if not outputs:
        return None
    initializers = {t.name: t for t in model.graph.initializer}
    feeds = {name: values[name] for name in needed if name not in initializers}
    graph = helper.make_graph(
        list(nodes),
        f"{model.graph.name}_reduced",
        [_value_info(name, feeds[name]) for name in feeds],
        [
            _value_info(name, values[name]) if name in values else onnx.ValueInfoProto(name=name)
            for name in outputs
        ],
        [initializers[name] for name in needed if name in initializers],
    )
    reduced = helper.make_model(graph, opset_imports=list(model.opset_import))
    reduced.ir_version = model.ir_version
    reduced.functions.extend(model.functions)
    return reduced, feeds


def reduce(model: onnx.ModelProto, feeds: Feeds, fails: Predicate) -> Reduced:
    """ddmin over the top-level nodes: drop chunks while the failure persists, halving
    the chunk size down to single nodes; the original must fail."""
    if not fails(model, feeds):
        raise ValueError("the model does not fail this way: nothing to reduce")
    values = intermediates(model, feeds)
    keep = list(range(len(model.graph.node)))
    best = (model, feeds)
    tried = 0
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
                break
        if removed:
            chunk = min(chunk, max(1, len(keep) // 2))
            continue
        if chunk == 1:
            return Reduced(best[0], best[1], tried)
        chunk = max(1, chunk // 2)
