"""Output comparison within the case's tolerance, and shape reading.

A float tensor that differs beyond the tolerance is described by its largest absolute
and its largest relative difference (against the expected value, where that is not 0),
each with the element where it is, so the detail says what tolerance would accept it.
"""

from __future__ import annotations

from typing import Any


def compare_outputs(names, got, expected, rtol, atol, tolerances=None):
    """Returns None when equal within tolerance, else a one-line description.
    `tolerances`: output name -> (rtol, atol) for the outputs that have their own."""

    for name, actual in zip(names, got):
        if name not in expected:
            continue
        r, a = (tolerances or {}).get(name, (rtol, atol))
        problem = compare_value(name, actual, expected[name], r, a)
        if problem:
            return problem
    return None


def tolerance_of(spec):
    """(rtol, atol, per-output tolerances) of a case spec: the tolerance of every output,
    and output name -> (rtol, atol) for those with their own (`tolerances`)."""
    own = spec.get("tolerances") or {}
    return spec["rtol"], spec["atol"], {name: (r, a) for name, (r, a) in own.items()}


def largest_difference(names, got, expected):
    """(difference, output name) of the float elements farthest apart, or None when every
    float element is equal (NaN to NaN included): what a pass within tolerance hides."""
    found = None
    for name, actual in zip(names, got):
        if name in expected:
            for where, diff in _float_differences(name, actual, expected[name]):
                if diff > 0 and (found is None or diff > found[0]):
                    found = (diff, where)
    return found


def _float_differences(name, actual, want):
    """(name, largest absolute difference) of every float tensor inside an output."""
    import numpy as np

    if isinstance(want, dict) and isinstance(actual, dict):
        for key in sorted(set(want) & set(actual)):
            for found in _float_differences("%s[%r]" % (name, key), actual[key], want[key]):
                yield found
    elif isinstance(want, (list, tuple)) and isinstance(actual, (list, tuple)):
        for index, (a, w) in enumerate(zip(actual, want)):
            for found in _float_differences("%s[%d]" % (name, index), a, w):
                yield found
    elif want is not None and actual is not None:
        a = np.asarray(actual)
        w = np.asarray(want)
        if a.shape == w.shape and a.size and a.dtype.kind in "fc" and w.dtype.kind in "fc":
            yield name, float(np.max(_absolute(a, w)))


def _absolute(actual, want):
    """|actual - want| in float64, 0 where both are equal (infinities, NaN and NaN) and
    inf where only one is NaN."""
    import numpy as np

    a = actual.astype(np.complex128 if actual.dtype.kind == "c" else np.float64)
    w = want
    w = w.astype(a.dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(a - w)
    same = (a == w) | (np.isnan(a) & np.isnan(w))
    return np.where(same, 0.0, np.where(np.isnan(diff), np.inf, diff))


def describe_difference(name, actual, want, close, rtol, atol):
    """How a float tensor differs: how many elements lie beyond the tolerance, and the
    largest absolute and relative differences, each with its element and both values."""
    import numpy as np

    def element(at):
        return "%s (got %s, expected %s)" % ([int(i) for i in at], actual[at], want[at])

    diff = _absolute(actual, want)
    at = np.unravel_index(int(np.argmax(diff)), diff.shape)
    text = "output %r differs at %d of %d elements beyond rtol %g, atol %g: " % (
        name,
        int(np.sum(~close)),
        actual.size,
        rtol,
        atol,
    )
    text += "largest absolute difference %.3g" % diff[at]
    scale = np.abs(want.astype(diff.dtype if want.dtype.kind == "f" else np.complex128))
    nonzero = scale > 0
    if not np.any(nonzero & (diff > 0)):  # relative to 0 means nothing
        return text + " at " + element(at)
    with np.errstate(invalid="ignore", divide="ignore"):
        relative = np.where(nonzero, diff / np.where(nonzero, scale, 1), 0.0)
    rel_at = np.unravel_index(int(np.argmax(relative)), relative.shape)
    if rel_at == at:
        return text + " and relative %.3g at %s" % (relative[at], element(at))
    return text + " at %s, largest relative %.3g at %s" % (
        element(at),
        relative[rel_at],
        element(rel_at),
    )


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
            extra = sorted(set(actual) - set(want))
            missing = sorted(set(want) - set(actual))
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
        want = want.astype(object)
        actual = actual.astype(object)
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
    if not np.all(close) and actual.dtype.kind in "fc":
        return describe_difference(name, actual, want, close, rtol, atol)
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
