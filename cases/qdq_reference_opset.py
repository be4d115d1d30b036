"""QuantizeLinear / DequantizeLinear at opset 13, as every QDQ exporter writes them, next
to the same graphs at opsets 19 and 21.

Two forms each: `qdq`, the activation pair Q -> DQ (uint8, per-tensor scale and zero
point) that QDQ quantizers put around every quantized op, and `weight`, an int8 weight
initializer dequantized per output channel (`axis=1`) feeding a MatMul. onnxruntime's
quantization tool writes both at opset 13 unless asked otherwise.

onnx's reference evaluator (onnx.reference.ReferenceEvaluator) registers
DequantizeLinear only from version 19 from onnx 1.16 on: below opset 19 it raises
"RuntimeError: No implementation for operator 'DequantizeLinear' domain '' and version
13, found 19, 21, None." (1.23.2: "found 19, 21, 23, 25, None."), which this project
reports as the runtime's missing capability, a `skip` naming the op and version, not a
failure of the model. onnx 1.14.1 and 1.15.0 run it. QuantizeLinear at opset 13 runs in
every release (its version 10 is registered). No upstream report was found (searched
the issues for "ReferenceEvaluator DequantizeLinear opset 13"; onnx PR #8182 registers
versions 23 and 25, not 10 or 13); the minimal model a report needs is
`y = DequantizeLinear(x: uint8[4], scale=0.5, zero_point=1)` at opset 13, IR 8.

Observed in this matrix: `reference` is a skip ("onnx 1.16.2's reference evaluator has
no ai.onnx DequantizeLinear-13 (it has 19, 21)") on both opset 13 forms with onnx
1.16.2-1.23.2 and passes with 1.14.1 and 1.15.0; the opset 19 and 21 twins pass wherever
the release reads the opset. A skip is not a known failure, so the gap has no entry
and no detector here: a scan cannot name a skip. What onnxruntime does:

- onnxruntime 1.15.1 loads opset 19 but has no QuantizeLinear-19 or DequantizeLinear-19
  kernel: "NOT_IMPLEMENTED : Could not find an implementation for QuantizeLinear(19)"
  (onnxruntime #15573, fixed by PR #14731 for 1.16); 1.16.3 on runs both opset 19 forms.
- onnxruntime 1.25.1-1.32.0 fuse the int8 per-column weight DQ and its MatMul into a
  com.microsoft MatMulNBits (bits=8, accuracy_level=4) at `extended` and `all`, which
  quantizes the activations to int8 as it multiplies: `y` is 0.3-0.5% off (0.029 at
  most here) at every opset, and disabling QDQSelectorActionTransformer alone restores
  it; 1.24.4 and older keep DQ + MatMul. onnxruntime #29849 (open) reports the precision
  accuracy_level=4 loses on 8-bit MatMulNBits nodes.

Rare form: `QuantizeLinear` / `DequantizeLinear` at opset 13 (activations and weights)
Common twin: the same graphs at opsets 19 and 21
Shows: onnx >= 1.16's reference evaluator has no DequantizeLinear below opset 19
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from compat.core.case import Case, Detector, KnownFailure
from compat.corpus.make import const, model, randn, rng, tensor, unknown
from compat.corpus.values import constant, made_by
from compat.corpus.walk import find

OPSETS = (13, 19, 21)
SCALE, ZERO = np.float32(0.05), np.uint8(128)
ROWS, INNER, COLS = 2, 4, 3
NO_KERNEL_19 = KnownFailure(
    package="onnxruntime",
    versions="<1.16",
    checks=("ort_run",),
    reason="onnxruntime 1.15 reads opset 19 but has no QuantizeLinear-19 or "
    "DequantizeLinear-19 kernel",
    link="https://github.com/microsoft/onnxruntime/issues/15573",
    phase=("session",),
    raises=("NotImplemented",),
    match=r"Could not find an implementation for (Quantize|Dequantize)Linear\(19\)",
)
INT8_ACTIVATIONS = KnownFailure(
    package="onnxruntime",
    versions=">=1.25",
    checks=("ort_run",),
    reason="DQ(int8 weight, per column) + MatMul is fused into MatMulNBits(bits=8, "
    "accuracy_level=4), which quantizes the activations to int8: y is ~0.5% off",
    link="https://github.com/microsoft/onnxruntime/issues/29849",
    phase=("compare",),
    match=r"^extended, all: output 'y' differs.*QDQSelectorActionTransformer is responsible",
)


def _ir(opset: int) -> int:
    return helper.find_min_ir_version_for([helper.make_opsetid("", opset)])


def _qdq(opset: int) -> Case:
    x = 3 * randn(41, ROWS, INNER)
    q = np.clip(np.rint(x / SCALE) + ZERO, 0, 255).astype(np.uint8)
    y = ((q.astype(np.float32) - np.float32(ZERO)) * SCALE).astype(np.float32)
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "scale", "zero"], ["q"]),
        helper.make_node("DequantizeLinear", ["q", "scale", "zero"], ["y"]),
    ]
    built = model(
        nodes,
        [tensor("x", np.float32, [ROWS, INNER])],
        [tensor("y", np.float32, unknown(2))],
        [const("scale", np.array(SCALE)), const("zero", np.array(ZERO))],
        opset=opset,
        ir_version=max(8, _ir(opset)),
    )
    return Case(
        id=f"qdq_reference_opset.qdq.opset{opset}",
        description=f"DequantizeLinear(QuantizeLinear(x, {SCALE}, uint8 {ZERO})) at opset {opset}",
        model=built,
        inputs={"x": x},
        expected={"y": y},
        output_shapes={"y": [ROWS, INNER]},
        known=(NO_KERNEL_19,) if opset == 19 else (),
    )


def _weight(opset: int) -> Case:
    gen = rng(43)
    w = gen.integers(-127, 128, size=(INNER, COLS), dtype=np.int8)
    scales = np.array([0.02, 0.05, 0.1], dtype=np.float32)
    zeros = np.array([0, 3, -2], dtype=np.int8)
    x = randn(gen, ROWS, INNER)
    weights = (w.astype(np.float32) - zeros.astype(np.float32)) * scales
    nodes = [
        helper.make_node("DequantizeLinear", ["w", "scales", "zeros"], ["wf"], axis=1),
        helper.make_node("MatMul", ["x", "wf"], ["y"]),
    ]
    built = model(
        nodes,
        [tensor("x", np.float32, [ROWS, INNER])],
        [tensor("y", np.float32, unknown(2))],
        [const("w", w), const("scales", scales), const("zeros", zeros)],
        opset=opset,
        ir_version=max(8, _ir(opset)),
    )
    return Case(
        id=f"qdq_reference_opset.weight.opset{opset}",
        description=f"MatMul(x, DequantizeLinear(int8 w: [{INNER}, {COLS}], per-column "
        f"scale and zero point, axis=1)) at opset {opset}",
        model=built,
        inputs={"x": x},
        expected={"y": (x @ weights).astype(np.float32)},
        output_shapes={"y": [ROWS, COLS]},
        known=(INT8_ACTIVATIONS, *((NO_KERNEL_19,) if opset == 19 else ())),
    )


def cases() -> list[Case]:
    return [make(opset) for make in (_qdq, _weight) for opset in OPSETS]


def _opset19(model: onnx.ModelProto) -> list[str]:
    """QuantizeLinear / DequantizeLinear at opsets 19-20 (onnxruntime < 1.16 reads 19)."""
    ops = ("QuantizeLinear", "DequantizeLinear")
    return [site.path for site in find(model, *ops) if site.at(*ops, since=19, before=21)]


def _int8_weight_matmul(model: onnx.ModelProto) -> list[str]:
    """MatMul of a float activation (not itself dequantized) by DequantizeLinear of a
    constant 2-D int8/uint8 weight with a per-column (1-D) scale on axis 1: the form
    onnxruntime >= 1.25 fuses into an 8-bit MatMulNBits."""
    found = []
    for site in find(model, "MatMul"):
        if len(site.node.input) < 2 or made_by(site.scope, site.node.input[0], "DequantizeLinear"):
            continue
        dq = made_by(site.scope, site.node.input[1], "DequantizeLinear")
        if dq is None or len(dq.node.input) < 2:
            continue
        weight = constant(dq.scope, dq.node.input[0])
        scale = constant(dq.scope, dq.node.input[1])
        per_column = dq.attribute("axis", 1) in (1, -1)
        if (
            weight is not None
            and weight.dtype in (np.int8, np.uint8)
            and weight.ndim == 2
            and scale is not None
            and scale.ndim == 1
            and per_column
        ):
            found.append(site.path)
    return found


DETECTORS = [
    Detector(
        id="qdq_reference_opset.opset19_kernels",
        construct="QuantizeLinear or DequantizeLinear at opset 19 or 20",
        known=NO_KERNEL_19,
        find=_opset19,
    ),
    Detector(
        id="qdq_reference_opset.int8_weight_matmul",
        construct="MatMul of a float activation by DequantizeLinear of a constant 2-D "
        "8-bit weight with a per-column scale (axis 1)",
        known=INT8_ACTIVATIONS,
        find=_int8_weight_matmul,
    ),
]
