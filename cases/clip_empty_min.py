"""Clip-13 with `min` omitted as the empty name, Clip(x, "", max), next to its twins
Clip(x, min, max) and Clip(x).

All three are legal; the empty name is how a bound-only-above clip must be written.
`onnx.shape_inference.infer_node_outputs` (node-level inference, used by
converters and graph rewriters) looked every node input up by name, so the
empty name raised `KeyError: ''` (onnx #6249, fixed by onnx PR #6250 for 1.17).
The case-specific check `infer_node_outputs` runs it on every node with the types
of the present inputs and compares with graph-level inference: observed failing
on onnx 1.14.1, 1.15.0 and 1.16.2, passing from 1.17.0 to 1.23.2 (and in every
onnxruntime cell, which runs onnx 1.23.2). Graph-level inference, the checker,
the reference evaluator and onnxruntime handle the empty name in every release.

The Relu -> Clip pairs cover onnxruntime's Relu+Clip fusion, which removes the
Relu and raises Clip's `min` to 0; with `min` omitted it has to create that
bound. `ort_optimized` expects the Relu gone and one Clip left in both forms,
and `ort_run` checks the fused Clip still zeroes negative inputs: observed fused
and correct on every onnxruntime release from 1.15.1 to 1.32.0.

Rare form: `Clip(x, "", max)`, alone and after a Relu
Common twin: `Clip(x, min, max)` and `Clip(x)`
Shows: onnx < 1.17's `infer_node_outputs` raises `KeyError: ''` (onnx #6249)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import helper

from compat.core.case import Case, CustomCheck, Detector, KnownFailure, Optimized
from compat.corpus.make import const, model, randn, tensor, unknown
from compat.corpus.walk import with_input

SHAPE = (2, 3, 4)
MIN, MAX = -0.5, 1.0
FORMS = {
    "empty_min": (["", "max"], 'Clip({}, "", max)'),
    "min_max": (["min", "max"], "Clip({}, min, max)"),
    "no_bounds": ([], "Clip({})"),
}
NODE_INFERENCE = CustomCheck(
    name="infer_node_outputs",
    file=str(Path(__file__).with_name("_clip_checks.py")),
    function="infer_each_node",
    package="onnx",
)
EMPTY_NAME_LOOKUP = KnownFailure(
    package="onnx",
    versions="<1.17",
    checks=("infer_node_outputs",),
    reason="infer_node_outputs looks the empty input name up: KeyError ''",
    link="https://github.com/onnx/onnx/pull/6250",
    phase=("check",),
    match=r"raised KeyError ''",
)


def _oracle(x: np.ndarray, bounds: list[str], relu: bool) -> np.ndarray:
    y = np.maximum(x, 0) if relu else x
    low = MIN if "min" in bounds else None
    high = MAX if "max" in bounds else None
    if low is not None:
        y = np.maximum(y, np.float32(low))
    if high is not None:
        y = np.minimum(y, np.float32(high))
    return y.astype(np.float32)


def _case(form: str, relu: bool) -> Case:
    bounds, spelled = FORMS[form]
    x = 2 * randn(17, *SHAPE)
    clip_in = "r" if relu else "x"
    nodes = [helper.make_node("Clip", [clip_in, *bounds], ["y"])]
    if relu:
        nodes.insert(0, helper.make_node("Relu", ["x"], ["r"]))
    initializers = [
        const(name, np.array(value, dtype=np.float32))
        for name, value in (("min", MIN), ("max", MAX))
        if name in bounds
    ]
    built = model(
        nodes,
        [tensor("x", np.float32, SHAPE)],
        [tensor("y", np.float32, unknown(len(SHAPE)))],
        initializers,
    )
    known: tuple[KnownFailure, ...] = (EMPTY_NAME_LOOKUP,) if form == "empty_min" else ()
    clip = spelled.format("Relu(x)" if relu else "x")
    return Case(
        id=f"clip_empty_min.{'relu.' if relu else ''}{form}",
        description=f"{clip} with min={MIN}, max={MAX}" if bounds else clip,
        model=built,
        inputs={"x": x},
        expected={"y": _oracle(x, bounds, relu)},
        output_shapes={"y": list(SHAPE)},
        optimized=Optimized(
            op_counts={"Relu": 0, "Clip": 1},
            meaning="Relu not fused into the following Clip",
        )
        if relu
        else None,
        known=known,
        custom_checks=(NODE_INFERENCE,),
    )


def cases() -> list[Case]:
    return [
        *(_case(form, relu=False) for form in FORMS),
        *(_case(form, relu=True) for form in ("empty_min", "min_max")),
    ]


def _empty_min(model: onnx.ModelProto) -> list[str]:
    """Clip from opset 11 on (min and max are inputs) with min written as ""."""
    return [site.path for site in with_input(model, "Clip", 1, "empty", since=11)]


DETECTORS = [
    Detector(
        id="clip_empty_min.empty_min",
        construct='Clip (opset >= 11) with min written as "" (present but empty)',
        known=EMPTY_NAME_LOOKUP,
        find=_empty_min,
    ),
]
