"""A failing model reduced to a smallest model that fails the same way: delta
debugging over its nodes (compat/followup/cut.py makes the candidates), for
`nox -s triage`.

`fails(model, feeds)` says whether a candidate still shows the same failure; the
caller decides what "the same" is (check, outcome, error class, message). An If that
is still kept is replaced by the branch its condition takes on the user's inputs when
the model still fails that way (the branch's nodes are then reduced like the rest),
else both its branches are cut down inside the If; Loop and Scan bodies are kept whole
with their node.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import onnx

from compat.followup.cut import (
    Feeds,
    branch_candidate,
    candidate,
    inline_if,
    intermediates,
    node_count,
    outer_names,
    taken_branch,
    taken_name,
)

Predicate = Callable[[onnx.ModelProto, Feeds], bool]

#: told the smallest model so far and the candidates tried, as the model shrinks
Progress = Callable[[onnx.ModelProto, int], None]


@dataclass(frozen=True)
class Reduced:
    model: onnx.ModelProto
    feeds: Feeds
    tried: int  # candidates evaluated


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
        top = model
        known = values
        model, feeds, tried = _ddmin(
            len(top.graph.node),
            lambda keep: candidate(top, keep, known),  # noqa: B023  (called before top changes)
            (model, feeds),
            fails,
            progress,
            tried,
        )
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
        before = node_count(model)
        model, feeds, tried = _cut_branches(model, feeds, values, fails, progress, tried)
        if node_count(model) >= before:
            return Reduced(*_unused_inputs_dropped(model, feeds, fails), tried)
        values = {**values, **feeds}  # what a cut branch now reads from the outer scope


def _unused_inputs_dropped(
    model: onnx.ModelProto, feeds: Feeds, fails: Predicate
) -> tuple[onnx.ModelProto, Feeds]:
    """The model without graph inputs and initializers no node reads (a cut branch
    leaves some), when it still fails that way without them."""
    read = {n for node in model.graph.node for n in outer_names(node)}
    read |= {o.name for o in model.graph.output}
    unused = {i.name for i in [*model.graph.input, *model.graph.initializer]} - read
    if not unused:
        return model, feeds
    slim = onnx.ModelProto()
    slim.CopyFrom(model)
    kept = [i for i in slim.graph.input if i.name not in unused]
    del slim.graph.input[:]
    slim.graph.input.extend(kept)
    needed = [t for t in slim.graph.initializer if t.name not in unused]
    del slim.graph.initializer[:]
    slim.graph.initializer.extend(needed)
    slim_feeds = {k: v for k, v in feeds.items() if k not in unused}
    return (slim, slim_feeds) if fails(slim, slim_feeds) else (model, feeds)


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
        taken = taken_name(model.graph.node[index], values)
        if not taken:
            continue
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
        current = model
        current_feeds = feeds
        branch = taken_branch(model.graph.node[index], inner, which)
        if branch is None:
            return model, feeds, tried
        size = len(branch.node)
        model, feeds, tried = _ddmin(
            size,
            lambda keep: branch_candidate(current, index, keep, inner, current_feeds, which),  # noqa: B023
            (model, feeds),
            fails,
            progress,
            tried,
            least=0,  # a branch may just pass values on
        )
        flat = None  # an If inside the branch replaced by the branch it takes
        cut_branch = taken_branch(model.graph.node[index], inner, which)
        for nested in range(len(cut_branch.node) if cut_branch is not None else 0):
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
                keep = trial
                best = built
                removed = True
                progress(best[0], tried)
                break
        if removed:
            chunk = min(chunk, max(1, len(keep) // 2))
            continue
        if chunk == 1:
            return best[0], best[1], tried
        chunk = max(1, chunk // 2)
