"""What a new release gained and lost: its cell set against the cell of the release
before it on the same axis, in the same report (changes.md's release sections).

A result "works" when it passes (or passes against a known bug: xpass) and is "broken"
when it fails in any way, a known upstream bug's failure (xfail) included: a release
that starts to hit a known bug has lost that case, whatever the gate says. A result
skipped, flaky or on one side only is neither. The comparison is of results the two
cells both have, by case and check; a run of the new releases alone (`matrix
--new-releases`) has no release before them to compare with.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from compat.core.outcomes import CheckResult, Outcome
from compat.core.report import Report


def _version(text: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:  # a report holds exact releases; an odd one sorts first
        return Version("0")


WORKS = frozenset({Outcome.PASS, Outcome.XPASS})
BROKEN = frozenset(
    {
        Outcome.FAIL,
        Outcome.ERROR,
        Outcome.CRASH,
        Outcome.TIMEOUT,
        Outcome.XFAIL,
        Outcome.UNSUPPORTED,
    }
)


@dataclass(frozen=True)
class Moved:
    """One result that works on one release and is broken on the other."""

    case: str
    check: str
    before: CheckResult
    after: CheckResult


@dataclass(frozen=True)
class ReleaseDiff:
    """A new release's cell against the cell of the release before it."""

    release: str  # "onnxruntime 1.25.0"
    previous: str  # "onnxruntime 1.24.4"
    cell: str
    previous_cell: str
    lost: tuple[Moved, ...]
    gained: tuple[Moved, ...]
    compared: int  # results both cells have


def _cells_of(report: Report, release: str) -> tuple[str, list[str]]:
    """(the axis the release is on, that axis's cells in order), ("", []) when none."""
    package, _, version = release.partition(" ")
    cells = {c.id: c for c in report.cells}
    for axis, ids in report.axes.items():
        if axis.split("@", 1)[0] == package and any(
            cells[i].version(package) == version for i in ids
        ):
            return package, list(ids)
    return "", []


def release_diff(report: Report, release: str, new: tuple[str, ...]) -> ReleaseDiff | None:
    """`release` set against the newest older release of its axis that is not new
    itself; None when the report has none (a run of the new releases alone)."""
    package, ids = _cells_of(report, release)
    if not ids:
        return None
    cells = {c.id: c for c in report.cells}
    version = release.partition(" ")[2]
    mine = next(i for i in ids if cells[i].version(package) == version)
    older = [
        i
        for i in ids
        if f"{package} {cells[i].version(package)}" not in new
        and _version(cells[i].version(package)) < _version(version)
    ]
    if not older:
        return None
    previous = max(older, key=lambda i: _version(cells[i].version(package)))
    before = {(r.case, r.check): r for r in report.results if r.cell == previous}
    after = {(r.case, r.check): r for r in report.results if r.cell == mine}
    lost = []
    gained = []
    for key in sorted(before.keys() & after.keys()):
        was = before[key]
        now = after[key]
        if was.outcome in WORKS and now.outcome in BROKEN:
            lost.append(Moved(*key, was, now))
        elif was.outcome in BROKEN and now.outcome in WORKS:
            gained.append(Moved(*key, was, now))
    return ReleaseDiff(
        release,
        f"{package} {cells[previous].version(package)}",
        mine,
        previous,
        tuple(lost),
        tuple(gained),
        len(before.keys() & after.keys()),
    )
