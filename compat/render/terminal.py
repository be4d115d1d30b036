"""The terminal: a summary that fits one screen, unexpected results with their repro
commands, a closing line of counts; the full grid of rows only behind `--grid`."""

from __future__ import annotations

import os
import textwrap
from collections import Counter
from typing import Any

from compat.core.axis_names import axis_row
from compat.core.outcomes import CellRecord, CellState, CheckResult, Outcome
from compat.core.report import Report
from compat.core.result_diff import steady
from compat.core.squares import SQUARES
from compat.core.versions import holds, in_range
from compat.core.vocabulary import ENTRIES, ENUM_ORDER, OUTCOMES, listed
from compat.render.axes import (
    axis_title,
    no_wheel_cells,
    python_title,
    pythons,
    states,
)
from compat.render.grid import build_tables, spans, text_table, variant
from compat.render.summary import Summary, merged, summarize
from compat.render.terminal_grid import short_labels, summary_grid
from compat.render.text import one_line, printable

#: Lines stay this short: CI log viewers and 120-column terminals do not wrap them.
WIDTH = 120
#: Unexpected results listed before "… and N more".
MAX_UNEXPECTED = 10
#: Lines a project's command result may take (its counts and failing test ids).
COMMAND_LINES = 3
#: "Works since" lines listed before "… and N more".
MAX_SINCE = 12

#: Lines of the drop-in scan's predictions listed before "… and N more".
MAX_PREDICTED = 10
#: The outcomes that are a failure a scan could have predicted (compat/followup/verify.py).
FAILED = frozenset(
    {
        Outcome.FAIL,
        Outcome.XFAIL,
        Outcome.ERROR,
        Outcome.CRASH,
        Outcome.TIMEOUT,
        Outcome.UNSUPPORTED,
    }
)

#: The summary legend's order: what a reader hopes to see first.
SUMMARY_ORDER = ("pass", "known", "unexpected", "skip", "broken")
#: The closing line's order: the worst first.
CLOSING_ORDER = (
    Outcome.FAIL,
    Outcome.ERROR,
    Outcome.CRASH,
    Outcome.TIMEOUT,
    Outcome.FLAKY,
    Outcome.UNSUPPORTED,
    Outcome.XPASS,
    Outcome.PASS,
    Outcome.XFAIL,
    Outcome.SKIP,
)


def _legend(present: set[str]) -> str:
    """The grid's legend: every entry's letter, in the enum's order ("not run" is blank);
    no-wheel only where a cell has no wheel."""
    return "legend: " + "  ".join(
        f"{ENTRIES[key].letter} {key}" for key in listed(ENUM_ORDER, present)
    )


def _summary_legend() -> str:
    """Each square's letter and words; a square of unexpected results shows their
    number instead of its letter when there are fewer than 10."""
    said = []
    for state in SUMMARY_ORDER:
        square = SQUARES[state]
        letter = f"N/{square.letter}" if state == "unexpected" else square.letter
        said.append(f"{letter} {square.said}")
    return "  " + "   ".join(said)


def use_colour(stream_is_tty: bool) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (no-color.org)."""
    return stream_is_tty and not os.environ.get("NO_COLOR")


def render_summary(report: Report, colour: bool = False) -> str:
    """The family × release grid, one square per family and release, worst state shown;
    on a run of several Pythons a block per Python (compat/render/terminal_grid.py)."""
    summary = summarize(report)
    if not summary.families:
        return "no results"
    titles = {p: python_title(report, p, short=True) for p in pythons(report)}
    grid = summary_grid(summary, titles, colour, WIDTH)
    legend = _summary_legend() + ("   (blank) n/a: no wheel" if no_wheel_cells(report) else "")
    return "\n".join([*grid, legend, *_since_lines(summary)])


def _since_lines(summary: Summary) -> list[str]:
    """Fixed releases: "since when it works", for checks that were broken and are fixed."""
    every = [p for p in dict.fromkeys(c.python for c in summary.columns) if p]
    fixed = [(s, where) for s, where in merged(summary) if s.first and s.first != s.broken[0]]
    if not fixed:
        return []
    lines = ["works since (first release from which every later one passes):"]
    for since, where in fixed[:MAX_SINCE]:
        axis = axis_row(since.axis).name
        on = f" on Python {spans(where, every)}" if where else ""
        links = f" ({', '.join(since.links)})" if since.links else ""
        line = f"  {since.family} · {since.check}: {axis} ≥ {since.first}{on}{links}"
        lines.append(_cut(one_line(line)))
    if len(fixed) > MAX_SINCE:
        lines.append(f"  … and {len(fixed) - MAX_SINCE} more: see compatibility.md")
    return lines


def _cut(line: str, width: int = WIDTH) -> str:
    return line if len(line) <= width else line[: width - 1] + "…"


def render_unexpected(
    report: Report, hints: dict[str, str] | None = None, folder: str = "reports"
) -> str:
    """Broken cells and unexpected results, one line each, then each cell's repro command;
    a project's command gets a few lines (its failing tests) and the path of its log. A
    result that reads the same in several cells is one entry naming them; one that does
    in every cell of a run of several says its cause is likely none of the releases."""
    hints = hints or {}
    lines: list[str] = []
    broken = report.broken_cells
    for cell in broken:
        lines.append(_cut(one_line(f"{cell.id}: {cell.state.value}: {cell.summary}")))
        if cell.id in hints:
            lines.append(_cut(one_line(f"    {hints[cell.id]}"), 10_000))
    groups: dict[tuple[str, str, str], list[CheckResult]] = {}
    for r in report.unexpected:
        groups.setdefault((r.case, r.check, steady(r.summary)), []).append(r)
    ready = [c.id for c in report.cells if c.state is CellState.READY]
    visible = list(groups.values())[:MAX_UNEXPECTED]
    last = {results[0].cell: i for i, results in enumerate(visible)}
    for shown, results in enumerate(groups.values()):
        if shown == MAX_UNEXPECTED:
            lines.append(f"… and {len(groups) - shown} more: see matrix.md (or --grid)")
            break
        lines += _entry(results, folder)
        named = results[0].cell
        if len(results) > 2 and len(results) == len(ready):
            lines.append(f"    the same in all {len(ready)} cells: {EVERY_CELL}")
        if named in hints and last[named] == shown:  # each cell's once, after its last entry
            lines.append(one_line(f"    {hints[named]}"))
    if lines:
        total = len(broken) + len(report.unexpected)
        lines.insert(0, f"{total} unexpected:")
    return "\n".join(lines)


#: What a failure alike in every cell most likely means.
EVERY_CELL = (
    "likely not an onnx or onnxruntime release but what every cell shares (its other "
    "packages: cells[].installed in matrix.json; the project; the command)"
)


def _entry(results: list[CheckResult], folder: str) -> list[str]:
    """One result's lines, or those of several alike, named by the first cell's id and
    how many more."""
    first = results[0]
    more = len(results) - 1
    where = first.cell + (f" (and {more} more cell{'s' * (more != 1)})" if more else "")
    cached = "[from an earlier run; --fresh recomputes] " if first.origin == "cache" else ""
    text = " ".join(
        printable(f"{where} · {first.case} · {first.check}: {cached}{first.summary}").split()
    )
    if not first.log:
        return [_cut(text)]
    # a test suite's counts and failing ids: worth a few lines
    wrapped = textwrap.wrap(
        text, WIDTH - 2, subsequent_indent="  ", max_lines=COMMAND_LINES, placeholder=" …"
    )
    return [*wrapped, one_line(f"    log: {folder}/{first.log}")]


def _predicting(findings: list[dict[str, Any]], cell: CellRecord, check: str) -> list[str]:
    """The detectors whose bug covers `check` in `cell` (by the bug's own range)."""
    return [
        f["detector"]
        for f in findings
        if check in f["checks"]
        and in_range(cell.version(f["package"]), f["known"])
        and holds(f.get("requires", ()), cell.installed)
    ]


def render_predictions(report: Report) -> str:
    """What the scan of the drop-in models (`run["scan"]`, compat/cli/commands/matrix.py)
    said before the run, set against it: each failing check of a drop-in under "predicted
    by scan (detector)" or "not predicted", and each predicted failure that passed; one
    line per (case, check, outcome), naming its cells. Empty for a run without drop-ins."""
    scanned = report.run.get("scan")
    if not isinstance(scanned, dict) or not scanned:
        return ""
    cells = {c.id: c for c in report.cells}
    said: dict[str, dict[tuple[str, str, str], list[str]]] = {}
    counts: Counter[str] = Counter()
    for r in report.results:
        if r.case not in scanned or r.cell not in cells:
            continue
        by = ", ".join(_predicting(scanned[r.case], cells[r.cell], r.check))
        if r.outcome in FAILED:
            verdict = f"predicted by scan ({by})" if by else "not predicted"
            counts["predicted" if by else "missed"] += 1
        elif r.outcome in (Outcome.PASS, Outcome.XPASS) and by:
            verdict = f"predicted by scan ({by}), yet passed"
            counts["false alarm"] += 1
        else:
            continue
        said.setdefault(verdict, {}).setdefault((r.case, r.check, r.outcome.value), [])
        said[verdict][(r.case, r.check, r.outcome.value)].append(r.cell)
    failed = counts["predicted"] + counts["missed"]
    alarms = counts["false alarm"]
    lines = [
        f"scan of the drop-in models, before the run: {counts['predicted']} of {failed} "
        f"failing results predicted" + (f"; {alarms} predicted failures passed" if alarms else "")
    ]
    shown = 0
    for verdict, results in said.items():
        if shown < MAX_PREDICTED:
            lines.append(_cut(one_line(f"  {verdict}:")))
        for (case, check, outcome), where in results.items():
            shown += 1
            if shown <= MAX_PREDICTED:
                text = f"    {case} · {check} {outcome} on {', '.join(where)}"
                lines.append(_cut(one_line(text)))
    if shown > MAX_PREDICTED:
        lines.append(f"  … and {shown - MAX_PREDICTED} more: see matrix.md (or --grid)")
    return "\n".join(lines)


def closing_line(report: Report, provenance: str) -> str:
    """pytest-style: the counts that matter, worst first, and the time."""
    counts = Counter(r.outcome.value for r in report.results)
    parts = [f"{counts[o]} {OUTCOMES[o].counted}" for o in CLOSING_ORDER if counts.get(o)]
    if report.broken_cells:
        parts.insert(0, f"{len(report.broken_cells)} broken cells")
    if no_wheel_cells(report):  # not applicable: said last, never as a failure
        parts.append(f"{len(no_wheel_cells(report))} no wheel")
    seconds = report.run.get("seconds", 0)
    said = f"{', '.join(parts) or 'no results'} in {seconds} s ({provenance})"
    return _cut(one_line(said), 200)


def render_grid(report: Report, every_row: bool = False) -> str:
    """Every table's rows as marks; only rows that are not all pass unless `every_row`."""
    parts = []
    for table in build_tables(report):
        rows = [
            [
                f"{variant(row.case, table.family)} · {row.check}",
                *(ENTRIES[e].letter for e in row.entries),
            ]
            for row in table.rows
            if every_row or any(e not in ("pass",) for e in row.entries)
        ]
        if not rows:
            continue
        prefix, short = short_labels(list(table.labels))
        name = axis_title(report, table.axis, pair=False)
        headers = [f"{table.family} \\ {name} {prefix}…", *short]
        if not prefix:
            headers = [f"{table.family} \\ {name}", *table.labels]
        rows = [[printable(text) for text in row] for row in rows]
        parts.append(text_table(rows, [printable(text) for text in headers], "plain"))
    parts.append(_legend(states(report)))
    return "\n\n".join(parts)
