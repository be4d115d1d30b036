"""Optional / OptionalHasElement / OptionalGetElement on a tensor vs the plain tensor path.

Opset 15 added the optional type; opset 18 lets OptionalHasElement and
OptionalGetElement also take a plain tensor, and lets OptionalHasElement take
no input at all (an absent optional: false). Exporters emit these for
`Optional[Tensor]` arguments (torch.onnx), usually next to an `If` on the
`has element` flag. The twin `plain` computes `y = x + 1` directly; the other
cases compute the same `y` through an optional (built with `Optional`, given
as a plain tensor, declared as an optional graph input fed as an
OptionalProto, or an empty `Optional(type=...)` guarded by `If`), and report
`has` (a bool scalar) as a second output.

Observed (10 onnx x 18 onnxruntime releases): the checker and strict shape
inference accept every form in onnx 1.14.1-1.23.2 (OptionalGetElement's shape
inference on a plain tensor was fixed before 1.14,
https://github.com/onnx/onnx/pull/4905), and onnxruntime 1.15.1-1.32.0 computes
every form right at every optimization level. onnx's ReferenceEvaluator, in
every release 1.14.1-1.23.2, gets both cases that use the `Optional` op wrong:
its `Optional._run` returns `([x],)`, wrapping the value in a one-element list,
while OptionalHasElement / OptionalGetElement follow the convention settled in
https://github.com/onnx/onnx/pull/4835 (an optional is None or the value
itself). So `wrapped` hands Add a list (AttributeError; our `annotations`
check, which runs the reference evaluator, errors the same way), and in
`empty_if` the empty optional becomes `[None]`: OptionalHasElement says true,
If takes the wrong branch and y comes out as `[None]`, with no error at all.
No upstream issue names the `Optional` op itself; the link is the fix of its
two siblings. The forms without the `Optional` op (plain tensor input,
optional graph input, no input) pass everywhere.

Rare form: Optional / OptionalHasElement / OptionalGetElement around a tensor
Common twin: the plain tensor path
Shows: onnx's reference evaluator gets the `Optional` op wrong in every release (cf. onnx #4835)
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from compat.core.case import Case, Detector, KnownFailure
from compat.corpus.make import const, model, randn, tensor, unknown
from compat.corpus.values import consumers
from compat.corpus.walk import find, input_form

SHAPE = [2, 3]


def _nodes(variant: str) -> tuple[list[onnx.NodeProto], bool]:
    """The nodes computing `y` (and `has`, except in `plain`) and the expected flag."""
    add = helper.make_node("Add", ["x_value", "one"], ["y"])
    has_node = helper.make_node("OptionalHasElement", ["x_opt"], ["has"])
    if variant == "plain":
        return [helper.make_node("Add", ["x", "one"], ["y"])], True
    if variant == "wrapped":
        return [
            helper.make_node("Optional", ["x"], ["x_opt"]),
            has_node,
            helper.make_node("OptionalGetElement", ["x_opt"], ["x_value"]),
            add,
        ], True
    if variant == "graph_input":  # x itself is declared optional(tensor(float))
        return [
            helper.make_node("OptionalHasElement", ["x"], ["has"]),
            helper.make_node("OptionalGetElement", ["x"], ["x_value"]),
            add,
        ], True
    if variant == "tensor_input":  # opset 18: both ops accept a plain tensor
        return [
            helper.make_node("OptionalHasElement", ["x"], ["has"]),
            helper.make_node("OptionalGetElement", ["x"], ["x_value"]),
            add,
        ], True
    if variant == "no_input":  # opset 18: OptionalHasElement() is false
        return [
            helper.make_node("OptionalHasElement", [], ["has"]),
            helper.make_node("Add", ["x", "one"], ["y"]),
        ], False
    # "empty_if": an empty Optional(type=tensor(float)); If(has) takes the else branch
    elem = helper.make_tensor_type_proto(TensorProto.FLOAT, None)
    then_branch = helper.make_graph(
        [helper.make_node("OptionalGetElement", ["x_opt"], ["then_y"])],
        "then",
        [],
        [tensor("then_y", np.float32, unknown(2))],
    )
    else_branch = helper.make_graph(
        [helper.make_node("Add", ["x", "one"], ["else_y"])],
        "else",
        [],
        [tensor("else_y", np.float32, unknown(2))],
    )
    return [
        helper.make_node("Optional", [], ["x_opt"], type=elem),
        has_node,
        helper.make_node("If", ["has"], ["y"], then_branch=then_branch, else_branch=else_branch),
    ], False


DESCRIPTIONS = {
    "plain": "y = x + 1 on the plain tensor",
    "wrapped": "y = OptionalGetElement(Optional(x)) + 1, has = OptionalHasElement(Optional(x))",
    "graph_input": "graph input x: optional(tensor(float)), fed a tensor; y = "
    "OptionalGetElement(x) + 1, has = OptionalHasElement(x)",
    "tensor_input": "y = OptionalGetElement(x) + 1, has = OptionalHasElement(x) on a plain tensor",
    "no_input": "has = OptionalHasElement() with no input (false), y = x + 1",
    "empty_if": "has = OptionalHasElement(Optional(type=float)), y = If(has, get element, x + 1)",
}


def _wrapper_bug(symptom: str, phase: str, raises: tuple[str, ...], match: str) -> KnownFailure:
    return KnownFailure(
        package="onnx",
        versions="",
        checks=("reference",),
        reason="ReferenceEvaluator's Optional op returns [x], a one-element list, where the "
        "convention (None or the value itself) wants x: " + symptom,
        link="https://github.com/onnx/onnx/pull/4835",
        phase=(phase,),
        raises=raises,
        match=match,
    )


#: the symptoms of the reference evaluator's Optional wrapping its input in a list
WRAPPED_VALUE = _wrapper_bug(
    "OptionalGetElement hands Add a list (AttributeError)",
    "run",
    ("AttributeError",),
    "'list' object has no attribute 'dtype'",
)
WRAPPED_NONE = _wrapper_bug(
    "an empty Optional() becomes [None], OptionalHasElement says true and If takes "
    "the wrong branch",
    "compare",
    (),  # no exception: y comes out as [None]
    r"output 'y' has shape \[1\], expected \[2, 3\]",
)
KNOWN = {"wrapped": (WRAPPED_VALUE,), "empty_if": (WRAPPED_NONE,)}


def _case(variant: str) -> Case:
    x = randn(15, *SHAPE)
    nodes, has = _nodes(variant)
    outputs = [tensor("y", np.float32, unknown(2))]
    expected = {"y": x + np.float32(1)}
    output_shapes: dict[str, list[int | str | None]] = {"y": list(SHAPE)}
    if variant != "plain":
        outputs.append(tensor("has", np.bool_, []))
        expected["has"] = np.array(has)
        output_shapes["has"] = []
    if variant == "empty_if":
        del output_shapes["y"]  # If merges two branches whose shapes are unknown
    x_info = tensor("x", np.float32, SHAPE)
    if variant == "graph_input":
        x_info = helper.make_value_info("x", helper.make_optional_type_proto(x_info.type))
    built = model(
        nodes,
        [x_info],
        outputs,
        [const("one", np.array(1, dtype=np.float32))],
    )
    return Case(
        id=f"optional_tensor.{variant}",
        description=DESCRIPTIONS[variant],
        model=built,
        inputs={"x": x},
        expected=expected,
        output_shapes=output_shapes,
        # an optional graph input travels as an OptionalProto, as in onnx's backend tests
        encoding="pb" if variant == "graph_input" else "npz",
        known=KNOWN.get(variant, ()),
    )


def cases() -> list[Case]:
    return [_case(variant) for variant in DESCRIPTIONS]


def _optional_of_value(model: onnx.ModelProto) -> list[str]:
    """Optional(x) whose result is read by something other than OptionalHasElement
    (which answers right even for [x]): the wrapped list reaches it."""
    found = []
    for site in find(model, "Optional"):
        if input_form(site.node, 0) != "given" or not site.node.output:
            continue
        readers = consumers(site.scope, site.node.output[0])
        if not readers or not all(r.is_op("OptionalHasElement") for r in readers):
            found.append(site.path)
    return found


def _empty_optional(model: onnx.ModelProto) -> list[str]:
    """Optional() with no input (an empty optional of `type`), which becomes [None]."""
    return [site.path for site in find(model, "Optional") if input_form(site.node, 0) != "given"]


DETECTORS = [
    Detector(
        id="optional_tensor.optional_of_value",
        construct="Optional(x) whose result is read beyond OptionalHasElement (onnx's "
        "reference wraps x in a list)",
        known=WRAPPED_VALUE,
        find=_optional_of_value,
    ),
    Detector(
        id="optional_tensor.empty_optional",
        construct="an empty Optional() (onnx's reference makes it [None], which is not empty)",
        known=WRAPPED_NONE,
        find=_empty_optional,
    ),
]
