"""The answer at a glance: a family × release grid and "since when it works", the data
every renderer shows first (terminal, HTML page, docs index, SVG heatmap)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from packaging.version import InvalidVersion

from compat.core.axis_names import axis_row, ordered_axes, split_axis
from compat.core.outcomes import CellRecord, CellState, CheckResult, Outcome
from compat.core.report import Report
from compat.core.versions import version_key
from compat.core.vocabulary import BROKEN, NOT_RUN
from compat.render.grid import BAD, build_tables, link_label


@dataclass(frozen=True)
class Square:
    """One family on one release: its state (a key of vocabulary.SQUARES) and the outcome
    counts behind it."""

    state: str
    counts: dict[str, int]
    links: tuple[str, ...] = ()  # the known bugs' links

    @property
    def number(self) -> int:
        """How many results make the state: unexpected or known ones; 0 otherwise."""
        if self.state == "unexpected":
            return sum(n for o, n in self.counts.items() if Outcome(o).unexpected)
        if self.state == "known":
            return self.counts.get("xfail", 0)
        return 0


@dataclass(frozen=True)
class Column:
    """A release on an axis: `onnx 1.18.0` (the onnx axis) or `ort 1.22.1`."""

    axis: str
    label: str
    cell: CellRecord

    @property
    def python(self) -> str:
        """The Python of its axis, on a run of several: `3.12`; "" otherwise."""
        return split_axis(self.axis)[1]

    @property
    def title(self) -> str:
        """`ort 1.22.1`; `ort 1.22.1 on Python 3.12` on a run of several Pythons."""
        where = f" on Python {self.python}" if self.python else ""
        return f"{axis_row(self.axis).short} {self.label}{where}"


@dataclass(frozen=True)
class Since:
    """Since when a family's check works on one axis: `first` is the first release from
    which every later one passes, "" when it never does, "all" when it always does."""

    family: str
    check: str
    axis: str
    first: str
    broken: tuple[str, ...]  # releases where it fails (known or not)
    links: tuple[str, ...]
    #: the releases of the axis it ran on: all but those with no wheel for the Python
    #: of the axis and those whose environment broke (which tell nothing of since when
    #: it works)
    releases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Summary:
    families: tuple[str, ...]
    columns: tuple[Column, ...]
    squares: dict[tuple[str, int], Square]  # (family, column index) -> square
    since: tuple[Since, ...]

    @property
    def totals(self) -> Counter[str]:
        """Each family on each environment, per state, for a one-line headline: a cell on
        both axes (the pair) is drawn twice and counted once."""
        once = {(family, self.columns[i].cell.id): sq for (family, i), sq in self.squares.items()}
        return Counter(square.state for square in once.values())


def square_of(cell: CellRecord, results: list[CheckResult]) -> Square:
    if cell.state in BROKEN:
        return Square("broken", {cell.state.value: 1})
    if cell.state is not CellState.READY:  # no wheel for its Python: not applicable
        return Square(NOT_RUN, {cell.state.value: 1})
    counts = Counter(r.outcome.value for r in results)
    links = tuple(sorted({r.known for r in results if r.known}))
    if not results:
        return Square(NOT_RUN, {})
    if any(r.outcome.unexpected for r in results):
        return Square("unexpected", dict(counts), links)
    if counts.get("xfail"):
        return Square("known", dict(counts), links)
    if counts.get("pass") or counts.get("xpass"):
        return Square("pass", dict(counts), links)
    return Square("skip", dict(counts), links)


def summarize(report: Report) -> Summary:
    """The family × release grid of a report, columns in axis order (onnx, then
    onnxruntime; a cell on both axes appears on both)."""
    tables = build_tables(report)
    families = tuple(dict.fromkeys(t.family for t in tables))
    columns: list[Column] = []
    index: dict[tuple[str, str], int] = {}
    for table in tables:
        for label, cell in zip(table.labels, table.cells, strict=True):
            if (table.axis, cell.id) not in index:
                index[(table.axis, cell.id)] = len(columns)
                columns.append(Column(table.axis, label, cell))
    order = {axis: i for i, axis in enumerate(ordered_axes(report.axes))}
    ordered = sorted(range(len(columns)), key=lambda i: (order.get(columns[i].axis, 99), i))
    remap = {old: new for new, old in enumerate(ordered)}
    columns = [columns[i] for i in ordered]
    index = {key: remap[i] for key, i in index.items()}
    gathered: dict[tuple[str, int], list[CheckResult]] = {}
    for table in tables:
        for position, cell in enumerate(table.cells):
            at = (table.family, index[(table.axis, cell.id)])
            bucket = gathered.setdefault(at, [])
            bucket.extend(r for row in table.rows if (r := row.results[position]) is not None)
    squares = {
        (family, i): square_of(column.cell, gathered.get((family, i), []))
        for family in families
        for i, column in enumerate(columns)
    }
    return Summary(families, tuple(columns), squares, tuple(since_when(report)))


def since_when(report: Report) -> list[Since]:
    """Per family, check and axis that are not simply fine everywhere: the first release
    from which the check passes on every later release of that axis, with the bug links."""
    out: list[Since] = []
    for table in build_tables(report):
        checks = list(dict.fromkeys(row.check for row in table.rows))
        # only releases whose environment was built: a no-wheel or broken cell ran no
        # check and says nothing of since when one works
        ran = [i for i, c in enumerate(table.cells) if c.state is CellState.READY]
        labels = tuple(table.labels[i] for i in ran)
        for check in checks:
            rows = [row for row in table.rows if row.check == check]
            bad = [any(row.entries[i] in BAD for row in rows) for i in ran]
            if not any(bad):
                continue
            last_bad = max(i for i, b in enumerate(bad) if b)
            first = labels[last_bad + 1] if last_bad + 1 < len(labels) else ""
            links = sorted(
                {link_label(r.known) for row in rows for r in row.results if r and r.known}
            )
            broken = tuple(label for label, b in zip(labels, bad, strict=True) if b)
            out.append(Since(table.family, check, table.axis, first, broken, tuple(links), labels))
    return out


@dataclass(frozen=True)
class Bands:
    """A run of several Pythons laid out as one grid: the columns they share (per axis,
    every release any of them has, oldest first) and, per Python, a band of squares:
    the summary column at each shared column, None where its axis lacks the release."""

    groups: tuple[tuple[str, tuple[str, ...]], ...]  # (axis, its releases)
    bands: dict[str, tuple[int | None, ...]]  # Python -> a summary column per shared one


def _release_order(labels: list[str]) -> list[str]:
    try:
        return sorted(labels, key=version_key)
    except InvalidVersion:  # a cross product's columns are cells: as they came
        return labels


def bands(summary: Summary) -> Bands:
    """The shared columns of a summary of several Pythons (compat/render/axes.py)."""
    pythons = list(dict.fromkeys(c.python for c in summary.columns))
    axes = list(dict.fromkeys(split_axis(c.axis)[0] for c in summary.columns))
    groups = []
    for axis in axes:
        labels = [c.label for c in summary.columns if split_axis(c.axis)[0] == axis]
        groups.append((axis, tuple(_release_order(list(dict.fromkeys(labels))))))
    where = {(c.python, split_axis(c.axis)[0], c.label): i for i, c in enumerate(summary.columns)}
    shared = [(axis, label) for axis, labels in groups for label in labels]
    return Bands(
        tuple(groups),
        {p: tuple(where.get((p, axis, label)) for axis, label in shared) for p in pythons},
    )


def merged(summary: Summary) -> list[tuple[Since, tuple[str, ...]]]:
    """Each check's "since when it works" said once for every Python (on the axis of
    the first Python it names), unless the Pythons disagree: one breaks on a release
    another ran and passed. Then a line per release it was fixed at, naming its Pythons;
    else one line (the Pythons named: ()), the latest first release of them all, for a
    Python without a wheel of the releases it broke on, or of those it works on, agrees;
    no first release when one Python is still broken on a release past it.
    A run of one Python: its Since as they are."""
    ran: dict[tuple[str, str, str], set[str]] = {}  # (family, axis, Python) -> releases
    for (family, i), square in summary.squares.items():
        column = summary.columns[i]
        if square.state != NOT_RUN:
            key = (family, split_axis(column.axis)[0], column.python)
            ran.setdefault(key, set()).add(column.label)
    checks: dict[tuple[str, str, str], list[Since]] = {}
    for item in summary.since:
        checks.setdefault((item.family, item.check, split_axis(item.axis)[0]), []).append(item)
    pythons = list(dict.fromkeys(c.python for c in summary.columns))
    out: list[tuple[Since, tuple[str, ...]]] = []
    for (family, _, axis), items in checks.items():
        broken = {split_axis(i.axis)[1]: set(i.broken) for i in items}
        varies = any(
            (broken.get(a, set()) - broken.get(b, set())) & ran.get((family, axis, b), set())
            for a in pythons
            for b in pythons
        )
        if varies:
            firsts = dict.fromkeys(i.first for i in items)
            out += [_one([i for i in items if i.first == f], f, True) for f in firsts]
        else:
            fixed = [i.first for i in items if i.first]
            first = _release_order(fixed)[-1] if fixed else ""
            # a Python still broken at its newest release, one at or past that first
            # release: the check is not fixed (another passes for lack of newer wheels)
            late = [b for i in items if not i.first for b in i.broken]
            if first and late and _release_order([first, *late])[-1] != first:
                first = ""
            out.append(_one(items, first, False))
    axes = list(dict.fromkeys(split_axis(c.axis)[0] for c in summary.columns))
    families = list(summary.families)
    return sorted(
        out, key=lambda o: (families.index(o[0].family), axes.index(split_axis(o[0].axis)[0]))
    )


def _one(items: list[Since], first: str, named: bool) -> tuple[Since, tuple[str, ...]]:
    """Several Pythons' Since of one check as one, and the Pythons to name."""
    if len(items) == 1 and not named:
        return items[0], ()
    broken = tuple(_release_order(list(dict.fromkeys(b for i in items for b in i.broken))))
    links = tuple(sorted({link for i in items for link in i.links}))
    releases = tuple(_release_order(list(dict.fromkeys(r for i in items for r in i.releases))))
    where = tuple(split_axis(i.axis)[1] for i in items) if named else ()
    head = items[0]
    return Since(head.family, head.check, head.axis, first, broken, links, releases), where
