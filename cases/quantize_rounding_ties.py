"""QuantizeLinear (uint8 and int8 zero points, opsets 13 and 19) of an x whose x / scale
lies exactly halfway between two integers (ties), next to the same models with no ties.

The spec rounds x / y_scale "to nearest ties to even" (numpy's `np.rint`), then adds the
zero point and saturates: 0.5 -> 0, 2.5 -> 2, -1.5 -> -2. Ties are rare in float data;
they take a power-of-two scale over values that are themselves multiples of half a
step.

onnx 1.14's reference evaluator (onnx.reference.ReferenceEvaluator) computed
`floor(x / scale + zero_point + 0.5)`: round half *up* (towards +inf), not away from
zero, so a tie whose integer part is even comes out one too high (0.5 -> 1, 2.5 -> 3,
4.5 -> 5, -1.5 -> -1, -3.5 -> -3) and the others agree (1.5, -0.5, -2.5). onnx PR #5408
("Fix reference implement for DequantizeLinear", in 1.15.0) switched QuantizeLinear to
`np.rint(x / scale) + zero_point` on the way, without saying so in its title. No onnx
issue about the rounding was found (searched the issues for "QuantizeLinear reference
rounding half to even" and "floor(x + 0.5)"); the minimal model is `y =
QuantizeLinear(x: float[1], scale=0.5, zero_point=uint8 128)` at opset 13, fed x = [0.25]
(x / scale = 0.5): 1.14.1 gives [129], the spec [128].

Observed in this matrix: `reference` fails on every tie case with onnx 1.14.1 ("output
'y' differs at 5 of 10 elements": the five even-integer-part ties, at opsets 13 and 19,
uint8 and int8, the initializer form too) and passes with 1.15.0-1.23.2; the no-tie
twins pass on every release. onnxruntime rounds ties to even on every release
(1.15.1-1.32.0), apart from its missing QuantizeLinear-19 kernel in 1.15.1 (onnxruntime
#15573, the opset 19 cases' session fails there, as qdq_reference_opset shows).

A scan sees a tie only where the model holds x: QuantizeLinear of a constant x (an
initializer or a Constant) with a constant scale, where rounding half up gives another
value than rounding half to even. So the cases hold x as an initializer: a tie fed as
an input (activations, as a QDQ model quantizes them) fails the same way on onnx 1.14,
but neither scan nor any reading of the model can see it.

Rare form: `QuantizeLinear(x)` with x / scale exactly k + 0.5 (ties), uint8 / int8, opsets 13, 19
Common twin: the same models without ties
Shows: onnx 1.14's reference rounds ties half up, not to even (fixed by onnx PR #5408 in 1.15)
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from compat.core.case import Case, Detector, KnownFailure
from compat.corpus.make import const, model, tensor, unknown
from compat.corpus.values import constant
from compat.corpus.walk import Site, find, input_form

SCALE = np.float32(0.5)  # a power of two: x = units * scale and x / scale are exact
#: the zero point of each output type: an odd, nonzero int8 one shows it is added after
#: rounding (the spec) or before (onnx 1.14)
ZEROS = {"uint8": np.uint8(128), "int8": np.int8(-3)}
RANGES = {"uint8": (0, 255), "int8": (-128, 127)}
OPSETS = (13, 19)
#: x / scale: ties (five of them with an even integer part), and one saturating value
#: each way
TIES = [[0.5, 1.5, 2.5, 4.5, 300.0], [-0.5, -1.5, -2.5, -3.5, -300.0]]
NO_TIES = [[0.25, 1.75, 2.2, 4.6, 300.0], [-0.4, -1.6, -2.75, -3.2, -300.0]]
HALF_UP = KnownFailure(
    package="onnx",
    versions="<1.15",
    checks=("reference",),
    reason="the reference rounds x / scale half up (floor(x / scale + zero_point + 0.5)), "
    "not half to even: 0.5 -> 1, 2.5 -> 3, -1.5 -> -1",
    link="https://github.com/onnx/onnx/pull/5408",
    phase=("compare",),
    match=r"^output 'y' differs at 5 of 10 elements",
)
#: onnxruntime 1.15's missing QuantizeLinear-19 kernel: the value qdq_reference_opset
#: declares (its detector names it, known failures compare as values)
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


def quantize(x: np.ndarray, scale: np.float32, zero: np.integer) -> np.ndarray:
    """The spec's QuantizeLinear: round x / scale half to even, add the zero point,
    saturate to the zero point's type."""
    name = np.dtype(type(zero)).name
    low, high = RANGES[name]
    quantized: np.ndarray = np.clip(np.rint(x / scale) + int(zero), low, high).astype(type(zero))
    return quantized


def _x(units: list[list[float]]) -> np.ndarray:
    return (np.array(units, dtype=np.float32) * SCALE).astype(np.float32)


def _ir(opset: int) -> int:
    return max(8, helper.find_min_ir_version_for([helper.make_opsetid("", opset)]))


def _case(kind: str, opset: int, ties: bool) -> Case:
    """x as an initializer: what a scan reads (a tie fed as an input it cannot see)."""
    zero = ZEROS[kind]
    x = _x(TIES if ties else NO_TIES)
    built = model(
        [helper.make_node("QuantizeLinear", ["x", "scale", "zero"], ["y"])],
        [],
        [tensor("y", type(zero), unknown(2))],
        [const("x", x), const("scale", np.array(SCALE)), const("zero", np.array(zero))],
        opset=opset,
        ir_version=_ir(opset),
    )
    form = "ties" if ties else "no_ties"
    known = ((HALF_UP,) if ties else ()) + ((NO_KERNEL_19,) if opset == 19 else ())
    return Case(
        id=f"quantize_rounding_ties.{kind}.opset{opset}.{form}",
        description=f"QuantizeLinear(x, {SCALE}, {kind} {zero}) at opset {opset}, x an "
        "initializer, x / scale " + ("exactly k + 0.5 (ties)" if ties else "never a tie"),
        model=built,
        inputs={},
        expected={"y": quantize(x, SCALE, zero)},
        output_shapes={"y": list(x.shape)},
        known=known,
    )


def cases() -> list[Case]:
    return [
        _case(kind, opset, ties) for kind in ZEROS for opset in OPSETS for ties in (True, False)
    ]


def _per_axis(site: Site, x: np.ndarray, value: np.ndarray) -> np.ndarray | None:
    """A scale or zero point shaped to broadcast over x: a scalar as is, a 1-D one along
    `axis` (default 1); None for what QuantizeLinear would reject or blocked forms."""
    if value.size == 1:
        return value.reshape(())
    axis = site.attribute("axis", 1)
    if value.ndim != 1 or not isinstance(axis, int) or not -x.ndim <= axis < x.ndim:
        return None
    if x.shape[axis] != value.size:
        return None
    shape = [1] * x.ndim
    shape[axis] = value.size
    return value.reshape(shape)


def _half_up_differs(site: Site) -> bool:
    """Rounding the constant x / scale as onnx 1.14 does (half up, after the zero point)
    gives another output than the spec (half to even, then the zero point)."""
    if site.attribute("block_size", 0):
        return False
    x, scale = (constant(site.scope, site.input(i)) for i in (0, 1))
    zero = constant(site.scope, site.input(2)) if input_form(site.node, 2) == "given" else None
    if zero is None and input_form(site.node, 2) == "given":
        return False  # a zero point the model does not show
    kind = "uint8" if zero is None else zero.dtype.name
    if x is None or scale is None or kind not in RANGES or x.dtype.kind != "f":
        return False
    scale = _per_axis(site, x, scale)
    shift = np.zeros((), np.int64) if zero is None else _per_axis(site, x, zero)
    if scale is None or shift is None:
        return False
    low, high = RANGES[kind]
    with np.errstate(all="ignore"):
        v = x / scale
        finite = np.isfinite(v)
        spec = np.clip(np.rint(v) + shift, low, high)
        half_up = np.clip(np.floor(v + shift + 0.5), low, high)
    return bool(np.any(finite & (spec != half_up)))


def _constant_ties(model: onnx.ModelProto) -> list[str]:
    """QuantizeLinear (any opset) of a constant x holding a tie for its constant scale."""
    return [site.path for site in find(model, "QuantizeLinear") if _half_up_differs(site)]


DETECTORS = [
    Detector(
        id="quantize_rounding_ties.constant_ties",
        construct="QuantizeLinear (uint8 or int8) of a constant x (initializer or Constant) "
        "and constant scale where x / scale has a tie that rounding half up and half to "
        "even put apart (a tie in a graph input the model cannot show)",
        known=HALF_UP,
        find=_constant_ties,
    ),
]
