"""Support limits read from real runs: one minimal model per IR version and per opset.

`y = Add(x, x)` stamped with each IR version from 7 to the newest the host's onnx
writes (at opset 13), and with each default-domain opset from 13 to the newest
(at the lowest IR version that opset needs). A release that cannot load a model
newer than it supports reports `skip` with the limit it has ("opset 23 > max 21 of
onnxruntime 1.20.1"): the limits come from the runtime itself, probed with one-node
models, not from its error messages. The docs report turns these rows into the
"maximum IR version / opset per release" tables that onnxruntime's documentation
maintains by hand (https://onnxruntime.ai/docs/reference/compatibility.html).

Rare form: `Add(x, x)` stamped with each IR version from 7 and each opset from 13
Common twin: the same model one IR version or opset lower
Shows: the newest IR version and opset each release loads, read from the runtime
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from compat.core.case import Case
from compat.corpus.make import model, randn, tensor

FIRST_IR, FIRST_OPSET = 7, 13
CHECKS = ("checker", "reference", "ort_run")


def _case(variant: str, description: str, ir: int, opset: int) -> Case:
    x = randn(11, 3)
    built = model(
        [helper.make_node("Add", ["x", "x"], ["y"])],
        [tensor("x", np.float32, [3])],
        [tensor("y", np.float32, [3])],
        opset=opset,
        ir_version=ir,
        name="support_limits",
    )
    return Case(
        id=f"support_limits.{variant}",
        description=description,
        model=built,
        inputs={"x": x},
        expected={"y": x + x},
        builtin_checks=CHECKS,
    )


def cases() -> list[Case]:
    found = [
        _case(
            f"ir{ir:02d}",
            f"Add(x, x) stamped IR version {ir}, opset {FIRST_OPSET}",
            ir,
            FIRST_OPSET,
        )
        for ir in range(FIRST_IR, onnx.IR_VERSION + 1)
    ]
    for opset in range(FIRST_OPSET, onnx.defs.onnx_opset_version() + 1):
        ir = helper.find_min_ir_version_for([helper.make_opsetid("", opset)])
        found.append(
            _case(f"opset{opset:02d}", f"Add(x, x) at opset {opset}, IR version {ir}", ir, opset)
        )
    return found
