"""Each cell's own copy of the project's tree: where the project's commands run.

A suite that writes into its tree (`tests/temp/*.py`, a generated module) must not meet
the cell that runs beside it, nor write the user's checkout. So a command runs in a
copy of the project's tree (compat/execute/project.py `tree_files`: git's tracked and
untracked-but-not-ignored files, else the folder minus outputs and caches), one per
cell and command, kept under the state directory (`trees/PROJECT-HASH/CELL/CASE/`)
and brought up to date before each run, as rsync would: a file whose size or
modification time differs from the project's is copied again (a real copy: a test that
edits a tracked file in place edits the copy), one the last run left that is not part
of the tree is removed, and the cell's own caches (KEPT: `.pytest_cache`,
`__pycache__`, ...) stay, as they would in a checkout. A lock beside each copy keeps
two runs sharing a state directory out of each other's copy.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from filelock import FileLock

from compat.cell.command_key import keyed_environment
from compat.execute.project import files_digest, tree_files

#: What a cell's copy keeps from one run to the next though it is not part of the tree:
#: the caches its own runs made (pytest's last-failed list, bytecode, hypothesis' database)
KEPT = frozenset({".pytest_cache", "__pycache__", ".mypy_cache", ".ruff_cache", ".hypothesis"})


def files_of(root: Path, leave: Iterable[Path] = ()) -> list[str]:
    """The project's tree (`tree_files`) without what a run writes inside it (`leave`:
    the state directory, the report directory, the committed results, when they are
    under `root`)."""
    inside = []
    for path in leave:
        with contextlib.suppress(ValueError):
            inside.append(path.resolve().relative_to(root.resolve()).as_posix())
    return [n for n in tree_files(root) if not any(n == p or n.startswith(p + "/") for p in inside)]


def context(root: Path, leave: Iterable[Path] = ()) -> str:
    """What a command's result depends on besides its cell: the bytes of every file of
    the project's tree (not the commit: a commit that changes no file changes no result)
    and the environment variables the command sees (compat/cell/command.py
    `keyed_environment`)."""
    digest = hashlib.sha256(files_digest(root, files_of(root, leave)).encode())
    digest.update(json.dumps(keyed_environment(os.environ), sort_keys=True).encode())
    return digest.hexdigest()


def home(trees: Path, root: Path) -> Path:
    """The folder of one project's copies: its name and a hash of where it is."""
    resolved = root.resolve()
    return trees / f"{resolved.name}-{hashlib.sha256(str(resolved).encode()).hexdigest()[:8]}"


def sync(root: Path, copy: Path, leave: Iterable[Path] = ()) -> None:
    """Brings `copy` up to date with the project's tree at `root` (see the module)."""
    names = files_of(root, leave)
    copy.mkdir(parents=True, exist_ok=True)
    # what the last run left goes first: a folder it replaced by a symlink into the
    # checkout must never be written through
    _prune(copy, "", set(names), {p.as_posix() for n in names for p in Path(n).parents})
    for name in names:
        _copy_file(root / name, copy / name)


def _copy_file(source: Path, target: Path) -> None:
    """`source` to `target` unless both have the same kind, size and modification time."""
    try:
        have = source.lstat()
    except OSError:  # listed by git but deleted from the checkout: not part of the tree
        return
    with contextlib.suppress(OSError):
        now = target.lstat()
        same_kind = stat.S_IFMT(now.st_mode) == stat.S_IFMT(have.st_mode)
        if same_kind and (now.st_size, now.st_mtime_ns) == (have.st_size, have.st_mtime_ns):
            return
    _remove(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    if stat.S_ISDIR(have.st_mode):  # a git submodule: listed as one path, copied whole
        shutil.copytree(source, target, symlinks=True)
    elif stat.S_ISREG(have.st_mode) or stat.S_ISLNK(have.st_mode):
        # a symlink stays a symlink (as git checks it out); a file is a copy of its own
        shutil.copy2(source, target, follow_symlinks=False)


def _prune(copy: Path, prefix: str, wanted: set[str], folders: set[str]) -> None:
    """Removes what is neither a file of the tree, a folder holding one, nor KEPT."""
    try:
        entries = list(os.scandir(copy / prefix if prefix else copy))
    except OSError:
        return
    for entry in entries:
        name = f"{prefix}{entry.name}"
        if name in wanted:
            continue
        if entry.is_dir(follow_symlinks=False):
            if entry.name in KEPT:
                continue
            if name in folders:
                _prune(copy, name + "/", wanted, folders)
                continue
        _remove(Path(entry.path))


def _remove(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        if path.is_dir() and not path.is_symlink():
            _writable(path)
            shutil.rmtree(path)
        else:
            path.unlink()


def _writable(folder: Path) -> None:
    """A test may leave a read-only folder behind: make it removable."""
    for directory, dirs, _ in os.walk(folder):
        for name in dirs:
            with contextlib.suppress(OSError):
                Path(directory, name).chmod(0o755)
    with contextlib.suppress(OSError):
        folder.chmod(0o755)


@contextlib.contextmanager
def checked_out(copies: list[tuple[Path, Path]], leave: Iterable[Path] = ()) -> Iterator[None]:
    """Each (project root, copy) pair synced and locked while the block runs."""
    left = tuple(leave)
    with contextlib.ExitStack() as stack:
        for root, copy in sorted(set(copies), key=lambda pair: str(pair[1])):
            copy.parent.mkdir(parents=True, exist_ok=True)
            stack.enter_context(FileLock(copy.with_name(copy.name + ".lock")))
            sync(root, copy, left)
        yield
