"""Damaged state: what the state directory holds (environments, staged code and cases, the
result cache, remembered runs) is checked when it is used, and what is found damaged is
said in one line and built again, never trusted and never a traceback."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path


def warn(message: str) -> None:
    """One line on stderr: what was found damaged and what is done about it."""
    print(f"onnx-compat: warning: {message}", file=sys.stderr, flush=True)


def replace_text(path: Path, text: str) -> None:
    """Writes `path` whole or not at all (a unique scratch name: runs share the directory),
    so an interrupted write never leaves a torn file to be found damaged later."""
    handle, scratch = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
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
