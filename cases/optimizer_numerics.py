"""onnxruntime graph rewrites that change the numbers: NchwcTransformer's blocked Conv
(intended: another float32 summation order) and QDQ Resize(linear) computed in int8.

What a user must be told is which optimizer makes a level differ, by how much, and
the tolerance that covers it; `ort_run` names the optimizer (compat/cell/blame.py:
the fewest names in `disabled_optimizers` that make the outputs agree) and the custom
check `levels_against_disabled` says it for every level against `disabled`, bit for bit.
Observed in this matrix (onnxruntime 1.15.1-1.32.0, x86-64 with AVX-512):

- `nchwc_conv`: a 3x3 Conv, 64 to 64 channels on 16x16, weights scaled so outputs reach
  ~100. At level `all` NchwcTransformer rewrites it into MLAS's blocked NCHWc kernel
  (ReorderInput -> Conv -> ReorderOutput), which sums the 576 products in another order:
  against the float64 oracle `disabled` is up to 6.1e-05 off and `all` up to 8.39e-05,
  identical on every release. The case declares the tolerance that covers both
  (rtol = atol = 1e-4) and passes; `levels_against_disabled` reports `all` 8.39e-05
  apart from `disabled`, "onnxruntime's optimizer NchwcTransformer is responsible".
  Intended, not a bug (the level is documented as layout optimizations); the block size
  follows the CPU (16 floats with AVX-512, 8 with AVX2, none without), so on another CPU
  the difference is another one or none. Twin: the Conv with 62 channels, which
  NchwcTransformer leaves to the default kernel (60 it blocks): every level identical,
  up to 7.6e-05 off the oracle.
- `qdq_resize.linear`: QuantizeLinear -> DequantizeLinear -> Resize(linear, half_pixel)
  -> QuantizeLinear -> DequantizeLinear with scale 1, upsampling [2, 7, 3] to 6 values.
  The float path (the oracle, `disabled`, onnx's reference) interpolates [2, 3.25,
  5.75, 6, 4, 3] and rounds to [2, 3, 6, 6, 4, 3]; at `extended` and `all`
  QDQSelectorActionTransformer drops the Q/DQ pair around the Resize, which then
  interpolates in int8 and truncates 5.75 to 5: one quantization step off on
  onnxruntime 1.15.1-1.26.0, the float result from 1.27.0 (onnxruntime #21319, #28448;
  `ort_run` names QDQSelectorActionTransformer alone). No value is a tie: onnx 1.14.1's
  reference QuantizeLinear rounds a tie such as 4.5 away from zero, not to even. Twin:
  `qdq_resize.nearest`, exact in int8 everywhere.
  QDQ MatMul and Conv (QLinearMatMul, QLinearConv) on exactly quantized inputs match the
  integer oracle bit for bit on every release: no case of theirs shows a difference.

https://github.com/microsoft/onnxruntime/blob/main/onnxruntime/core/optimizer/nchwc_transformer.cc
https://onnxruntime.ai/docs/performance/model-optimizations/graph-optimizations.html
https://github.com/microsoft/onnxruntime/issues/21319
https://github.com/microsoft/onnxruntime/issues/28448

Rare form: Conv that NchwcTransformer blocks; Q/DQ around Resize(linear)
Common twin: a 62-channel Conv it leaves alone; Q/DQ around Resize(nearest)
Shows: `all` is 8.4e-5 off `disabled` (NchwcTransformer); ort < 1.27 resizes QDQ linear in int8
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import helper

from compat.core.case import Case, CustomCheck, Detector, KnownFailure
from compat.corpus.make import const, model, rng, tensor, unknown
from compat.corpus.values import consumers, made_by
from compat.corpus.walk import find

CHANNELS, SIZE, SCALE = 64, 16, 60.0
LEVELS_CHECK = CustomCheck(
    name="levels_against_disabled",
    file=str(Path(__file__).with_name("_optimizer_checks.py")),
    function="levels_against_disabled",
    package="onnxruntime",
)
QDQ_RESIZE_INT8 = KnownFailure(
    package="onnxruntime",
    versions="<1.27",
    checks=("ort_run",),
    reason="QDQSelectorActionTransformer drops the Q/DQ around Resize(linear), which then "
    "interpolates in int8 and truncates instead of rounding",
    link="https://github.com/microsoft/onnxruntime/issues/21319",
    phase=("compare",),
    match=r"^extended, all: .*optimizers? (\w+, )*QDQSelectorActionTransformer",
)


def _conv64(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The oracle: a padded 3x3 Conv summed in float64, rounded once to float32."""
    size = x.shape[2]
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((1, w.shape[0], size, size))
    for i in range(3):
        for j in range(3):
            window = padded[:, :, i : i + size, j : j + size]
            out += np.einsum("nchw,oc->nohw", window, w[:, :, i, j].astype(np.float64))
    summed: np.ndarray = (out + b[None, :, None, None]).astype(np.float32)
    return summed


def _conv(channels: int) -> Case:
    draw = rng(0)
    weight = draw.standard_normal((channels, channels, 3, 3)) * SCALE / np.sqrt(channels * 9)
    w, b = weight.astype(np.float32), draw.standard_normal(channels).astype(np.float32)
    x = draw.standard_normal((1, channels, SIZE, SIZE)).astype(np.float32)
    shape = [1, channels, SIZE, SIZE]
    built = model(
        [helper.make_node("Conv", ["x", "W", "B"], ["y"], pads=[1, 1, 1, 1])],
        [tensor("x", np.float32, shape)],
        [tensor("y", np.float32, unknown(4))],
        [const("W", w), const("B", b)],
    )
    name = "nchwc_conv" if channels == CHANNELS else f"conv_{channels}_channels"
    return Case(
        id=f"optimizer_numerics.{name}",
        description=f"3x3 Conv, {channels} to {channels} channels on {SIZE}x{SIZE}, outputs "
        "~100; tolerance rtol = atol = 1e-4",
        model=built,
        inputs={"x": x},
        expected={"y": _conv64(x, w, b)},
        output_shapes={"y": shape},
        rtol=1e-4,
        atol=1e-4,
        custom_checks=(LEVELS_CHECK,),
    )


def _resize_oracle(x: np.ndarray, mode: str) -> np.ndarray:
    """Resize [2, 7, 3] to 6 along the last axis (half_pixel), then Q/DQ at scale 1."""
    row = x.reshape(-1).astype(np.float64)
    where = (np.arange(6) + 0.5) / 2 - 0.5
    if mode == "nearest":  # round_prefer_floor of the source coordinate
        picked = row[np.clip(np.ceil(where - 0.5), 0, row.size - 1).astype(int)]
    else:
        picked = np.interp(where, np.arange(row.size), row)
    rounded: np.ndarray = np.clip(np.rint(picked), -128, 127).astype(np.float32)
    return rounded.reshape(1, 1, 1, 6)


def _qdq_resize(mode: str) -> Case:
    x = np.array([2, 7, 3], dtype=np.float32).reshape(1, 1, 1, 3)
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "scale", "zero"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "scale", "zero"], ["xd"]),
        helper.make_node(
            "Resize",
            ["xd", "", "", "sizes"],
            ["r"],
            mode=mode,
            coordinate_transformation_mode="half_pixel",
        ),
        helper.make_node("QuantizeLinear", ["r", "scale", "zero"], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "scale", "zero"], ["y"]),
    ]
    built = model(
        nodes,
        [tensor("x", np.float32, [1, 1, 1, 3])],
        [tensor("y", np.float32, unknown(4))],
        [
            const("sizes", np.array([1, 1, 1, 6], dtype=np.int64)),
            const("scale", np.array(1.0, dtype=np.float32)),
            const("zero", np.array(0, dtype=np.int8)),
        ],
    )
    return Case(
        id=f"optimizer_numerics.qdq_resize.{mode}",
        description=f"Q/DQ (int8, scale 1) around Resize({mode}, half_pixel) of [2, 7, 3] to 6",
        model=built,
        inputs={"x": x},
        expected={"y": _resize_oracle(x, mode)},
        output_shapes={"y": [1, 1, 1, 6]},
        known=(QDQ_RESIZE_INT8,) if mode == "linear" else (),
        custom_checks=(LEVELS_CHECK,),
    )


def cases() -> list[Case]:
    return [_conv(CHANNELS), _conv(62), _qdq_resize("linear"), _qdq_resize("nearest")]


def _qdq_resize_linear(model: onnx.ModelProto) -> list[str]:
    """Resize(linear) reading a DequantizeLinear and read by a QuantizeLinear."""
    found = []
    for site in find(model, "Resize"):
        mode = next((a.s for a in site.node.attribute if a.name == "mode"), b"nearest")
        if mode != b"linear" or made_by(site.scope, site.node.input[0], "DequantizeLinear") is None:
            continue
        if any(r.is_op("QuantizeLinear") for r in consumers(site.scope, site.node.output[0])):
            found.append(site.path)
    return found


DETECTORS = [
    Detector(
        id="optimizer_numerics.qdq_resize_linear",
        construct="Resize(linear) between DequantizeLinear and QuantizeLinear: onnxruntime "
        "< 1.27 interpolates it in int8 at level extended",
        known=QDQ_RESIZE_INT8,
        find=_qdq_resize_linear,
    ),
]
