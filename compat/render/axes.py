"""A report's axes as every renderer lays them out: one Python's axes after another's
(3.9 before 3.13), onnx before onnxruntime; which Pythons a run of several had; what
the other package is held at along an axis; which cells are broken and which only have
no wheel for their Python (not applicable, never a failure)."""

from __future__ import annotations

from compat.core.axis_names import axis_row, ordered_axes, python_key, split_axis
from compat.core.outcomes import CellRecord
from compat.core.report import Report
from compat.core.vocabulary import NOT_APPLICABLE


def pythons(report: Report) -> tuple[str, ...]:
    """The Pythons a run of several ran on, oldest first; () for a run of one, whose
    axes name no Python (and whose reports read as they always did)."""
    found = {split_axis(key)[1] for key in report.axes} - {""}
    return tuple(sorted(found, key=python_key))


def axes_of(report: Report, python: str = "") -> list[str]:
    """The axis keys in report order; with `python`, only that Python's."""
    return [k for k in ordered_axes(report.axes) if not python or split_axis(k)[1] == python]


def held(report: Report, key: str) -> tuple[str, ...]:
    """The releases the other package is held at along an axis (one, unless the plan
    pinned several): `("1.24.4",)` for `onnx@3.12` run with onnxruntime 1.24.4."""
    other = axis_row(key).other
    if not other:
        return ()
    cells = {c.id: c for c in report.cells}
    found = {cells[i].version(other) for i in report.axes.get(key, ()) if i in cells}
    return tuple(sorted(found - {""}))


def axis_title(report: Report, key: str, pair: bool = True) -> str:
    """`onnx`; on one Python of several `onnx on Python 3.12 (with onnxruntime 1.24.4)`
    (each Python's axis holds the other package at a release of its own; without it
    when not `pair`)."""
    python = split_axis(key)[1]
    name = axis_row(key).name
    if not python or not pair:
        return f"{name} on Python {python}" if python else name
    pair_of = held(report, key)
    with_pair = f" (with {axis_row(key).other} {', '.join(pair_of)})" if pair_of else ""
    return f"{name} on Python {python}{with_pair}"


def python_title(report: Report, python: str, short: bool = False) -> str:
    """`Python 3.12 (onnx with onnxruntime 1.24.4; onnxruntime with onnx 1.23.2)`: a
    Python and the release each of its axes holds the other package at (`short`: the
    axes' short names, `ort`)."""
    keys = axes_of(report, python)
    cell = pair_only(report, python)
    if cell is not None:
        names = [(axis_row(k).short if short else axis_row(k).name, k) for k in keys]
        named = " with ".join(f"{name} {cell.version(split_axis(k)[0])}" for name, k in names)
        return f"Python {python} (its newest pair only: {named})"
    pairs = []
    for key in keys:
        pair = held(report, key)
        other = axis_row(axis_row(key).other or key)
        name = axis_row(key).short if short else axis_row(key).name
        if pair:
            pairs.append(f"{name} with {other.short if short else other.name} {', '.join(pair)}")
    return f"Python {python}" + (f" ({'; '.join(pairs)})" if pairs else "")


def pair_only(report: Report, python: str) -> CellRecord | None:
    """The one cell a Python of several ran, on both its axes (its newest pair: the
    default for each Python but the one of every release, compat/plan/matrix.py), or
    None when it ran the axes' releases."""
    keys = axes_of(report, python)
    ids = {i for key in keys for i in report.axes.get(key, ())}
    if len(keys) < 2 or len(ids) != 1:
        return None
    return next((c for c in report.cells if c.id in ids), None)


def no_wheel_cells(report: Report) -> list[CellRecord]:
    """Cells with a release the index has no wheel of for their Python: not applicable."""
    return [c for c in report.cells if c.state in NOT_APPLICABLE]


def states(report: Report) -> set[str]:
    """Every cell state and outcome the report holds: the legends list an on-demand
    entry (no-wheel, unsupported) only when it is among them."""
    return {c.state.value for c in report.cells} | {r.outcome.value for r in report.results}
