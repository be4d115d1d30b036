"""Split into equal parts with the `split` input left out: Split(x) or Split(x, "").

Opset 13 splits evenly when `split` is missing, however it is missing; opset 18
asks for `num_outputs` instead, and there `Split(x, "", num_outputs=3)` is the
rare-but-legal twin of `Split(x, num_outputs=3)`.

Long ago the opset-13 empty name crashed onnxruntime at Run (onnxruntime #7075,
fixed by #7302 for 1.8): that case is a control and passes on every release of
this matrix (1.15.1 to 1.32.0).

Observed in this matrix instead:

- onnxruntime 1.15.1 to 1.31.1 reject the opset-18 empty name when the session
  is created: "If 'num_outputs' is specified, the 'split' input should not be
  provided". The kernel counts input slots (`info.GetInputCount() == 2`), and
  the empty name is a slot. 1.32.0 runs it. No upstream issue was found; the
  link points at the kernel's constructor.
- onnx's version converter (opset 13 -> 18, `convert_to=18`) must add
  `num_outputs` when `split` is missing. onnx 1.14.1, 1.15.0 and 1.16.2 never
  add it (onnx #5222, fixed by onnx PR #6020; passes from 1.17.0). With the
  empty name every release in the matrix (1.14.1 to 1.23.2) still skips it,
  because the adapter counts input slots (`node->inputs().size() != 2`), and
  the checker rejects the result: "Neither 'split' input nor 'num_outputs'
  attribute has been given". No upstream issue was found for this form.

Rare form: `Split(x, "")` at opset 13, `Split(x, "", num_outputs=3)` at opset 18
Common twin: `split` omitted
Shows: onnxruntime < 1.32 rejects the opset-18 form; no onnx converts the opset-13 one to 18
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import helper

from compat.core.case import Case, Detector, KnownFailure
from compat.corpus.make import model, randn, tensor, unknown
from compat.corpus.walk import InputForm, Site, with_input

SHAPE = (2, 6)
PARTS = 3
OUTPUTS = ["a", "b", "c"]
SPLIT_H = "https://github.com/microsoft/onnxruntime/blob/v1.31.1/onnxruntime/core/providers/cpu/tensor/split.h"

SLOT_COUNTED = KnownFailure(
    package="onnxruntime",
    versions="<1.32",
    checks=("ort_run",),
    reason="Split-18 kernel counts the empty 'split' slot as a given split input",
    link=SPLIT_H,
    phase=("session",),
    raises=("Fail", "RuntimeException"),  # onnxruntime's status code for it changed
    match="If 'num_outputs' is specified, the 'split' input should not be provided",
)
ADAPTER_COUNTS_SLOT = KnownFailure(
    package="onnx",
    versions="",
    checks=("version_converter",),
    reason="Split 13->18 adapter counts the empty 'split' slot and adds no num_outputs",
    link="https://github.com/onnx/onnx/issues/5222",
    phase=("check",),
    raises=("InferenceError",),
    match="Neither 'split' input nor 'num_outputs' attribute has been given",
)
NO_NUM_OUTPUTS = KnownFailure(
    package="onnx",
    versions="<1.17",
    checks=("version_converter",),
    reason="Split 13->18 conversion adds no num_outputs",
    link="https://github.com/onnx/onnx/pull/6020",
    phase=("check",),
    raises=("InferenceError",),
    match="Neither 'split' input nor 'num_outputs' attribute has been given",
)


def _known(opset: int, form: str) -> tuple[KnownFailure, ...]:
    if opset == 18 and form == "empty_name":
        return (SLOT_COUNTED,)
    if opset == 13 and form == "empty_name":
        return (ADAPTER_COUNTS_SLOT,)
    if opset == 13:
        return (NO_NUM_OUTPUTS,)
    return ()


def _case(opset: int, form: str) -> Case:
    x = randn(13, *SHAPE)
    inputs = ["x"] if form == "omitted" else ["x", ""]
    attrs: dict[str, Any] = {"axis": 1}
    if opset >= 18:
        attrs["num_outputs"] = PARTS
    built = model(
        [helper.make_node("Split", inputs, OUTPUTS, **attrs)],
        [tensor("x", np.float32, SHAPE)],
        [tensor(name, np.float32, unknown(2)) for name in OUTPUTS],
        opset=opset,
    )
    spelled = "Split(x" + (', ""' if form == "empty_name" else "")
    spelled += ", num_outputs=3)" if opset >= 18 else ")"
    parts = np.split(x, PARTS, axis=1)
    return Case(
        id=f"split_empty_split.opset{opset}.{form}",
        description=f"{spelled}, axis=1, on x: {list(SHAPE)} (opset {opset})",
        model=built,
        inputs={"x": x},
        expected=dict(zip(OUTPUTS, parts, strict=True)),
        output_shapes={name: [2, 2] for name in OUTPUTS},
        known=_known(opset, form),
        convert_to=18 if opset == 13 else None,
    )


def cases() -> list[Case]:
    return [_case(opset, form) for opset in (13, 18) for form in ("omitted", "empty_name")]


def _splits(model: onnx.ModelProto, since: int, before: int | None, form: InputForm) -> list[Site]:
    """The Splits of opsets [since, before) whose `split` input is in `form`."""
    return with_input(model, "Split", 1, form, since=since, before=before)


def _empty_next_to_num_outputs(model: onnx.ModelProto) -> list[str]:
    """Split-18 with num_outputs and split written as "": the slot counts as given."""
    return [
        site.path
        for site in _splits(model, 18, None, "empty")
        if site.attribute("num_outputs") is not None
    ]


def _converted_empty(model: onnx.ModelProto) -> list[str]:
    return [site.path for site in _splits(model, 13, 18, "empty")]


def _converted_omitted(model: onnx.ModelProto) -> list[str]:
    return [site.path for site in _splits(model, 13, 18, "omitted")]


DETECTORS = [
    Detector(
        id="split_empty_split.opset18_empty_name",
        construct='Split (opset >= 18) with split written as "" next to num_outputs',
        known=SLOT_COUNTED,
        find=_empty_next_to_num_outputs,
        rewrite="optional_input_omitted",
    ),
    Detector(
        id="split_empty_split.opset13_empty_name",
        construct='Split (opset 13-17) with split written as "": onnx cannot convert it to 18',
        known=ADAPTER_COUNTS_SLOT,
        find=_converted_empty,
        rewrite="optional_input_omitted",
    ),
    Detector(
        id="split_empty_split.opset13_omitted",
        construct="Split (opset 13-17) without split (equal parts): onnx < 1.17 cannot "
        "convert it to 18",
        known=NO_NUM_OUTPUTS,
        find=_converted_omitted,
    ),
]
