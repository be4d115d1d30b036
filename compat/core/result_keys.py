"""How a result is matched with its counterpart in another run (compat/core/changes.py):
by case, check and the versions the check exercises, so an onnx check on a new
onnxruntime release's cell is the same result as before, not a new one."""

from __future__ import annotations

from compat.core.outcomes import CellRecord, CellState, CheckResult
from compat.core.report import Report

#: (package or "python", release) pairs, sorted: the versions a result depends on
Versions = tuple[tuple[str, str], ...]
#: what a result is matched by: (case, check, the versions it exercises)
Key = tuple[str, str, Versions]

#: The axes' own packages: a cell's release of them is read from the record, not its pins.
_AXIS_PACKAGES = ("onnx", "onnxruntime", "onnx-weekly")


def exercised(cell: CellRecord, axis: str, python: bool) -> Versions:
    """The versions a check of the package `axis` ("onnx", "onnxruntime", else both)
    depends on in `cell`: that release, the cell's other exact pins, its Python if
    `python`. A broken cell's own key takes `axis` "" (both releases)."""
    names = [axis] if axis in ("onnx", "onnxruntime") else ["onnx", "onnxruntime"]
    found = {name: cell.version(name) for name in names}
    for written, version in cell.requirements.exact():
        name = written.lower().replace("_", "-")
        if name not in _AXIS_PACKAGES:
            found[name] = version
    if python:
        found["python"] = cell.version("python")
    return tuple(sorted(found.items()))


def several_pythons(report: Report) -> bool:
    return any("@" in axis or axis == "python" for axis in report.axes)


Keyed = dict[Key, tuple["CheckResult | CellRecord", tuple[str, ...]]]


def keyed(report: Report, python: bool) -> Keyed:
    """Each result by its key (an unexpected one first where cells share a key), with
    the cells that share it, its own first; each broken cell as a result of its own."""
    cells = {c.id: c for c in report.cells}
    axes = {case.id: case.checks for case in report.cases}
    found: Keyed = {}
    versions: dict[tuple[str, str], Versions] = {}  # (cell, axis): read once
    for result in report.results:
        axis = axes.get(result.case, {}).get(result.check, "")
        if (result.cell, axis) not in versions:
            versions[result.cell, axis] = exercised(cells[result.cell], axis, python)
        key = (result.case, result.check, versions[result.cell, axis])
        held = found.get(key)
        if held is None:
            found[key] = (result, (result.cell,))
        elif result.outcome.unexpected and not unexpected(held[0]):
            found[key] = (result, (result.cell, *held[1]))
        else:
            found[key] = (held[0], (*held[1], result.cell))
    for cell in report.broken_cells:
        found[("", "", exercised(cell, "", python))] = (cell, (cell.id,))
    return found


def unexpected(item: CheckResult | CellRecord) -> bool:
    """Whether a result is unexpected, or a cell broken (a cell with no wheel is not)."""
    if isinstance(item, CellRecord):
        return item.state not in (CellState.READY, CellState.NO_WHEEL)
    return item.outcome.unexpected
