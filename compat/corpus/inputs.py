"""Checks a drop-in model's saved inputs against its declared inputs, on the host,
before any cell runs: a mismatch is one usage error naming the file, the input, what
the model declares and what was given, never a confusing failure in every cell."""

from __future__ import annotations

import zipfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto

from compat.cell.semantics import np_dtype
from compat.core.errors import ConfigError


def type_text(elem_type: int) -> str:
    """ONNX's own spelling of a tensor type: `tensor(float)`, `tensor(int64)`."""
    try:
        return f"tensor({TensorProto.DataType.Name(elem_type).lower()})"
    except ValueError:
        return f"tensor(elem_type {elem_type})"


def dims_text(info: onnx.ValueInfoProto) -> str:
    """`[batch, 4, ?]`: dim_param names, dim_values, `?` for an anonymous axis."""
    dims = []
    for dim in info.type.tensor_type.shape.dim:
        which = dim.WhichOneof("value")
        dims.append(dim.dim_param if which == "dim_param" else str(dim.dim_value) if which else "?")
    return "[" + ", ".join(dims) + "]"


def required_inputs(model: onnx.ModelProto) -> list[str]:
    """The graph inputs without an initializer: a run must give each of them."""
    initializers = {t.name for t in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in initializers]


def load_npz(npz: Path) -> dict[str, np.ndarray]:
    """The arrays of an npz, or one error line saying why the file is not one."""
    if not zipfile.is_zipfile(npz):
        raise ConfigError(
            f"{npz}: not an .npz archive (not a zip file, or a truncated one); "
            "write it with numpy.savez(path, name=array, ...)"
        )
    try:
        with np.load(npz, allow_pickle=False) as data:
            return {name: data[name] for name in data.files}
    except ValueError as exc:
        if "pickle" in str(exc):
            reason = "it holds pickled object arrays; save numeric or string arrays"
        else:
            reason = str(exc).splitlines()[0]
        raise ConfigError(f"{npz}: cannot read its arrays: {reason}") from None
    except (OSError, zipfile.BadZipFile, EOFError) as exc:
        raise ConfigError(
            f"{npz}: cannot read its arrays ({type(exc).__name__}: {exc}); write it again "
            "with numpy.savez"
        ) from None


def check_feeds(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray], source: Path) -> None:
    """Every key names a model input; every required input is there, with the declared
    element type and a shape that fits the declared dims: as many axes, and a dim_value
    equal (what onnxruntime itself refuses). One dim_param at two sizes is no reason to
    refuse the model (paddle2onnx writes "?" on every unknown axis): onnxruntime runs it,
    and the `annotations` check judges the violated precondition, naming it."""
    declared = {i.name: i for i in model.graph.input}
    names = ", ".join(declared) or "none"
    for key in feeds:
        if key not in declared:
            raise ConfigError(
                f"{source}: {key!r} is not an input of the model (its inputs: {names}); "
                "name each array after the input it feeds"
            )
    required = required_inputs(model)
    missing = [n for n in required if n not in feeds]
    if missing:
        raise ConfigError(
            f"{source}: missing input {missing[0]!r} (the model's inputs: {', '.join(required)})"
        )
    for info in model.graph.input:  # in declaration order: the first binding is stable
        if info.name not in feeds:
            continue
        name = info.name
        array = np.asarray(feeds[info.name])
        kind = info.type.WhichOneof("value")
        if kind != "tensor_type":
            raise ConfigError(
                f"{source}: input {name!r} is declared as {kind or 'no type'}; a drop-in model's "
                "inputs must be tensors"
            )
        _check_type(name, array, info, source)
        _check_shape(name, array, info, source)


def _check_type(name: str, array: np.ndarray, info: onnx.ValueInfoProto, source: Path) -> None:
    elem = info.type.tensor_type.elem_type
    if elem == TensorProto.STRING:
        if array.dtype.kind not in "USO":
            raise ConfigError(
                f"{source}: input {name!r} is {array.dtype}, the model declares strings "
                f"({type_text(elem)}); save it as a numpy string array"
            )
        return
    want = np_dtype(elem) if elem else None
    if want is not None and array.dtype != want:  # None: no numpy type to compare with
        raise ConfigError(
            f"{source}: input {name!r} is {array.dtype}, the model declares {want} "
            f"({type_text(elem)}); save it as {want}"
        )


def _check_shape(
    name: str,
    array: np.ndarray,
    info: onnx.ValueInfoProto,
    source: Path,
) -> None:
    tensor = info.type.tensor_type
    if not tensor.HasField("shape"):
        return  # no shape declared: any shape fits
    dims = tensor.shape.dim
    given = tuple(array.shape)
    declared = f"the model declares {dims_text(info)}"
    if len(dims) != array.ndim:
        raise ConfigError(
            f"{source}: input {name!r} has shape {given}, {declared}; give it {len(dims)} axes"
            + (" (a scalar)" if not dims else "")
        )
    for axis, (dim, size) in enumerate(zip(dims, given, strict=True)):
        which = dim.WhichOneof("value")
        if which == "dim_value" and dim.dim_value >= 0 and dim.dim_value != size:
            # (a negative dim_value, paddle2onnx's "any size", is read as unknown)
            raise ConfigError(
                f"{source}: input {name!r} has shape {given}, {declared}: axis {axis} must be "
                f"{dim.dim_value}, not {size}"
            )
