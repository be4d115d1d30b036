"""Dropout in inference mode whose optional `mask` output feeds later nodes, next to
a Dropout whose mask is unused or not produced.

In inference mode (no `training_mode`, or `training_mode` = false) Dropout is the
identity and `mask` is all true. An optimizer may drop the node only when
nothing reads the mask: replacing every output with the data, as onnx's old
nop-dropout pass did, turns the mask into the data (onnx #1672, carried to
onnx/optimizer #40). onnxruntime's EliminateDropout checks that the mask is
unused (onnxruntime PR #1018). `ort_run` compares every optimization level with
the numpy oracle; the mask reaches the outputs through Cast -> Mul, Where, or
directly as a graph output, so a mask replaced by the data shows up as wrong
values (Cast/Mul) or a type error (Where). `ort_optimized` expects the Dropout
gone when the mask is unused or not produced.

Observed: every case passes on every release of the matrix (onnx 1.14.1 to
1.23.2, onnxruntime 1.15.1 to 1.32.0). A Dropout with `ratio` or
`training_mode` inputs stays in onnxruntime's graph even with its mask unused;
that is a missed optimization only, so those cases state no structure.

Rare form: inference-mode Dropout whose `mask` output feeds later nodes
Common twin: the mask unused or not produced
Shows: no release turns a used mask into the data (onnx #1672): passes everywhere
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from compat.core.case import Case, Optimized
from compat.corpus.make import const, model, randn, tensor, unknown

SHAPE = (2, 3, 4)
FILL = np.float32(-7.0)
SCALE = np.float32(3.0)


def _case(variant: str) -> Case:
    x = randn(19, *SHAPE)
    mask = np.ones(SHAPE, dtype=bool)
    dropout_inputs = ["x"]
    initializers: list[onnx.TensorProto] = []
    outputs = [tensor("z", np.float32, unknown(len(SHAPE)))]
    expected: dict[str, np.ndarray] = {}
    dropout_outputs = ["y", "mask"]
    if variant == "no_mask":
        dropout_outputs = ["y"]
    if variant.endswith("training_false"):
        dropout_inputs = ["x", "ratio", "training_mode"]
        initializers += [
            const("ratio", np.array(0.5, dtype=np.float32)),
            const("training_mode", np.array(False)),
        ]
    nodes = [helper.make_node("Dropout", dropout_inputs, dropout_outputs)]
    if variant.startswith("mask_cast_mul"):
        nodes += [
            helper.make_node("Cast", ["mask"], ["mask_f"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["y", "mask_f"], ["z"]),
        ]
        outputs.append(tensor("mask_f", np.float32, unknown(len(SHAPE))))
        expected = {"z": x * mask.astype(np.float32), "mask_f": mask.astype(np.float32)}
    elif variant == "mask_where":
        nodes.append(helper.make_node("Where", ["mask", "y", "fill"], ["z"]))
        initializers.append(const("fill", np.array(FILL)))
        expected = {"z": np.where(mask, x, FILL)}
    else:  # the mask is a graph output, unused, or not produced: y goes through Mul
        nodes.append(helper.make_node("Mul", ["y", "scale"], ["z"]))
        initializers.append(const("scale", np.array(SCALE)))
        expected = {"z": x * SCALE}
        if variant == "mask_graph_output":
            outputs.append(tensor("mask", np.bool_, unknown(len(SHAPE))))
            expected["mask"] = mask
    built = model(nodes, [tensor("x", np.float32, SHAPE)], outputs, initializers)
    removable = variant in ("mask_unused", "no_mask")
    spelled = {
        "no_mask": "Dropout(x) -> y only, then Mul",
        "mask_unused": "Dropout(x) -> (y, mask) with the mask unused, then Mul",
        "mask_graph_output": "Dropout(x) -> (y, mask) with the mask a graph output",
        "mask_cast_mul": "Dropout(x) -> (y, mask), Mul(y, Cast(mask))",
        "mask_cast_mul_training_false": "Dropout(x, ratio=0.5, training_mode=false) -> "
        "(y, mask), Mul(y, Cast(mask))",
        "mask_where": "Dropout(x) -> (y, mask), Where(mask, y, -7)",
    }[variant]
    return Case(
        id=f"dropout_mask_output.{variant}",
        description=spelled,
        model=built,
        inputs={"x": x},
        expected={k: np.asarray(v) for k, v in expected.items()},
        output_shapes={name: list(SHAPE) for name in expected},
        optimized=Optimized(
            op_counts={"Dropout": 0},
            meaning="Dropout kept although nothing reads its mask",
        )
        if removable
        else None,
    )


def cases() -> list[Case]:
    return [
        _case(variant)
        for variant in (
            "no_mask",
            "mask_unused",
            "mask_graph_output",
            "mask_cast_mul",
            "mask_cast_mul_training_false",
            "mask_where",
        )
    ]
