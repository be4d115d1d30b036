"""`--mutate`'s answer: the spellings (CASE~REWRITE) that break where the original
spelling of the same case works, per release of each axis."""

from __future__ import annotations

from compat.core.outcomes import Outcome
from compat.core.report import Report
from compat.core.vocabulary import BREAKS
from compat.render.axes import axes_of, axis_title
from compat.render.grid import column_label, spans
from compat.render.text import one_line

#: Lines the terminal shows before "… and N more".
SHOWN = 12


def breaking_spellings(report: Report) -> dict[tuple[str, str], set[str]]:
    """(variant case, check) -> the cells where it breaks and its original passes."""
    results = {(r.cell, r.case, r.check): r for r in report.results}
    found: dict[tuple[str, str], set[str]] = {}
    for (cell, case, check), result in results.items():
        if "~" not in case or result.outcome not in BREAKS:  # a variant that breaks
            continue
        original = results.get((cell, case.split("~", 1)[0], check))
        if original is not None and original.outcome is Outcome.PASS:
            found.setdefault((case, check), set()).add(cell)
    return found


def render_spellings(report: Report) -> str:
    """The terminal's section; "" when the run had no variants."""
    if not any("~" in c.id for c in report.cases):
        return ""
    found = breaking_spellings(report)
    if not found:
        return "no spelling breaks where its original works"
    cells = {c.id: c for c in report.cells}
    lines = [f"{len(found)} spellings break where the original works (--mutate):"]
    for (case, check), where in sorted(found.items())[:SHOWN]:
        said = []
        for axis in axes_of(report):
            ids = report.axes[axis]
            labels = [column_label(axis, cells[i]) for i in ids]
            chosen = {column_label(axis, cells[i]) for i in ids if i in where}
            if chosen:
                said.append(f"{axis_title(report, axis, pair=False)} {spans(chosen, labels)}")
        lines.append(one_line(f"  {case} · {check}: {'; '.join(said)}"))
    if len(found) > SHOWN:
        lines.append(f"  … and {len(found) - SHOWN} more: see matrix.md")
    return "\n".join(lines)
