"""GlobalMaxPool on a 3-D (N, C, L) and a 5-D (N, C, D, H, W) input, next to the 4-D
(N, C, H, W) twin every image model writes.

GlobalMaxPool takes any rank from 3 and keeps N and C, maxing over every spatial axis.
onnx's reference evaluator (onnx.reference.ReferenceEvaluator) reduces the last two axes
whatever the rank: on a 4-D input those are H and W, on a 3-D input they are C and L,
so (2, 3, 5) comes back as (2, 1), not (2, 3, 1), and on a 5-D input D is left
unreduced and an axis added, (1, 2, 3, 4, 5) coming back as (1, 2, 3, 1, 1, 1). onnx
#7682 reports the 3-D form; onnx PR #8383 (merged, reducing `range(2, ndim)`) fixes
both, unreleased as of onnx 1.23.2. The 5-D form was not in the report: it is the same
bug, shown here. The 4-D twin passes.

Observed in this matrix: `reference` fails on both the 3-D and the 5-D form in every
onnx release from 1.14.1 to 1.23.2 ("output 'y' has shape [2, 1], expected [2, 3, 1]");
`annotations` and `inferred_annotations`, which run the reference evaluator, fail on the
same two forms ("value 'y': declared [2, 3, 1] has rank 3, actual shape [2, 1] has rank
2"). onnxruntime (1.15.1-1.32.0), onnx's checker and shape inference (which infers
(N, C, 1) and (N, C, 1, 1, 1)) are right on every form. A 1-D audio or sequence
model (Conv1d, then a global max over time) writes the 3-D form; tf2onnx then squeezes
the pooled axis away (magika 1.0's model), and there the reference raises at the Squeeze
instead ("AxisError: axis 2 is out of bounds for array of dimension 2"), the annotation
checks left unobserved.

Rare form: `GlobalMaxPool` on a 3-D (N, C, L) or a 5-D input
Common twin: `GlobalMaxPool` on a 4-D (N, C, H, W) input
Shows: onnx's reference evaluator reduces the wrong axes on non-4-D input (onnx #7682)
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import onnx
from onnx import helper

from compat.core.case import Case, Detector, KnownFailure
from compat.corpus.make import const, model, randn, tensor, unknown
from compat.corpus.ranks import rank
from compat.corpus.scopes import Site
from compat.corpus.values import consumers, is_output
from compat.corpus.walk import find

SHAPES = {
    "ncl": (2, 3, 5),
    "nchw": (2, 3, 4, 5),
    "ncdhw": (1, 2, 3, 4, 5),
}
TWIN_RANK = 4
WRONG_AXES = KnownFailure(
    package="onnx",
    versions="",
    checks=("reference",),
    reason="the reference GlobalMaxPool reduces the last two axes: C and L of a 3-D "
    "input, H and W (not D) of a 5-D one, so the output has the wrong shape",
    link="https://github.com/onnx/onnx/issues/7682",
    phase=("compare",),
    match=r"^output 'y' has shape \[",
)
#: the same wrong shape, seen by the annotation checks (they run the reference evaluator)
WRONG_RANK = KnownFailure(
    package="onnx",
    versions="",
    checks=("annotations", "inferred_annotations"),
    reason="the reference GlobalMaxPool's output has the wrong rank, so it violates the "
    "declared (and the inferred) shape of y",
    link="https://github.com/onnx/onnx/issues/7682",
    phase=("compare",),
    match=r"^reference run 1: .*value 'y': declared \[[^]]*\] has rank \d+, actual shape",
)


#: the same wrong shape where the model squeezes the pooled axis away, as tf2onnx writes a
#: Conv1d's global max (magika 1.0): the Squeeze of axis 2 raises in the run
SQUEEZED = KnownFailure(
    package="onnx",
    versions="",
    checks=("reference",),
    reason="the reference GlobalMaxPool drops the channel axis of a 3-D input, so the "
    "Squeeze of the pooled axis after it is out of bounds",
    link="https://github.com/onnx/onnx/issues/7682",
    phase=("run",),
    raises=("AxisError",),
    match=r"axis \d+ is out of bounds",
)


def _squeezed() -> Case:
    """GlobalMaxPool(x: [2, 3, 5]) then Squeeze(axes=[2]): [2, 3], tf2onnx's Conv1d form."""
    shape = SHAPES["ncl"]
    x = randn(73, *shape)
    built = model(
        [
            helper.make_node("GlobalMaxPool", ["x"], ["pooled"]),
            helper.make_node("Squeeze", ["pooled", "axes"], ["y"]),
        ],
        [tensor("x", np.float32, list(shape))],
        [tensor("y", np.float32, unknown(2))],
        [const("axes", np.array([2], np.int64))],
    )
    return Case(
        id="global_max_pool_3d.ncl_squeezed",
        description="Squeeze(GlobalMaxPool(x: [2, 3, 5]), axes=[2]) -> [2, 3]",
        model=built,
        inputs={"x": x},
        expected={"y": x.max(axis=2)},
        output_shapes={"y": [2, 3]},
        known=(SQUEEZED,),
    )


def _case(form: str) -> Case:
    shape = SHAPES[form]
    x = randn(71, *shape)
    built = model(
        [helper.make_node("GlobalMaxPool", ["x"], ["y"])],
        [tensor("x", np.float32, list(shape))],
        [tensor("y", np.float32, unknown(len(shape)))],
    )
    pooled = [*shape[:2], *[1] * (len(shape) - 2)]
    return Case(
        id=f"global_max_pool_3d.{form}",
        description=f"GlobalMaxPool(x: {list(shape)}) -> {pooled}",
        model=built,
        inputs={"x": x},
        expected={"y": x.max(axis=tuple(range(2, len(shape))), keepdims=True)},
        output_shapes={"y": pooled},
        known=(WRONG_AXES, WRONG_RANK) if len(shape) != TWIN_RANK else (),
    )


def cases() -> list[Case]:
    return [*(_case(form) for form in SHAPES), _squeezed()]


def _pools(model: onnx.ModelProto) -> Iterator[tuple[Site, bool]]:
    """GlobalMaxPool whose input has a rank other than 4, as the model declares it or as
    its producers give it (tf2onnx writes no value_info: magika's Conv1d, squeezed to
    rank 3), each with whether a Squeeze reads its output; an input of unknown rank says
    nothing."""
    for site in find(model, "GlobalMaxPool"):
        known = rank(site.scope, site.node.input[0]) if site.node.input else None
        if known is not None and known != TWIN_RANK and site.node.output:
            readers = consumers(site.scope, site.node.output[0])
            yield site, any(r.node.op_type == "Squeeze" for r in readers)


def _not_4d(model: onnx.ModelProto) -> list[str]:
    """The wrong shape reaches an output the run compares: the pool's output leaves the
    graph, and no Squeeze of it fails the run first."""
    return [
        site.path
        for site, squeezed in _pools(model)
        if not squeezed and is_output(site.scope, site.node.output[0])
    ]


def _not_4d_squeezed(model: onnx.ModelProto) -> list[str]:
    """A Squeeze reads the wrongly shaped output: the run raises there."""
    return [site.path for site, squeezed in _pools(model) if squeezed]


DETECTORS = [
    Detector(
        id="global_max_pool_3d.not_4d",
        construct="GlobalMaxPool on an input of rank 3 or 5+ (declared, or from its producers), "
        "its output a graph output",
        known=WRONG_AXES,
        find=_not_4d,
    ),
    Detector(
        id="global_max_pool_3d.not_4d_squeezed",
        construct="GlobalMaxPool on an input of rank 3 or 5+, its pooled axis squeezed away "
        "(as tf2onnx writes a Conv1d's global max)",
        known=SQUEEZED,
        find=_not_4d_squeezed,
    ),
    Detector(
        id="global_max_pool_3d.not_4d_annotations",
        construct="GlobalMaxPool on an input of rank 3 or 5+, its output a graph output whose "
        "declared shape onnx's reference evaluator checks",
        known=WRONG_RANK,
        find=_not_4d,
    ),
]
