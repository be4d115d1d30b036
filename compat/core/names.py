"""Names read from data that reach a path: a family (`families/FAMILY.md`), a case, a
cell (`logs/CELL/`), a log. They come from files a user may have been handed (a
matrix.json, a CI shard, a config, a model's file name), so each is checked where it
is read, by this one rule: a name is one path component (no separator, no `..`, no
leading dot, no control character) and a log is `logs/CELL/NAME` of such components.
What the tool then writes from them lies inside the folder it was told to write."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

#: Characters a name never holds: separators, NUL and the other control characters.
_UNSAFE = re.compile(r"[/\\\x00-\x1f\x7f]")
LONGEST = 200


def component(value: object, what: str) -> str:
    """`value` when it can name a file inside a folder, else ValueError naming it."""
    if (
        not isinstance(value, str)
        or not value
        or value.startswith(".")
        or _UNSAFE.search(value)
        or len(value) > LONGEST
    ):
        raise ValueError(
            f"{what} {value!r} is no name a file can take (one path component: no '/', "
            "no leading '.', no control character)"
        )
    return value


def log_path(value: object, what: str = "log") -> str:
    """A result's log, relative to its reports folder: `logs/CELL/NAME` ("" for none)."""
    if value == "":
        return ""
    parts = PurePosixPath(value).parts if isinstance(value, str) else ()
    if len(parts) != 3 or parts[0] != "logs" or str(PurePosixPath(*parts)) != value:
        raise ValueError(f"{what} {value!r} is not logs/CELL/NAME")
    for part in parts[1:]:
        component(part, what)
    return value


def inside(path: Path, folder: Path) -> Path:
    """`path` when it (its links resolved) lies inside `folder`, else ValueError."""
    resolved = path.resolve()
    if not resolved.is_relative_to(folder.resolve()):
        raise ValueError(f"{path} leads outside {folder} (to {resolved})")
    return path
