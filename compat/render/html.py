"""reports/matrix.html: one self-contained page (no network) to explore the matrix.

A colour grid of case · check × release per family and axis, with a legend,
sticky headers, filters (family, check, outcome, text) and a detail panel for
the clicked result (message, phase, installed versions, repro command). The
data travels as JSON inside the page and the grid is built in the browser, so a
5,000-row suite stays a few megabytes and filters stay fast.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from compat.followup.repro import repro_command
from compat.outcomes import CellState
from compat.render.grid import build_tables, variant
from compat.report import Report

COLOURS = {
    "pass": "#2e9d57",
    "fail": "#d33a2c",
    "xfail": "#e8a33d",
    "xpass": "#7b4fd6",
    "flaky": "#0f6e8c",
    "error": "#b3126f",
    "crash": "#3b0d0d",
    "timeout": "#8a5a00",
    "skip": "#b9c2cc",
    "n/a": "#eef1f4",
    "install-error": "#6b7785",
    "import-error": "#6b7785",
}


def page_data(report: Report) -> dict[str, Any]:
    """Everything the page shows, as plain JSON (sorted, so the page is deterministic)."""
    tables = []
    for table in build_tables(report):
        rows = []
        for row in table.rows:
            details = [
                [r.phase, r.detail if r.outcome.value != "pass" else "", r.known]
                if r
                else ["", "", ""]
                for r in row.results
            ]
            rows.append({
                "case": row.case, "variant": variant(row.case, table.family),
                "check": row.check, "entries": list(row.entries), "details": details,
            })  # fmt: skip
        tables.append({
            "family": table.family, "axis": table.axis, "labels": list(table.labels),
            "cells": [c.id for c in table.cells], "rows": rows,
        })  # fmt: skip
    cells = {
        c.id: {
            "onnx": c.onnx,
            "onnxruntime": c.onnxruntime,
            "packages": c.packages,
            "python": c.python,
            "state": c.state.value,
            "summary": c.summary if c.state is not CellState.READY else "",
        }
        for c in report.cells
    }
    return {
        "tables": tables,
        "cells": cells,
        "families": report.families,
        "descriptions": {c.id: c.description for c in report.cases},
        "repro": {c.id: repro_command(c, [], report.run.get("options")) for c in report.cells},
        "colours": COLOURS,
        "order": list(COLOURS),  # the legend's order (the JSON's keys are sorted)
    }


def render_html(report: Report) -> str:
    data = json.dumps(page_data(report), sort_keys=True, ensure_ascii=False)
    data = data.replace("</", "<\\/")  # nothing in the data may close the script element
    page = _asset("matrix.html").replace("/*STYLE*/", _asset("matrix.css"))
    page = page.replace("/*SCRIPT*/", _asset("matrix.js"))
    return page.replace("/*DATA*/", data)


def _asset(name: str) -> str:
    """A file of the page (compat/render/page/): real HTML, CSS and JavaScript files."""
    return resources.files("compat.render").joinpath(f"page/{name}").read_text(encoding="utf-8")
