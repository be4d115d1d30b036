"""Reshape(allowzero=1) with zeros in the shape and zero-size inputs, next to allowzero=0.

Since opset 14, `allowzero=1` makes a 0 in `shape` a literal zero-size dim
instead of "copy the input's dim". The two meanings only differ for zero-size
tensors, which is where the bugs live:

- onnxruntime #28449: Reshape(x: [0, 8, 2], [4, 2, -1]) then
  Reshape(allowzero=1, [0, 0, 4]) must give [0, 0, 4]; onnxruntime's
  Reshape+Reshape merge drops the second node's allowzero and computes
  [0, 8, 4]. Observed here: `ort_run` fails at the basic, extended and all
  levels (disabled is right) in onnxruntime 1.21.1-1.26.0, when the merge
  first appears; 1.15.1-1.20.1 do not merge and 1.27.0+ keep the allowzero=1
  node out of the merge (the allowzero=0 twin is still merged into one Reshape
  there). The reference evaluator and onnx shape inference are right in every
  release.
- onnxruntime #10664 (fixed by #10665 in 1.11): allowzero=1 together with -1
  was rejected. Not reproduced: every release here (1.15.1+) accepts it.
- A literal zero where allowzero=0 would copy a non-zero dim ([0, 3, 4] to
  [3, 0, 4]), and a zero that both semantics read alike, pass everywhere.

Rare form: `Reshape(allowzero=1)` with zeros in the shape, on zero-size inputs
Common twin: `allowzero=0`
Shows: onnxruntime 1.21-1.26 merges Reshapes and drops allowzero (onnxruntime #28449)
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import onnx
from onnx import helper

from compat.core.case import Case, Detector, KnownFailure
from compat.corpus.make import const, model, randn, tensor, unknown
from compat.corpus.values import constant, made_by
from compat.corpus.walk import find

MERGE_LINK = "https://github.com/microsoft/onnxruntime/issues/28449"


class Variant(NamedTuple):
    x_shape: list[int]
    steps: list[tuple[list[int], int]]  # (shape, allowzero) of each Reshape, in order
    result: list[int]  # the numpy oracle's shape
    known: tuple[KnownFailure, ...] = ()


MERGE_BUG = KnownFailure(
    package="onnxruntime",
    versions=">=1.21,<1.27",
    checks=("ort_run",),
    reason="Reshape+Reshape merge ignores the second node's allowzero=1",
    link=MERGE_LINK,
    phase=("compare",),
    match=r"output 'y' has shape \[0, 8, 4\], expected \[0, 0, 4\]",
)

VARIANTS = {
    # the model of onnxruntime #28449, and its non-zero-size allowzero=0 twin
    "chained.allowzero1": Variant(
        [0, 8, 2], [([4, 2, -1], 0), ([0, 0, 4], 1)], [0, 0, 4], (MERGE_BUG,)
    ),
    "chained.allowzero0": Variant([2, 8, 2], [([4, 2, -1], 0), ([0, 0, 4], 0)], [4, 2, 4]),
    # a literal zero that allowzero=0 could not express (it would copy the 3)
    "literal_zero.allowzero1": Variant([0, 3, 4], [([3, 0, 4], 1)], [3, 0, 4]),
    # a zero both semantics read alike: the copied dim is itself 0
    "copied_zero.allowzero0": Variant([3, 0, 4], [([4, 0, 3], 0)], [4, 0, 3]),
    "copied_zero.allowzero1": Variant([3, 0, 4], [([4, 0, 3], 1)], [4, 0, 3]),
    # onnxruntime #10664: allowzero=1 with -1 (and no 0) was once rejected
    "minus_one.allowzero1": Variant([2, 3, 4], [([-1, 4], 1)], [6, 4]),
    "minus_one.allowzero0": Variant([2, 3, 4], [([-1, 4], 0)], [6, 4]),
}


def _case(variant: str) -> Case:
    x_shape, steps, result, known = VARIANTS[variant]
    x = randn(11, *x_shape)
    nodes, initializers = [], []
    current = "x"
    for index, (shape, allowzero) in enumerate(steps):
        out = "y" if index == len(steps) - 1 else f"mid{index}"
        initializers.append(const(f"shape{index}", np.array(shape, dtype=np.int64)))
        nodes.append(
            helper.make_node("Reshape", [current, f"shape{index}"], [out], allowzero=allowzero)
        )
        current = out
    built = model(
        nodes,
        [tensor("x", np.float32, x_shape)],
        [tensor("y", np.float32, unknown(len(result)))],
        initializers,
    )
    spelled = " then ".join(f"Reshape({s}, allowzero={a})" for s, a in steps)
    return Case(
        id=f"reshape_allowzero.{variant}",
        description=f"x: {x_shape}, {spelled}",
        model=built,
        inputs={"x": x},
        expected={"y": x.reshape(result)},
        output_shapes={"y": list(result)},
        known=known,
    )


def cases() -> list[Case]:
    return [_case(variant) for variant in VARIANTS]


def _merged_allowzero(model: onnx.ModelProto) -> list[str]:
    """Reshape(allowzero=1) with a 0 in its constant shape (a literal zero-size dim, so
    its input is zero-size too) whose data comes straight from another Reshape."""
    found = []
    for site in find(model, "Reshape"):
        if not site.at("Reshape", since=14) or len(site.node.input) < 2:
            continue
        if site.attribute("allowzero", 0) != 1:
            continue
        shape = constant(site.scope, site.node.input[1])
        if shape is None or not (shape == 0).any():
            continue
        if made_by(site.scope, site.node.input[0], "Reshape") is not None:
            found.append(site.path)
    return found


DETECTORS = [
    Detector(
        id="reshape_allowzero.chained_allowzero1",
        construct="Reshape(allowzero=1) with a 0 in its constant shape right after another "
        "Reshape, which onnxruntime merges with it",
        known=MERGE_BUG,
        find=_merged_allowzero,
    ),
]
