"""Reducing a failing model to the smallest one that fails the same way (real
onnxruntime on the host: Squeeze with an empty axes input fails on every release)."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from compat.followup.reduce import reduce


def buried_squeeze(noise: int = 32) -> onnx.ModelProto:
    """`Squeeze(h, "")` in the middle of a chain, with `noise` unrelated nodes around."""
    nodes, last = [], "x"
    for i in range(noise // 2):
        op = ("Relu", "Abs", "Neg", "Sigmoid")[i % 4]
        nodes.append(helper.make_node(op, [last], [f"a{i}"]))
        last = f"a{i}"
    nodes.append(helper.make_node("Squeeze", [last, ""], ["squeezed"]))
    last = "squeezed"
    for i in range(noise // 2):
        op = ("Abs", "Relu", "Neg", "Tanh")[i % 4]
        nodes.append(helper.make_node(op, [last], [f"b{i}"]))
        last = f"b{i}"
    graph = helper.make_graph(
        nodes,
        "buried",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 1, 3])],
        [helper.make_tensor_value_info(last, TensorProto.FLOAT, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def squeeze_fails(model: onnx.ModelProto, feeds: dict[str, Any]) -> bool:
    """The same failure: onnxruntime refuses to run it, saying the axes input is null."""
    import onnxruntime as ort

    try:
        session = ort.InferenceSession(
            model.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        session.run(None, feeds)
    except Exception as exc:
        return "Axes input is null" in str(exc)
    return False


def test_a_buried_squeeze_reduces_to_the_one_node_that_fails() -> None:
    model = buried_squeeze()
    assert len(model.graph.node) == 33
    feeds = {"x": np.random.default_rng(0).standard_normal((2, 1, 3)).astype(np.float32)}
    reduced = reduce(model, feeds, squeeze_fails)
    assert [n.op_type for n in reduced.model.graph.node] == ["Squeeze"]
    assert squeeze_fails(reduced.model, reduced.feeds)
    onnx.checker.check_model(reduced.model, full_check=True)
    (name,) = reduced.feeds  # fed with the real intermediate value the whole model computed
    assert reduced.feeds[name].shape == (2, 1, 3)
    assert reduced.tried < 60


def test_a_model_that_does_not_fail_is_not_reduced() -> None:
    model = buried_squeeze()
    feeds = {"x": np.zeros((2, 1, 3), dtype=np.float32)}
    with pytest.raises(ValueError, match="does not fail"):
        reduce(model, feeds, lambda m, f: False)


def test_a_failure_that_needs_two_nodes_keeps_both_and_nothing_else() -> None:
    """A predicate about structure (a Squeeze whose output an Abs reads): the reduction
    keeps exactly that pair, fed with the real value the model computed before them."""
    model = buried_squeeze()

    def pair(candidate: onnx.ModelProto, feeds: dict[str, Any]) -> bool:
        squeezed = {o for n in candidate.graph.node if n.op_type == "Squeeze" for o in n.output}
        return any(n.op_type == "Abs" and set(n.input) & squeezed for n in candidate.graph.node)

    feeds = {"x": np.ones((2, 1, 3), dtype=np.float32)}
    reduced = reduce(model, feeds, pair)
    assert [n.op_type for n in reduced.model.graph.node] == ["Squeeze", "Abs"]
    assert list(reduced.feeds) == ["a15"] and reduced.feeds["a15"].shape == (2, 1, 3)


def squeeze_in_if() -> onnx.ModelProto:
    """An If whose taken branch holds `Squeeze(h, "")` among other nodes, reading `h`
    from the outer scope; the other branch holds a chain of its own."""

    def branch(name: str, ops: list[str], squeeze: bool) -> onnx.GraphProto:
        nodes, last = [], "h"
        for i, op in enumerate(ops):
            nodes.append(helper.make_node(op, [last], [f"{name}{i}"]))
            last = f"{name}{i}"
            if squeeze and i == 1:
                nodes.append(helper.make_node("Squeeze", [last, ""], [f"{name}_sq"]))
                nodes.append(helper.make_node("Unsqueeze", [f"{name}_sq", "one"], [f"{name}_un"]))
                last = f"{name}_un"
        out = helper.make_tensor_value_info(last, TensorProto.FLOAT, None)
        return helper.make_graph(nodes, name, [], [out])

    nodes = [
        helper.make_node("Relu", ["x"], ["h"]),
        helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0),
        helper.make_node("Greater", ["total", "limit"], ["cond"]),
        helper.make_node(
            "If",
            ["cond"],
            ["chosen"],
            then_branch=branch("t", ["Abs", "Neg", "Relu", "Abs"], squeeze=True),
            else_branch=branch("e", ["Neg", "Abs", "Neg"], squeeze=False),
        ),
        helper.make_node("Sigmoid", ["chosen"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "branched",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 1, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [
            onnx.numpy_helper.from_array(np.array(-100.0, np.float32), "limit"),
            onnx.numpy_helper.from_array(np.array([1], np.int64), "one"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_a_failure_inside_an_if_reduces_to_the_node_in_the_branch_taken() -> None:
    from compat.followup.cut import nodes_in_bodies

    model = squeeze_in_if()
    feeds = {"x": np.ones((2, 1, 3), dtype=np.float32)}
    assert squeeze_fails(model, feeds)
    reduced = reduce(model, feeds, squeeze_fails)
    assert [n.op_type for n in reduced.model.graph.node] == ["Squeeze"]
    assert nodes_in_bodies(reduced.model.graph) == 0
    assert squeeze_fails(reduced.model, reduced.feeds)


def test_a_failure_that_needs_the_if_keeps_it_and_cuts_both_branches() -> None:
    """A predicate about structure (an If whose then_branch holds a Squeeze): the If
    stays, its branches are cut down (the one not taken too), still a valid model."""
    from compat.followup.cut import nodes_in_bodies

    def squeeze_in_then(candidate: onnx.ModelProto, feeds: dict[str, Any]) -> bool:
        for node in candidate.graph.node:
            then = [a.g for a in node.attribute if a.name == "then_branch"]
            if then and any(n.op_type == "Squeeze" for n in then[0].node):
                return True
        return False

    model = squeeze_in_if()
    assert nodes_in_bodies(model.graph) == 9
    feeds = {"x": np.ones((2, 1, 3), dtype=np.float32)}
    reduced = reduce(model, feeds, squeeze_in_then)
    assert [n.op_type for n in reduced.model.graph.node] == ["If"]
    (node,) = reduced.model.graph.node
    then, other = (
        next(a.g for a in node.attribute if a.name == b) for b in ("then_branch", "else_branch")
    )
    assert [n.op_type for n in then.node] == ["Squeeze", "Identity"]
    assert [n.op_type for n in other.node] == ["Identity"]  # the not-taken branch, passed
    onnx.checker.check_model(reduced.model)
