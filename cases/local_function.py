"""A model-local function (FunctionProto in model.functions) vs the same nodes inlined.

IR 8 added `ModelProto.functions`: a node whose (domain, op_type) names a
function of the model runs the function's body. The computation here is
`y = LeakyRelu(Tanh(x * s) + x, alpha=0.2)`, inlined, as one local function,
as a function that takes `alpha` as an attribute (`ref_attr_name`), and as a
function calling another local function. Checker, strict shape inference, the
reference evaluator and onnxruntime at every optimization level must all agree
with the inlined twin.

Observed (10 onnx x 18 onnxruntime releases): checker, strict shape inference
and onnxruntime's outputs agree with the inlined twin everywhere (onnx
1.14.1-1.23.2, onnxruntime 1.15.1-1.32.0). Two differences:

- onnx's ReferenceEvaluator cannot run `function_attr` in any release (1.14.1
  through 1.23.2): the unary op classes override `run(self, x)` without the
  `linked_attributes` keyword the evaluator passes when an attribute refers to
  the function's attribute (`TypeError: OpRunUnaryNum.run() got an unexpected
  keyword argument 'linked_attributes'`), so every unary op with an attribute
  (LeakyRelu, Elu, HardSigmoid, Softmax, Hardmax, Flatten...) fails there. No upstream
  issue found; the closest is the review of the linked-attribute design,
  https://github.com/onnx/onnx/pull/4719. Our `annotations` check runs the
  reference evaluator too and errors the same way.
- onnxruntime 1.15 and 1.16 inline local functions only during partitioning,
  after the level-1 optimizers ran, so the function body is never optimized:
  the inner function's Identity survives in `nested`. Fixed in 1.17 by
  ahead-of-time inlining, https://github.com/microsoft/onnxruntime/pull/17764.

Rare form: a model-local function: plain, with an attribute, calling another
Common twin: the same nodes inlined
Shows: onnx's reference fails on `ref_attr_name`; onnxruntime < 1.17 leaves bodies unoptimized
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import AttributeProto, helper

from compat.core.case import Case, Detector, KnownFailure, Optimized
from compat.corpus.make import IR_VERSION, OPSET, const, randn, rng, tensor, unknown
from compat.corpus.walk import nodes

DOMAIN = "compat.local"
ALPHA = 0.2
SHAPE = (2, 3)


def _leaky(alpha: float | None, inputs: list[str], outputs: list[str]) -> onnx.NodeProto:
    """LeakyRelu with a literal alpha, or with alpha referring to the caller's attribute."""
    if alpha is not None:
        return helper.make_node("LeakyRelu", inputs, outputs, alpha=alpha)
    node = helper.make_node("LeakyRelu", inputs, outputs)
    ref = AttributeProto(name="alpha", ref_attr_name="alpha", type=AttributeProto.FLOAT)
    node.attribute.append(ref)
    return node


def _body(alpha: float | None) -> list[onnx.NodeProto]:
    return [
        helper.make_node("Mul", ["x", "s"], ["t"]),
        helper.make_node("Tanh", ["t"], ["u"]),
        helper.make_node("Add", ["u", "x"], ["v"]),
        _leaky(alpha, ["v"], ["y"]),
    ]


def _function(name: str, nodes: list[onnx.NodeProto], attributes: list[str]) -> onnx.FunctionProto:
    return helper.make_function(
        DOMAIN,
        name,
        ["x", "s"],
        ["y"],
        nodes,
        opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid(DOMAIN, 1)],
        attributes=attributes,
    )


def _graph(variant: str) -> tuple[list[onnx.NodeProto], list[onnx.FunctionProto]]:
    """The main graph's nodes and the model's local functions, for one variant."""
    if variant == "inlined":
        return _body(ALPHA), []
    if variant == "function":
        call = helper.make_node("ResidualTanh", ["x", "s"], ["y"], domain=DOMAIN)
        return [call], [_function("ResidualTanh", _body(ALPHA), [])]
    if variant == "function_attr":
        call = helper.make_node("ResidualTanh", ["x", "s"], ["y"], domain=DOMAIN, alpha=ALPHA)
        return [call], [_function("ResidualTanh", _body(None), ["alpha"])]
    # nested: the outer function computes Tanh(x * s) + x with a call to an inner one
    inner = _function(
        "ScaledTanh", [*_body(ALPHA)[:2], helper.make_node("Identity", ["u"], ["y"])], []
    )
    outer_nodes = [
        helper.make_node("ScaledTanh", ["x", "s"], ["u"], domain=DOMAIN),
        helper.make_node("Add", ["u", "x"], ["v"]),
        _leaky(ALPHA, ["v"], ["y"]),
    ]
    outer = _function("ResidualTanh", outer_nodes, [])
    call = helper.make_node("ResidualTanh", ["x", "s"], ["y"], domain=DOMAIN)
    return [call], [inner, outer]


def _model(variant: str, s: np.ndarray) -> onnx.ModelProto:
    nodes, functions = _graph(variant)
    graph = helper.make_graph(
        nodes,
        "case",
        [tensor("x", np.float32, list(SHAPE))],
        [tensor("y", np.float32, unknown(2))],
        initializer=[const("s", s)],
    )
    opsets = [helper.make_opsetid("", OPSET)]
    if functions:
        opsets.append(helper.make_opsetid(DOMAIN, 1))
    built = helper.make_model(graph, opset_imports=opsets, functions=functions)
    built.ir_version = IR_VERSION  # local functions need IR >= 8
    built.producer_name = "onnx-compat"
    built.producer_version = ""
    return built


def _oracle(x: np.ndarray, s: np.ndarray) -> np.ndarray:
    v = np.tanh(x * s) + x
    out: np.ndarray = np.where(v >= 0, v, v * np.float32(ALPHA)).astype(np.float32)
    return out


DESCRIPTIONS = {
    "inlined": "LeakyRelu(Tanh(x * s) + x, alpha=0.2) as plain graph nodes",
    "function": "the same nodes in a local function ResidualTanh, called once",
    "function_attr": "the local function takes alpha as an attribute (ref_attr_name)",
    "nested": "the local function calls another local function for Tanh(x * s)",
}


#: onnx.reference's unary ops (OpRunUnary.run(self, x)) take no `linked_attributes`,
#: so LeakyRelu(alpha=@alpha) inside a function cannot run in the reference evaluator.
REFERENCE_LINKED_ATTRIBUTE = KnownFailure(
    package="onnx",
    versions="",
    checks=("reference",),
    reason="ReferenceEvaluator: a unary op whose attribute refers to the function's "
    "attribute fails with 'OpRunUnaryNum.run() got an unexpected keyword argument "
    "linked_attributes'",
    link="https://github.com/onnx/onnx/pull/4719",
    phase=("run",),
    raises=("TypeError",),
    # the evaluator's own wrapping of that error
    match=r"attributes \['alpha'\] and linked attributes=\[\] \(operator 'OpFunction'\)",
)

#: Before 1.17, onnxruntime inlined local functions during partitioning, after the
#: level-1 optimizers had run, so they never saw the body (here: an Identity).
LATE_INLINING = KnownFailure(
    package="onnxruntime",
    versions="<1.17",
    checks=("ort_optimized",),
    reason="local functions inlined after level-1 optimizations: the Identity of the "
    "inner function survives",
    link="https://github.com/microsoft/onnxruntime/pull/17764",
    phase=("compare",),
    match="local function call not inlined into the body's nodes: Identity x1 ",
)


def _case(variant: str) -> Case:
    gen = rng(14)
    x = randn(gen, *SHAPE)
    s = randn(gen, *SHAPE)
    known: tuple[KnownFailure, ...] = ()
    if variant == "function_attr":
        known = (REFERENCE_LINKED_ATTRIBUTE,)
    if variant == "nested":
        known = (LATE_INLINING,)
    return Case(
        id=f"local_function.{variant}",
        description=DESCRIPTIONS[variant],
        model=_model(variant, s),
        inputs={"x": x},
        expected={"y": _oracle(x, s)},
        output_shapes={"y": list(SHAPE)},
        optimized=Optimized(
            op_counts={"ResidualTanh": 0, "ScaledTanh": 0, "Identity": 0, "LeakyRelu": 1},
            meaning="local function call not inlined into the body's nodes",
        ),
        known=known,
    )


def cases() -> list[Case]:
    return [_case(variant) for variant in DESCRIPTIONS]


#: onnx.reference's unary op classes with attributes (OpRunUnary subclasses, onnx
#: 1.14.1-1.23.2): the ops whose attribute cannot refer to a function's attribute there
REFERENCE_UNARY_WITH_ATTRIBUTES = frozenset(
    {
        "Elu",
        "Flatten",
        "HardSigmoid",
        "Hardmax",
        "LeakyRelu",
        "LogSoftmax",
        "LpNormalization",
        "Softmax",
        "Swish",
        "ThresholdedRelu",
    }
)


def _unary_with_linked_attribute(model: onnx.ModelProto) -> list[str]:
    """In a local function, a reference-unary op with an attribute set by ref_attr_name."""
    return [
        site.path
        for site in nodes(model)
        if site.scope.function is not None
        and site.is_op(*REFERENCE_UNARY_WITH_ATTRIBUTES)
        and any(attr.ref_attr_name for attr in site.node.attribute)
    ]


def _identity_in_function(model: onnx.ModelProto) -> list[str]:
    """An Identity in a local function's body: what the level-1 optimizers remove, and
    what onnxruntime < 1.17 leaves because it inlines after them."""
    return [
        site.path
        for site in nodes(model)
        if site.scope.function is not None and site.is_op("Identity")
    ]


DETECTORS = [
    Detector(
        id="local_function.linked_attribute",
        construct="a local function whose unary op (LeakyRelu, Elu, Softmax, Flatten...) takes "
        "an attribute from the function's (ref_attr_name)",
        known=REFERENCE_LINKED_ATTRIBUTE,
        find=_unary_with_linked_attribute,
        rewrite="functions_inlined",
    ),
    Detector(
        id="local_function.late_inlining",
        construct="an Identity in a local function's body, which onnxruntime < 1.17 inlines "
        "after the level-1 optimizers that would remove it",
        known=LATE_INLINING,
        find=_identity_in_function,
        rewrite="functions_inlined",
    ),
]
