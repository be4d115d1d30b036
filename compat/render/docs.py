"""reports/compatibility.md: the docs index, readable without the code.

The answer first: the family × release summary as a picture (summary.svg) and as
text, how to read it, since when each failing check works (with its upstream bugs
linked), then a link to each family's page (families/FAMILY.md, in docs_pages), the
legend of marks and the environment of every column.
"""

from __future__ import annotations

from compat.core.axis_names import axis_row, split_axis
from compat.core.outcomes import CellRecord
from compat.core.report import Report
from compat.core.squares import NOT_RUN_OR_NO_WHEEL, SQUARES
from compat.core.vocabulary import ENTRIES, NOT_RUN, listed
from compat.render.axes import axes_of, no_wheel_cells, python_title, pythons, states
from compat.render.docs_pages import (
    bug_link,
    check_anchors,
    escape,
    marks,
    page_path,
    runs,
    shown,
)
from compat.render.grid import build_tables, column_label, link_label, spans, text_table
from compat.render.summary import Since, Summary, merged, summarize
from compat.render.text import md_anchor, md_path, md_text

SVG = "summary.svg"


def state_marks(ascii_marks: bool) -> dict[str, str]:
    """Every square state's mark, for the text form of the picture."""
    return {state: row.ascii if ascii_marks else row.mark for state, row in SQUARES.items()}


def _axis_labels(summary: Summary, axis: str) -> list[str]:
    return [column.label for column in summary.columns if column.axis == axis]


def _runs(summary: Summary, family: str, axis: str, marks: dict[str, str]) -> str:
    """One family on one axis as runs of states: '🐞 1.14.1–1.16.2 · ✅ 1.17.0–1.23.2'."""
    on_axis = [i for i, column in enumerate(summary.columns) if column.axis == axis]
    states = tuple(summary.squares[(family, i)].state for i in on_axis)
    if len(set(states)) == 1:  # one release (a Python's newest pair) is not "all"
        return (
            f"{marks[states[0]]} {'all' if len(states) > 1 else summary.columns[on_axis[0]].label}"
        )
    return runs(tuple(summary.columns[i].label for i in on_axis), states, marks)


def _glance(summary: Summary, marks: dict[str, str], python: str = "") -> str:
    """The family × axis table of runs; with `python`, that Python's axes only."""
    axes = [
        a
        for a in dict.fromkeys(c.axis for c in summary.columns)
        if not python or a.endswith(f"@{python}")
    ]
    headers = ["family"]
    for axis in axes:
        labels = _axis_labels(summary, axis)
        span = labels[0] if len(labels) == 1 else f"{labels[0]}–{labels[-1]}"
        headers.append(f"{axis_row(axis).name} {md_text(span)}")
    rows = [
        [
            f"[{md_text(family)}]({md_path(page_path(family))})",
            *(_runs(summary, family, axis, marks) for axis in axes),
        ]
        for family in summary.families
    ]
    return pipe_table(rows, headers)


def pipe_table(rows: list[list[str]], headers: list[str]) -> str:
    """A Markdown table without padding: its cells are links, long in the source, short
    on the page, and padding them all to one width would double the file."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def _works_since(since: Since, labels: list[str]) -> str:
    if since.first:
        return f"≥ {since.first}"
    if len(since.broken) == len(labels):
        return "never"
    tail = labels[-len(since.broken) :]
    if list(since.broken) == tail:
        return f"until {labels[-len(since.broken) - 1]} (regressed in {since.broken[0]})"
    return f"not on {labels[-1]}"


def _glances(report: Report, summary: Summary, marks: dict[str, str]) -> list[str]:
    """The table at a glance; on a run of several Pythons, one per Python under its
    name and the releases its axes hold the other package at."""
    if not pythons(report):
        return [_glance(summary, marks), ""]
    out = []
    for python in pythons(report):
        out += [
            f"**{md_text(python_title(report, python))}**",
            "",
            _glance(summary, marks, python),
            "",
        ]
    return out


def _since(report: Report, summary: Summary) -> str:
    urls = {link_label(r.known): r.known for r in report.results if r.known}
    tables = build_tables(report)
    every = list(pythons(report))
    rows = []
    for since, where in merged(summary):  # a run of several Pythons: each said once
        anchors = check_anchors(t for t in tables if t.family == since.family)
        page = md_path(page_path(since.family))
        anchor = anchors.get((since.check, since.axis), md_anchor(since.check))
        labels = list(since.releases)
        bugs = ", ".join(
            bug_link(urls[label]) if label in urls else escape(label) for label in since.links
        )
        rows.append(
            [
                f"[{md_text(since.family)}]({page}) · [{md_text(since.check)}]({page}#{anchor})",
                md_text(
                    axis_row(since.axis).name
                    + (f" on Python {spans(where, every)}" if where else "")
                ),
                md_text(_works_since(since, labels)),
                md_text(spans(since.broken, labels)),
                bugs or "—",
            ]
        )
    return pipe_table(rows, ["family · check", "package", "works", "broken on", "upstream"])


def _legend(ascii_marks: bool, present: set[str]) -> str:
    mark = marks(ascii_marks)
    rows = [[shown(mark[k], ascii_marks), k, ENTRIES[k].meaning] for k in listed(ENTRIES, present)]
    return text_table(rows, ["mark", "outcome", "meaning"])


def _state_legend(ascii_marks: bool, no_wheel: bool) -> str:
    """The squares' states; where some cell has no wheel for its Python, n/a says so."""
    mark = state_marks(ascii_marks)
    rows = [
        [
            shown(mark[s], ascii_marks),
            s,
            NOT_RUN_OR_NO_WHEEL if no_wheel and s == NOT_RUN else row.meaning,
        ]
        for s, row in SQUARES.items()
    ]
    return text_table(rows, ["mark", "square", "meaning"])


def _environments(report: Report) -> str:
    """Every column's environment; on a run of several Pythons each names its Python,
    and a state column says which had no wheel (or broke)."""
    several = bool(pythons(report))

    def where(axis: str) -> str:
        python = split_axis(axis)[1]
        return f" on Python {python}" if python else ""

    def row(axis: str, cell: CellRecord) -> list[str]:
        p = cell.packages
        label = column_label(axis, cell)
        state = [cell.state.value] if several else []
        return [
            md_text(text)
            for text in (
                f"{axis_row(axis).name} {label}{where(axis)}",
                p.get("onnx", "—"),
                p.get("onnxruntime", "—"),
                p.get("numpy", "—"),
                p.get("protobuf", "—"),
                cell.python or "—",
                *state,
            )
        ]

    cells = {c.id: c for c in report.cells}
    rows = [row(axis, cells[i]) for axis in axes_of(report) for i in report.axes[axis]]
    headers = ["column", "onnx", "onnxruntime", "numpy", "protobuf", "Python"]
    return text_table(rows, headers + (["state"] if several else []))


def _count(n: int, one: str, many: str = "") -> str:
    return f"{n:,} {one if n == 1 else many or one + 's'}"


def render_docs(
    report: Report, ascii_marks: bool = False, squash: bool = True, scoreboard: bool = False
) -> str:
    """The index. `squash` is the family pages' setting (docs_pages.family_pages): the
    index shows releases as ranges whatever it is. `scoreboard`: the docs folder also
    holds the ONNX backend scoreboard's pass-rate picture (scoreboard.svg)."""
    del squash
    summary = summarize(report)
    totals = summary.totals
    counted = ", ".join(f"{totals[s]} {s}" for s in SQUARES if totals[s])
    on = f" on Python {', '.join(pythons(report))}" if pythons(report) else ""
    out = [
        "# Compatibility",
        "",
        f"Which ONNX constructs work on which onnx and onnxruntime releases{on}, from real runs "
        "in one isolated environment per release (generated by onnx-compat from the stored "
        f"results; do not edit): {_count(len(summary.families), 'family', 'families')}, "
        f"{_count(len(report.cells), 'environment')}, {_count(len(report.results), 'result')}.",
        "",
        f"![Each family on each release: green passes, amber only known upstream bugs, red "
        f"unexpected results]({SVG})",
        "",
        "## At a glance",
        "",
        f"Each family on each environment (a cell on both axes counted once): {counted}. "
        "Each family links to its page.",
        "",
        *_glances(report, summary, state_marks(ascii_marks)),
        *_how_to_read(ascii_marks, report),
        "## Since when it works",
        "",
        "Every check that fails somewhere: the releases it works on, where it breaks, and "
        "the upstream reports.",
        "",
        _since(report, summary) if summary.since else "Every check works on every release.",
        "",
        *(_scoreboard() if scoreboard else []),
        "## Families",
        "",
        *(
            f"- [{md_text(f)}]({md_path(page_path(f))}): {escape(report.families.get(f, ''))}"
            for f in summary.families
        ),
        "",
        "## Legend",
        "",
        "The marks of the family pages:",
        "",
        _legend(ascii_marks, states(report)),
        "",
        "## Environments",
        "",
        _environments(report),
        "",
    ]
    return "\n".join(out)


def _how_to_read(ascii_marks: bool, report: Report) -> list[str]:
    """What a square is, what a check runs against, what a known bug is; the states; on
    a run of several Pythons, how the Pythons divide the columns."""
    several = (
        [
            "Each Python has columns of its own, and on each the other package stays at the "
            "newest release with a wheel for it (named over its table). A release the package "
            "index has no wheel of for a Python is n/a there: it cannot be installed, which is "
            "no failure.",
            "",
        ]
        if pythons(report)
        else []
    )
    return [
        "## How to read it",
        "",
        "A square is one family of cases on one release. A check runs against the releases "
        "of the package it exercises (the onnx checker, shape inference and reference "
        "evaluator on onnx releases; onnxruntime sessions on onnxruntime releases) while the "
        "other package stays at one release (see *Environments*). A square shows the worst "
        "of its results; the number in a picture's square counts the results that make its "
        "state (unexpected ones, or known bugs). A known bug is a reported upstream issue "
        "recorded with its releases: its failures are expected and linked, and a pass "
        "inside its range is reported as unexpected (the bug looks fixed).",
        "",
        *several,
        _state_legend(ascii_marks, bool(no_wheel_cells(report))),
        "",
        "On a family's page each check has a heading and a table: the case, its verdict, "
        "then one mark per release, neighbouring releases with the same outcomes merged.",
        "",
    ]


def _scoreboard() -> list[str]:
    """The ONNX backend scoreboard's section, when the docs folder holds its picture."""
    return [
        "## The ONNX backend scoreboard",
        "",
        "onnx's own backend node tests on every onnxruntime release "
        "(`nox -s scoreboard`): the share that passes, by release.",
        "",
        "![Pass rate of the ONNX backend node tests by onnxruntime release](scoreboard.svg)",
        "",
    ]
