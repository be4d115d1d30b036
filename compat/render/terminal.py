"""The compact terminal summary: unexpected results first, then a mark grid."""

from __future__ import annotations

from compat.render.grid import AXIS_TITLES, build_tables, text_table, variant
from compat.report import Report

MARKS = {
    "pass": ".",
    "fail": "F",
    "error": "E",
    "crash": "C",
    "timeout": "T",
    "skip": "s",
    "xfail": "x",
    "xpass": "X",
    "flaky": "~",
    "install-error": "I",
    "import-error": "M",
    "n/a": " ",
}
LEGEND = (
    "legend: . pass  F fail  E error  C crash  T timeout  s skip  x xfail  X xpass  ~ flaky  "
    "I install-error  M import-error"
)


def render_unexpected(report: Report) -> str:
    """Broken cells and unexpected results, first of all: what needs a look."""
    lines = []
    for cell in report.broken_cells:
        lines.append(f"{cell.id}: {cell.state.value}: {cell.summary}")
    for r in report.unexpected:
        lines.append(f"{r.cell} · {r.case} · {r.check}: {r.summary}".replace("\n", " "))
    if lines:
        lines.insert(0, f"{len(lines)} unexpected:")
    return "\n".join(lines)


def render_grid(report: Report) -> str:
    parts = []
    for table in build_tables(report):
        rows = [
            [f"{variant(row.case, table.family)} · {row.check}", *(MARKS[e] for e in row.entries)]
            for row in table.rows
        ]
        headers = [f"{table.family} \\ {AXIS_TITLES[table.axis]}", *table.labels]
        parts.append(text_table(rows, headers, "simple"))
    parts.append(LEGEND)
    return "\n\n".join(parts)
