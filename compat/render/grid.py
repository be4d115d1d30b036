"""The table model every renderer shares: per family and axis, case·check × version."""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import groupby

import tabulate as tabulate_module

from compat.outcomes import CellRecord, CellState, CheckResult
from compat.report import Report

#: How an outcome (or a broken cell's state) reads in a sentence.
WORDS = {
    "pass": "passes",
    "fail": "fails",
    "error": "errors",
    "crash": "crashes",
    "timeout": "times out",
    "skip": "skipped",
    "xfail": "fails (known)",
    "xpass": "passes (known bug looks fixed)",
    "flaky": "flaky",
    "install-error": "cannot install",
    "import-error": "cannot import",
    "n/a": "not run",
}

AXIS_TITLES = {"onnx": "onnx", "onnxruntime": "onnxruntime", "cell": "cell"}


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
    if axis == "onnx":
        return cell.onnx
    if axis == "onnxruntime":
        return cell.onnxruntime
    return cell.id


def entry(cell: CellRecord, result: CheckResult | None) -> str:
    if cell.state is not CellState.READY:
        return cell.state.value
    return result.outcome.value if result else "n/a"


def build_tables(report: Report) -> list[Table]:
    """One table per (family, axis) that has rows, families and axes in report order."""
    cells = {c.id: c for c in report.cells}
    results = {(r.cell, r.case, r.check): r for r in report.results}
    families = list(dict.fromkeys(c.family for c in report.cases))
    tables = []
    for family in families:
        cases = [c for c in report.cases if c.family == family]
        for axis, ids in report.axes.items():
            columns = tuple(cells[i] for i in ids)
            rows = []
            for case in cases:
                for check, check_axis in case.checks.items():
                    if axis not in ("cell", check_axis) and check_axis != "both":
                        continue
                    found = tuple(results.get((c.id, case.id, check)) for c in columns)
                    entries = tuple(entry(c, r) for c, r in zip(columns, found, strict=True))
                    rows.append(Row(case.id, check, entries, found))
            if rows and columns:
                labels = tuple(column_label(axis, c) for c in columns)
                tables.append(Table(family, axis, labels, columns, tuple(rows)))
    return tables


def summarize(labels: tuple[str, ...], entries: tuple[str, ...]) -> str:
    """Reads a row as words: 'fails ≤ 1.20.1, passes ≥ 1.21.0'."""
    runs = [
        (value, [label for label, _ in group])
        for value, group in groupby(zip(labels, entries, strict=True), key=lambda pair: pair[1])
    ]
    if len(runs) == 1:
        return f"{WORDS[runs[0][0]]} on all"
    if len(runs) == 2:
        (first, a), (second, b) = runs
        return f"{WORDS[first]} ≤ {a[-1]}, {WORDS[second]} ≥ {b[0]}"
    parts = []
    for value, group in runs:
        span = group[0] if len(group) == 1 else f"{group[0]}–{group[-1]}"
        parts.append(f"{WORDS[value]} {span}")
    return "; ".join(parts)


GOOD = frozenset({"pass", "xpass"})
BAD = frozenset({"fail", "xfail", "error", "crash", "timeout", "flaky"})
BROKEN_CELL = frozenset({"install-error", "import-error"})


def link_label(url: str) -> str:
    """`https://github.com/onnx/onnx/issues/6697` -> `onnx #6697`; other links stay."""
    match = re.match(r"https?://github\.com/[^/]+/([^/]+)/(?:issues|pull)/(\d+)", url)
    return f"{match.group(1)} #{match.group(2)}" if match else url


def _span(labels: list[str]) -> str:
    return labels[0] if len(labels) == 1 else f"{labels[0]}–{labels[-1]}"


def verdict(package: str, labels: tuple[str, ...], row: Row) -> str:
    """One line: 'works on onnx ≥ 1.21.0; broken on 1.14.1–1.20.1 (onnx #6697)'."""
    good = [label for label, e in zip(labels, row.entries, strict=True) if e in GOOD]
    bad = [label for label, e in zip(labels, row.entries, strict=True) if e in BAD]
    links = sorted(
        {link_label(r.known) for r in row.results if r and r.known and r.outcome.value in BAD}
    )
    cite = f" ({', '.join(links)})" if links else ""
    tested = [label for label, e in zip(labels, row.entries, strict=True) if e in GOOD | BAD]
    broken = [label for label, e in zip(labels, row.entries, strict=True) if e in BROKEN_CELL]
    if not tested:
        return "not tested: " + ", ".join(sorted({WORDS[e] for e in row.entries}))
    name = "" if package == "cell" else f"{package} "
    note = f"; {', '.join(broken)} could not be installed or imported" if broken else ""
    if not bad:
        return f"works on every tested {name}release ({_span(tested)}){note}"
    if not good:
        return f"broken on every tested {name}release ({_span(tested)}){cite}{note}"
    if tested[-len(good) :] == good:
        return f"works on {name}≥ {good[0]}; broken on {_span(bad)}{cite}{note}"
    if tested[: len(good)] == good:
        return f"works on {name}≤ {good[-1]}; broken on ≥ {bad[0]} (regression){cite}{note}"
    return f"works on {name}{', '.join(good)}; broken on {', '.join(bad)}{cite}{note}"


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
        Row(r.case, r.check, tuple(r.entries[g[0]] for g in groups),
            tuple(r.results[g[0]] for g in groups))
        for r in table.rows
    )  # fmt: skip
    return Table(table.family, table.axis, labels, tuple(table.cells[g[0]] for g in groups), rows)


def text_table(rows: list[list[str]], headers: list[str], fmt: str = "github") -> str:
    """tabulate, made independent of the environment: every character counts as one
    column, whether or not `wcwidth` happens to be installed, so the same results give
    byte-identical files everywhere."""
    tabulate_module.WIDE_CHARS_MODE = False
    text: str = tabulate_module.tabulate(rows, headers=headers, tablefmt=fmt, disable_numparse=True)
    return text
