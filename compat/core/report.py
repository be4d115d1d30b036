"""The run's results as one record, and its JSON form (reports/matrix.json)."""

from __future__ import annotations

import gzip
import json
import weakref
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from compat.core.names import component, log_path
from compat.core.outcomes import CellRecord, CellState, CheckResult

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class CaseInfo:
    """What a report needs to know of a case, without the model itself."""

    id: str
    family: str
    description: str
    sha256: str
    checks: dict[str, str]  # check id -> the package axis it exercises
    known: tuple[dict[str, Any], ...] = ()
    tags: tuple[str, ...] = ()

    def serialize(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "family": self.family,
            "description": self.description,
            "sha256": self.sha256,
            # pairs, not an object: the file is written with sorted keys, the order matters
            "checks": [[check, axis] for check, axis in self.checks.items()],
            "known": list(self.known),
            "tags": list(self.tags),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CaseInfo:
        return cls(
            id=data["id"],
            family=data["family"],
            description=data["description"],
            sha256=data["sha256"],
            checks={check: axis for check, axis in data["checks"]},
            known=tuple(data.get("known", ())),
            tags=tuple(data.get("tags", ())),
        )


@dataclass(frozen=True)
class Report:
    """Everything a renderer needs; `run` holds metadata that never reaches tables."""

    cells: tuple[CellRecord, ...]
    cases: tuple[CaseInfo, ...]
    results: tuple[CheckResult, ...]
    axes: dict[str, tuple[str, ...]]  # axis name -> cell ids, in column order
    families: dict[str, str] = field(default_factory=dict)  # family -> one-line description
    run: dict[str, Any] = field(default_factory=dict)

    def serialize(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "run": self.run,
            "axes": {name: list(ids) for name, ids in self.axes.items()},
            "families": self.families,
            "cells": [c.serialize() for c in self.cells],
            "cases": [c.serialize() for c in self.cases],
            "results": [r.serialize() for r in self.results],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Report:
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            raise ValueError(f"schema_version {version!r} is not {SCHEMA_VERSION}")
        return cls(
            cells=tuple(CellRecord.from_dict(c) for c in data["cells"]),
            cases=tuple(CaseInfo.from_dict(c) for c in data["cases"]),
            results=tuple(CheckResult.from_dict(r) for r in data["results"]),
            axes={name: tuple(ids) for name, ids in data["axes"].items()},
            families=dict(data.get("families", {})),
            run=dict(data.get("run", {})),
        )

    @property
    def unexpected(self) -> list[CheckResult]:
        return [r for r in self.results if r.outcome.unexpected]

    @property
    def broken_cells(self) -> list[CellRecord]:
        """Cells that could not be built or imported; a release with no wheel for the
        cell's Python is not among them (a combination that does not exist)."""
        return [c for c in self.cells if c.state not in (CellState.READY, CellState.NO_WHEEL)]


def write_json(report: Report, path: Path) -> None:
    """Writes atomically, so a reader never sees half a report; `.gz` compresses."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    text = dumps(report)
    if path.suffix == ".gz":
        partial.write_bytes(gzip.compress(text.encode(), mtime=0))
    else:
        partial.write_text(text)
    partial.replace(path)


#: The text of the last report dumped: a run writes the same report twice (the
#: remembered run and matrix.json).
_dumped: tuple[weakref.ref[Report] | None, str] = (None, "")


def dumps(report: Report) -> str:
    """Indented, one result per line: diffs read well, and the C encoder does the bulk
    (an indented dump of 29,000 results is pure Python and takes seconds)."""
    global _dumped
    if _dumped[0] is not None and _dumped[0]() is report:
        return _dumped[1]
    text = _dumps(report)
    _dumped = (weakref.ref(report), text)
    return text


def _dumps(report: Report) -> str:
    data = report.serialize()
    results = data.pop("results")
    head = json.dumps(data, indent=1, sort_keys=True)
    lines = ",\n  ".join(json.dumps(r, sort_keys=True, ensure_ascii=False) for r in results)
    body = f"[\n  {lines}\n ]" if results else "[]"
    return head[:-2] + f',\n "results": {body}\n}}\n'


def read_json(path: Path) -> Report:
    """The report stored at `path`; ValueError, saying what is wrong, for a file that is
    not one (a crafted shard, a name that would lead a page or a log out of its folder)."""
    return parse_json(path.read_bytes())


def parse_json(data: bytes) -> Report:
    """The report in `data` (gzip-compressed or not, as `git show` gives a committed one);
    ValueError, saying what is wrong, as `read_json`."""
    try:
        text = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
        return checked(Report.from_dict(json.loads(text)))
    except (KeyError, TypeError, AttributeError, IndexError, EOFError, gzip.BadGzipFile) as exc:
        raise ValueError(f"{type(exc).__name__}: {exc}") from None


def checked(report: Report) -> Report:
    """`report` when every field holds its type and every name that reaches a path is
    one path component (compat/core/names.py), else ValueError naming the first not."""
    for record in (*report.cases, *report.cells, *report.results):
        _typed(record)
    for case in report.cases:
        component(case.id, "case id")
        component(case.family, f"case {case.id}'s family")
        for bug in case.known:
            if not all(_holds(key, value) for key, value in bug.items()):
                raise ValueError(f"case {case.id}: known failure {bug!r:.80} is not one")
    for cell in report.cells:
        component(cell.id, "cell id")
    cells = {c.id for c in report.cells}
    cases = {c.id for c in report.cases}
    for result in report.results:
        if result.cell not in cells or result.case not in cases:
            raise ValueError(
                f"a result of {result.case!r} on {result.cell!r}: no such case or cell"
            )
        log_path(result.log, f"{result.case} on {result.cell}: log")
    for name, ids in report.axes.items():
        if not isinstance(name, str) or not set(ids) <= cells:
            raise ValueError(f"axis {name!r}: names cells the report does not hold")
    if not all(isinstance(v, str) for item in report.families.items() for v in item):
        raise ValueError("families: each family's description is a string")
    return report


#: What a field's annotation asks of its value: the outer type, and each item's.
_TYPES: dict[str, tuple[type | tuple[type, ...], type | None]] = {
    "str": (str, None),
    "float": ((int, float), None),
    "bool": (bool, None),
    "dict[str, str]": (dict, str),
    "tuple[str, ...]": (tuple, str),
    "tuple[int, ...]": (tuple, int),
    "tuple[dict[str, Any], ...]": (tuple, dict),
}


#: The fields of a case's known failure that hold a list of strings; the others hold one.
_KNOWN_LISTS = ("checks", "outcomes", "phase", "raises")


def _holds(key: str, value: object) -> bool:
    """Whether a known failure's field holds what it does: a string, or strings."""
    if key not in _KNOWN_LISTS:
        return isinstance(value, str)
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


_Wanted = tuple[tuple[str, str, type | tuple[type, ...], type | None], ...]
_wanted_of: dict[type, _Wanted] = {}


def _wanted(kind: type) -> _Wanted:
    """(field, annotation, outer type, item type) of each field of a record class that
    `_TYPES` knows."""
    if kind not in _wanted_of:
        known = [(f.name, str(f.type)) for f in fields(kind) if str(f.type) in _TYPES]
        _wanted_of[kind] = tuple((name, note, *_TYPES[note]) for name, note in known)
    return _wanted_of[kind]


def _typed(record: Any) -> None:
    """Every field of a dataclass record holds what its annotation names (and each item
    of a `dict[str, str]` or a `tuple[str, ...]`, keys and values); an enum's
    constructor checked its own."""
    for name, annotation, outer, inner in _wanted(type(record)):
        value = getattr(record, name)
        items = [*value.keys(), *value.values()] if isinstance(value, dict) else value
        if not isinstance(value, outer) or (
            inner is not None and not all(isinstance(item, inner) for item in items)
        ):
            kind = type(record).__name__
            raise ValueError(f"{kind} field {name!r} is {value!r:.80}, not {annotation}")
