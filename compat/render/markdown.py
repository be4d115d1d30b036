"""reports/matrix.md: one table per case family and axis, written with tabulate."""

from __future__ import annotations

from compat.core.outcomes import CellState
from compat.core.report import Report
from compat.render.grid import AXIS_TITLES, Row, Table, build_tables, summarize, text_table, variant
from compat.render.text import md_address, md_code, md_text

LEGEND = (
    "Outcomes: **pass**; **fail** (ran, result differs from the spec); **error** "
    "(an exception, with its phase); **crash** (the worker died); **timeout**; **skip** "
    "(does not apply to this release); **xfail** (a known upstream bug, link below); "
    "**xpass** (known bug no longer reproduces); **flaky** (identical runs disagree); "
    "**install-error** / **import-error** "
    "(the cell's environment could not be built or imported; no check ran)."
)


def _row_name(row: Row, family: str) -> str:
    return f"{md_text(variant(row.case, family))} · {md_text(row.check)}"


def _details(table: Table) -> list[str]:
    """One bullet per distinct non-pass reason, naming the versions it applies to."""
    lines = []
    for row in table.rows:
        reasons: dict[str, list[str]] = {}
        for label, value, result in zip(table.labels, row.entries, row.results, strict=True):
            if value in (
                "pass",
                "n/a",
                CellState.INSTALL_ERROR.value,
                CellState.IMPORT_ERROR.value,
            ):
                continue
            text = md_text(result.summary if result else value)
            if result and result.known:
                text += f" — {md_address(result.known)}"
            reasons.setdefault(text, []).append(md_text(label))
        for text, labels in reasons.items():
            where = ", ".join(labels)
            lines.append(f"- {md_code(row.case)} · {md_text(row.check)} on {where}: {text}")
    return lines


def _environments(report: Report) -> str:
    rows = []
    for cell in report.cells:
        state = cell.state.value
        if cell.state is not CellState.READY and cell.detail:
            state = f"{state}: {cell.summary}"
        packages = cell.packages
        row = [
            cell.id,
            packages.get("onnx", "—"),
            packages.get("onnxruntime", "—"),
            packages.get("numpy", "—"),
            packages.get("protobuf", "—"),
            cell.python or "—",
            state,
        ]
        rows.append([md_text(text) for text in row])
    headers = ["cell", "onnx", "onnxruntime", "numpy", "protobuf", "python", "state"]
    return text_table(rows, headers)


def render_markdown(report: Report) -> str:
    """The whole document; identical results always give identical text."""
    out = ["# onnx-compat matrix", "", LEGEND, ""]
    family = None
    for table in build_tables(report):
        if table.family != family:
            family = table.family
            out += [f"## {md_text(family)}", ""]
            if report.families.get(family):
                out += [md_text(report.families[family]), ""]
        labels = [md_text(label) for label in table.labels]
        headers = [f"case · check \\ {AXIS_TITLES[table.axis]}", *labels, "summary"]
        rows = [
            [
                _row_name(row, table.family),
                *row.entries,
                md_text(summarize(table.labels, row.entries)),
            ]
            for row in table.rows
        ]
        out += [text_table(rows, headers), ""]
        details = _details(table)
        if details:
            out += [*details, ""]
    out += ["## Environments", "", _environments(report), ""]
    return "\n".join(out)
