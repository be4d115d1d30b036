"""The sizes a model's symbolic dims take, for a scan (compat/corpus/scan.py): from the
inputs shipped beside it (`MODEL.npz`, `MODEL.1.npz` …, or `scan --inputs`), each
symbol of a graph input bound to the size its array has; without inputs, each symbol
bound to 0 in turn, so that a construct that fails only on an empty tensor is found as
a conditional finding ("if n = 0").

A bound model is a copy whose annotations (the graph's and its subgraphs' inputs,
outputs and value_info) carry the sizes instead of the symbols: a detector reading a
declared `["n", 4]` then reads `[0, 4]`. The copy is made with an explicit stack, no
recursion, however deep the subgraphs nest.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # onnx and numpy are imported when a model is bound, not with the scan
    import numpy as np
    import onnx


def symbols(model: onnx.ModelProto) -> list[str]:
    """The dim_params of the main graph's inputs, in order, each once."""
    found: dict[str, None] = {}
    for value in model.graph.input:
        for dim in _dims(value):
            if dim.dim_param and not dim.HasField("dim_value"):
                found[dim.dim_param] = None
    return list(found)


def from_inputs(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]) -> dict[str, int]:
    """Each symbol of the graph's inputs bound to the size its input array has there (the
    first input that names it; an array of another rank binds nothing)."""
    import numpy as np

    bound: dict[str, int] = {}
    for value in model.graph.input:
        array = feeds.get(value.name)
        if array is None:
            continue
        dims = list(_dims(value))
        if len(dims) != np.ndim(array):
            continue
        for dim, size in zip(dims, np.shape(array), strict=True):
            if dim.dim_param and not dim.HasField("dim_value"):
                bound.setdefault(dim.dim_param, int(size))
    return bound


def bind(model: onnx.ModelProto, sizes: Mapping[str, int]) -> onnx.ModelProto:
    """A copy of `model` whose annotations give each symbol of `sizes` its size."""
    import onnx

    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    if not sizes:
        return copy
    for graph in _graphs(copy.graph):
        for value in (*graph.input, *graph.output, *graph.value_info):
            for dim in _dims(value):
                if dim.dim_param in sizes and not dim.HasField("dim_value"):
                    dim.dim_value = sizes[dim.dim_param]  # replaces dim_param (a oneof)
    return copy


def _graphs(graph: onnx.GraphProto) -> Iterator[onnx.GraphProto]:
    """The graph and every subgraph in it, at any depth."""
    import onnx

    stack = [graph]
    while stack:
        current = stack.pop()
        yield current
        for node in current.node:
            for attribute in node.attribute:
                if attribute.type == onnx.AttributeProto.GRAPH:
                    stack.append(attribute.g)
                elif attribute.type == onnx.AttributeProto.GRAPHS:
                    stack.extend(attribute.graphs)


def _dims(value: onnx.ValueInfoProto) -> Iterator[onnx.TensorShapeProto.Dimension]:
    kind = value.type.tensor_type
    if value.type.HasField("tensor_type") and kind.HasField("shape"):
        yield from kind.shape.dim
