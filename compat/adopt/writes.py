"""How `init` touches a project's files.

It opens regular files only: a FIFO named like a file it reads would block it, opening a
device can act on it, and a file over MAX_BYTES is no source a project keeps. It writes
no file through a symlink, nor inside a linked folder: the link's target may lie outside
the project, and init did not make it. And it replaces a file whole: the new content is
written beside it under a temporary name and renamed over it, so a refused or failed
write leaves the old file as it was, never half of the new one.
"""

from __future__ import annotations

import os
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path

from compat.core.errors import UsageError

#: the largest file init reads: its own files, the project's configuration, test files
MAX_BYTES = 8 * 2**20

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def shown(value: str) -> str:
    """`value` as a one-line message shows it: as a Python literal when it holds a
    control character or a byte that is not UTF-8 (a newline would break the line)."""
    if any(ord(c) < 32 or ord(c) == 127 or 0xD800 <= ord(c) <= 0xDFFF for c in value):
        return repr(value)
    return value


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "no regular file")


def read_bytes(path: Path, limit: int = MAX_BYTES) -> bytes | None:
    """The bytes of a regular file (a link to one is read), or None when there is none
    to read: absent, no regular file (never opened), larger than `limit`, unreadable."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return None
        # O_NONBLOCK: a FIFO swapped in since the stat does not block the open
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    with os.fdopen(fd, "rb") as f:
        status = os.fstat(f.fileno())
        if not stat.S_ISREG(status.st_mode) or status.st_size > limit:
            return None
        try:
            data = f.read(limit + 1)
        except OSError:
            return None
    return data if len(data) <= limit else None


def read_existing(project: Path, name: Path | str) -> bytes:
    """The bytes of a file init extends (b"" when there is none, a dangling link too);
    a one-line error naming it when it is no regular file, too large or unreadable."""
    path = project / name
    shown_name = Path(name).as_posix()
    try:
        status = path.stat()  # a link is followed to read; writing through it is refused
    except FileNotFoundError:
        return b""
    except OSError as exc:
        raise UsageError(
            f"{shown_name}: cannot read it ({exc.strerror}): fix or remove it, then run init again"
        ) from None
    if not stat.S_ISREG(status.st_mode):
        raise UsageError(
            f"{shown_name} is {_kind(status.st_mode)}, not a file: init reads and "
            "extends a file of that name: move it away, then run init again"
        )
    data = read_bytes(path)
    if data is None:
        why = f"over {MAX_BYTES // 2**20} MB" if status.st_size > MAX_BYTES else "unreadable"
        raise UsageError(f"{shown_name}: {why}, init cannot read it: fix or remove it")
    return data


def read_text(project: Path, name: str) -> str:
    """The text of a file init extends, as `read_existing` reads it; a one-line error
    when it is not UTF-8 (TOML is, and Python source is read as UTF-8)."""
    data = read_existing(project, name)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"{name} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
            f"{exc.start}): save it as UTF-8, then run init again"
        ) from None


@dataclass(frozen=True)
class Edit:
    """A file init writes: its path inside the project, its whole new content (None:
    nothing to write) and the lines init says of it."""

    path: Path
    data: bytes | None
    said: list[str] = field(default_factory=list)


def check_writable(project: Path, relative: Path) -> None:
    """Refuses, in one line naming the file and the fix, a write through a symlink or
    into a linked folder, onto what is no regular file, onto a read-only or immutable
    file, or into a folder that cannot be written."""
    here = project
    folder = project
    for i, part in enumerate(relative.parts):
        here = here / part
        name = Path(*relative.parts[: i + 1]).as_posix()
        last = i == len(relative.parts) - 1
        what = "a file" if last else "a folder"
        if here.is_symlink():
            raise UsageError(
                f"{name} is a symlink to {here.readlink()}; init writes no file "
                f"through a link: replace it with {what} or remove it"
            )
        try:
            mode = here.lstat().st_mode
        except FileNotFoundError:
            break  # init makes it, and the folders under it
        if not last and not stat.S_ISDIR(mode):
            raise UsageError(
                f"{name} is {_kind(mode)}, not a folder: init writes {relative} "
                "inside it: move it away"
            )
        if last and not stat.S_ISREG(mode):
            raise UsageError(
                f"{name} is {_kind(mode)}, not a file: init writes a file of that "
                "name: move it away"
            )
        if last and not os.access(here, os.W_OK):
            raise UsageError(
                f"{name} is read-only or immutable: init extends it: make it "
                "writable (chmod u+w, chattr -i), or add its part by hand"
            )
        folder = here if not last else folder
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(
            f"{folder}: a folder init cannot write in (read-only or immutable), and it "
            f"writes {relative.as_posix()} there: make it writable (chmod u+w, chattr -i)"
        )


def apply(project: Path, edit: Edit) -> None:
    """Writes the edit's file whole, checked again first: its content goes to a new
    temporary file beside it, which is renamed over it (a link in its place would be
    replaced, never followed); an existing file keeps its permissions and owner."""
    if edit.data is None:
        return
    check_writable(project, edit.path)
    path = project / edit.path
    temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        old = path.stat() if path.exists() else None
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        with os.fdopen(os.open(temp, flags, 0o666), "wb") as f:
            f.write(edit.data)
            if old is not None:
                os.fchmod(f.fileno(), stat.S_IMODE(old.st_mode))
                if os.geteuid() == 0:  # `sudo init` leaves the user's file the user's
                    os.fchown(f.fileno(), old.st_uid, old.st_gid)
        temp.replace(path)
    except OSError as exc:
        temp.unlink(missing_ok=True)
        raise UsageError(
            f"{edit.path}: cannot write it ({exc.strerror}): make it and its "
            "folder writable, then run init again"
        ) from None
