"""reports/matrix.md: one table per case family and axis, written with tabulate."""

from __future__ import annotations

from compat.core.outcomes import CellState, Outcome
from compat.core.report import Report
from compat.core.vocabulary import BROKEN, ENTRIES, ENUM_ORDER, NOT_APPLICABLE, NOT_RUN, listed
from compat.render.axes import axis_title, states
from compat.render.changes import markdown_changes
from compat.render.grid import Row, Table, build_tables, summarize, text_table, variant
from compat.render.text import md_address, md_code, md_text


def legend(present: frozenset[str] = frozenset()) -> str:
    """Every outcome and broken state in bold, with its note; neighbours that share a
    note share it: `**install-error** / **import-error** (…)`; a cell state listed on
    demand (no-wheel) only when `present` holds it."""
    groups: list[tuple[list[str], str]] = []
    for key in listed(ENUM_ORDER, present):
        note = ENTRIES[key].note
        if groups and note and groups[-1][1] == note:
            groups[-1][0].append(key)
        else:
            groups.append(([key], note))
    said = [
        " / ".join(f"**{key}**" for key in keys) + (f" ({note})" if note else "")
        for keys, note in groups
    ]
    return "Outcomes: " + "; ".join(said) + "."


def _row_name(row: Row, family: str) -> str:
    return f"{md_text(variant(row.case, family))} · {md_text(row.check)}"


def _details(table: Table) -> list[str]:
    """One bullet per distinct non-pass reason, naming the versions it applies to."""
    lines = []
    for row in table.rows:
        reasons: dict[str, list[str]] = {}
        for label, value, result in zip(table.labels, row.entries, row.results, strict=True):
            if value in (Outcome.PASS, NOT_RUN, *BROKEN, *NOT_APPLICABLE):
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
    out = ["# onnx-compat matrix", "", *markdown_changes(report)]
    out += [legend(frozenset(states(report))), ""]
    family = None
    for table in build_tables(report):
        if table.family != family:
            family = table.family
            out += [f"## {md_text(family)}", ""]
            if report.families.get(family):
                out += [md_text(report.families[family]), ""]
        labels = [md_text(label) for label in table.labels]
        headers = [f"case · check \\ {axis_title(report, table.axis)}", *labels, "summary"]
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
