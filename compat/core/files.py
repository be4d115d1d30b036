"""Damaged state: what the state directory holds (environments, staged code and cases, the
result cache, remembered runs) is checked when it is used, and what is found damaged is
said in one line and built again, never trusted and never a traceback."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import sys
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path

from compat.core.names import inside


def warn(message: str) -> None:
    """One line on stderr: what was found damaged and what is done about it."""
    print(f"onnx-compat: warning: {message}", file=sys.stderr, flush=True)


def _current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


#: The process's umask, read once at import (reading it means setting it, which is not
#: safe once threads write files).
UMASK = _current_umask()


def _scratch(target: Path) -> tuple[int, str]:
    """A new file beside `target`, open for writing, with the mode `open` would give it
    (0666 less the umask: 0644 under umask 022), not mkstemp's private 0600, so a report
    served from a docs server is readable there."""
    handle, name = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    os.fchmod(handle, 0o666 & ~UMASK)
    return handle, name


def replace_text(path: Path, text: str) -> None:
    """Writes `path` whole or not at all (a unique scratch name: runs share the directory),
    so an interrupted write never leaves a torn file to be found damaged later."""
    handle, scratch = _scratch(path)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as f:
            f.write(text)
        Path(scratch).replace(path)
    except BaseException:
        Path(scratch).unlink(missing_ok=True)
        raise


def move_in(scratch: Path, target: Path, damaged: Callable[[Path], bool], said: str) -> None:
    """Puts a freshly written folder in place of `target`: one there that is `damaged`
    (and not fixed by another run meanwhile) is moved aside first, `said` on stderr; a
    good one another run put there a moment ago is kept and `scratch` dropped."""
    if (target.exists() or target.is_symlink()) and damaged(target):
        warn(said)
        trash = Path(tempfile.mkdtemp(prefix=".damaged-", dir=target.parent))
        with contextlib.suppress(OSError):  # another run moved it first
            target.rename(trash / target.name)
        shutil.rmtree(trash, ignore_errors=True)
    try:
        scratch.rename(target)
    except OSError:  # another run put the same content there a moment ago
        shutil.rmtree(scratch, ignore_errors=True)


def replace_all(folder: Path, texts: dict[str, str]) -> list[Path]:
    """Writes a set of files inside `folder` (paths relative to it) whole or not at all:
    each is written beside its target first, then all are moved in; when one cannot be
    (an immutable file, a folder in its place) those moved before are put back and the
    error is raised, so `folder` holds the earlier set or this one, never a mix. A file
    whose folder leads out of `folder` (a link) is refused (ValueError) before any is
    written."""
    targets = [folder / relative for relative in texts]
    for target in targets:
        target.parent.mkdir(parents=True, exist_ok=True)
        inside(target.parent, folder)
        if target.is_dir() and not target.is_symlink():
            raise IsADirectoryError(errno.EISDIR, "a folder is in its place", str(target))
    staged: list[tuple[Path, Path]] = []
    moved: list[tuple[Path, Path | None]] = []
    try:
        for target, text in zip(targets, texts.values(), strict=True):
            handle, name = _scratch(target)
            with os.fdopen(handle, "w", encoding="utf-8") as f:
                f.write(text)
            staged.append((Path(name), target))
        for scratch, target in staged:
            backup = None
            if target.exists() or target.is_symlink():
                backup = target.with_name(f".{target.name}.old-{uuid.uuid4().hex}")
                target.rename(backup)
            moved.append((target, backup))
            scratch.rename(target)
    except BaseException:
        for target, backup in reversed(moved):  # the earlier set, as it was
            with contextlib.suppress(OSError):
                if backup is not None:
                    backup.rename(target)
                elif target.exists():
                    target.unlink()
        for written, _ in staged:
            written.unlink(missing_ok=True)
        raise
    for _, backup in moved:
        if backup is not None:
            with contextlib.suppress(OSError):
                backup.unlink()
    return targets
