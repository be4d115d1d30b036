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
model (Conv1d, then a global max over time) writes the 3-D form.

Rare form: `GlobalMaxPool` on a 3-D (N, C, L) or a 5-D input
Common twin: `GlobalMaxPool` on a 4-D (N, C, H, W) input
Shows: onnx's reference evaluator reduces the wrong axes on non-4-D input (onnx #7682)
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from compat.core.case import Case, Detector, KnownFailure
from compat.corpus.make import model, randn, tensor, unknown
from compat.corpus.ranks import rank
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
    return [_case(form) for form in SHAPES]


def _not_4d(model: onnx.ModelProto) -> list[str]:
    """GlobalMaxPool whose input has a rank other than 4, as the model declares it or as
    its producers give it (tf2onnx writes no value_info: magika's Conv1d, squeezed to
    rank 3); an input of unknown rank says nothing."""
    found = []
    for site in find(model, "GlobalMaxPool"):
        known = rank(site.scope, site.node.input[0]) if site.node.input else None
        if known is not None and known != TWIN_RANK:
            found.append(site.path)
    return found


DETECTORS = [
    Detector(
        id="global_max_pool_3d.not_4d",
        construct="GlobalMaxPool on an input of rank 3 or 5+ (declared, or from its producers)",
        known=WRONG_AXES,
        find=_not_4d,
    ),
    Detector(
        id="global_max_pool_3d.not_4d_annotations",
        construct="GlobalMaxPool on an input of rank 3 or 5+, checked against the declared "
        "shape of its output by onnx's reference evaluator",
        known=WRONG_RANK,
        find=_not_4d,
    ),
]
