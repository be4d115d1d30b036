"""BatchNormalization in inference form (one output) as paddle2onnx writes it below opset
14, with `momentum` (and `spatial=1` below opset 9), next to the same node without it and
at opset 15.

Before opset 14 BatchNormalization has no `training_mode`: one output means inference,
five mean training. paddle2onnx (paddle2onnx/mapper/nn/batch_norm.cc) writes every batch
norm with `epsilon` and `momentum`, and `spatial=1` below opset 9, at the opset the user
asks for; torch.onnx wrote the same node without `momentum` up to opset 13. onnx's
reference evaluator picks the mode from the attributes instead of the outputs:

- BatchNormalization-9 (opsets 9-13) takes the training path whenever `momentum` is
  set, and the schema's default (0.9) sets it even when the node omits it: a one-output
  node is normalised with running statistics blended with the batch's, so `y` is wrong
  with or without `momentum`. onnx PR #8442 (open) picks the mode from the output count.
- BatchNormalization-7 (opsets 7-8) has no `is_test`, so the training path always runs
  and returns its five outputs as one: the run raises "TypeError: One of the results
  returned by method '_run' of class 'BatchNormalization_6' is a tuple". No upstream
  report of this form was found (searched: "ReferenceEvaluator BatchNormalization_6
  tuple"); the minimal model is this family's `opset7_momentum` case, a single
  BatchNormalization(x, scale, B, mean, var, epsilon=1e-5, momentum=0.9, spatial=1)
  at opset 7 whose output `y` the evaluator cannot return.

Observed in this matrix: `reference` fails on every opset 7, 9 and 13 form in every onnx
release from 1.14.1 to 1.23.2, `momentum` written or not; the opset 15 twins pass.
onnxruntime (1.15.1-1.32.0), the checker and shape inference are right on every form.

Rare form: one-output `BatchNormalization` below opset 14 (paddle2onnx: with `momentum`)
Common twin: the same node at opset 15, `momentum` written or not
Shows: onnx's reference evaluator runs its training path below opset 14 (onnx PR #8442)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import helper

from compat.core.case import Case, Detector, KnownFailure
from compat.corpus.make import const, model, randn, tensor, unknown
from compat.corpus.walk import find

SHAPE = (2, 3, 4, 4)
EPSILON = 1e-5
MOMENTUM = 0.9
#: (opset, momentum written): paddle2onnx at opsets 7, 9 and 13; torch.onnx's form; twins
FORMS = {
    "opset7_momentum": (7, True),
    "opset9_momentum": (9, True),
    "opset9_plain": (9, False),
    "opset13_momentum": (13, True),
    "opset15_momentum": (15, True),
    "opset15_plain": (15, False),
}
NEW_NODE = 14  # BatchNormalization-14 says its mode with training_mode
BLENDED_STATISTICS = KnownFailure(
    package="onnx",
    versions="",
    checks=("reference",),
    reason="the reference BatchNormalization-9 takes the training path (momentum, set "
    "by the schema's default) for a one-output node: y uses blended statistics",
    link="https://github.com/onnx/onnx/pull/8442",
    phase=("compare",),
    match=r"^output 'y' differs at \d+ of 96 elements",
)
NESTED_OUTPUTS = KnownFailure(
    package="onnx",
    versions="",
    checks=("reference",),
    reason="the reference BatchNormalization-7 has no is_test and always runs its training "
    "path, returning its five outputs as one tuple",
    link="https://github.com/onnx/onnx/pull/8442",
    phase=("run",),
    raises=("TypeError",),
    match=r"class 'BatchNormalization_6' is a tuple",
)


def _oracle(x: np.ndarray, stats: dict[str, np.ndarray]) -> np.ndarray:
    """Inference-mode batch norm over axis 1 with the given running statistics."""
    s, b, mean, var = (stats[k].reshape(1, -1, 1, 1) for k in ("scale", "B", "mean", "var"))
    y: np.ndarray = (s * (x - mean) / np.sqrt(var + np.float32(EPSILON)) + b).astype(np.float32)
    return y


def _case(form: str) -> Case:
    opset, momentum = FORMS[form]
    x = randn(29, *SHAPE)
    stats = {
        "scale": np.array([1.0, 2.0, 0.5], dtype=np.float32),
        "B": np.array([0.0, 1.0, -1.0], dtype=np.float32),
        "mean": np.array([0.1, 0.2, 0.3], dtype=np.float32),
        "var": np.array([1.0, 2.0, 0.5], dtype=np.float32),
    }
    attrs: dict[str, Any] = {"epsilon": EPSILON}
    if momentum:
        attrs["momentum"] = MOMENTUM
    if opset < 9:
        attrs["spatial"] = 1
    node = helper.make_node("BatchNormalization", ["x", *stats], ["y"], **attrs)
    built = model(
        [node],
        [tensor("x", np.float32, list(SHAPE))],
        [tensor("y", np.float32, unknown(len(SHAPE)))],
        [const(k, v) for k, v in stats.items()],
        opset=opset,
    )
    known: tuple[KnownFailure, ...] = ()
    if opset < 9:
        known = (NESTED_OUTPUTS,)
    elif opset < NEW_NODE:
        known = (BLENDED_STATISTICS,)
    spelled = ", ".join(f"{k}={v}" for k, v in attrs.items())
    return Case(
        id=f"batchnorm_legacy_opset.{form}",
        description=f"BatchNormalization(x: {list(SHAPE)}, ..., {spelled}) at opset {opset}",
        model=built,
        inputs={"x": x},
        expected={"y": _oracle(x, stats)},
        output_shapes={"y": list(SHAPE)},
        known=known,
    )


def cases() -> list[Case]:
    return [_case(form) for form in FORMS]


def _inference_node(model: onnx.ModelProto, since: int, before: int) -> list[str]:
    """One-output (inference) BatchNormalization nodes of opsets [since, before)."""
    return [
        site.path
        for site in find(model, "BatchNormalization")
        if site.at("BatchNormalization", since=since, before=before)
        and len([o for o in site.node.output if o]) == 1
    ]


DETECTORS = [
    Detector(
        id="batchnorm_legacy_opset.opset9",
        construct="BatchNormalization with one output (inference) at opsets 9-13",
        known=BLENDED_STATISTICS,
        find=lambda m: _inference_node(m, 9, NEW_NODE),
    ),
    Detector(
        id="batchnorm_legacy_opset.opset7",
        construct="BatchNormalization with one output (inference) at opsets 7-8",
        known=NESTED_OUTPUTS,
        find=lambda m: _inference_node(m, 7, 9),
    ),
]
