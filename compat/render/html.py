"""reports/matrix.html: one self-contained page (no network) to explore the matrix.

First the answer: a family × release grid of squares (the summary, worst state
first) with every unexpected result listed under it, each with its repro command.
Then, under a filter bar that stays on screen, the colour grid of case · check ×
release per family and axis, with a legend, sticky headers, a detail panel for the
clicked result (message, phase, installed versions, repro command), and filters
(family, release, check, outcome, text) kept in the URL's hash so a filtered view
can be shared. A filtered row keeps its twins (the same check on the other variants
of its case group) visible, dimmed, next to it.

The data travels as JSON inside the page and the grid is built in the browser, so a
5,000-row suite stays a few megabytes and filters stay fast.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from compat import resources
from compat.core.axis_names import AXES, split_axis
from compat.core.changes import HEADINGS, Kind, changes_of
from compat.core.outcomes import CellState
from compat.core.printed import repro_command
from compat.core.report import Report
from compat.core.squares import SQUARES
from compat.core.suite import FAMILY as BACKEND_FAMILY
from compat.core.vocabulary import ENTRIES, UNEXPECTED_ENTRIES, listed
from compat.render.axes import (
    axis_title,
    no_wheel_cells,
    python_title,
    pythons,
    states,
)
from compat.render.changes import page_changes
from compat.render.grid import Table, build_tables, column_label, link_label, spans, variant
from compat.render.summary import Since, Summary, summarize
from compat.render.text import printable

#: A row's twins (the same check on the other cases of its group, `family.group.x`)
#: stay visible next to it when a filter picks it, for groups of at most this many
#: cases; larger groups (a suite of 1,900 tests) are a list, not a set of twins.
MAX_TWINS = 6


def twin_groups(report: Report) -> dict[str, str]:
    """case id -> its twin group (the id without its last part), "" when it has none."""
    groups = {case.id: case.id.rsplit(".", 1)[0] for case in report.cases}
    sizes = Counter(groups.values())
    return {case: g if 2 <= sizes[g] <= MAX_TWINS else "" for case, g in groups.items()}


def since_sentence(since: Since, labels: tuple[str, ...]) -> str:
    """`shape_inference works since 1.21.0; fails on 1.14.1–1.20.1 (onnx #6697)`."""
    cite = f" ({', '.join(since.links)})" if since.links else ""
    fails = spans(since.broken, labels)
    if len(since.broken) == len(labels):
        return f"{since.check} fails on every release ({fails}){cite}"
    if not since.first:
        return f"{since.check} fails on {fails}, the latest release included{cite}"
    return f"{since.check} works since {since.first}; fails on {fails}{cite}"


def page_data(report: Report) -> dict[str, Any]:
    """Everything the page shows, as plain JSON (sorted, so the page is deterministic)."""
    options = report.run.get("options")
    groups = twin_groups(report)
    grid = build_tables(report)
    several = pythons(report)
    summary = summarize(report)
    since: dict[tuple[str, str], list[Since]] = {}
    for item in summary.since:
        since.setdefault((item.family, item.axis), []).append(item)
    tables = []
    for table in grid:
        rows = []
        for row in table.rows:
            details = [  # a command's result also names its log, relative to the page
                [
                    r.phase,
                    r.detail if r.outcome.value != "pass" else "",
                    r.known,
                    *([r.log] if r.log else []),
                ]
                if r
                else ["", "", ""]
                for r in row.results
            ]
            rows.append(
                {
                    "case": row.case,
                    "variant": variant(row.case, table.family),
                    "check": row.check,
                    "entries": list(row.entries),
                    "details": details,
                    "group": groups.get(row.case, ""),
                }
            )
        tables.append(
            {
                "family": table.family,
                "axis": table.axis,
                "labels": list(table.labels),
                "cells": [c.id for c in table.cells],
                "rows": rows,
                "since": [
                    since_sentence(s, s.releases or table.labels)
                    for s in since.get((table.family, table.axis), [])
                ],
                **(
                    {"python": split_axis(table.axis)[1], "title": axis_title(report, table.axis)}
                    if several
                    else {}
                ),
            }
        )
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
    # a run of several Pythons: each with the releases its axes hold the other package
    # at, for the Python filter (absent for a run of one: its page is as it was)
    titles = [[p, python_title(report, p)] for p in several]
    return {
        "tables": tables,
        "cells": cells,
        "families": report.families,
        "descriptions": {c.id: c.description for c in report.cases},
        "repro": {c.id: repro_command(c, [], options) for c in report.cells},
        "vocabulary": vocabulary_data(states(report)),
        **({"pythons": titles} if several else {}),
        "summary": summary_data(report, summary),
        "unexpected": unexpected_data(report, grid),
        "scoreboard": any(c.family == BACKEND_FAMILY for c in report.cases),
        **({"changes": changed} if (changed := changes_data(report)) else {}),
    }


def changes_data(report: Report) -> dict[str, Any]:
    """The page's `changes` (compat/render/changes.py) with its kinds as [kind, heading]
    pairs in the order the terminal lists them (the page's JSON sorts a mapping's keys),
    the baseline's short name and the kinds the page marks as new, each with its words
    (a new failure; a result the baseline did not run, as on a new release); {} without."""
    changed = page_changes(report)
    changes = changes_of(report)
    if not changed or changes is None:
        return {}
    headings = [[kind.value, heading] for kind, heading in HEADINGS.items()]
    since = f"new since {changes.source.label}"
    marks = [
        [Kind.NEW_FAILURE.value, since],
        [Kind.NEW.value, f"{since} (not in the baseline's run)"],
    ]
    return {**changed, "headings": headings, "label": changes.source.label, "marks": marks}


def vocabulary_data(present: set[str] | None = None) -> dict[str, Any]:
    """What the page's script says and paints, from compat/core/vocabulary.py: each
    entry's mark and colours, each square state's colours, meaning and the filter a
    click sets, each axis's short name; the legends' orders beside them (the JSON's keys
    are sorted). An on-demand entry (no-wheel) only when `present` holds it."""
    order = listed(ENTRIES, present or set())
    return {
        "entries": {
            key: {
                "page": ENTRIES[key].page,
                "colours": list(ENTRIES[key].colours),
                "unexpected": key in UNEXPECTED_ENTRIES,
            }
            for key in order
        },
        "order": order,
        "squares": {
            state: {"colours": list(row.colours), "meaning": row.meaning, "filter": row.filter}
            for state, row in SQUARES.items()
        },
        "states": list(SQUARES),
        "axes": {key: {"short": row.short} for key, row in AXES.items()},
    }


def summary_data(report: Report, summary: Summary) -> dict[str, Any]:
    """The family × release squares and a headline of counts."""
    squares = []
    for family in summary.families:
        line = []
        for i in range(len(summary.columns)):
            square = summary.squares[(family, i)]
            counts = ", ".join(f"{square.counts[o]} {o}" for o in ENTRIES if square.counts.get(o))
            links = "".join(f"; {link_label(link)}" for link in square.links)
            line.append([square.state, square.number, counts + links])
        squares.append(line)
    outcomes = Counter(r.outcome.value for r in report.results)
    return {
        "families": list(summary.families),
        "columns": [
            {
                "axis": c.axis,
                "label": c.label,
                "title": c.title,
                "cell": c.cell.id,
                **({"python": c.python} if c.python else {}),
            }
            for c in summary.columns
        ],
        "squares": squares,
        "headline": {
            "cells": len(report.cells),
            "broken": len(report.broken_cells),
            **({"nowheel": len(no_wheel_cells(report))} if no_wheel_cells(report) else {}),
            "cases": len(report.cases),
            "results": len(report.results),
            "outcomes": [[o, outcomes[o]] for o in ENTRIES if outcomes.get(o)],
        },
    }


def unexpected_data(report: Report, tables: list[Table]) -> list[dict[str, str]]:
    """Broken cells, then every unexpected result in the grid's order, one line each:
    where to find it (family, release), what it says and how to reproduce it."""
    options = report.run.get("options")
    cells = {c.id: c for c in report.cells}
    out: list[dict[str, str]] = []
    for cell in report.broken_cells:
        axis = next((a for a, ids in report.axes.items() if cell.id in ids), "")
        out.append(
            {
                "cell": cell.id,
                "case": "",
                "check": "",
                "family": "",
                "outcome": cell.state.value,
                "release": f"{axis}:{column_label(axis, cell)}" if axis else "",
                "summary": cell.summary,
                "repro": repro_command(cell, [], options),
            }
        )
    seen: set[tuple[str, str, str]] = set()
    for table in tables:
        for row in table.rows:
            for label, result in zip(table.labels, row.results, strict=True):
                if result is None or not result.outcome.unexpected:
                    continue
                key = (result.cell, result.case, result.check)
                if key in seen:
                    continue
                seen.add(key)
                out.append(
                    {
                        "cell": result.cell,
                        "case": result.case,
                        "check": result.check,
                        "family": table.family,
                        "outcome": result.outcome.value,
                        "release": f"{table.axis}:{label}",
                        "summary": result.summary.replace("\n", " "),
                        "repro": repro_command(cells[result.cell], [result.case], options),
                    }
                )
    return out


def render_html(report: Report) -> str:
    return fill("matrix", page_data(report))


def fill(name: str, data: dict[str, Any]) -> str:
    """page/NAME.html with page/NAME.css, page/NAME.js and the data put in its slots."""
    text = json.dumps(_printable(data), sort_keys=True, ensure_ascii=False)
    # no tag, comment or closing script element inside the script element: `<` (only
    # ever inside a JSON string) as its JSON escape
    text = text.replace("<", "\\u003c")
    page = _asset(f"{name}.html").replace("/*STYLE*/", _asset(f"{name}.css"))
    page = page.replace("/*SCRIPT*/", _asset("common.js") + _asset(f"{name}.js"))
    return page.replace("/*DATA*/", text)


def _printable(data: Any) -> Any:
    """The page's data with control characters in its text escaped, as in every file."""
    if isinstance(data, str):
        return printable(data)
    if isinstance(data, dict):
        return {printable(str(k)): _printable(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [_printable(v) for v in data]
    return data


def _asset(name: str) -> str:
    """A file of the page (compat/resources/page/): real HTML, CSS and JavaScript files."""
    return resources.text(f"page/{name}")
