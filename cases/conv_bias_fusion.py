"""Conv without bias, written as Conv(x, W) and as Conv(x, W, ""), then a constant follower.

Both forms are legal and mean "no bias". onnxruntime's Conv+BatchNormalization,
Conv+Add and Conv+Mul fusions counted `InputDefs().size() == 3` to decide that
a bias exists; with the empty name they then looked for a constant bias, found
none, and skipped the fusion at every optimization level. Nothing crashes: the
model only runs slower (onnxruntime #34139, fix #34141, seed 003 §1).
`ort_optimized` expects the follower fused into the Conv in both forms.

Rare form: `Conv(x, W, "")` + BN/Add/Mul
Common twin: `Conv(x, W)` + BN/Add/Mul
Shows: onnxruntime never fuses the follower into the empty-name Conv (onnxruntime #34139)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
from numpy.lib.stride_tricks import sliding_window_view
from onnx import helper

from compat.core.case import Case, Detector, KnownFailure, Optimized
from compat.corpus.make import const, model, randn, rng, tensor, unknown
from compat.corpus.values import consumers, is_constant, is_output, producer
from compat.corpus.walk import find, input_form

C_IN, C_OUT, H, W = 3, 4, 6, 6
EPSILON = 1e-5
#: the follower each case puts after the Conv, by kind
FOLLOWERS = {"batchnorm": "BatchNormalization", "add": "Add", "mul": "Mul"}
FUSION_SKIPPED = {
    op: KnownFailure(
        package="onnxruntime",
        versions="",
        checks=("ort_optimized",),
        reason=f"Conv+{op} fusion skipped when the bias is written as ''",
        link="https://github.com/microsoft/onnxruntime/issues/34139",
        phase=("compare",),
        match=rf"^{op} not fused into Conv: ",
    )
    for op in FOLLOWERS.values()
}


def conv2d(x: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """NCHW convolution, stride 1, padding 1: the oracle for Conv(pads=[1,1,1,1])."""
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = sliding_window_view(padded, weight.shape[2:], axis=(2, 3))
    out: np.ndarray = np.einsum("nchwij,ocij->nohw", windows, weight).astype(np.float32)
    return out


def _follower(
    kind: str, conv_out: np.ndarray
) -> tuple[list[onnx.TensorProto], list[str], np.ndarray]:
    """The follower node's constants, its extra inputs, and its output (the oracle)."""
    gen = rng(7)
    if kind == "batchnorm":
        scale, bias, mean = (randn(gen, C_OUT) for _ in range(3))
        var = gen.uniform(0.5, 1.5, C_OUT).astype(np.float32)
        names = ["bn_scale", "bn_bias", "bn_mean", "bn_var"]
        arrays = [scale, bias, mean, var]
        shape = (1, C_OUT, 1, 1)
        out = (conv_out - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + EPSILON)
        out = out * scale.reshape(shape) + bias.reshape(shape)
    else:
        operand = randn(gen, C_OUT, 1, 1)
        names, arrays = [f"{kind}_operand"], [operand]
        out = conv_out + operand if kind == "add" else conv_out * operand
    return [const(n, a) for n, a in zip(names, arrays, strict=True)], names, out.astype(np.float32)


def _case(kind: str, form: str) -> Case:
    gen = rng(3)
    x = randn(gen, 1, C_IN, H, W)
    weight = randn(gen, C_OUT, C_IN, 3, 3)
    consts, names, expected = _follower(kind, conv2d(x, weight))
    conv_inputs = ["x", "W"] if form == "omitted" else ["x", "W", ""]
    op = FOLLOWERS[kind]
    nodes = [
        helper.make_node("Conv", conv_inputs, ["conv"], pads=[1, 1, 1, 1]),
        helper.make_node(op, ["conv", *names], ["y"]),
    ]
    if kind == "batchnorm":
        nodes[1].attribute.append(helper.make_attribute("epsilon", EPSILON))
    built = model(
        nodes,
        [tensor("x", np.float32, [1, C_IN, H, W])],
        [tensor("y", np.float32, unknown(4))],
        [const("W", weight), *consts],
    )
    known: tuple[KnownFailure, ...] = (FUSION_SKIPPED[op],) if form == "empty_name" else ()
    spelled = "Conv(x, W)" if form == "omitted" else 'Conv(x, W, "")'
    return Case(
        id=f"conv_bias_fusion.{kind}.{form}",
        description=f"{spelled} followed by {op} with constant operands",
        model=built,
        inputs={"x": x},
        expected={"y": expected},
        output_shapes={"y": [1, C_OUT, H, W]},
        optimized=Optimized(
            op_counts={op: 0},
            meaning=f"{op} not fused into Conv",
        ),
        known=known,
        rtol=1e-4,
        atol=1e-4,
    )


def cases() -> list[Case]:
    return [
        _case(kind, form)
        for kind in ("batchnorm", "add", "mul")
        for form in ("omitted", "empty_name")
    ]


def _empty_bias_before(follower: str) -> Callable[[onnx.ModelProto], list[str]]:
    """Conv(x, W, "") with a constant W whose only reader is `follower` with constant
    operands: what the fusions need to fold the follower into W and the bias."""

    def find_in(model: onnx.ModelProto) -> list[str]:
        found = []
        for site in find(model, "Conv"):
            if input_form(site.node, 2) != "empty" or not site.node.output:
                continue
            if not is_constant(site.scope, site.node.input[1]):
                continue  # the fusions fold the follower into a constant W only
            out = site.node.output[0]
            readers = consumers(site.scope, out)
            if len(readers) != 1 or is_output(site.scope, out):
                continue
            (reader,) = readers
            operands = [n for n in reader.node.input if producer(reader.scope, n) is not site]
            if reader.is_op(follower) and all(is_constant(reader.scope, n) for n in operands):
                found.append(site.path)
        return found

    return find_in


DETECTORS = [
    Detector(
        id=f"conv_bias_fusion.{kind}",
        construct=f'Conv(x, W, "") (bias written as ""), constant W, read only by a {op} '
        "with constant operands",
        known=FUSION_SKIPPED[op],
        find=_empty_bias_before(op),
        rewrite="optional_input_omitted",
    )
    for kind, op in FOLLOWERS.items()
]
