"""Output comparison within the case's tolerance, and shape reading."""

from __future__ import annotations

from typing import Any


def compare_outputs(names, got, expected, rtol, atol):
    """Returns None when equal within tolerance, else a one-line description."""

    for name, actual in zip(names, got):
        if name not in expected:
            continue
        problem = compare_value(name, actual, expected[name], rtol, atol)
        if problem:
            return problem
    return None


def compare_value(name, actual, want, rtol, atol, scalar_widths=False):
    """One output: a tensor, a sequence, a map, or an optional (None when empty), with the
    case's tolerance for every number inside; strings exactly. Names the first difference.
    `scalar_widths`: a map's float values compare across widths (runtimes differ there)."""
    import numpy as np

    if want is None or actual is None:
        if (want is None) != (actual is None):
            return "output %r is %s, expected %s" % (
                name,
                "empty" if actual is None else "present",
                "empty" if want is None else "present",
            )
        return None
    if isinstance(want, dict):
        if not isinstance(actual, dict):
            return "output %r is a %s, expected a map" % (name, type(actual).__name__)
        if set(actual) != set(want):
            extra, missing = sorted(set(actual) - set(want)), sorted(set(want) - set(actual))
            return "output %r has keys %s, expected %s (extra %s, missing %s)" % (
                name,
                sorted(actual)[:10],
                sorted(want)[:10],
                extra[:5],
                missing[:5],
            )
        for key in sorted(want):
            problem = compare_value(
                "%s[%r]" % (name, key), actual[key], want[key], rtol, atol, scalar_widths=True
            )
            if problem:
                return problem
        return None
    if isinstance(want, (list, tuple)):
        if not isinstance(actual, (list, tuple)) or len(actual) != len(want):
            size = len(actual) if isinstance(actual, (list, tuple)) else "not a sequence"
            return "output %r has %s elements, expected %d" % (name, size, len(want))
        for index, (a, w) in enumerate(zip(actual, want)):
            problem = compare_value("%s[%d]" % (name, index), a, w, rtol, atol)
            if problem:
                return problem
        return None
    want = np.asarray(want)
    actual = np.asarray(actual)
    if want.dtype.kind in "OU" and actual.dtype.kind in "OU":  # strings, however stored
        want, actual = want.astype(object), actual.astype(object)
    if actual.shape != want.shape:
        return "output %r has shape %s, expected %s" % (name, list(actual.shape), list(want.shape))
    if scalar_widths and actual.dtype.kind in "fc" and want.dtype.kind in "fc":
        pass
    elif actual.dtype != want.dtype:
        return "output %r has dtype %s, expected %s" % (name, actual.dtype, want.dtype)
    if actual.dtype.kind in "fc":
        close = np.isclose(actual, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        close = actual == want
    if not np.all(close):
        bad = np.argwhere(~close)
        index = tuple(int(i) for i in bad[0])
        return "output %r differs at %d of %d elements, first at %s: got %r, expected %r" % (
            name,
            len(bad),
            actual.size,
            list(index),
            plain(actual[index]),
            plain(want[index]),
        )
    return None


def plain(element):
    """A numpy scalar as a Python value; an object array's element (a str) as it is."""
    return element.item() if hasattr(element, "item") else element


def tensor_shape(type_proto: Any) -> list[int | str | None] | None:
    """[int | str | None] for a tensor type, or None when it has no shape."""
    tensor = type_proto.tensor_type
    if not tensor.HasField("shape"):
        return None
    dims = []
    for dim in tensor.shape.dim:
        if dim.HasField("dim_value"):
            dims.append(dim.dim_value)
        elif dim.HasField("dim_param"):
            dims.append(dim.dim_param)
        else:
            dims.append(None)
    return dims
