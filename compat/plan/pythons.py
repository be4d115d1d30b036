"""The Python axis: which CPython versions a run covers, and where their interpreters are.

`[tool.compat.python] versions = ["3.10", "3.12"]` (or a range, `">=3.10"`) and
`--python 3.10,3.12` name minor versions; `--python /path/to/python` (one interpreter)
keeps meaning what it always did. A range follows what is installed and what the
project's `requires-python` allows.

Interpreters are found the way uv finds them, without asking uv about pyenv's shims
(which fail for every version but the global one): pyenv's and asdf's version folders,
uv's managed installations, then `pythonX.Y` on PATH. Each candidate is asked its
version once; a missing interpreter is one clear error before anything runs.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from compat.core.errors import ConfigError, UsageError

#: the CPython minor versions onnx and onnxruntime have published wheels for, oldest first
KNOWN = ("3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14")
_MINOR = re.compile(r"^3\.\d{1,2}$")
#: what runs on the Pythons besides the one of every release (`releases = ...`)
RELEASES = {
    "newest": "one cell each: the newest onnx and onnxruntime releases with wheels for it",
    "all": "every release of both axes",
}


@dataclass(frozen=True)
class PythonTable:
    """`[tool.compat.python]`: the versions (minor versions, `3.10,3.12`, or a range,
    `>=3.10`, read against what is installed; "": the interpreter onnx-compat runs on),
    and `releases`: `newest` (one Python runs every release, each other one cell) or
    `all` (every release on every Python)."""

    versions: str = ""
    releases: str = "newest"


def python_table(table: dict[str, Any] | None, path: Path) -> PythonTable:
    """`[tool.compat.python] versions = ["3.10", "3.12"]` (or `">=3.10"`), and
    `releases = "newest"` or `"all"` (their types checked by the schema)."""
    if table is None:
        return PythonTable()
    versions = table["versions"]
    listed = versions if isinstance(versions, list) else [versions]
    text = ",".join(v.strip() for v in listed)
    if not is_version_list(text):
        raise ConfigError(
            f"{path}: [tool.compat.python] versions = {versions!r}: give minor versions, like "
            '["3.10", "3.12"], or a range, like ">=3.10"'
        )
    return PythonTable(text, table.get("releases", "newest"))


def is_version_list(text: str) -> bool:
    """True for `3.12` / `3.10,3.12` / `>=3.10` (the axis), False for a path or a name of
    an interpreter (`python3.12`, `/usr/bin/python3`: one interpreter, as before)."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    return bool(parts) and all(_MINOR.match(p) or p[:1] in "<>=!~" for p in parts)


def parse_pythons(text: str, where: str, requires_python: str = "") -> tuple[str, ...]:
    """`3.10,3.12` -> ("3.10", "3.12"); a range (`>=3.10`) -> every installed minor version
    in it, within `requires_python` too. `where` names the option or key in errors."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if parts and all(_MINOR.match(p) for p in parts):
        return tuple(dict.fromkeys(parts))
    try:
        wanted = SpecifierSet(text.replace(" ", ""))
        allowed = SpecifierSet(requires_python or "")
    except InvalidSpecifier:
        raise UsageError(
            f"{where} {text!r}: give minor versions or a range, like 3.10,3.12 or '>=3.10'"
        ) from None
    found = tuple(v for v in installed() if f"{v}.0" in wanted and f"{v}.99" in allowed)
    if not found:
        raise UsageError(
            f"{where} {text!r}: no installed CPython in that range"
            + (f" (and requires-python {requires_python})" if requires_python else "")
            + f"; installed: {', '.join(installed()) or 'none found'}"
        )
    return found


def installed() -> tuple[str, ...]:
    """The known minor versions that have an interpreter here, oldest first."""
    return tuple(v for v in KNOWN if _find(v) is not None)


def find_python(version: str, where: str = "--python") -> str:
    """The interpreter of CPython `version` (`3.12`), or a UsageError naming what is
    installed and how to add it."""
    found = _find(version)
    if found is None:
        have = ", ".join(installed()) or "none"
        raise UsageError(
            f"{where} {version}: no CPython {version} interpreter found (pyenv, asdf, uv or "
            f"python{version} on PATH; installed: {have}); install one, e.g. "
            f"`uv python install {version}` or `pyenv install {version}`"
        )
    return found


def python_version(interpreter: str) -> str:
    """`3.11` for an interpreter (asked once per process; this one is not asked)."""
    if interpreter == sys.executable:
        return f"{sys.version_info[0]}.{sys.version_info[1]}"
    return _ask(interpreter) or ""


def _candidates(version: str) -> list[Path]:
    """Where CPython `version` may live, most specific first."""
    home = Path.home()
    roots = [
        Path(os.environ.get("PYENV_ROOT", home / ".pyenv")) / "versions",
        Path(os.environ.get("ASDF_DATA_DIR", home / ".asdf")) / "installs" / "python",
    ]
    found: list[Path] = []
    for root in roots:
        if root.is_dir():  # newest patch release first: 3.12.10 before 3.12.9
            patches = [p for p in root.glob(f"{version}.*") if p.name[len(version) + 1 :].isdigit()]
            patches.sort(key=lambda p: int(p.name.rsplit(".", 1)[1]), reverse=True)
            found += [p / "bin" / f"python{version}" for p in patches]
    managed = Path(os.environ.get("UV_PYTHON_INSTALL_DIR", home / ".local/share/uv/python"))
    if managed.is_dir():
        found += sorted(managed.glob(f"cpython-{version}.*/bin/python{version}"), reverse=True)
    shims = os.sep + "shims"  # pyenv's shims answer only for the global version
    on_path = shutil.which(f"python{version}")
    if on_path and shims not in on_path:
        found.append(Path(on_path))
    return found


@functools.cache
def _find(version: str) -> str | None:
    for candidate in _candidates(version):
        if candidate.is_file() and _ask(str(candidate)) == version:
            return str(candidate)
    return None


@functools.cache
def _ask(interpreter: str) -> str | None:
    """The interpreter's `major.minor`, or None when it does not run."""
    try:
        done = subprocess.run(
            [interpreter, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None
