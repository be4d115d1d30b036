"""What changed since a baseline: two reports matched result by result, the differences
typed, and carried inside the report so that matrix.json records them and every
renderer shows them first.

The API, for every command that takes `--baseline` and for anything built on it (a
scheduled watch of new releases):

- `compare(baseline, report, source) -> Changes`: the comparison. Results are matched by
  case, check and the versions the check exercises (compat/core/result_keys.py: onnx's
  release for an onnx check, onnxruntime's for an onnxruntime check, both for the
  others; with every other exact pin of the cell, and its Python when either run has
  several): an onnx check on a new onnxruntime release's cell is the same result as
  before, not a new one.
- `attach(report, changes) -> Report`: the report with the comparison in `run`
  (`run["baseline"]`: what was given and what it resolved to; `run["changes"]`: the
  rest), its digest moved, so renderings made without it are not taken for its own.
- `changes_of(report) -> Changes | None`: the comparison a report carries.

A result in both runs is a `NEW_FAILURE` (unexpected now, not in the baseline),
`FIXED` (the other way), `CHANGED` (unexpected in both, its message differs by more
than an address, a temporary path or a duration) or no change; a test command failing
in both is compared by the tests its runner named (compat/core/result_diff.py). A
result on one side only is no change of the code but of the plan: it is counted
(`new_results`, `gone_results`), and listed only when it is unexpected, as `NEW`
(attributed to the new release it runs on, if any: `release`) or `GONE`. A broken cell
is a result of its own (case and check ""). `Changes.gated` is what `--fail-on new`
fails on: every result unexpected now and not unexpected in the baseline.
"""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from compat.core.outcomes import CellRecord, CheckResult
from compat.core.report import Report
from compat.core.result_diff import few, said, steady, tests_moved
from compat.core.result_keys import Versions, keyed, several_pythons, unexpected


class Kind(enum.StrEnum):
    """How one result differs from the baseline's."""

    NEW_FAILURE = "new-failure"
    FIXED = "fixed"
    CHANGED = "changed"
    NEW = "new"  # unexpected, and the baseline has no such result
    GONE = "gone"  # unexpected in the baseline, and this run has no such result


#: Kinds in the order every renderer lists them, with their heading.
HEADINGS = {
    Kind.NEW_FAILURE: "new failures",
    Kind.FIXED: "fixed",
    Kind.CHANGED: "changed messages",
    Kind.NEW: "unexpected on what the baseline did not run",
    Kind.GONE: "unexpected in the baseline, not run now",
}


@dataclass(frozen=True)
class Source:
    """The baseline: the `--baseline` value, a short name for "since …", and what it
    resolved to (a commit, a file and its sha256), when its run started, and the
    project's commit that run was made of."""

    given: str
    label: str
    identity: str = ""
    started: str = ""
    commit: str = ""

    def serialize(self) -> dict[str, str]:
        return {
            "given": self.given,
            "label": self.label,
            "identity": self.identity,
            "started": self.started,
            "commit": self.commit,
        }


@dataclass(frozen=True)
class Change:
    """One result that differs: where (the cells of this run it is the result of, the one
    it is read from first; the baseline's for `GONE`), what it said before and what it
    says now (`outcome@phase: detail`, "" for none)."""

    kind: Kind
    case: str
    check: str
    cells: tuple[str, ...]
    versions: Versions
    before: str = ""
    after: str = ""
    release: str = ""  # the new release it runs on ("onnxruntime 1.25.0"), if any

    def serialize(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "case": self.case,
            "check": self.check,
            "cells": list(self.cells),
            "versions": [list(pair) for pair in self.versions],
            "before": self.before,
            "after": self.after,
            "release": self.release,
        }

    @property
    def cell(self) -> str:
        """The cell it is read from."""
        return self.cells[0]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Change:
        return cls(
            kind=Kind(data["kind"]),
            case=str(data["case"]),
            check=str(data["check"]),
            cells=tuple(str(c) for c in data["cells"]),
            versions=tuple((str(n), str(v)) for n, v in data["versions"]),
            before=str(data.get("before", "")),
            after=str(data.get("after", "")),
            release=str(data.get("release", "")),
        )


@dataclass(frozen=True)
class Changes:
    """A run set against its baseline."""

    source: Source
    changes: tuple[Change, ...] = ()
    new_releases: tuple[str, ...] = ()  # "onnxruntime 1.25.0", in the run's axis order
    gone_releases: tuple[str, ...] = ()
    new_results: int = 0  # results the baseline has no counterpart of
    gone_results: int = 0

    def of(self, kind: Kind) -> list[Change]:
        return [c for c in self.changes if c.kind is kind]

    @property
    def gated(self) -> list[Change]:
        """Unexpected now and not unexpected in the baseline: what `--fail-on new` fails on."""
        return [c for c in self.changes if c.kind in (Kind.NEW_FAILURE, Kind.NEW)]

    def line(self) -> str:
        """`since v1.4.0: 3 new failures, 12 fixed, 1 changed, 2 new releases`."""
        counts = {kind: len(self.of(kind)) for kind in Kind}
        failures = counts[Kind.NEW_FAILURE]
        parts = [
            f"{failures} new failure{'s' * (failures != 1)}",
            f"{counts[Kind.FIXED]} fixed",
            f"{counts[Kind.CHANGED]} changed",
        ]
        released = sum(1 for c in self.of(Kind.NEW) if c.release)
        if self.new_releases:
            n = len(self.new_releases)
            failing = f" ({released} unexpected there)" if released else ""
            parts.append(f"{n} new release{'s' * (n != 1)}{failing}")
        if counts[Kind.NEW] - released:
            parts.append(f"{counts[Kind.NEW] - released} unexpected on new cases or checks")
        if self.gone_releases:
            n = len(self.gone_releases)
            parts.append(f"{n} release{'s' * (n != 1)} gone")
        return f"since {self.source.label}: " + ", ".join(parts)

    def serialize(self) -> dict[str, Any]:
        return {
            "changes": [c.serialize() for c in self.changes],
            "new_releases": list(self.new_releases),
            "gone_releases": list(self.gone_releases),
            "new_results": self.new_results,
            "gone_results": self.gone_results,
        }


def _by_tests(
    added: list[str],
    removed: list[str],
    before: CheckResult | CellRecord,
    now: CheckResult | CellRecord,
) -> tuple[Kind, str, str] | None:
    """One more failing test is a new failure, one less (and none more) a fix; the same
    tests failing is no change, whatever else the runner's summary counts."""
    if added:
        return Kind.NEW_FAILURE, said(before), f"newly failing: {few(added)}; {said(now)}"
    if removed:
        return Kind.FIXED, said(before), f"no longer failing: {few(removed)}; {said(now)}"
    return None


def releases(report: Report) -> list[str]:
    """Every release on the report's axes, as `package version`, in axis order."""
    cells = {c.id: c for c in report.cells}
    found: dict[str, None] = {}
    for axis, ids in report.axes.items():
        package = axis.split("@", 1)[0]
        for cell_id in ids:
            found.setdefault(f"{package} {cells[cell_id].version(package)}")
    return list(found)


def _release(versions: Versions, new: Iterable[str]) -> str:
    pairs = {f"{name} {version}" for name, version in versions}
    return next((release for release in new if release in pairs), "")


def compare(baseline: Report, report: Report, source: Source) -> Changes:
    """`report` set against `baseline` (see the module's docstring)."""
    python = several_pythons(baseline) or several_pythons(report)
    before = keyed(baseline, python)
    now = keyed(report, python)
    ours = releases(report)
    theirs = releases(baseline)
    new = tuple(r for r in ours if r not in theirs)
    changes: list[Change] = []
    for key, (item, cell) in now.items():
        case, check, versions = key
        held = before.get(key)
        if held is None:
            if unexpected(item):
                release = _release(versions, new)
                changes.append(Change(Kind.NEW, *key[:2], cell, versions, "", said(item), release))
            continue
        was = unexpected(held[0])
        is_ = unexpected(item)
        moved = tests_moved(held[0], item) if was and is_ else None
        if moved is not None:  # a test command failing on both sides: by its tests
            change = _by_tests(*moved, held[0], item)
            if change is not None:
                changes.append(Change(change[0], case, check, cell, versions, *change[1:]))
            continue
        kind = (
            Kind.NEW_FAILURE
            if is_ and not was
            else Kind.FIXED
            if was and not is_
            else Kind.CHANGED
            if is_ and steady(said(held[0])) != steady(said(item))
            else None
        )
        if kind is not None:
            changes.append(Change(kind, case, check, cell, versions, said(held[0]), said(item)))
    for key, (item, cell) in before.items():
        if key not in now and unexpected(item):
            changes.append(Change(Kind.GONE, *key[:2], cell, key[2], said(item), ""))
    order = list(Kind)
    changes.sort(key=lambda c: (order.index(c.kind), c.case, c.check, c.versions))
    return Changes(
        source=source,
        changes=tuple(changes),
        new_releases=new,
        gone_releases=tuple(r for r in theirs if r not in ours),
        new_results=sum(1 for key in now if key not in before),
        gone_results=sum(1 for key in before if key not in now),
    )


def attach(report: Report, changes: Changes) -> Report:
    """The report carrying the comparison; its digest moves with it (the renderings of
    the report without it are not this report's)."""
    data = changes.serialize()
    run = {**report.run, "baseline": changes.source.serialize(), "changes": data}
    if run.get("digest"):
        text = json.dumps([run["digest"], run["baseline"], data], sort_keys=True)
        run["digest"] = hashlib.sha256(text.encode()).hexdigest()
    return replace(report, run=run)


def changes_of(report: Report) -> Changes | None:
    """The comparison `report` carries (read back from matrix.json), None without one;
    ValueError for a `run["changes"]` that is not one."""
    source = report.run.get("baseline")
    data = report.run.get("changes")
    if not isinstance(source, dict) or not isinstance(data, dict):
        return None
    try:
        return Changes(
            source=Source(
                **{
                    key: str(source.get(key, ""))
                    for key in ("given", "label", "identity", "started", "commit")
                }
            ),
            changes=tuple(Change.from_dict(c) for c in data["changes"]),
            new_releases=tuple(str(r) for r in data["new_releases"]),
            gone_releases=tuple(str(r) for r in data["gone_releases"]),
            new_results=int(data["new_results"]),
            gone_results=int(data["gone_results"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"run.changes is not a comparison ({type(exc).__name__}: {exc})") from None
