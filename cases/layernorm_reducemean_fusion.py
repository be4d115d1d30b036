"""LayerNorm / RMSNorm written with ReduceMean-18 (axes input) vs ReduceMean-13 (axes attribute).

Exporters that target opset < 17 (or decompose LayerNormalization) write the
normalization as ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add;
RMSNorm as Pow, ReduceMean, Add, Sqrt, Div, Mul. onnxruntime fuses these
patterns into LayerNormalization and SimplifiedLayerNormalization (both in the
default domain in the optimized graph). Opset 18 moved ReduceMean's `axes` from
an attribute to an input, so the same pattern exported at opset 18 has a
different node shape than at opset 13-17; the fusion first missed it and was
fixed for onnxruntime 1.14 (https://github.com/microsoft/onnxruntime/pull/14542).
`ort_optimized` (at level `extended`, where both fusions run in every release)
expects no ReduceMean left and one fused node. `keepdims0` is the negative
twin: with `keepdims=0` the reduced axis is dropped, Sub and Div broadcast the
per-row statistics along the columns of a square x, the graph is no
normalization, and the fusion must leave it alone.

Observed (18 onnxruntime releases, 1.15.1-1.32.0): the fusion fires for every
keepdims=1 form, with the axes as attribute (opsets 13 and 17) or as input
(opset 18, axis -1 or the positive last axis), for both norms. onnxruntime
1.20 moved LayerNorm fusion to level `basic` for models importing opset >= 16
(https://github.com/microsoft/onnxruntime/pull/21332): from 1.20 the opset-17/18
LayerNorm forms are already fused at `basic`, the opset-13 one only at
`extended`; RMSNorm stays at `extended`. `keepdims0` is fused anyway in every
release, and computes wrong values without any error at `extended` and `all`
(and, for LayerNorm, at `basic` too from 1.20):
https://github.com/microsoft/onnxruntime/issues/30513 (fix proposed in
https://github.com/microsoft/onnxruntime/pull/31144, not in any release of the
matrix). The attribute form (opset 17) of `keepdims0` behaves the same when
tried by hand. onnx's checker, shape inference and reference evaluator
(1.14.1-1.23.2) pass every case.

Rare form: LayerNorm / RMSNorm written with ReduceMean-18 (axes input)
Common twin: the same with ReduceMean-13 (axes attribute)
Shows: both fuse everywhere; a `keepdims=0` look-alike is fused too, wrongly (onnxruntime #30513)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import onnx
from onnx import helper

from compat.core.case import Case, Detector, KnownFailure, Optimized
from compat.corpus.make import const, model, randn, rng, tensor, unknown
from compat.corpus.values import made_by, same_value
from compat.corpus.walk import Site, find

SHAPE = (2, 4, 8)
EPSILON = 1e-5


class Form(NamedTuple):
    opset: int  # 13-17: ReduceMean-13 (axes attribute); 18: ReduceMean-18 (axes input)
    axis: int
    keepdims: int
    shape: tuple[int, ...]


FORMS = {
    "axes_attribute": Form(17, -1, 1, SHAPE),
    "axes_attribute_opset13": Form(13, -1, 1, SHAPE),
    "axes_input": Form(18, -1, 1, SHAPE),
    "axes_input_positive": Form(18, len(SHAPE) - 1, 1, SHAPE),
    # not a normalization: the reduced axis is dropped, so Sub/Div broadcast the
    # per-row statistics along the columns of a square x; must not be fused
    "keepdims0": Form(18, -1, 0, (4, 4)),
}


def _reduce_mean(form: Form, source: str, out: str) -> onnx.NodeProto:
    if form.opset >= 18:
        return helper.make_node("ReduceMean", [source, "axes"], [out], keepdims=form.keepdims)
    return helper.make_node("ReduceMean", [source], [out], axes=[form.axis], keepdims=form.keepdims)


def _nodes(norm: str, form: Form) -> list[onnx.NodeProto]:
    if norm == "layernorm":
        return [
            _reduce_mean(form, "x", "mean"),
            helper.make_node("Sub", ["x", "mean"], ["centered"]),
            helper.make_node("Pow", ["centered", "two"], ["squared"]),
            _reduce_mean(form, "squared", "variance"),
            helper.make_node("Add", ["variance", "epsilon"], ["variance_eps"]),
            helper.make_node("Sqrt", ["variance_eps"], ["std"]),
            helper.make_node("Div", ["centered", "std"], ["normalized"]),
            helper.make_node("Mul", ["normalized", "gamma"], ["scaled"]),
            helper.make_node("Add", ["scaled", "beta"], ["y"]),
        ]
    return [
        helper.make_node("Pow", ["x", "two"], ["squared"]),
        _reduce_mean(form, "squared", "mean_square"),
        helper.make_node("Add", ["mean_square", "epsilon"], ["mean_square_eps"]),
        helper.make_node("Sqrt", ["mean_square_eps"], ["rms"]),
        helper.make_node("Div", ["x", "rms"], ["normalized"]),
        helper.make_node("Mul", ["normalized", "gamma"], ["y"]),
    ]


def _oracle(
    norm: str, keepdims: bool, x: np.ndarray, gamma: np.ndarray, beta: np.ndarray
) -> np.ndarray:
    x64 = x.astype(np.float64)
    if norm == "layernorm":
        centered = x64 - x64.mean(axis=-1, keepdims=keepdims)
        out = centered / np.sqrt((centered**2).mean(axis=-1, keepdims=keepdims) + EPSILON)
        out = out * gamma + beta
    else:
        out = x64 / np.sqrt((x64**2).mean(axis=-1, keepdims=keepdims) + EPSILON) * gamma
    result: np.ndarray = out.astype(np.float32)
    return result


FUSED = {"layernorm": "LayerNormalization", "rmsnorm": "SimplifiedLayerNormalization"}
#: the levels each fusion runs at (onnxruntime PR #21332 moved LayerNorm's to basic)
FUSED_AT = {"layernorm": "extended and all, basic too from 1.20", "rmsnorm": "extended and all"}
KEEPDIMS_IGNORED = {
    norm: KnownFailure(
        package="onnxruntime",
        versions="",
        checks=("ort_run", "ort_optimized"),
        reason=f"{fused} fusion ignores ReduceMean's keepdims=0 and computes "
        f"something else at the levels that run it: {FUSED_AT[norm]}",
        link="https://github.com/microsoft/onnxruntime/issues/30513",
        phase=("compare",),
        # ort_run: wrong values where the fusion runs; ort_optimized: the fused node
        match=rf"extended, all: output 'y' differs|which is no {norm}, fused into {fused}: ",
    )
    for norm, fused in FUSED.items()
}


def _case(norm: str, variant: str) -> Case:
    form = FORMS[variant]
    gen = rng(17)
    x = randn(gen, *form.shape)
    gamma = randn(gen, form.shape[-1])
    beta = randn(gen, form.shape[-1])
    initializers = [
        const("two", np.array(2.0, dtype=np.float32)),
        const("epsilon", np.array(EPSILON, dtype=np.float32)),
        const("gamma", gamma),
    ]
    if norm == "layernorm":
        initializers.append(const("beta", beta))
    if form.opset >= 18:
        initializers.append(const("axes", np.array([form.axis], dtype=np.int64)))
    built = model(
        _nodes(norm, form),
        [tensor("x", np.float32, list(form.shape))],
        [tensor("y", np.float32, unknown(len(form.shape)))],
        initializers,
        opset=form.opset,
    )
    if form.opset >= 18:
        spelled = f"ReduceMean(x, axes=initializer [{form.axis}], keepdims={form.keepdims})"
    else:
        spelled = f"ReduceMean(x) with attribute axes=[{form.axis}]"
    fused = FUSED[norm]
    reduce_means = 2 if norm == "layernorm" else 1
    known: tuple[KnownFailure, ...] = ()
    if form.keepdims:
        optimized = Optimized(
            op_counts={"ReduceMean": 0, fused: 1},
            meaning=f"{norm} pattern not fused into {fused}",
            level="extended",
        )
    else:
        optimized = Optimized(
            op_counts={"ReduceMean": reduce_means, fused: 0},
            meaning=f"a keepdims=0 pattern, which is no {norm}, fused into {fused}",
            level="extended",
        )
        known = (KEEPDIMS_IGNORED[norm],)
    return Case(
        id=f"layernorm_reducemean_fusion.{norm}.{variant}",
        description=f"{norm} over the last axis with {spelled}, opset {form.opset}",
        model=built,
        inputs={"x": x},
        expected={"y": _oracle(norm, bool(form.keepdims), x, gamma, beta)},
        output_shapes={"y": list(form.shape)},
        optimized=optimized,
        known=known,
        rtol=1e-4,
        atol=1e-4,
    )


def cases() -> list[Case]:
    return [_case(norm, variant) for norm in FUSED for variant in FORMS]


def _normalized(div: Site) -> Site | None:
    """For Div(b, Sqrt(Add(ReduceMean(Pow(b, _)), _))), the tail both norms share: that
    ReduceMean."""
    sqrt = made_by(div.scope, div.input(1), "Sqrt")
    add = made_by(sqrt.scope, sqrt.input(0), "Add") if sqrt is not None else None
    if add is None:
        return None
    for name in add.node.input:
        mean = made_by(add.scope, name, "ReduceMean")
        power = made_by(mean.scope, mean.input(0), "Pow") if mean is not None else None
        if power is not None and same_value(power.scope, power.input(0), div.scope, div.input(0)):
            return mean
    return None


def _centering(div: Site) -> Site | None:
    """The ReduceMean of x when the Div divides Sub(x, ReduceMean(x)): a LayerNorm's
    centering."""
    sub = made_by(div.scope, div.input(0), "Sub")
    mean = made_by(sub.scope, sub.input(1), "ReduceMean") if sub is not None else None
    if mean is None or sub is None:
        return None
    return mean if same_value(mean.scope, mean.input(0), sub.scope, sub.input(0)) else None


def _drops_axes(*means: Site) -> bool:
    return any(mean.attribute("keepdims", 1) == 0 for mean in means)


def _keepdims0(norm: str) -> Callable[[onnx.ModelProto], list[str]]:
    """The `norm` pattern onnxruntime fuses, with a ReduceMean of keepdims=0 in it (found
    at its Div)."""

    def find_in(model: onnx.ModelProto) -> list[str]:
        found = []
        for site in find(model, "Div"):
            mean = _normalized(site)
            if mean is None:
                continue
            centering = _centering(site)
            if norm == "layernorm" and centering is not None and _drops_axes(centering, mean):
                found.append(site.path)
            if norm == "rmsnorm" and centering is None and _drops_axes(mean):
                found.append(site.path)
        return found

    return find_in


DETECTORS = [
    Detector(
        id="layernorm_reducemean_fusion.layernorm_keepdims0",
        construct="a LayerNorm pattern (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div) "
        "whose ReduceMean has keepdims=0: no normalization, fused as one",
        known=KEEPDIMS_IGNORED["layernorm"],
        find=_keepdims0("layernorm"),
    ),
    Detector(
        id="layernorm_reducemean_fusion.rmsnorm_keepdims0",
        construct="an RMSNorm pattern (Pow, ReduceMean, Add, Sqrt, Div) whose ReduceMean has "
        "keepdims=0: no normalization, fused as one",
        known=KEEPDIMS_IGNORED["rmsnorm"],
        find=_keepdims0("rmsnorm"),
    ),
]
