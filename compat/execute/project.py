"""The user's project, installed in every cell as its users install it: built once per
run with its own build backend (dynamic versions included), the wheel installed in each
cell, its dependencies resolved per cell like every other requirement.

A cell's install request names the project (its folder and extras: `project` of
compat/core/install.py); `compat/execute/envs.py` expands that into the wheel's
dependencies and installs the wheel after them. The wheel is rebuilt only when the
project's files change.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import threading
import time
import tomllib
import zipfile
from dataclasses import dataclass
from email.parser import Parser
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from compat.core.errors import UsageError
from compat.core.groups import resolve_groups
from compat.core.markers import for_extra

BUILD_TIMEOUT = 900
#: Folders that are never part of what a build reads (outputs, environments, caches).
SKIPPED = {
    ".git",
    ".hg",
    ".nox",
    ".tox",
    ".venv",
    "venv",
    ".compat",
    "reports",
    "build",
    "dist",
    "__pycache__",
    "node_modules",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
}


class BuildError(UsageError):
    """The project could not be built with its own backend: one line, before any cell."""


@dataclass(frozen=True)
class Built:
    """A wheel of the project and what it declares."""

    root: Path
    name: str
    version: str
    wheel: Path
    sha256: str
    requires: tuple[tuple[str, str], ...]  # (Requires-Dist, its marker), as the wheel says
    extras: tuple[str, ...] = ()  # its Provides-Extra, normalized

    def requirements(self, extras: tuple[str, ...] = ()) -> tuple[str, ...]:
        """The wheel's dependencies for these extras, as requirements uv resolves per
        cell (what a marker says besides `extra` stays for uv to judge against the cell's
        Python, compat/core/markers.py); the project's own extras named in its
        dependencies are followed."""
        out: list[str] = []
        seen: set[str] = set()
        todo = [""] + [canonicalize_name(e) for e in extras]
        while todo:
            extra = todo.pop(0)  # the base dependencies first, then each extra
            if extra in seen:
                continue
            seen.add(extra)
            for text, marker in self.requires:
                kept = for_extra(marker, extra)  # an `or` may bring it to base and extra
                if kept is None:
                    continue
                req = Requirement(text)
                if canonicalize_name(req.name) == canonicalize_name(self.name):
                    todo += [canonicalize_name(e) for e in req.extras]
                    continue
                out.append(f"{text}; {kept}" if kept else text)
        return tuple(dict.fromkeys(out))


def is_package(root: Path) -> bool:
    """A folder pip could install: pyproject.toml with [project] (or a build backend
    that makes one), or a setup.py."""
    if (root / "setup.py").is_file():
        return True
    try:
        data = tomllib.loads((root / "pyproject.toml").read_text())
    except (OSError, ValueError):
        return False
    return "project" in data


def source_digest(root: Path) -> str:
    """What the build reads: every file of the project's tree (`tree_files`) with its
    path and bytes, and the commit, which a VCS version (setuptools-scm, hatch-vcs) is
    made from."""
    digest = hashlib.sha256()
    if (root / ".git").exists() and shutil.which("git") is not None:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=False
        )
        digest.update(head.stdout.encode())
    digest.update(files_digest(root, tree_files(root)).encode())
    return digest.hexdigest()


def tree_files(root: Path) -> list[str]:
    """The project's tree, as relative POSIX paths, sorted: git's tracked and untracked
    but not ignored files in a checkout (untracked reports and state a run writes are
    not the project), else the folder minus outputs, environments and caches (SKIPPED)."""
    files = _git_files(root)
    if files is not None:
        return sorted(n for n in files if n.split("/", 1)[0] not in SKIPPED)
    files = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED and not d.endswith(".egg-info"))
        files += [Path(folder, n).relative_to(root).as_posix() for n in names]
    return sorted(files)


def files_digest(root: Path, names: list[str]) -> str:
    """The hash of the files `names` under `root`: each one's path and bytes."""
    digest = hashlib.sha256()
    for name in names:
        path = root / name
        if path.is_file():
            digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _git_files(root: Path) -> list[str] | None:
    if not (root / ".git").exists() or shutil.which("git") is None:
        return None
    done = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        return None
    return [n for n in done.stdout.decode(errors="replace").split("\0") if n]


def _uses_vcs_version(root: Path) -> bool:
    try:
        text = (root / "pyproject.toml").read_text()
    except OSError:
        return False
    return any(
        name in text
        for name in (
            "setuptools_scm",
            "setuptools-scm",
            "hatch-vcs",
            "hatch_vcs",
            "versioningit",
            "dunamai",
        )
    )


def _read_wheel(root: Path, wheel: Path) -> Built:
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = Parser().parsestr(archive.read(name).decode())
    requires = []
    for text in metadata.get_all("Requires-Dist") or []:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        marker = str(req.marker) if req.marker else ""
        req.marker = None
        requires.append((str(req), marker))
    return Built(
        root=root,
        name=str(metadata["Name"]),
        version=str(metadata["Version"]),
        wheel=wheel,
        sha256=hashlib.sha256(wheel.read_bytes()).hexdigest(),
        requires=tuple(requires),
        extras=tuple(canonicalize_name(e) for e in metadata.get_all("Provides-Extra") or []),
    )


_lock = threading.Lock()
_built: dict[Path, Built] = {}


def build(root: Path, state: Path, python: str, say: Any = print) -> Built:
    """The project's wheel, built with its own backend (`uv build --wheel`) once per
    change of its files, kept under `state/project/`; memoized for this process.
    A project that cannot be built raises BuildError with the backend's last words."""
    root = root.resolve()
    with _lock:
        if root in _built:
            return _built[root]
        digest = source_digest(root)[:16]
        home = state / "project" / canonicalize_name(root.name)
        out = home / digest
        wheels = sorted(out.glob("*.whl")) if out.is_dir() else []
        if not wheels:
            say(f"building {root} with its own build backend (uv build --wheel) ...")
            started = time.monotonic()
            wheels = [_build_wheel(root, out, python)]
            say(f"built {wheels[0].name} in {time.monotonic() - started:.1f} s")
            for old in home.iterdir():  # earlier builds: one kept, for a quick way back
                if old != out and old.is_dir() and len(list(home.iterdir())) > 2:
                    shutil.rmtree(old, ignore_errors=True)
        _built[root] = built = _read_wheel(root, wheels[-1])
        return built


def _build_wheel(root: Path, out: Path, python: str) -> Path:
    from compat.execute.installer import find_uv

    scratch = out.with_name(out.name + ".partial")
    shutil.rmtree(scratch, ignore_errors=True)
    command = [
        find_uv(),
        "build",
        "--wheel",
        "--python",
        python,
        "--out-dir",
        str(scratch),
        str(root),
    ]  # (not --quiet: it hides
    # the backend's own words, the one thing a failed build has to say)
    env = dict(os.environ)
    env.pop("VIRTUAL_ENV", None)
    notes = ""
    done = _run(command, env, root)
    if done.returncode != 0 and _uses_vcs_version(root) and not (root / ".git").exists():
        # a VCS version in a plain folder (an unpacked archive): build it as 0+unknown
        env["SETUPTOOLS_SCM_PRETEND_VERSION"] = "0+unknown"
        done = _run(command, env, root)
        notes = " (not a git checkout: built as version 0+unknown)"
    if done.returncode != 0:
        raise BuildError(
            f"{root}: cannot build the project with its own build backend: "
            f"{backend_words(done.stderr + done.stdout)}; fix its build (`uv build --wheel "
            f"{root}` shows all it printed)"
        )
    wheels = sorted(scratch.glob("*.whl"))
    if not wheels:
        raise BuildError(f"{root}: `uv build --wheel` made no wheel{notes}")
    shutil.rmtree(out, ignore_errors=True)
    scratch.rename(out)
    return out / wheels[-1].name


_EXCEPTION = re.compile(r"^[A-Za-z_.]*(Error|Exception)\b.*:")


def backend_words(output: str) -> str:
    """What a failed build says, in one line: the backend's own exception and the lines
    after it (setuptools' "configuration error: ... must be pep508"), else uv's causes."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    uv_starts = next(
        (i for i, line in enumerate(lines) if line.startswith("error: Failed to")), len(lines)
    )
    raised = [i for i, line in enumerate(lines[:uv_starts]) if _EXCEPTION.match(line)]
    hints = [line for line in lines[uv_starts:] if not line.startswith("hint:")]
    said = lines[raised[-1] : uv_starts][:4] if raised else hints[:6] or lines[-3:]
    return " ".join(said)[:600] or "no message"


def _run(command: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            command,
            capture_output=True,
            text=True,
            env=env,
            cwd=cwd,
            timeout=BUILD_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise BuildError(f"{cwd}: building the project ran past {BUILD_TIMEOUT} s") from None


def group_requirements(root: Path, groups: tuple[str, ...], where: str) -> tuple[str, ...]:
    """The requirements of PEP 735 dependency groups in the project's pyproject.toml,
    resolved by PyPA's `dependency-groups` (compat/core/groups.py); an unknown group is
    a one-line error naming the groups the file has."""
    if not groups:
        return ()
    path = root / "pyproject.toml"
    try:
        table = tomllib.loads(path.read_text()).get("dependency-groups", {})
    except (OSError, ValueError):
        table = {}
    return tuple(str(r) for r in resolve_groups(table, groups, path, where))
