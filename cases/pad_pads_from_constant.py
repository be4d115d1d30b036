"""Pad whose `pads` come from a Constant node, written two legal ways.

`Constant(value_ints=[...])` and `Constant(value=int64 tensor)` produce the same
1-D int64 tensor. Strict shape inference (and so `check_model(full_check=True)`)
of onnx before 1.21 rejects the value_ints form ("'pads' input must be a 1D
(shape: [2 * num_axes]) tensor of type int64"), which broke onnxscript's CI
pinned to onnx==1.18 while passing on a laptop with onnx 1.23 (onnxscript
#3201, seed 003 §3). The seed names 1.18-1.20; this matrix found 1.14-1.17
failing the same way. Works from onnx 1.21; the tensor form works everywhere.

Rare form: pads = `Constant(value_ints=…)`
Common twin: `Constant(value=tensor)`
Shows: onnx < 1.21 rejects the rare form in strict shape inference (onnxscript #3201)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from compat.core.case import Case, Detector, KnownFailure
from compat.corpus.make import model, randn, tensor, unknown
from compat.corpus.values import constant_attribute, constant_node
from compat.corpus.walk import find

PADS = [0, 1, 1, 0, 1, 1]  # begin of axes 0..2, then end of axes 0..2
LINK = "https://github.com/microsoft/onnxscript/pull/3201"
VALUE_INTS_BUG = KnownFailure(
    package="onnx",
    versions="<1.21",
    checks=("checker", "shape_inference"),
    reason="strict shape inference rejects pads from Constant(value_ints)",
    link=LINK,
    phase=("check", "infer"),  # the checker's full check infers shapes strictly too
    raises=("InferenceError",),
    # a named node says its name: "(op_type:Pad, node name: n1)"
    match=r"\(op_type:Pad\b[^)]*\): \[ShapeInferenceError\] 'pads' input must be a 1D",
)


def _case(variant: str, constant_attr: dict[str, Any], known: tuple[KnownFailure, ...]) -> Case:
    x = randn(1, 1, 2, 3)
    nodes = [
        helper.make_node("Constant", [], ["pads"], **constant_attr),
        helper.make_node("Pad", ["x", "pads"], ["y"]),
    ]
    built = model(
        nodes, [tensor("x", np.float32, [1, 2, 3])], [tensor("y", np.float32, unknown(3))]
    )
    return Case(
        id=f"pad_pads_from_constant.{variant}",
        description=f"Pad(x, pads) with pads = Constant({next(iter(constant_attr))}=...)",
        model=built,
        inputs={"x": x},
        expected={"y": np.pad(x, ((0, 0), (1, 1), (1, 1)))},
        output_shapes={"y": [1, 4, 5]},
        known=known,
    )


def cases() -> list[Case]:
    tensor_pads = numpy_helper.from_array(np.array(PADS, dtype=np.int64), "pads_value")
    return [
        _case("value_ints", {"value_ints": PADS}, (VALUE_INTS_BUG,)),
        _case("tensor", {"value": tensor_pads}, ()),
    ]


def _pads_from_value_ints(model: onnx.ModelProto) -> list[str]:
    """Pad from opset 11 on (where pads is an input), pads made by Constant(value_ints)."""
    found = []
    for site in find(model, "Pad"):
        if site.opset is None or site.opset < 11 or len(site.node.input) < 2:
            continue
        made = constant_node(site.scope, site.node.input[1])
        if made is not None and constant_attribute(made) == "value_ints":
            found.append(site.path)
    return found


DETECTORS = [
    Detector(
        id="pad_pads_from_constant.value_ints",
        construct="Pad (opset >= 11) with its pads from Constant(value_ints)",
        known=VALUE_INTS_BUG,
        find=_pads_from_value_ints,
        rewrite="constant_value_tensor",
    ),
]
