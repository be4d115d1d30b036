"""Counting nodes."""

import onnx  # noqa: TID251


def count_nodes(model: onnx.ModelProto) -> int:
    """Count the nodes of a model's main graph.

    >>> import onnx.helper  # noqa: TID251
    >>> count_nodes(onnx.helper.make_model(onnx.helper.make_graph([], "g", [], [])))
    0
    """
    return len(model.graph.node)
