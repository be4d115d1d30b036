"""Small helpers for case modules: deterministic models every cell can load."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import onnx
from onnx import helper, numpy_helper

#: IR 8 with opset 18 loads in every release of the default axes
#: (onnxruntime 1.15 reads IR <= 9; onnx 1.14 knows opset <= 19).
IR_VERSION = 8
OPSET = 18

Dims = Sequence[int | str | None] | None


def tensor(name: str, dtype: type | np.dtype, dims: Dims) -> onnx.ValueInfoProto:
    """A typed value. A `None` dim is unknown; `dims=None` declares no shape at all,
    which the checker rejects on graph inputs and outputs: use `unknown(rank)` there."""
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    return helper.make_tensor_value_info(name, elem, None if dims is None else list(dims))


def const(name: str, array: np.ndarray) -> onnx.TensorProto:
    return numpy_helper.from_array(array, name)


def model(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[onnx.ValueInfoProto],
    initializers: list[onnx.TensorProto] | None = None,
    opset: int = OPSET,
    ir_version: int = IR_VERSION,
    name: str = "case",
) -> onnx.ModelProto:
    """A model with pinned IR version and opset and no producer fields, so bytes are stable."""
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=initializers or [])
    built = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    built.ir_version = ir_version
    built.producer_name = "onnx-compat"
    built.producer_version = ""
    return built


def stand_in(name: str) -> onnx.ModelProto:
    """`y = Relu(x)` on three floats: the model of a case whose check does not read it
    (it writes its own model, imports packages, or runs a command)."""
    return model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [tensor("x", np.float32, [3])],
        [tensor("y", np.float32, [3])],
        opset=13,
        name=name,
    )


def rng(seed: int) -> np.random.Generator:
    """A seeded generator: identical initializers, identical model bytes, every run."""
    return np.random.default_rng(seed)


def randn(seed: int | np.random.Generator, *shape: int) -> npt.NDArray[np.float32]:
    """Standard-normal float32 data of `shape`: `rng(seed).standard_normal(shape)` cast
    to float32. Pass a generator instead of a seed to draw several arrays from one
    stream (each call continues where the last one stopped)."""
    gen = seed if isinstance(seed, np.random.Generator) else rng(seed)
    return gen.standard_normal(shape).astype(np.float32)


def unknown(rank: int) -> list[None]:
    """A shape of `rank` unknown dims, for `tensor(...)`: the rank is declared, the
    sizes are left for shape inference (and the run) to fill in."""
    return [None] * rank
