"""The result cache: a check is not re-run while nothing it depends on changed.

A result is keyed by what it depends on: the installed versions of the packages
its check exercises (`depends` in the table of checks: onnx, numpy and protobuf for
onnx-only checks, onnxruntime and numpy for onnxruntime-only ones, all of them
otherwise), Python and the platform, the case's content hash (model bytes, arrays,
expectations) and the hash of the in-cell code (custom check files included). So a
result computed in one cell serves every other cell with the same versions of
those packages, in this run and later ones. A project's command is keyed by all it
can depend on that the tool knows: every distribution installed in the cell and its
version, Python and the platform, the command (the case's content), the bytes of the
project's tree and the environment variables it sees (compat/execute/tree.py
`context`), and the in-cell code. The cache lives in `.compat/cache/`,
one JSON-lines file per version of the in-cell code (a new version's keys are all
new: the files of all but the newest KEEP_GENERATIONS versions are deleted), and is
safe to delete at any time. Timeouts and crashes are
never cached: a timeout depends on the machine, and a crash can be nondeterministic
(a race, memory, a signal), so both run again on the next run. A torn last line (a
write cut short) is skipped: the results before it are still served, and the next
write starts on a new line. So is any line that is not a well-formed entry (garbled,
another shape, an unknown outcome), and a folder where the file should be: each is
counted in one line on stderr, dropped from the file, and its result computed again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import cast

from filelock import FileLock

from compat.cell.checks import BY_NAME, EVERYTHING, ONNX_ONLY, PARTS
from compat.cell.protocol import RawRecord
from compat.core.files import warn
from compat.core.outcomes import CellRecord, Outcome
from compat.corpus.discover import CaseFiles
from compat.state import cellcode

UNCACHED = frozenset({"timeout", "crash"})
#: Cache files kept, this code's included: switching between two onnx-compat
#: versions (a bench against a baseline, a bisect of this tool) keeps both warm.
KEEP_GENERATIONS = 2
#: A cache opened only to write is compacted past this many lines (about four
#: default runs' worth of --fresh results).
WRITE_ONLY_COMPACTION = 60_000


def code_hash(files: CaseFiles) -> str:
    """The in-cell code's hash, with the case's custom check files."""
    digest = hashlib.sha256(cellcode.code_hash().encode())
    for custom in files.case.custom_checks:
        digest.update(Path(custom.file).read_bytes())
    return digest.hexdigest()


def depends_on(files: CaseFiles, check: str) -> tuple[str, ...]:
    """The packages whose versions a check's (or a part's) result on this case depends on."""
    case = files.case
    if case.oracle == "onnxruntime":  # the oracle itself is a run of onnxruntime
        return EVERYTHING
    for custom in case.custom_checks:
        if custom.name == check:
            return ONNX_ONLY if custom.package == "onnx" else EVERYTHING
    return PARTS[check].depends if check in PARTS else BY_NAME[check].depends


def result_key(
    record: CellRecord,
    files: CaseFiles,
    check: str,
    share: bool = True,
    code: str = "",
    project: str = "",
) -> str:
    """The key of one result; `share=False` keys it to its cell as well (every cell
    computes everything itself: the reference the sharing is tested against). `code`:
    the case's `code_hash`, when the caller computed it once for many keys. `project`:
    for a check of the project (a command), what it depends on outside the cell (the
    tree's bytes and the environment: compat/execute/tree.py `context`)."""
    if check in BY_NAME and BY_NAME[check].project:
        # everything installed: the project's wheel, its test dependencies, pytest itself
        installed = sorted((record.installed or record.packages).items())
        versions = [f"{name}=={version}" for name, version in installed]
        versions.append(f"project={project}")
    else:
        # a custom check is code that may import anything installed (a downstream package
        # of an extra axis or --with): the cell's other recorded packages key its result too
        custom = any(c.name == check for c in files.case.custom_checks)
        extras = sorted(n for n in record.packages if n not in EVERYTHING) if custom else []
        versions = [
            *(f"{name}=={record.packages.get(name)}" for name in depends_on(files, check)),
            *(f"{name}=={record.packages[name]}" for name in extras),
        ]
    identity = [
        *versions,
        f"python=={record.python}",
        f"platform={record.platform}",
        f"case={files.content}",
        f"code={code or code_hash(files)}",
        f"check={check}",
        "" if share else f"cell={record.id}",
    ]
    return hashlib.sha256("\n".join(identity).encode()).hexdigest()


#: The outcomes a cached record may hold: a worker's, or a rerun's judgement (flaky).
CACHED = frozenset(o.value for o in Outcome) - UNCACHED
#: What every cached record holds, and the types the host reads them as.
FIELDS: dict[str, type | tuple[type, ...]] = {
    "case": str,
    "check": str,
    "outcome": str,
    "phase": str,
    "detail": str,
    "seconds": (int, float),
}


def well_formed(record: object) -> bool:
    """True for a record the host can serve: an object with every field of the right type
    and a known outcome (anything else in the file is damage, and computed again)."""
    return (
        isinstance(record, dict)
        and all(
            isinstance(record.get(name), kind) and not isinstance(record.get(name), bool)
            for name, kind in FIELDS.items()
        )
        and record["outcome"] in CACHED
        and isinstance(record.get("traceback", ""), str)
    )


def parse_line(line: str) -> tuple[str, RawRecord] | None:
    """A line's key and record; None when the line is not a whole, well-formed entry."""
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("key"), str):
        return None
    record = entry.get("record")
    if not isinstance(record, dict) or not well_formed(record):
        return None
    return entry["key"], cast(RawRecord, record)


class ResultCache:
    """Raw worker records by key, for every cell; appends as results arrive, the last
    line of a key wins (`--fresh` replaces what it recomputes). A line that is not a
    well-formed entry (torn, garbled, of another shape) is ignored and counted, and the
    file rewritten without it: those results are computed again."""

    def __init__(self, directory: Path, read: bool = True) -> None:
        """`read=False`: only to write (`--fresh` replaces every result it touches), the
        file is not parsed unless it has grown past WRITE_ONLY_COMPACTION lines."""
        self.path = directory / f"results-{cellcode.code_hash()[:16]}.jsonl"
        self.ignored = 0  # malformed entries found (a folder where the file should be: one)
        self.unwritable = False
        _prune(directory, self.path)
        if self.path.exists() and not self.path.is_file():
            self.ignored += 1
            _remove(self.path)
        self.entries: dict[str, RawRecord] = {}
        if not read:
            if self._count_lines() > WRITE_ONLY_COMPACTION:
                self._compact()
            self._report()
            return
        lines = 0
        for line in self._lines():
            lines += 1
            parsed = parse_line(line)
            if parsed is None:
                self.ignored += 1  # a torn line from an interrupted run, or damage: reruns
            else:
                self.entries[parsed[0]] = parsed[1]
        if self.ignored or lines > 2 * len(self.entries) + 10_000:
            self._compact()
        self._report()

    def _report(self) -> None:
        if self.ignored:
            warn(
                f"ignored {self.ignored} malformed cache entries in {self.path}: "
                "their results are computed again"
            )

    def _lines(self) -> list[str]:
        """The file's lines; none when it is missing or unreadable (that counts as one)."""
        try:
            return self.path.read_text(encoding="utf-8", errors="replace").splitlines()
        except FileNotFoundError:
            return []
        except OSError:
            self.ignored += 1
            return []

    def _count_lines(self) -> int:
        try:
            with self.path.open("rb") as f:
                return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
        except FileNotFoundError:
            return 0
        except OSError:
            self.ignored += 1
            return 0

    def get(self, key: str) -> RawRecord | None:
        return self.entries.get(key)

    def put(self, items: list[tuple[str, RawRecord]]) -> None:
        fresh = [
            (k, r) for k, r in items if r["outcome"] not in UNCACHED and not r.get("retry")
        ]  # not a run that crashed or was stopped: it is computed again next time
        if not fresh:
            return
        lines = "".join(
            json.dumps({"key": key, "record": record}, sort_keys=True) + "\n"
            for key, record in fresh
        )
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with FileLock(self.path.with_name(self.path.name + ".lock")):  # runs sharing a cache
                torn = not self._ends_cleanly()
                with self.path.open("a") as f:
                    # never glue a fresh line onto the fragment an interrupted write left
                    f.write(("\n" if torn else "") + lines)
        except OSError as exc:  # the run's results stand; only the next run recomputes them
            if not self.unwritable:
                warn(f"results not cached: cannot write {self.path} ({exc.strerror or exc})")
            self.unwritable = True
        self.entries.update(fresh)

    def _compact(self) -> None:
        """Rewrites the file with one well-formed line per key (after replaced or
        malformed lines)."""
        try:
            with FileLock(self.path.with_name(self.path.name + ".lock")):
                latest: dict[
                    str, RawRecord
                ] = {}  # again under the lock: another run may have appended
                for line in self.path.read_text(encoding="utf-8", errors="replace").splitlines():
                    parsed = parse_line(line)
                    if parsed is not None:
                        latest[parsed[0]] = parsed[1]
                lines = "".join(
                    json.dumps({"key": key, "record": record}, sort_keys=True) + "\n"
                    for key, record in latest.items()
                )
                scratch = self.path.with_name(self.path.name + ".compacting")
                scratch.write_text(lines)
                scratch.replace(self.path)
        except OSError:  # unreadable or unwritable: served as read, compacted another time
            return
        self.entries = latest

    def _ends_cleanly(self) -> bool:
        """True when the file is missing, empty or ends with a newline."""
        try:
            with self.path.open("rb") as f:
                f.seek(-1, os.SEEK_END)
                return f.read(1) == b"\n"
        except OSError:  # missing, or empty (no byte to seek back to)
            return True


def _prune(directory: Path, current: Path) -> None:
    """Deletes the result files of older in-cell code: no key of theirs can match."""
    if not directory.is_dir():
        return
    others = [p for p in directory.glob("*.jsonl") if p != current]
    others.sort(key=_mtime, reverse=True)
    for path in others[KEEP_GENERATIONS - 1 :]:
        _remove(path)
        _remove(path.with_name(path.name + ".lock"))


def _mtime(path: Path) -> float:
    try:
        return path.lstat().st_mtime
    except OSError:
        return 0.0


def _remove(path: Path) -> None:
    """Deletes a file, or a folder found where a file should be; quietly when it cannot."""
    with contextlib.suppress(OSError):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
