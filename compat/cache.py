"""The result cache: a check is not re-run while nothing it depends on changed.

A result is keyed by the cell's exact installed versions, the case's content
hash (model bytes, arrays, expectations) and the hash of the code that runs the
check (the worker and the modules it loads, custom check files included). The
cache lives in `.compat/cache/`, one JSON-lines file per cell, and is safe to
delete at any time. Timeouts and crashes are never cached: a timeout depends on
the machine, and a crash can be nondeterministic (a race, memory, a signal), so
both run again on the next run. A torn last line (a write cut short) is skipped:
the results before it are still served, and the next write starts on a new line.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from filelock import FileLock

from compat import cellcode
from compat.corpus import CaseFiles
from compat.outcomes import CellRecord

UNCACHED = frozenset({"timeout", "crash"})


def code_hash(files: CaseFiles) -> str:
    digest = hashlib.sha256(cellcode.code_hash().encode())
    for custom in files.case.custom_checks:
        digest.update(Path(custom.file).read_bytes())
    return digest.hexdigest()


def result_key(record: CellRecord, files: CaseFiles, check: str) -> str:
    identity = {
        "packages": record.packages,
        "python": record.python,
        "platform": record.platform,
        "case": files.content,
        "code": code_hash(files),
        "check": check,
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()


class ResultCache:
    """Raw worker records of one cell, by key; appends as results arrive."""

    def __init__(self, directory: Path, cell: str) -> None:
        self.path = directory / f"{cell}.jsonl"
        self.entries: dict[str, dict[str, Any]] = {}
        if self.path.exists():
            for line in self.path.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    entry = json.loads(line)
                    self.entries[entry["key"]] = entry["record"]
                except (ValueError, KeyError, TypeError):
                    continue  # a torn line from an interrupted run: that result reruns

    def get(self, key: str) -> dict[str, Any] | None:
        return self.entries.get(key)

    def put(self, items: list[tuple[str, dict[str, Any]]]) -> None:
        fresh = [(k, r) for k, r in items if r["outcome"] not in UNCACHED]
        if not fresh:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lines = "".join(
            json.dumps({"key": key, "record": record}, sort_keys=True) + "\n"
            for key, record in fresh
        )
        with FileLock(self.path.with_name(self.path.name + ".lock")):  # runs sharing a cache
            torn = not self._ends_cleanly()
            with self.path.open("a") as f:
                # never glue a fresh line onto the fragment an interrupted write left
                f.write(("\n" if torn else "") + lines)
        self.entries.update(fresh)

    def _ends_cleanly(self) -> bool:
        """True when the file is missing, empty or ends with a newline."""
        try:
            with self.path.open("rb") as f:
                f.seek(-1, os.SEEK_END)
                return f.read(1) == b"\n"
        except OSError:  # missing, or empty (no byte to seek back to)
            return True
