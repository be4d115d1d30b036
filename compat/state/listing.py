"""The corpus as `matrix --list` prints it, remembered across runs (`.compat/listing/`).

Listing the cases means running every case module, and the case modules build their
models with onnx: a second to import before the first line is printed. The listing
depends only on files and options, so it is remembered under a key of everything it
reads — the options that select cases, the size and modification time of every file
under the case sources (case modules, drop-in folders, the config) and of the host code,
and the onnx release that generates the backend suite — and read back while none of
them changed. A run never reads it: it loads its corpus itself.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from compat.core.files import replace_text

#: the host code: a new onnx-compat may list the same sources otherwise
HOST = Path(__file__).resolve().parent.parent
#: remembered listings kept (the newest by modification time)
KEEP = 8


@dataclass(frozen=True)
class Listed:
    """One case as the plan lists it: its id and the checks it runs."""

    id: str
    checks: tuple[str, ...]


def _stats(root: Path) -> Iterable[str]:
    """`path size mtime` of every file under root (root itself when it is a file),
    skipping bytecode caches."""
    if root.is_file():
        stat = root.stat()
        yield f"{root} {stat.st_size} {stat.st_mtime_ns}"
        return
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        for name in sorted(files):
            path = Path(folder, name)
            stat = path.lstat()  # a link as itself: a dangling or looping one is no error
            link = f" -> {path.readlink()}" if path.is_symlink() else ""
            yield f"{path}{link} {stat.st_mode} {stat.st_size} {stat.st_mtime_ns}"


def listing_key(options: object, sources: Iterable[Path]) -> str:
    """The key of a listing: `options` (JSON-able) and the state of every file under
    `sources` and under the host code, and the onnx release installed."""
    digest = hashlib.sha256(json.dumps(options, sort_keys=True, default=str).encode())
    with contextlib.suppress(metadata.PackageNotFoundError):
        digest.update(metadata.version("onnx").encode())
    for root in [HOST, *sources]:
        if root.exists():
            digest.update("\n".join(_stats(root.resolve())).encode())
    return digest.hexdigest()[:32]


def recall_listing(state_dir: Path, key: str) -> list[Listed] | None:
    """The listing remembered under `key`, or None (never listed, or unreadable)."""
    try:
        rows = json.loads((state_dir / "listing" / f"{key}.json").read_text())
        return [Listed(str(row[0]), tuple(str(c) for c in row[1])) for row in rows]
    except (OSError, ValueError, TypeError, IndexError):
        return None


def remember_listing(state_dir: Path, key: str, rows: list[Listed]) -> None:
    """Keeps the listing under `key` and the KEEP newest others; a state directory that
    cannot be written keeps nothing (the next listing loads the corpus again)."""
    folder = state_dir / "listing"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        replace_text(folder / f"{key}.json", json.dumps([[r.id, list(r.checks)] for r in rows]))
        kept = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in kept[KEEP:]:
            old.unlink(missing_ok=True)
    except OSError:
        return
