"""reports/compatibility.md: the docs-ready tables, readable without the code.

Per family: what the construct is, then per check a table of variants × releases
with clear marks and a one-line verdict, then a legend and the environment of
every column. Unicode marks by default, `--ascii` for plain-text renderers,
`--collapse` to merge neighbouring releases with identical outcomes.
"""

from __future__ import annotations

from compat.case import CHECK_TITLES
from compat.outcomes import CellRecord
from compat.render.grid import Table, build_tables, collapse, text_table, variant, verdict
from compat.report import Report

MARKS = {
    "pass": "✅",
    "fail": "❌",
    "xfail": "🐞",
    "xpass": "🎉",
    "flaky": "🎲",
    "error": "💥",
    "crash": "💀",
    "timeout": "⏱️",
    "skip": "⏭️",
    "n/a": "—",
    "install-error": "📦",
    "import-error": "🚫",
}
ASCII = {
    "pass": "ok",
    "fail": "FAIL",
    "xfail": "xfail",
    "xpass": "XPASS",
    "flaky": "FLAKY",
    "error": "ERROR",
    "crash": "CRASH",
    "timeout": "TIMEOUT",
    "skip": "skip",
    "n/a": "n/a",
    "install-error": "no-install",
    "import-error": "no-import",
}
MEANINGS = {
    "pass": "works",
    "fail": "fails: the result differs from the spec (unexpected)",
    "xfail": "fails as a reported upstream bug says (linked in the verdict)",
    "xpass": "passes although a bug is recorded for this release: it looks fixed",
    "flaky": "identical runs disagree: nondeterministic (counts in the detail)",
    "error": "raised an unexpected exception",
    "crash": "the process died (segfault, abort)",
    "timeout": "ran past the time limit",
    "skip": "does not apply to this release (an opset or API it lacks)",
    "n/a": "not run",
    "install-error": "this release could not be installed (no wheel for this Python)",
    "import-error": "installed, but could not be imported",
}
AXIS_NAMES = {"onnx": "onnx", "onnxruntime": "onnxruntime", "cell": "cell"}


def _legend(marks: dict[str, str]) -> str:
    rows = [[f"`{marks[k]}`" if marks is ASCII else marks[k], k, MEANINGS[k]] for k in MARKS]
    return text_table(rows, ["mark", "outcome", "meaning"])


def _table(table: Table, report: Report, marks: dict[str, str], squash: bool) -> str:
    descriptions = {c.id: c.description for c in report.cases}
    shown = collapse(table) if squash else table
    axis = AXIS_NAMES[table.axis]
    headers = [f"case \\ {axis}", *shown.labels, "verdict"]
    rows = []
    for row, compact in zip(table.rows, shown.rows, strict=True):
        name = f"`{variant(row.case, table.family)}`: {descriptions.get(row.case, '')}"
        rows.append([name, *(marks[e] for e in compact.entries), verdict(axis, table.labels, row)])
    return text_table(rows, headers)


def _by_check(table: Table) -> dict[str, Table]:
    checks = list(dict.fromkeys(r.check for r in table.rows))
    return {
        check: Table(table.family, table.axis, table.labels, table.cells,
                     tuple(r for r in table.rows if r.check == check))
        for check in checks
    }  # fmt: skip


def _environments(report: Report) -> str:
    def row(axis: str, cell: CellRecord) -> list[str]:
        p = cell.packages
        label = {"onnx": cell.onnx, "onnxruntime": cell.onnxruntime}.get(axis, cell.id)
        return [f"{AXIS_NAMES[axis]} {label}", p.get("onnx", "—"), p.get("onnxruntime", "—"),
                p.get("numpy", "—"), p.get("protobuf", "—"), cell.python or "—"]  # fmt: skip

    cells = {c.id: c for c in report.cells}
    rows = [row(axis, cells[i]) for axis, ids in report.axes.items() for i in ids]
    headers = ["column", "onnx", "onnxruntime", "numpy", "protobuf", "Python"]
    return text_table(rows, headers)


LIMITS = "support_limits"
LIMIT_CHECKS = {"onnx": "checker", "onnxruntime": "ort_run"}


def _limits(report: Report, axis: str) -> str:
    """Max IR version / opset each release really ran, from the support_limits rows."""
    check = LIMIT_CHECKS[axis]
    passed = {
        (r.cell, r.case) for r in report.results if r.check == check and r.outcome.value == "pass"
    }
    cells = {c.id: c for c in report.cells}
    rows = []
    for cell_id in report.axes.get(axis, ()):
        cell = cells[cell_id]
        best = {"ir": "—", "opset": "—"}
        for kind in best:
            prefix = f"{LIMITS}.{kind}"
            numbers = [int(case[len(prefix):]) for c, case in passed
                       if c == cell_id and case.startswith(prefix)]  # fmt: skip
            if numbers:
                best[kind] = str(max(numbers))
        release = cell.onnx if axis == "onnx" else cell.onnxruntime
        rows.append([release, best["ir"], best["opset"]])
    headers = [axis, "max IR version", "max opset (ai.onnx)"]
    return text_table(rows, headers)


def render_docs(report: Report, ascii_marks: bool = False, squash: bool = False) -> str:
    marks = ASCII if ascii_marks else MARKS
    out = [
        "# Compatibility",
        "",
        "Which ONNX constructs work on which onnx and onnxruntime releases, from real runs "
        "in one isolated environment per release (generated by onnx-compat; do not edit). "
        "Each check is shown against the releases of the package it exercises; the other "
        "package is held at one release (see *Environments*). "
        f"{marks['pass']} works, {marks['xfail']} fails as a reported upstream bug says, "
        f"{marks['fail']} fails unexpectedly; every mark is in the *Legend* at the end.",
        "",
    ]
    family = None
    for table in build_tables(report):
        if table.family != family:
            family = table.family
            out += [f"## {family}", "", report.families.get(family, ""), ""]
            if family == LIMITS:
                for axis in ("onnxruntime", "onnx"):
                    if axis in report.axes:
                        title = {
                            "onnxruntime": "What each onnxruntime release loads and runs",
                            "onnx": "What the checker of each onnx release accepts",
                        }[axis]
                        out += [f"**{title}** (from the rows below)", ""]
                        out += [_limits(report, axis), ""]
        idle = []
        for check, part in _by_check(table).items():
            if all(e in ("skip", "n/a") for r in part.rows for e in r.entries):
                idle.append(check)  # a table of skips says nothing: name it once instead
                continue
            out += [f"**{check}** — {CHECK_TITLES.get(check, 'a check the case defines')}", ""]
            out += [_table(part, report, marks, squash), ""]
        if idle:
            out += [f"Not applicable here (skipped on every release): {', '.join(idle)}.", ""]
    out += ["## Legend", "", _legend(marks), "", "## Environments", "", _environments(report), ""]
    return "\n".join(out)
