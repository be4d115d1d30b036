"""GreaterOrEqual / LessOrEqual on constant inputs, at opset 15 and at opset 16, feeding a live op.

Both comparisons exist since opset 12; up to opset 15 they are ONNX *function*
ops (Greater/Less Or Equal) without a type-and-shape inference function of their
own, and opset 16 gave them one. onnxruntime 1.27 added an output-size guard to
constant folding (#28055) that skips every node whose output size it cannot
estimate before running it; the opset-15 comparisons reach it with no inferred
shape, so they are never folded, and everything downstream of them (the Cast
below) stays live too. Nothing computes wrong: the model runs unfolded
(onnxruntime #32130; proposed fixes #32151, #32155, #32184).

Observed in this matrix (`ort_optimized`): the opset-15 forms fold in
onnxruntime 1.15.1-1.26.0 and stay in the graph from 1.27.0 through 1.32.0 (the
newest release here); the opset-16 forms fold in every release. Every other
check passes everywhere, so the regression is purely structural.

Rare form: `GreaterOrEqual` / `LessOrEqual` on constants at opset 15
Common twin: the same at opset 16
Shows: onnxruntime ≥ 1.27 stops folding the opset-15 forms (onnxruntime #32130)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper

from compat.core.case import Case, Detector, KnownFailure, Optimized
from compat.corpus.make import const, model, randn, rng, tensor, unknown
from compat.corpus.values import is_constant
from compat.corpus.walk import find

OPS = {"greater_or_equal": "GreaterOrEqual", "less_or_equal": "LessOrEqual"}
SHAPE = [2, 3]
LINK = "https://github.com/microsoft/onnxruntime/issues/32130"
#: the rare form's opset: the last where the comparisons have no inference of their own
FUNCTION_OPSET = 15
FOLDING_SKIPPED = {
    op: KnownFailure(
        package="onnxruntime",
        versions=">=1.27",
        checks=("ort_optimized",),
        reason=f"constant folding skips opset-{FUNCTION_OPSET} {op} (no pre-run size estimate)",
        link=LINK,
        phase=("compare",),
        match=rf"^{op} on constants not folded: ",
    )
    for op in OPS.values()
}


def _compare(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    result: np.ndarray = np.greater_equal(a, b) if op == "GreaterOrEqual" else np.less_equal(a, b)
    return result


def _case(kind: str, opset: int, consumer: str) -> Case:
    op = OPS[kind]
    gen = rng(9)
    # small integers as floats, so equal pairs exist and the "or equal" half matters
    a = gen.integers(-2, 3, SHAPE).astype(np.float32)
    b = gen.integers(-2, 3, SHAPE[-1:]).astype(np.float32)
    x = randn(gen, *SHAPE)
    z = randn(gen, *SHAPE)
    cond = _compare(op, a, b)
    nodes = [helper.make_node(op, ["a", "b"], ["cond"])]
    inputs = [tensor("x", np.float32, SHAPE)]
    feeds = {"x": x}
    if consumer == "where":
        nodes.append(helper.make_node("Where", ["cond", "x", "z"], ["y"]))
        inputs.append(tensor("z", np.float32, SHAPE))
        feeds["z"] = z
        expected = np.where(cond, x, z)
        counts = {op: 0}
        spelled = f"Where({op}(a, b), x, z)"
    else:
        nodes += [
            helper.make_node("Cast", ["cond"], ["mask"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["x", "mask"], ["y"]),
        ]
        expected = x * cond.astype(np.float32)
        counts = {op: 0, "Cast": 0}
        spelled = f"x * Cast({op}(a, b), float)"
    built = model(
        nodes,
        inputs,
        [tensor("y", np.float32, unknown(2))],
        [const("a", a), const("b", b)],
        opset=opset,
    )
    known: tuple[KnownFailure, ...] = ()
    if opset < 16:
        known = (FOLDING_SKIPPED[op],)
    return Case(
        id=f"compare_or_equal_folding.{kind}.{consumer}.opset{opset}",
        description=f"{spelled} at opset {opset}, a and b initializers",
        model=built,
        inputs=feeds,
        expected={"y": expected.astype(np.float32)},
        output_shapes={"cond": SHAPE, "y": SHAPE},
        optimized=Optimized(
            op_counts=counts,
            meaning=f"{op} on constants not folded",
        ),
        known=known,
    )


def cases() -> list[Case]:
    return [
        _case(kind, opset, consumer)
        for kind in OPS
        for consumer in ("where", "cast_mul")
        for opset in (15, 16)
    ]


def _on_constants(op: str) -> Callable[[onnx.ModelProto], list[str]]:
    """`op` at opset 12-15 (a function op there) with both inputs constant."""

    def find_in(model: onnx.ModelProto) -> list[str]:
        return [
            site.path
            for site in find(model, op)
            if site.at(op, since=12, before=FUNCTION_OPSET + 1)
            and all(is_constant(site.scope, name) for name in site.node.input)
        ]

    return find_in


DETECTORS = [
    Detector(
        id=f"compare_or_equal_folding.{kind}",
        construct=f"{op} at opset 12-{FUNCTION_OPSET} (an ONNX function op, no shape "
        "inference of its own) on constant inputs",
        known=FOLDING_SKIPPED[op],
        find=_on_constants(op),
    )
    for kind, op in OPS.items()
]
