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
        nodes, "buried",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 1, 3])],
        [helper.make_tensor_value_info(last, TensorProto.FLOAT, None)],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def squeeze_fails(model: onnx.ModelProto, feeds: dict[str, Any]) -> bool:
    """The same failure: onnxruntime refuses to run it, saying the axes input is null."""
    import onnxruntime as ort

    try:
        session = ort.InferenceSession(model.SerializeToString(),
                                       providers=["CPUExecutionProvider"])  # fmt: skip
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
