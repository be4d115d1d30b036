"""ReduceSumSquare-18 with `noop_with_empty_axes=1` and no axes, written as an absent
axes input or as an explicit empty axes tensor.

What the result should be changed with the spec. Opset 18's text said the output
"would be equivalent to input tensor" (x itself), while the reference evaluator and
the op's own function body (Mul then ReduceSum) gave x²; onnx #6103 asked which one
was right, PR #6121 briefly made the reference return x, and onnx PR #7137 / #7394
settled it: reducing over an empty set of axes is the identity *of the reduction
step*, the composite op's other steps still apply, so ReduceSumSquare returns the
elementwise square. That is the spec of the onnx releases this corpus builds with
(1.23.2: "ReduceSumSquare returns the Square of the input tensor, in this case"), and
the numpy oracle here is `x * x`, for both spellings (the axes input's doc: "When
axes is empty (either not provided or explicitly empty)").

Observed in this matrix, for x of shape [2, 3] (keepdims=1):

- onnx's reference: the absent form gives x² on every release (1.14.1-1.23.2); the
  empty-tensor form reduced over all axes ([[sum x²]], shape [1, 1]) on 1.14.1-1.19.1,
  because `is_axes_empty` only recognised None; x² from 1.20 on (1.20.1 in the
  matrix, 1.20.0 too when run directly; onnx PR #7244, issue #7140).
- onnxruntime 1.15.1-1.16.3 ignore `noop_with_empty_axes` and reduce over all axes
  for both forms ([[sum x²]]).
- onnxruntime 1.17.3-1.23.2: the absent form raises ("ValidateNoTransposeReduce count
  == 1 was false. Reduction on all axes, output size should be 1", onnxruntime
  #19147); the empty-tensor form returns x unsquared, the old "equivalent to input"
  reading (onnxruntime #26288).
- onnxruntime 1.24.4-1.32.0 return x² for both (onnxruntime PR #26436). The brief's
  "1.17.3 raises, 1.32.0 returns x²" holds for the absent form.

The annotation checks observe values with every runtime that runs the model: a runtime
that returns [1, 1] breaks the inferred [2, 3] (the same known failures); one that
raises observes nothing, and the other runtime's observations decide.

Rare form: ReduceSumSquare-18, `noop_with_empty_axes=1`, axes absent
Common twin: axes given as an empty tensor
Shows: onnxruntime < 1.24 reduces all axes, raises, or skips the square (fixed: onnxruntime #26436)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
from onnx import helper

from compat.core.case import Case, Detector, KnownFailure
from compat.corpus.make import const, model, randn, tensor, unknown
from compat.corpus.values import constant, dims
from compat.corpus.walk import Site, find, input_form

X_SHAPE = (2, 3)
#: the check a raising onnxruntime fails; the annotation checks then observe with the
#: reference evaluator (a runtime that cannot run a model observes nothing, says nothing)
ORT_CHECKS = ("ort_run",)
REDUCE_ALL = KnownFailure(
    package="onnxruntime",
    versions="<1.17",
    # the declared [?, ?] holds for [1, 1]; the inferred [2, 3] does not
    checks=("ort_run", "inferred_annotations"),
    reason="noop_with_empty_axes ignored: reduces over all axes, output [[sum(x^2)]]",
    link="https://github.com/microsoft/onnxruntime/issues/26288",
    phase=("compare",),
    # ort_run sees the [1, 1] output, inferred_annotations onnxruntime's run breaking [2, 3]
    match=r"output 'y' has shape \[1, 1\], expected \[2, 3\]|ort run \d+: .* actual 1\b",
)
ABSENT_RAISES = KnownFailure(
    package="onnxruntime",
    versions=">=1.17,<1.24",
    checks=ORT_CHECKS,
    reason="raises 'Reduction on all axes, output size should be 1' when axes is absent",
    link="https://github.com/microsoft/onnxruntime/issues/19147",
    phase=("run",),
    raises=("RuntimeException",),
    match="Reduction on all axes, output size should be 1",
)
EMPTY_UNSQUARED = KnownFailure(
    package="onnxruntime",
    versions=">=1.17,<1.24",
    checks=("ort_run",),
    reason="returns x itself (no square) for an empty axes tensor",
    link="https://github.com/microsoft/onnxruntime/issues/26288",
    phase=("compare",),
    match=r"output 'y' differs at 6 of 6 elements",
)
EMPTY_AS_ALL = KnownFailure(
    package="onnx",
    versions="<1.20",
    # inferred_annotations observes with the reference evaluator too: [1, 1] breaks
    # the inferred [2, 3]
    checks=("reference", "inferred_annotations"),
    reason="the reference treats an empty axes tensor as 'all axes': [[sum(x^2)]]",
    link="https://github.com/onnx/onnx/pull/7244",
    phase=("compare",),
    # reference sees the [1, 1] output, inferred_annotations its run breaking [2, 3]
    match=r"output 'y' has shape \[1, 1\], expected \[2, 3\]|reference run \d+: .* actual 1\b",
)


def _known(form: str) -> tuple[KnownFailure, ...]:
    if form == "absent":
        return (REDUCE_ALL, ABSENT_RAISES)
    return (REDUCE_ALL, EMPTY_UNSQUARED, EMPTY_AS_ALL)


def _case(form: str) -> Case:
    x = randn(17, *X_SHAPE)
    if form == "absent":
        inputs, initializers = ["x"], []
        spelled = "ReduceSumSquare(x)"
    else:
        inputs = ["x", "axes"]
        initializers = [const("axes", np.zeros(0, dtype=np.int64))]
        spelled = "ReduceSumSquare(x, axes=[])"
    built = model(
        [helper.make_node("ReduceSumSquare", inputs, ["y"], noop_with_empty_axes=1)],
        [tensor("x", np.float32, list(X_SHAPE))],
        [tensor("y", np.float32, unknown(2))],
        initializers,
        opset=18,
    )
    return Case(
        id=f"reduce_sum_square_empty_axes.axes_{form}",
        description=f"{spelled} with noop_with_empty_axes=1: the spec says x squared",
        model=built,
        inputs={"x": x},
        expected={"y": x * x},
        output_shapes={"y": list(X_SHAPE)},
        known=_known(form),
    )


def cases() -> list[Case]:
    return [_case("absent"), _case("empty")]


def _noop_sites(model: onnx.ModelProto) -> list[tuple[Site, str]]:
    """ReduceSumSquare-18 with noop_with_empty_axes=1, and how its axes are empty:
    "absent" (omitted or written ""), "empty" (a constant, or a value declared, with 0
    elements) or "" (given, not empty as far as the model shows)."""
    found = []
    for site in find(model, "ReduceSumSquare"):
        if not site.at("ReduceSumSquare", since=18):
            continue
        if site.attribute("noop_with_empty_axes", 0) != 1:
            continue
        if input_form(site.node, 1) != "given":
            found.append((site, "absent"))
            continue
        axes = site.node.input[1]
        value = constant(site.scope, axes)
        shape = dims(site.scope, axes)
        empty = value.size == 0 if value is not None else shape is not None and 0 in shape
        found.append((site, "empty" if empty else ""))
    return found


def _axes(*forms: str) -> Callable[[onnx.ModelProto], list[str]]:
    def find_in(model: onnx.ModelProto) -> list[str]:
        return [site.path for site, form in _noop_sites(model) if form in forms]

    return find_in


NOOP = "ReduceSumSquare (opset >= 18) with noop_with_empty_axes=1"
#: what the model shows of an empty axes tensor
EMPTY = "axes a constant (or a value declared) with 0 elements"

DETECTORS = [
    Detector(
        id="reduce_sum_square_empty_axes.noop_ignored",
        construct=f"{NOOP} and axes absent or empty",
        known=REDUCE_ALL,
        find=_axes("absent", "empty"),
    ),
    Detector(
        id="reduce_sum_square_empty_axes.axes_absent",
        construct=f'{NOOP} and axes absent (omitted or written "")',
        known=ABSENT_RAISES,
        find=_axes("absent"),
    ),
    Detector(
        id="reduce_sum_square_empty_axes.axes_empty_unsquared",
        construct=f"{NOOP} and {EMPTY}",
        known=EMPTY_UNSQUARED,
        find=_axes("empty"),
    ),
    Detector(
        id="reduce_sum_square_empty_axes.axes_empty_reference",
        construct=f"{NOOP} and {EMPTY}",
        known=EMPTY_AS_ALL,
        find=_axes("empty"),
    ),
]
