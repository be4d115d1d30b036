"""The table model every renderer shares: per family and axis, case·check × version."""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from itertools import groupby

import tabulate as tabulate_module

from compat.core.axis_names import ordered_axes, split_axis
from compat.core.outcomes import CellRecord, CellState, CheckResult
from compat.core.report import Report
from compat.core.vocabulary import BREAKS, BROKEN, ENTRIES, NOT_APPLICABLE, NOT_RUN, WORKS


@dataclass(frozen=True)
class Row:
    case: str
    check: str
    entries: tuple[str, ...]  # an outcome value or a cell state, one per column
    results: tuple[CheckResult | None, ...]


def variant(case: str, family: str) -> str:
    """`family.a.b` -> `a.b`: inside a family's table the family name is noise."""
    return case[len(family) + 1 :] if case.startswith(family + ".") else case


@dataclass(frozen=True)
class Table:
    family: str
    axis: str
    labels: tuple[str, ...]
    cells: tuple[CellRecord, ...]
    rows: tuple[Row, ...]


def column_label(axis: str, cell: CellRecord) -> str:
    """A column's title: the cell's release along the axis, or its id (a cross product)."""
    return cell.version(axis) or cell.id


def varying(ids: tuple[str, ...]) -> tuple[str, ...]:
    """Cell ids without the parts every one shares: `onnx1.16.2-ort1.24.4-protobuf3.20.3`,
    `onnx1.23.2-ort1.24.4-protobuf6.33.0` -> `onnx1.16.2-protobuf3.20.3`, …"""
    parts = [cell_id.split("-") for cell_id in ids]
    if len(ids) < 2 or len({len(p) for p in parts}) != 1:
        return ids
    keep = [i for i in range(len(parts[0])) if len({p[i] for p in parts}) > 1]
    return tuple("-".join(p[i] for i in keep) for p in parts) if keep else ids


def entry(cell: CellRecord, result: CheckResult | None) -> str:
    if cell.state is not CellState.READY:
        return cell.state.value
    return result.outcome.value if result else NOT_RUN


#: The tables of the last report built: every renderer (and each of the family pages)
#: reads them, and they are the same for one report.
_built: tuple[weakref.ref[Report] | None, list[Table]] = (None, [])


def build_tables(report: Report) -> list[Table]:
    """One table per (family, axis) that has rows, families and axes in report order."""
    global _built
    if _built[0] is not None and _built[0]() is report:
        return list(_built[1])
    tables = _build_tables(report)
    _built = (weakref.ref(report), tables)
    return list(tables)


def _build_tables(report: Report) -> list[Table]:
    cells = {c.id: c for c in report.cells}
    results = {(r.cell, r.case, r.check): r for r in report.results}
    families = list(dict.fromkeys(c.family for c in report.cases))
    tables = []
    for family in families:
        cases = [c for c in report.cases if c.family == family]
        for axis in ordered_axes(report.axes):
            columns = tuple(cells[i] for i in report.axes[axis])
            base = split_axis(axis)[0]  # `onnx@3.12`: onnx's releases on Python 3.12
            rows = []
            for case in cases:
                for check, check_axis in case.checks.items():
                    if base not in ("cell", check_axis) and check_axis != "both":
                        continue
                    found = tuple(results.get((c.id, case.id, check)) for c in columns)
                    entries = tuple(entry(c, r) for c, r in zip(columns, found, strict=True))
                    rows.append(Row(case.id, check, entries, found))
            if rows and columns:
                labels = tuple(column_label(axis, c) for c in columns)
                if base == "cell":
                    labels = varying(labels)
                tables.append(Table(family, axis, labels, columns, tuple(rows)))
    return tables


def summarize(labels: tuple[str, ...], entries: tuple[str, ...]) -> str:
    """Reads a row as words: 'fails ≤ 1.20.1, passes ≥ 1.21.0'."""
    runs = [
        (value, [label for label, _ in group])
        for value, group in groupby(zip(labels, entries, strict=True), key=lambda pair: pair[1])
    ]
    if len(runs) == 1:  # one release (a Python's newest pair) is not "all"
        return f"{ENTRIES[runs[0][0]].word} on {'all' if len(labels) > 1 else labels[0]}"
    if len(runs) == 2:
        (first, a), (second, b) = runs
        return f"{ENTRIES[first].word} ≤ {a[-1]}, {ENTRIES[second].word} ≥ {b[0]}"
    parts = []
    for value, group in runs:
        span = group[0] if len(group) == 1 else f"{group[0]}–{group[-1]}"
        parts.append(f"{ENTRIES[value].word} {span}")
    return "; ".join(parts)


#: Entries where a row's check works, is broken (a known bug included), or could not run.
GOOD = frozenset(outcome.value for outcome in WORKS)
BAD = frozenset(outcome.value for outcome in BREAKS)
BROKEN_CELL = frozenset(state.value for state in BROKEN)
NO_WHEEL = frozenset(state.value for state in NOT_APPLICABLE)


def link_label(url: str) -> str:
    """`https://github.com/onnx/onnx/issues/6697` -> `onnx #6697`; other links stay."""
    match = re.match(r"https?://github\.com/[^/]+/([^/]+)/(?:issues|pull)/(\d+)", url)
    return f"{match.group(1)} #{match.group(2)}" if match else url


def _span(labels: list[str]) -> str:
    return labels[0] if len(labels) == 1 else f"{labels[0]}–{labels[-1]}"


def spans(chosen: Collection[str], labels: Sequence[str]) -> str:
    """Some of `labels` as their neighbouring runs: '1.14.1–1.16.2, 1.20.1'."""
    runs: list[list[str]] = []
    for i, label in enumerate(labels):
        if label not in chosen:
            continue
        if runs and i > 0 and labels[i - 1] == runs[-1][-1]:
            runs[-1].append(label)
        else:
            runs.append([label])
    return ", ".join(_span(run) for run in runs)


#: How long a skip reason may be inside a one-line verdict.
REASON_WIDTH = 90


def _skip_reason(labels: tuple[str, ...], row: Row, near: int) -> str:
    """Why a row is skipped, in words: the reason every skipped release gives, naming
    them all ('onnx 1.14.1–1.22.0 has no …'), or when the reasons differ the one of the
    skipped release nearest those that ran (index `near`)."""
    skipped = [
        (i, label, result.detail)
        for i, (label, entry, result) in enumerate(
            zip(labels, row.entries, row.results, strict=True)
        )
        if entry == "skip" and result is not None and result.detail
    ]
    if not skipped:
        return ""
    generic = {
        re.sub(rf"(?<![\w.]){re.escape(label)}(?![\w.])", "\0", " ".join(detail.split()))
        for _, label, detail in skipped
    }
    if len(generic) == 1:
        reason = generic.pop().replace("\0", spans([s[1] for s in skipped], labels))
    else:
        reason = " ".join(min(skipped, key=lambda s: abs(s[0] - near))[2].split())
    return reason if len(reason) <= REASON_WIDTH else reason[: REASON_WIDTH - 1] + "…"


def _skip_note(labels: tuple[str, ...], row: Row, tested: list[str]) -> str:
    """'; skipped before: onnx has no …' — where a row did not run, and why."""
    skipped = [label for label, e in zip(labels, row.entries, strict=True) if e == "skip"]
    if not skipped:
        return ""
    first = labels.index(tested[0])
    last = labels.index(tested[-1])
    where = [labels.index(label) for label in skipped]
    if max(where) < first:
        place = "before"
        near = first - 1
    elif min(where) > last:
        place = "after"
        near = last + 1
    else:
        place = f"on {spans(skipped, labels)}"
        near = first
    reason = _skip_reason(labels, row, near)
    return f"; skipped {place}" + (f": {reason}" if reason else "")


def _where(tested: list[str], labels: tuple[str, ...], name: str) -> str:
    """The releases a row ran on, the others skipped: '≥ 1.20.1' when they are the last."""
    runs = labels[labels.index(tested[0]) : labels.index(tested[-1]) + 1]
    if list(runs) == tested and runs[-1] == labels[-1]:
        return f"{name}≥ {tested[0]}"
    if list(runs) == tested and runs[0] == labels[0]:
        return f"{name}≤ {tested[-1]}"
    return f"every {name}release it runs on ({spans(tested, labels)})"


def verdict(
    package: str, labels: tuple[str, ...], row: Row, cite: Callable[[str], str] = link_label
) -> str:
    """One line: 'works on onnx ≥ 1.21.0; broken on 1.14.1–1.20.1 (onnx #6697)'. Skips are
    said as skips: 'runs only on onnx 1.23.2, and works; skipped before: …'. `cite` writes
    a known bug's link (docs pages make it a Markdown link)."""
    good = [label for label, e in zip(labels, row.entries, strict=True) if e in GOOD]
    bad = [label for label, e in zip(labels, row.entries, strict=True) if e in BAD]
    links = sorted({cite(r.known) for r in row.results if r and r.known and r.outcome.value in BAD})
    cite_all = f" ({', '.join(links)})" if links else ""
    tested = [label for label, e in zip(labels, row.entries, strict=True) if e in GOOD | BAD]
    broken = [label for label, e in zip(labels, row.entries, strict=True) if e in BROKEN_CELL]
    base = split_axis(package)[0]  # the releases of `onnx@3.12` are onnx's
    name = "" if base == "cell" else f"{base} "
    note = f"; {', '.join(broken)} could not be installed or imported" if broken else ""
    note += _no_wheel_note(labels, row)
    if not tested:
        if "skip" in row.entries:
            reason = _skip_reason(labels, row, len(labels) - 1)
            return f"skipped on every {name}release" + (f": {reason}" if reason else "") + note
        return "not tested: " + ", ".join(sorted({ENTRIES[e].word for e in row.entries}))
    skips = _skip_note(labels, row, tested)
    if skips and len(tested) == 1:
        state = "works" if good else f"is broken{cite_all}"
        return f"runs only on {name}{tested[0]}, and {state}{skips}{note}"
    if not bad:
        if skips:
            return f"works on {_where(tested, labels, name)}{skips}{note}"
        return f"works on every tested {name}release ({_span(tested)}){note}"
    if not good:
        return f"broken on every tested {name}release ({_span(tested)}){cite_all}{skips}{note}"
    if tested[-len(good) :] == good:
        return f"works on {name}≥ {good[0]}; broken on {_span(bad)}{cite_all}{skips}{note}"
    if tested[: len(good)] == good:
        return (
            f"works on {name}≤ {good[-1]}; broken on ≥ {bad[0]} (regression){cite_all}{skips}{note}"
        )
    return f"works on {name}{', '.join(good)}; broken on {', '.join(bad)}{cite_all}{skips}{note}"


def _no_wheel_note(labels: tuple[str, ...], row: Row) -> str:
    """'; n/a on 1.20.1–1.23.2 (no wheel for this Python)': releases a row could not
    run on, and why, which is no failure."""
    absent = [label for label, e in zip(labels, row.entries, strict=True) if e in NO_WHEEL]
    return f"; n/a on {spans(absent, labels)} (no wheel for this Python)" if absent else ""


def collapse(table: Table) -> Table:
    """Merges neighbouring columns whose entries agree on every row into one range."""
    groups: list[list[int]] = []
    for i in range(len(table.labels)):
        if groups and all(r.entries[i] == r.entries[groups[-1][0]] for r in table.rows):
            groups[-1].append(i)
        else:
            groups.append([i])
    labels = tuple(_span([table.labels[i] for i in g]) for g in groups)
    rows = tuple(
        Row(
            r.case,
            r.check,
            tuple(r.entries[g[0]] for g in groups),
            tuple(r.results[g[0]] for g in groups),
        )
        for r in table.rows
    )
    return Table(table.family, table.axis, labels, tuple(table.cells[g[0]] for g in groups), rows)


def text_table(rows: list[list[str]], headers: list[str], fmt: str = "github") -> str:
    """tabulate, made independent of the environment: every character counts as one
    column, whether or not `wcwidth` happens to be installed, so the same results give
    byte-identical files everywhere."""
    tabulate_module.WIDE_CHARS_MODE = False
    text: str = tabulate_module.tabulate(rows, headers=headers, tablefmt=fmt, disable_numparse=True)
    return text
