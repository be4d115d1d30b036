"""Remembered runs: a run whose inputs are all unchanged is answered from the report of
the last run with the same inputs, starting no cell process (`.compat/runs/`)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
from pathlib import Path
from typing import Protocol

from compat.core.files import warn
from compat.core.outcomes import CellRecord
from compat.core.report import CaseInfo, Report, read_json, write_json
from compat.corpus.discover import CaseFiles
from compat.plan.matrix import Plan
from compat.state import cellcode


class Judging(Protocol):
    """The settings that change verdicts (compat/execute/engine.py's Settings has them)."""

    @property
    def reruns(self) -> int: ...
    @property
    def share(self) -> bool: ...
    @property
    def tracebacks(self) -> bool: ...
    @property
    def timeout(self) -> float: ...


#: Reports of this many recent input sets are remembered.
KEEP_RUNS = 4


def inputs_digest(
    plan: Plan,
    files: list[CaseFiles],
    infos: list[CaseInfo],
    families: dict[str, str],
    records: dict[str, CellRecord],
    settings: Judging,
) -> str:
    """Everything a run's results depend on: the cells as installed, the cases' content and
    known failures, the in-cell code and custom checks, the settings that change verdicts.
    Equal digests, equal reports (timings aside)."""
    digest = hashlib.sha256(cellcode.code_hash().encode())
    for source in sorted(Path(__file__).parent.parent.rglob("*.py")):  # the host side too: a new
        digest.update(source.read_bytes())  # onnx-compat may key or judge results otherwise
    identity = {
        "axes": {name: [c.id for c in cells] for name, cells in plan.axes.items()},
        "cells": [records[c.id].serialize() for c in plan.cells],
        "cases": [[f.content, info.serialize()] for f, info in zip(files, infos, strict=True)],
        "families": families,
        "settings": [settings.reruns, settings.share, settings.tracebacks, settings.timeout],
    }
    digest.update(json.dumps(identity, sort_keys=True).encode())
    for path in sorted({c.file for f in files for c in f.case.custom_checks}):
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()


def recall(memo: Path) -> Report | None:
    """A stored report of the same inputs, unless it holds something unexpected: those
    run again (reruns tell flaky from real), never served as they were. One that cannot
    be read as a report of these inputs (damaged, another shape) is said, deleted and
    computed again."""
    try:
        report = read_json(memo)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        _malformed(memo, f"{type(exc).__name__}: {exc}")
        return None
    if report.run.get("digest") != memo.stem:
        _malformed(memo, "it is the report of other inputs")
        return None
    if report.unexpected or report.broken_cells:
        return None
    return report


def _malformed(memo: Path, why: str) -> None:
    warn(f"ignored 1 malformed remembered run {memo} ({why[:200]}): the run is computed again")
    with contextlib.suppress(OSError):
        if memo.is_dir() and not memo.is_symlink():
            shutil.rmtree(memo)
        else:
            memo.unlink(missing_ok=True)


def remember(report: Report, memo: Path) -> None:
    """Stores the report under its inputs' digest; keeps the few most recent."""
    try:
        write_json(report, memo)
    except OSError as exc:  # a folder in its place, a full disk: the run stands, unremembered
        warn(f"run not remembered: cannot write {memo} ({exc.strerror or exc})")
        return
    for old in sorted(memo.parent.glob("*.json"), key=_mtime)[:-KEEP_RUNS]:
        with contextlib.suppress(OSError):  # a few recent input sets are enough to switch back
            old.unlink(missing_ok=True)


def _mtime(path: Path) -> float:
    try:
        return path.lstat().st_mtime
    except OSError:
        return 0.0
