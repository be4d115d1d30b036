"""The code that runs inside cells, staged for them and started there.

A cell imports `compat.cell` from a staged copy (one folder per content hash,
under the state directory), never from the host's install: with a non-editable
install the host's site-packages would otherwise shadow the cell's own onnx.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from compat.cell import ROOT, files
from compat.core.files import move_in

#: Every file a cell executes, besides the case files themselves.
FILES = tuple(Path(ROOT) / name for name in files())


@functools.cache
def code_hash() -> str:
    return _hash(Path(ROOT))


def _hash(root: Path) -> str:
    """The hash of the in-cell files as they are under `root` (the host's or a staged copy)."""
    digest = hashlib.sha256()
    for path in FILES:
        relative = path.relative_to(ROOT)
        digest.update(relative.as_posix().encode() + b"\0")
        digest.update((root / relative).read_bytes())
    return digest.hexdigest()


def intact(target: Path) -> bool:
    """True when a staged copy still hashes as the code it was staged from (every file
    read again: 110 kB, under a millisecond)."""
    try:
        return _hash(target) == code_hash()
    except OSError:  # a file missing, or a folder where a file should be
        return False


def stage(directory: Path) -> Path:
    """Copies the in-cell files to `directory/HASH/` once; returns that PYTHONPATH root.
    A copy that no longer hashes as it should (a file garbled or deleted) is staged again."""
    target = directory / code_hash()[:16]
    if intact(target):
        return target
    directory.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".staging-", dir=directory))
    for path in FILES:
        copy = scratch / path.relative_to(ROOT)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, copy)
    said = f"the staged in-cell code in {target} differs from its content hash: staged again"
    move_in(scratch, target, lambda t: not intact(t), said)
    return target


@contextlib.contextmanager
def scratch_folder(where: Path) -> Iterator[Path]:
    """A fresh, empty temp folder for cell processes at `where`, removed on the way out,
    whatever happened to the processes that wrote into it."""
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    try:
        yield where
    finally:
        shutil.rmtree(where, ignore_errors=True)


def command(python: Path, *args: str) -> list[str]:
    """The command line that runs `python -m compat.cell ARGS` in a cell."""
    return [str(python), "-m", "compat.cell", *args]


def environ(code: Path, scratch: Path | None = None) -> dict[str, str]:
    """The cell process's environment: the staged code first on its path, no host venv.
    `scratch`: the process's temp folder (TMPDIR), which its starter removes when the
    process is done: what a check, a user's command or a killed worker leaves there goes
    with it."""
    env = dict(os.environ)
    if scratch is not None:
        env["TMPDIR"] = str(scratch)
    env.pop("VIRTUAL_ENV", None)
    env["PYTHONPATH"] = str(code)
    env["PYTHONNOUSERSITE"] = "1"
    # The environments and the staged code are ours: let each cell cache the bytecode
    # of what it imports there. Under PYTHONDONTWRITEBYTECODE (many CI and Docker
    # images set it) every worker would otherwise compile onnx, onnxruntime and numpy
    # from source again: 0.4 s of a 1.3 s worker on a 2-core machine.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env
