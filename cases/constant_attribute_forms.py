"""Every typed attribute form of Constant, numeric and string, feeding the same consumer.

Each kind of constant is written with the general `value` tensor (the common
form) and with its typed shorthand (the rare form); numeric constants feed
Add/Mul with a graph input, string constants feed Cast(to=FLOAT) and then
Add/Mul, so every output is numeric. Shape inference, the reference evaluator,
onnxruntime at every optimization level and its constant folding should all
treat the forms alike.

Observed in this matrix:

- String constants, in *both* the `value` and the `value_string(s)` form, fail
  onnxruntime 1.15.1 and 1.16.3 whenever graph optimizations are on: constant
  folding of the Cast over the string initializer aborts session creation with
  "string tensor can not use pre-allocated buffer" (onnxruntime #17392, fix
  #17422). With optimizations disabled the same sessions compute the right
  values; 1.17.3 onwards pass every check, the string Cast folded away.
- value_float, value_floats, value_int, value_ints and the numeric `value`
  forms pass every check in every release (the Constant is always lifted to
  an initializer; the Add/Mul with the input stays).

`sparse_value`, the eighth form, is left out: by hand, the reference evaluator
of every onnx release here (1.14.1-1.23.2) hands the consumer an undensified
sparse tensor, and onnxruntime (which densifies it, #3304) fails session
creation in every release when that Constant's output is also a graph output,
which the annotation checks do to observe it. No upstream issue was found for
either, so there is nothing to cite as a known failure yet.

Rare form: `Constant` with a typed attribute: `value_int(s)`, `value_float(s)`, `value_string(s)`
Common twin: `Constant(value=tensor)`
Shows: string constants, either form, break optimized onnxruntime < 1.17 (onnxruntime #17392)
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from compat.core.case import Case, Detector, Dim, KnownFailure, Optimized
from compat.corpus.make import model, randn, rng, tensor, unknown
from compat.corpus.values import elem_type, is_constant
from compat.corpus.walk import find

SHAPE = (2, 3)
STRING_FOLDING = "https://github.com/microsoft/onnxruntime/issues/17392"
STRING_CAST_FOLDED = KnownFailure(
    package="onnxruntime",
    versions="<1.17",
    checks=("ort_run", "ort_optimized"),
    reason="constant folding a string initializer aborts session creation",
    link=STRING_FOLDING,
    phase=("session",),
    raises=("RuntimeException",),
    match="OptimizerExecutionFrame.* string tensor can not use pre-allocated buffer",
)


class Kind(NamedTuple):
    dtype: type  # the graph input's (and the result's) element type
    consumer: str  # Add or Mul
    value: np.ndarray  # the constant, as the consumer sees it (after Cast for strings)
    shorthand: str  # the typed attribute that writes the same constant


KINDS = {
    "float_scalar": Kind(np.float32, "Mul", np.array(2.5, np.float32), "value_float"),
    "float_vector": Kind(
        np.float32, "Add", np.array([1.5, 0.0, -0.25], np.float32), "value_floats"
    ),
    "int_scalar": Kind(np.int64, "Mul", np.array(7, np.int64), "value_int"),
    "int_vector": Kind(np.int64, "Add", np.array([1, 0, -3], np.int64), "value_ints"),
    "string_scalar": Kind(np.float32, "Mul", np.array(2.5, np.float32), "value_string"),
    "string_vector": Kind(
        np.float32, "Add", np.array([1.5, 0.0, -0.25], np.float32), "value_strings"
    ),
}


def _texts(values: np.ndarray) -> list[str]:
    return [f"{v:g}" for v in values.reshape(-1)]


def _attribute(kind: str, form: str) -> dict[str, Any]:
    """The Constant node's one attribute, in `form`, for the constant of `kind`."""
    value = KINDS[kind].value
    is_string = kind.startswith("string")
    if form == "value":
        if is_string:  # an object array of str becomes a STRING tensor
            strings = np.array(_texts(value), dtype=object).reshape(value.shape)
            return {"value": numpy_helper.from_array(strings, "c_value")}
        return {"value": numpy_helper.from_array(value, "c_value")}
    if is_string:
        texts = _texts(value)
        return {form: texts[0] if value.ndim == 0 else texts}
    return {form: value.item() if value.ndim == 0 else value.tolist()}


def _case(kind: str, form: str) -> Case:
    dtype, consumer, value, _ = KINDS[kind]
    is_string = kind.startswith("string")
    gen = rng(10)
    x = gen.integers(-5, 6, SHAPE).astype(np.int64) if dtype is np.int64 else randn(gen, *SHAPE)
    nodes = [helper.make_node("Constant", [], ["c"], **_attribute(kind, form))]
    operand = "c"
    if is_string:
        nodes.append(helper.make_node("Cast", ["c"], ["c_float"], to=TensorProto.FLOAT))
        operand = "c_float"
    nodes.append(helper.make_node(consumer, ["x", operand], ["y"]))
    built = model(nodes, [tensor("x", dtype, SHAPE)], [tensor("y", dtype, unknown(2))])
    expected = x + value if consumer == "Add" else x * value
    dims: list[Dim] = list(value.shape)
    shapes = {"c": dims, "y": list[Dim](SHAPE)}
    if is_string:
        shapes["c_float"] = dims
    known: list[KnownFailure] = []
    if is_string:
        known.append(STRING_CAST_FOLDED)
    counts = {"Constant": 0, consumer: 1}
    if is_string:
        counts["Cast"] = 0
    return Case(
        id=f"constant_attribute_forms.{kind}.{form}",
        description=f"{consumer}(x, {'Cast(' if is_string else ''}Constant({form}=...)"
        f"{')' if is_string else ''}), a {kind.replace('_', ' ')}",
        model=built,
        inputs={"x": x},
        expected={"y": expected.astype(dtype)},
        output_shapes=shapes,
        optimized=Optimized(
            op_counts=counts,
            meaning="the constant (or the Cast of it) was not folded",
        ),
        known=tuple(known),
    )


def cases() -> list[Case]:
    found = []
    for kind, spec in KINDS.items():
        found.append(_case(kind, "value"))
        found.append(_case(kind, spec.shorthand))
    return found


def _cast_of_constant_string(model: onnx.ModelProto) -> list[str]:
    """Cast whose input is a constant string tensor, in any Constant form or an
    initializer: what constant folding evaluates."""
    return [
        site.path
        for site in find(model, "Cast")
        if site.node.input
        and is_constant(site.scope, site.node.input[0])
        and elem_type(site.scope, site.node.input[0]) == TensorProto.STRING
    ]


DETECTORS = [
    Detector(
        id="constant_attribute_forms.string_cast",
        construct="Cast of a constant string tensor (Constant, any form, or an initializer), "
        "which onnxruntime's constant folding evaluates",
        known=STRING_CAST_FOLDED,
        find=_cast_of_constant_string,
    ),
]
