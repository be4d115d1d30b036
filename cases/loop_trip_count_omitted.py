"""Loop whose trip count is omitted (`Loop("", cond, v)`), stopped by its condition,
next to the same loop with an explicit trip count.

Both inputs M and cond of Loop are optional; with M written as "" the loop is a
`while (cond)` and only the body's condition output ends it. Here the body adds 1 to
a 2-vector and keeps going while its sum is below 9, so it runs 4 times and
emits 4 scan rows; the explicit twin passes M = 10, which the condition beats.

onnx's reference evaluator could not run the omitted form: its Loop took M as a
required argument and failed with "Issues with types [<class 'NoneType'>, ...]
(operator 'Loop')" (onnx #5750, fixed by onnx PR #5752). The report names onnx
<= 1.14 and a fix in 1.16.0; this matrix observes onnx 1.14.1 and 1.15.0 failing
(`reference`, and `annotations`, which runs the model in the reference evaluator too)
and 1.16.2 on passing. onnxruntime runs both forms on every release (1.15.1-1.32.0).

Rare form: `Loop("", cond, v)`, a while loop
Common twin: the same loop with an explicit trip count
Shows: onnx < 1.16's reference evaluator cannot run the rare form (onnx #5750)
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from compat.core.case import Case, Detector, KnownFailure
from compat.corpus.make import const, model, tensor
from compat.corpus.walk import find, input_form

V0 = np.array([0.5, 1.0], dtype=np.float32)
LIMIT = 9.0  # the loop runs while sum(v) < LIMIT
TRIP_COUNT = 10  # the explicit twin's M: larger than the iterations the condition allows
REFERENCE_NEEDS_M = KnownFailure(
    package="onnx",
    versions="<1.16",
    checks=("reference",),
    reason="the reference Loop requires the trip count M",
    link="https://github.com/onnx/onnx/issues/5750",
    phase=("run",),
    raises=("TypeError",),
    match=r"Issues with types \[<class 'NoneType'>, .*\(operator 'Loop'\)",
)


def _body() -> onnx.GraphProto:
    """(i, cond_in, v_in) -> (cond_out, v_out, row): v += 1, continue while sum(v) < 9."""
    nodes = [
        helper.make_node("Add", ["v_in", "one"], ["v_out"]),
        helper.make_node("ReduceSum", ["v_out"], ["total"], keepdims=0),
        helper.make_node("Less", ["total", "limit"], ["cond_out"]),
        helper.make_node("Identity", ["v_out"], ["row"]),
    ]
    return helper.make_graph(
        nodes,
        "body",
        [
            tensor("i", np.int64, []),
            tensor("cond_in", np.bool_, []),
            tensor("v_in", np.float32, [2]),
        ],
        [
            tensor("cond_out", np.bool_, []),
            tensor("v_out", np.float32, [2]),
            tensor("row", np.float32, [2]),
        ],
        [
            const("one", np.ones(2, dtype=np.float32)),
            const("limit", np.array(LIMIT, dtype=np.float32)),
        ],
    )


def _oracle(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    rows = []
    cond = True
    while cond:
        v = (v + 1).astype(np.float32)
        rows.append(v)
        cond = bool(v.sum() < LIMIT)
    return v, np.stack(rows)


def _case(form: str) -> Case:
    initializers = [const("cond", np.array(True))]
    if form == "omitted":
        trip = ""
        spelled = 'Loop("", cond, v)'
    else:
        trip = "M"
        initializers.append(const("M", np.array(TRIP_COUNT, dtype=np.int64)))
        spelled = f"Loop(M={TRIP_COUNT}, cond, v)"
    built = model(
        [helper.make_node("Loop", [trip, "cond", "v"], ["v_final", "rows"], body=_body())],
        [tensor("v", np.float32, [2])],
        [tensor("v_final", np.float32, [2]), tensor("rows", np.float32, [None, 2])],
        initializers,
    )
    final, rows = _oracle(V0)
    known: tuple[KnownFailure, ...] = (REFERENCE_NEEDS_M,) if form == "omitted" else ()
    return Case(
        id=f"loop_trip_count_omitted.{form}",
        description=f"{spelled} whose body stops it after 4 iterations",
        model=built,
        inputs={"v": V0},
        expected={"v_final": final, "rows": rows},
        known=known,
    )


def cases() -> list[Case]:
    return [_case("omitted"), _case("explicit")]


def _trip_count_empty(model: onnx.ModelProto) -> list[str]:
    """Loop whose trip count M is written as "": a while loop."""
    return [site.path for site in find(model, "Loop") if input_form(site.node, 0) == "empty"]


DETECTORS = [
    Detector(
        id="loop_trip_count_omitted.empty_trip_count",
        construct='Loop with its trip count M written as "" (a while loop)',
        known=REFERENCE_NEEDS_M,
        find=_trip_count_empty,
    ),
]
