"""A float16 initializer stored in raw_data vs in int32_data (both legal encodings).

TensorProto documents two encodings of FLOAT16 values: the little-endian bytes
in `raw_data` (what `numpy_helper.from_array` writes), or one IEEE 754 half
bit pattern per element in the low 16 bits of `int32_data` (what
`helper.make_tensor(..., raw=False)` writes, and what older exporters emit).
A reader that handles only one of them, or sign-extends the 16 bits, computes
garbage for negative values, infinities and NaNs without any error. The
int32_data form keeps tripping writers (https://github.com/onnx/onnx/issues/1539,
https://github.com/onnx/onnx/issues/3204, https://github.com/onnx/onnx/issues/3715)
and readers outside this matrix (OpenVINO's importer misparsed it,
https://github.com/openvinotoolkit/openvino/pull/6338). Every case uses the same
16 values (signed zeros, subnormals, +-65504, +-inf, NaN) in `x(float16) + W`
(onnxruntime's CPU provider wraps the float16 Add in Casts and, at level `all`,
folds the Cast of W), in `x(float16) + Constant(value=W)`, and in
`Cast(W, to=float32) * x`, where `ort_optimized` demands the Cast folded, so
onnxruntime's constant folding reads the initializer as well.

Observed (10 onnx x 18 onnxruntime releases): nothing breaks. Both encodings
give identical, correct values in the checker, shape inference, the reference
evaluator of onnx 1.14.1-1.23.2 and onnxruntime 1.15.1-1.32.0 at every
optimization level, and the Cast of W is folded in every onnxruntime release.

Rare form: a float16 initializer in `int32_data`
Common twin: the same values in `raw_data`
Shows: both read alike everywhere, signed zeros, subnormals, ±inf and NaN included (onnx #1539)
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from compat.core.case import Case, Optimized
from compat.corpus.make import model, randn, rng, tensor, unknown

SPECIALS = [0.0, -0.0, 1.0, -1.0, 1 / 3, -2.5, 2.0**-24, -(2.0**-24)]
SPECIALS += [2.0**-14, -1023 * 2.0**-24, 65504.0, -65504.0, np.inf, -np.inf, np.nan, -0.125]
WEIGHTS = np.array(SPECIALS, dtype=np.float16).reshape(2, 8)


def initializer(encoding: str) -> onnx.TensorProto:
    """W, written as raw_data bytes or as uint16 bit patterns in int32_data."""
    if encoding == "raw_data":
        return numpy_helper.from_array(WEIGHTS, "W")
    proto = TensorProto()
    proto.name = "W"
    proto.data_type = TensorProto.FLOAT16
    proto.dims.extend(WEIGHTS.shape)
    proto.int32_data.extend(int(bits) for bits in WEIGHTS.view(np.uint16).ravel())
    return proto


def _case(use: str, encoding: str) -> Case:
    gen = rng(13)
    initializers = [initializer(encoding)]
    optimized = None
    if use in ("add", "constant_node"):
        x = (gen.standard_normal(WEIGHTS.shape) * 0.5).astype(np.float16)
        nodes = [helper.make_node("Add", ["x", "W"], ["y"])]
        expected = x + WEIGHTS
        description = "x(float16) + W"
        if use == "constant_node":
            nodes.insert(0, helper.make_node("Constant", [], ["W"], value=initializers.pop()))
            description = "x(float16) + Constant(value=W)"
    else:
        x = randn(gen, *WEIGHTS.shape) * 0.5
        nodes = [
            helper.make_node("Cast", ["W"], ["w32"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["w32", "x"], ["y"]),
        ]
        expected = WEIGHTS.astype(np.float32) * x
        description = "Cast(W, to=float32) * x"
        optimized = Optimized(op_counts={"Cast": 0}, meaning="Cast(W) not constant-folded")
    built = model(
        nodes,
        [tensor("x", x.dtype, list(WEIGHTS.shape))],
        [tensor("y", expected.dtype, unknown(2))],
        initializers,
    )
    return Case(
        id=f"float16_initializer_encoding.{use}.{encoding}",
        description=f"{description} with the float16 tensor W in {encoding}",
        model=built,
        inputs={"x": x},
        expected={"y": expected},
        output_shapes={"y": list(WEIGHTS.shape)},
        optimized=optimized,
        rtol=1e-3,
        atol=1e-3,
    )


def cases() -> list[Case]:
    uses = ("add", "constant_node", "cast")
    return [_case(use, enc) for use in uses for enc in ("raw_data", "int32_data")]
