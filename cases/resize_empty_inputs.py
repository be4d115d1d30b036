"""Resize by `sizes` with roi and scales left out: written as "" (opset 13) or as
named empty tensors.

Resize-13 made roi and scales optional, so `Resize(x, "", "", sizes)` is the spelled-out
form; exporters also keep writing the opset-11 habit of named 0-element roi/scales
tensors. At opset 11 both inputs are `Single`: its old doc text said "use an empty
string as the name of 'scales'", but the schema never allowed it, and the checker
rejects "" ("input 1 is marked single but has an empty string"); the only legal
opset-11 spelling is the empty tensor (onnx #2451, doc fixed by onnx PR #2948).

Observed in this matrix (onnx 1.14.1-1.23.2, onnxruntime 1.15.1-1.32.0):

- `Resize(x, "", "", sizes)` at opset 13 passes every check on every release.
- The named-empty-tensor form (opset 13 and opset 11) passes the checker, shape
  inference and onnxruntime everywhere, but onnx's reference evaluator raised
  "IndexError: index 0 is out of bounds for axis 0 with size 0" on 1.14.1-1.21.0: it
  indexed `roi[0]` of the empty roi even though roi only matters for
  tf_crop_and_resize (an empty *scales* is fine; `annotations` errors with it, as it
  runs the reference too). 1.22.0 passes: its rewritten reference Resize (separable
  interpolation, cf. onnx PR #7850) normalises an empty roi to None. No dedicated
  upstream issue found; not part of the original report.
- The opset-11 "" form is rejected by `onnx.checker` of every onnx release and refused
  at load by every onnxruntime release (custom checks `checker_rejects`,
  `ort_rejects`), as onnx #2451 says.
- Converting either opset-13 form down to 11 (`convert_to=11`) raises "No Adapter From
  Version $13 for Resize" on every onnx release: the version converter has no
  Resize 13 -> 12 adapter (none registered in convert.h; no upstream issue found),
  recorded as a known failure of `version_converter`.

https://github.com/onnx/onnx/issues/2451
https://github.com/onnx/onnx/pull/2948

Rare form: `Resize(x, "", "", sizes)` at opset 13; `""` at opset 11
Common twin: named empty roi/scales tensors (opsets 13 and 11)
Shows: opset-11 `""` is rejected everywhere (onnx #2451); onnx < 1.22's reference fails on the twin
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import helper

from compat.core.case import BUILTIN_CHECKS, Case, CustomCheck, Detector, Dim, KnownFailure
from compat.corpus.make import const, model, randn, tensor, unknown
from compat.corpus.values import constant, dims
from compat.corpus.walk import find, input_form

X_SHAPE = (1, 2, 2, 3)
SIZES: list[Dim] = [1, 2, 4, 6]  # twice the spatial dims: each pixel repeats 2x2
CONVERTER_SOURCE = "https://github.com/onnx/onnx/blob/main/onnx/version_converter/convert.h"
CHECKS_FILE = str(Path(__file__).with_name("_resize_empty_inputs_checks.py"))
NO_ADAPTER = KnownFailure(
    package="onnx",
    versions="",
    checks=("version_converter",),
    reason="the version converter has no Resize 13 -> 12 adapter ('No Adapter From Version "
    "$13 for Resize')",
    link=CONVERTER_SOURCE,
    phase=("convert",),
    raises=("RuntimeError",),
    match=r"No Adapter From Version \$13 for Resize",
)
EMPTY_ROI = KnownFailure(
    package="onnx",
    versions="<1.22",
    checks=("reference",),
    reason="the reference Resize indexes roi[0] of an empty roi tensor (IndexError)",
    link="https://github.com/onnx/onnx/pull/7850",
    phase=("run",),
    raises=("IndexError",),
    match="index 0 is out of bounds for axis 0 with size 0",
)


def _upsample(x: np.ndarray) -> np.ndarray:
    """The oracle: nearest, half_pixel, round_prefer_floor at scale 2 repeats each pixel."""
    out: np.ndarray = x.repeat(2, axis=2).repeat(2, axis=3)
    return out


def _case(opset: int, form: str) -> Case:
    x = randn(41, *X_SHAPE)
    initializers: list[onnx.TensorProto] = [const("sizes", np.array(SIZES, dtype=np.int64))]
    if form == "empty_names":
        inputs = ["x", "", "", "sizes"]
        spelled = 'Resize(x, "", "", sizes)'
    else:
        inputs = ["x", "roi", "scales", "sizes"]
        initializers += [
            const("roi", np.zeros(0, dtype=np.float32)),
            const("scales", np.zeros(0, dtype=np.float32)),
        ]
        spelled = "Resize(x, roi=[], scales=[], sizes)"
    built = model(
        [helper.make_node("Resize", inputs, ["y"])],
        [tensor("x", np.float32, list(X_SHAPE))],
        [tensor("y", np.float32, unknown(4))],
        initializers,
        opset=opset,
    )
    invalid = opset == 11 and form == "empty_names"
    description = f"{spelled} at opset {opset}"
    if invalid:
        description += ", where roi and scales are required: must be rejected"
    elif opset == 13:
        description += ", converted to opset 11"
    return Case(
        id=f"resize_empty_inputs.opset{opset}.{form}",
        description=description,
        model=built,
        inputs={"x": x},
        expected={"y": _upsample(x)},
        output_shapes={} if invalid else {"y": SIZES},
        convert_to=11 if opset == 13 else None,
        known=tuple(
            bug
            for bug, applies in ((NO_ADAPTER, opset == 13), (EMPTY_ROI, form == "empty_tensors"))
            if applies
        ),
        builtin_checks=() if invalid else BUILTIN_CHECKS,
        custom_checks=(
            CustomCheck("checker_rejects", CHECKS_FILE, "checker_rejects", "onnx"),
            CustomCheck("ort_rejects", CHECKS_FILE, "ort_rejects", "onnxruntime"),
        )
        if invalid
        else (),
    )


def cases() -> list[Case]:
    return [_case(opset, form) for opset in (13, 11) for form in ("empty_names", "empty_tensors")]


def _resize_13(model: onnx.ModelProto) -> list[str]:
    """Resize from opset 13 on, which onnx cannot convert below 13."""
    return [site.path for site in find(model, "Resize") if site.at("Resize", since=13)]


def _empty_roi(model: onnx.ModelProto) -> list[str]:
    """Resize whose roi is given as a tensor with 0 elements (a constant, or a value
    declared so)."""
    found = []
    for site in find(model, "Resize"):
        if input_form(site.node, 1) != "given":
            continue
        roi = site.node.input[1]
        value = constant(site.scope, roi)
        shape = dims(site.scope, roi)
        if (value.size == 0) if value is not None else (shape is not None and 0 in shape):
            found.append(site.path)
    return found


DETECTORS = [
    Detector(
        id="resize_empty_inputs.no_adapter",
        construct="Resize at opset >= 13: onnx's version converter has no adapter below 13",
        known=NO_ADAPTER,
        find=_resize_13,
    ),
    Detector(
        id="resize_empty_inputs.empty_roi",
        construct="Resize with roi given as a tensor of 0 elements (a constant, or declared so)",
        known=EMPTY_ROI,
        find=_empty_roi,
    ),
]
