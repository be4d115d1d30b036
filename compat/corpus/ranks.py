"""The rank of a value of a walked model where the model declares none: what a detector
asks of a tensor written by an exporter that leaves out value_info (tf2onnx, jax2tf),
as onnx's shape inference would answer it for the rank alone.

A scope's ranks are found in one pass over its nodes in their (topological) order, each
output's rank from its inputs' by the operator's rule below, and kept for the scope
(`Scope.memo`): linear in the model's size, no recursion, no shape inference (which is
C++ the scan cannot stop: compat/corpus/session.py). A rule that cannot tell (an input
of unknown rank, axes that are not constants, an operator not in the tables) says None,
so a detector reading a rank never guesses.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

from compat.corpus import session
from compat.corpus.scopes import DEFAULT_DOMAINS, Scope, Site
from compat.corpus.values import constant, dims

Rank = int | None

#: operators whose (first) output has the rank of their first input
SAME_AS_FIRST = frozenset(
    [
        "Abs",
        "Acos",
        "Acosh",
        "Asin",
        "Asinh",
        "Atan",
        "Atanh",
        "AveragePool",
        "BatchNormalization",
        "Cast",
        "CastLike",
        "Ceil",
        "Celu",
        "Clip",
        "Cos",
        "Cosh",
        "CumSum",
        "DepthToSpace",
        "DequantizeLinear",
        "Dropout",
        "Elu",
        "Erf",
        "Exp",
        "Floor",
        "Gelu",
        "GlobalAveragePool",
        "GlobalLpPool",
        "GlobalMaxPool",
        "HardSigmoid",
        "HardSwish",
        "Hardmax",
        "Identity",
        "InstanceNormalization",
        "IsInf",
        "IsNaN",
        "LRN",
        "LayerNormalization",
        "LeakyRelu",
        "Log",
        "LogSoftmax",
        "LpNormalization",
        "LpPool",
        "MaxPool",
        "MeanVarianceNormalization",
        "Mish",
        "Neg",
        "Not",
        "PRelu",
        "Pad",
        "QuantizeLinear",
        "Reciprocal",
        "Relu",
        "ReverseSequence",
        "Resize",
        "Round",
        "Selu",
        "Shrink",
        "Sigmoid",
        "Sign",
        "Sin",
        "Sinh",
        "Slice",
        "Softmax",
        "Softplus",
        "Softsign",
        "SpaceToDepth",
        "Sqrt",
        "Tan",
        "Tanh",
        "ThresholdedRelu",
        "Tile",
        "Transpose",
        "Trilu",
        "Upsample",
    ]
)
#: operators whose output has the largest rank of their inputs (numpy broadcasting)
BROADCAST = frozenset(
    [
        "Add",
        "And",
        "BitShift",
        "BitwiseAnd",
        "BitwiseOr",
        "BitwiseXor",
        "Div",
        "Equal",
        "Greater",
        "GreaterOrEqual",
        "Less",
        "LessOrEqual",
        "Max",
        "Mean",
        "Min",
        "Mod",
        "Mul",
        "Or",
        "Pow",
        "Sub",
        "Sum",
        "Where",
        "Xor",
    ]
)
#: operators whose output has a fixed rank
FIXED = {"Flatten": 2, "Gemm": 2, "Shape": 1, "Size": 0, "NonZero": 2}
REDUCE = frozenset(
    [
        "ReduceL1",
        "ReduceL2",
        "ReduceLogSum",
        "ReduceLogSumExp",
        "ReduceMax",
        "ReduceMean",
        "ReduceMin",
        "ReduceProd",
        "ReduceSum",
        "ReduceSumSquare",
        "ArgMax",
        "ArgMin",
    ]
)


def rank(scope: Scope, name: str) -> Rank:
    """The rank of `name`: from its constant or declared shape, else from its producer's
    rule over the ranks of the producer's inputs; None when nothing tells."""
    shown = dims(scope, name)
    if shown is not None:
        return len(shown)
    if ("ranks", "") not in scope.memo:
        scope.memo[("ranks", "")] = _ranks(scope)
    found: Rank = scope.memo[("ranks", "")].get(name)
    return found


def _ranks(scope: Scope) -> dict[str, Rank]:
    """Each output's rank in `scope`, node by node in order."""
    known: dict[str, Rank] = {}

    def of(name: str) -> Rank:
        if not name:
            return None
        if name in known:
            return known[name]
        shown = dims(scope, name)
        return len(shown) if shown is not None else None

    for site in scope.sites:
        session.tick(site)
        node = site.node
        if node.output and node.domain in DEFAULT_DOMAINS:
            known[node.output[0]] = _rule(site, [of(i) for i in node.input])
    return known


def _axes(site: Site) -> Sequence[int] | None:
    """A Squeeze's, Unsqueeze's or reduction's axes: the attribute, else the constant
    second input; None when they are computed (or absent)."""
    given = site.attribute("axes")
    if given is not None:
        return [int(a) for a in cast(Sequence[int], given)]
    if len(site.node.input) > 1 and site.node.input[1]:
        value = constant(site.scope, site.node.input[1])
        return [int(a) for a in value.reshape(-1)] if value is not None else None
    return None


def _reduced(site: Site, ranks: list[Rank]) -> Rank:
    if not ranks or ranks[0] is None:
        return None
    if site.attribute("keepdims", 1):
        return ranks[0]
    if site.node.op_type in ("ArgMax", "ArgMin"):
        return ranks[0] - 1
    axes = _axes(site)
    if axes is None:
        # no axes: every axis is reduced, unless noop_with_empty_axes, or computed axes
        given = len(site.node.input) > 1 and site.node.input[1]
        noop = site.attribute("noop_with_empty_axes", 0)
        return None if given else (ranks[0] if noop else 0)
    return ranks[0] - len({a % ranks[0] for a in axes}) if ranks[0] else None


def _squeezed(site: Site, ranks: list[Rank]) -> Rank:
    axes = _axes(site)
    if not ranks or ranks[0] is None or axes is None:
        return None
    return ranks[0] - len(set(axes)) if site.node.op_type == "Squeeze" else ranks[0] + len(axes)


def _matmul(site: Site, ranks: list[Rank]) -> Rank:
    if len(ranks) < 2 or ranks[0] is None or ranks[1] is None:
        return None
    if ranks[0] == 1 or ranks[1] == 1:  # a vector operand's dim is removed
        return max(ranks[0], ranks[1]) - 1 if min(ranks[0], ranks[1]) == 1 else None
    return max(ranks[0], ranks[1])


def _reshaped(site: Site, ranks: list[Rank]) -> Rank:
    shape = constant(site.scope, site.node.input[1]) if len(site.node.input) > 1 else None
    return int(shape.size) if shape is not None else None


def _concat(site: Site, ranks: list[Rank]) -> Rank:
    return next((r for r in ranks if r is not None), None)


def _conv(site: Site, ranks: list[Rank]) -> Rank:
    """A convolution's rank: its input's, or its weight's (which has the same)."""
    weight = 3 if site.node.op_type == "QLinearConv" else 1
    return ranks[0] if ranks and ranks[0] is not None else next(iter(ranks[weight:][:1]), None)


def _gather(site: Site, ranks: list[Rank]) -> Rank:
    if len(ranks) < 2 or ranks[0] is None or ranks[1] is None:
        return None
    return ranks[0] + ranks[1] - 1


def _expand(site: Site, ranks: list[Rank]) -> Rank:
    shape = constant(site.scope, site.node.input[1]) if len(site.node.input) > 1 else None
    if not ranks or ranks[0] is None or shape is None:
        return None
    return max(ranks[0], int(shape.size))


RULES: dict[str, Callable[[Site, list[Rank]], Rank]] = {
    "Squeeze": _squeezed,
    "Unsqueeze": _squeezed,
    "MatMul": _matmul,
    "MatMulInteger": _matmul,
    "Reshape": _reshaped,
    "Concat": _concat,
    "Gather": _gather,
    "Expand": _expand,
    **{op: _conv for op in ("Conv", "ConvInteger", "ConvTranspose", "QLinearConv")},
    **{op: _reduced for op in REDUCE},
}


def _rule(site: Site, ranks: list[Rank]) -> Rank:
    """The rank of `site`'s first output from its inputs' ranks."""
    op = site.node.op_type
    if op in SAME_AS_FIRST:
        return ranks[0] if ranks else None
    if op in BROADCAST:
        return None if not ranks or None in ranks else max(r for r in ranks if r is not None)
    if op in FIXED:
        return FIXED[op]
    rule = RULES.get(op)
    return rule(site, ranks) if rule is not None else None
