"""Inputs generated from a model's input annotations, for models that come without data."""

from __future__ import annotations

from typing import Any, Dict, Optional

import numpy as np

from compat.cell.semantics import DEFAULT_DIM, np_dtype

#: The most elements a generated input may hold: a model's own sizes (or --dim's) that
#: ask for more are refused in one line, not a memory error of numpy's.
MOST_ELEMENTS = 100_000_000


def generate_inputs(
    model: Any, dims: Optional[Dict[str, int]] = None, seed: int = 0
) -> Dict[str, np.ndarray]:
    """Random feeds that satisfy the input annotations; symbolic sizes from `dims`."""
    dims = dict(dims or {})
    rng = np.random.default_rng(seed)
    initializers = {t.name for t in model.graph.initializer}
    feeds = {}
    for info in model.graph.input:
        if info.name in initializers:
            continue
        tensor = info.type.tensor_type
        dtype = np_dtype(tensor.elem_type) if info.type.HasField("tensor_type") else None
        if dtype is None:
            raise ValueError("input %r is not a tensor with a numpy element type" % info.name)
        shape = []
        for dim in tensor.shape.dim:
            which = dim.WhichOneof("value")
            if which == "dim_value" and dim.dim_value >= 0:
                shape.append(dim.dim_value)  # (a negative one, as some exporters write,
                # is read as unknown, as onnxruntime reads it)
            elif which == "dim_param":
                shape.append(dims.setdefault(dim.dim_param, DEFAULT_DIM))
            else:
                shape.append(DEFAULT_DIM)
        elements = 1
        for size in shape:
            elements *= size
        if elements > MOST_ELEMENTS:
            raise ValueError(
                "input %r of shape %s would hold %d elements, more than the %d generated "
                "inputs may: give its symbolic sizes smaller values (--dim NAME=SIZE) or "
                "pass inputs (an .npz)" % (info.name, shape, elements, MOST_ELEMENTS)
            )
        if dtype.kind == "f":
            feeds[info.name] = rng.standard_normal(shape).astype(dtype)
        elif dtype.kind in "iu":
            feeds[info.name] = rng.integers(0, 5, size=shape).astype(dtype)
        elif dtype.kind == "b":
            feeds[info.name] = rng.integers(0, 2, size=shape).astype(bool)
        else:
            raise ValueError(
                "input %r has element type %s: give its values with --inputs" % (info.name, dtype)
            )
    return feeds
