"""Squeeze-13 without axes, written as Squeeze(x) and as Squeeze(x, "") (the empty name).

Both forms are legal and mean "squeeze every dimension of size 1"; the explicit
`axes` input is the everyday twin. onnx accepts, infers ([1, 3, 1, 4] -> [3, 4])
and evaluates all three in every release of the matrix. onnxruntime's CPU
Squeeze kernel only asks whether the node has a second input, then reads it:
with the empty name the input slot exists but holds no tensor, and Run fails
with "axes_tensor != nullptr was false. Axes input is null" (onnxruntime
#22035; the CUDA kernel has the same check, #21661). Observed in this matrix on
every onnxruntime release from 1.15.1 to 1.32.0, at every optimization level
(ort_run, and the annotation checks that run the model in onnxruntime); the
session itself is created fine. `Squeeze(x)` and `Squeeze(x, axes)` pass
everywhere.

Rare form: `Squeeze(x, "")`
Common twin: `Squeeze(x)` and `Squeeze(x, axes)`
Shows: every onnxruntime fails at Run: "Axes input is null" (onnxruntime #22035)
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from compat.core.case import Case, Detector, KnownFailure
from compat.corpus.make import const, model, randn, tensor, unknown
from compat.corpus.walk import with_input

SHAPE = (1, 3, 1, 4)
AXES = np.array([0, 2], dtype=np.int64)
FORMS = {
    "omitted": (["x"], "Squeeze(x)"),
    "empty_name": (["x", ""], 'Squeeze(x, "")'),
    "axes_given": (["x", "axes"], "Squeeze(x, axes=[0, 2])"),
}
AXES_INPUT_NULL = KnownFailure(
    package="onnxruntime",
    versions="",
    checks=("ort_run",),
    reason='CPU Squeeze reads the empty-named axes input: "Axes input is null"',
    link="https://github.com/microsoft/onnxruntime/issues/22035",
    phase=("run",),
    raises=("Fail", "RuntimeException"),  # onnxruntime's status code for it changed
    match="Axes input is null",
)


def _case(form: str) -> Case:
    inputs, spelled = FORMS[form]
    x = randn(11, *SHAPE)
    initializers: list[onnx.TensorProto] = [const("axes", AXES)] if "axes" in inputs else []
    built = model(
        [helper.make_node("Squeeze", inputs, ["y"])],
        [tensor("x", np.float32, SHAPE)],
        [tensor("y", np.float32, unknown(2))],
        initializers,
        opset=13,
    )
    known: tuple[KnownFailure, ...] = (AXES_INPUT_NULL,) if form == "empty_name" else ()
    return Case(
        id=f"squeeze_empty_axes.{form}",
        description=f"{spelled} on x: {list(SHAPE)} (opset 13)",
        model=built,
        inputs={"x": x},
        expected={"y": np.squeeze(x)},
        output_shapes={"y": [3, 4]},
        known=known,
    )


def cases() -> list[Case]:
    return [_case(form) for form in FORMS]


def _empty_axes(model: onnx.ModelProto) -> list[str]:
    """Squeeze from opset 13 on (axes an input) with axes written as the empty name."""
    return [site.path for site in with_input(model, "Squeeze", 1, "empty", since=13)]


DETECTORS = [
    Detector(
        id="squeeze_empty_axes.empty_name",
        construct='Squeeze (opset >= 13) with axes written as "" (present but empty)',
        known=AXES_INPUT_NULL,
        find=_empty_axes,
        rewrite="optional_input_omitted",
    ),
]
