"""Shape(x, start, end) on a partly symbolic input, feeding a Reshape.

Since opset 15, Shape takes `start`/`end`; exporters use it to keep a symbolic
batch dimension out of a Reshape. Only the *selected* dims need to be static
for the result to be a constant, but onnxruntime's constant folding collected
all dims, gave up at the first symbolic one, and only then sliced
(onnxruntime #34140, fix #34142, seed 003 §2). For x: [N, 3, 4, M],
(1, 3) and (-3, -1) select [3, 4] and should fold; (0, 2) selects N and must
not. A fully static x is the control.

Rare form: `Shape(x, 1, 3)` on `[N,3,4,M]`
Common twin: the same on a static `x`
Shows: onnxruntime never folds the slice, though it is constant (onnxruntime #34140)
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import onnx
from onnx import helper

from compat.core.case import Case, Detector, KnownFailure, Optimized
from compat.corpus.make import const, model, randn, tensor, unknown
from compat.corpus.values import dims
from compat.corpus.walk import find

SYMBOLIC: list[int | str] = ["N", 3, 4, "M"]
RUN_SHAPE = (2, 3, 4, 5)  # N=2, M=5 in the real run
NOT_FOLDED = KnownFailure(
    package="onnxruntime",
    versions="",
    checks=("ort_optimized",),
    reason="constant folding gives up at the first symbolic dim before slicing",
    link="https://github.com/microsoft/onnxruntime/issues/34140",
    phase=("compare",),
    match=r"^Shape not folded: Shape x1 \(expected 0\)",
)


class Variant(NamedTuple):
    start: int
    end: int
    dims: list[int | str]  # the declared shape of x
    folds: bool  # whether Shape's result is a constant


VARIANTS = {
    "start1_end3": Variant(1, 3, SYMBOLIC, folds=True),
    "startm3_endm1": Variant(-3, -1, SYMBOLIC, folds=True),
    "start0_end2": Variant(0, 2, SYMBOLIC, folds=False),
    "static_input": Variant(1, 3, list(RUN_SHAPE), folds=True),
}


def _case(variant: str) -> Case:
    start, end, dims, folds = VARIANTS[variant]
    x = randn(5, *RUN_SHAPE)
    nodes = [
        helper.make_node("Shape", ["x"], ["dims"], start=start, end=end),
        helper.make_node("Concat", ["minus_one", "dims"], ["new_shape"], axis=0),
        helper.make_node("Reshape", ["x", "new_shape"], ["y"]),
    ]
    built = model(
        nodes,
        [tensor("x", np.float32, dims)],
        [tensor("y", np.float32, unknown(3))],
        [const("minus_one", np.array([-1], dtype=np.int64))],
    )
    selected = list(RUN_SHAPE[start:end])
    known: tuple[KnownFailure, ...] = ()
    if folds and variant != "static_input":
        known = (NOT_FOLDED,)
    return Case(
        id=f"shape_slice_folding.{variant}",
        description=f"Shape(x, start={start}, end={end}) on x: {dims}, feeding Reshape",
        model=built,
        inputs={"x": x},
        expected={"y": x.reshape([-1, *selected])},
        output_shapes={"dims": [2]},
        optimized=Optimized(
            op_counts={"Shape": 0 if folds else 1},
            meaning="Shape not folded" if folds else "Shape folded although it selects N",
        ),
        known=known,
    )


def cases() -> list[Case]:
    return [_case(variant) for variant in VARIANTS]


def _static_slice_of_symbolic(model: onnx.ModelProto) -> list[str]:
    """Shape(x, start, end) (opset >= 15) whose selected dims x declares static while
    another of its dims is symbolic or unknown."""
    found = []
    for site in find(model, "Shape"):
        if not site.at("Shape", since=15) or not site.node.input:
            continue
        shape = dims(site.scope, site.node.input[0])
        if shape is None:
            continue
        start = site.attribute("start", 0)
        end = site.attribute("end", len(shape))
        if not isinstance(start, int) or not isinstance(end, int):
            continue
        selected = range(len(shape))[slice(start, end)]
        static = [isinstance(shape[i], int) for i in range(len(shape))]
        if selected and all(static[i] for i in selected) and not all(static):
            found.append(site.path)
    return found


DETECTORS = [
    Detector(
        id="shape_slice_folding.static_slice",
        construct="Shape(x, start, end) whose selected dims are static (as x is declared) "
        "while another dim of x is symbolic: a constant never folded",
        known=NOT_FOLDED,
        find=_static_slice_of_symbolic,
    ),
]
