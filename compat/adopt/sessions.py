"""The noxfile `init` writes: one session per onnx-compat command that its output, the
terminal and the README name (`nox -s matrix`, `nox -s repro -- …`), each installing
onnx-compat once into its environment. An existing noxfile only gains what it lacks."""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from compat.adopt.files import template
from compat.adopt.writes import Edit, read_text, shown
from compat.core.errors import CompatError

#: the sessions, with the line `nox -l` shows for each
SESSIONS = {
    "matrix": "Your tests and models on every onnx / onnxruntime release of the config.",
    "repro": "One cell rebuilt under exact pins: `nox -s repro -- onnx==1.18.0`.",
    "bisect": "The first release where a result changes: `nox -s bisect -- --help`.",
    "triage": "A failing model to an upstream report: `nox -s triage -- MODEL.onnx`.",
    "report": "The reports rendered again from stored results, running nothing.",
}

#: the Pythons onnx-compat itself runs on, newest first
HOST_PYTHONS = ("3.14", "3.13", "3.12", "3.11")


def session_python(requires_python: str) -> tuple[str, str | None]:
    """The interpreter of the sessions (and so of the cells): the running one when the
    project's `requires-python` allows it, else the newest one onnx-compat runs on that
    does; returns it and a note when it is not the running one."""
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    try:
        allowed = SpecifierSet(requires_python)
    except InvalidSpecifier:
        return running, f"requires-python {requires_python!r} is not a range; wrote {running}"
    if allowed.contains(f"{running}.{sys.version_info.micro}", prereleases=True):
        return running, None
    for candidate in HOST_PYTHONS:
        if any(allowed.contains(f"{candidate}.{micro}") for micro in (0, 99)):
            return candidate, f"Python {candidate} (requires-python {requires_python})"
    return running, (
        f"requires-python {requires_python} leaves no Python onnx-compat runs on "
        f"(3.11 or newer); wrote {running}"
    )


def defined_sessions(text: str) -> set[str]:
    """The sessions a noxfile defines, by function name or `name=`."""
    names = set(re.findall(r"^def\s+(\w+)\s*\(", text, re.M))
    names |= set(re.findall(r"""name\s*=\s*["'](\w+)["']""", text))
    return names & set(SESSIONS)


def _imports(text: str, module: str) -> bool:
    return re.search(rf"^import {module}\b", text, re.M) is not None


def _missing(text: str) -> list[str]:
    return [name for name in SESSIONS if name not in defined_sessions(text)]


def noxfile_text(existing: str, install: str, python: str) -> tuple[str, list[str]]:
    """What to append to a noxfile that holds `existing` (empty: a new file), and the
    sessions that adds. An existing noxfile gains no import below its own code (the
    project's linters would refuse it, E402): the code added uses pathlib only where
    the noxfile imports it already, else builtins; only a missing `import nox` is added."""
    missing = _missing(existing)
    if not missing:
        return "", []
    if not existing:  # the standard library, a blank line, then nox: as isort sorts them
        parts = [template("noxfile_head.py.in"), "import pathlib\n\nimport nox\n"]
    else:
        parts = [] if _imports(existing, "nox") else ["\nimport nox\n"]
    if "def _onnx_compat(" not in existing:
        builtins = existing and not _imports(existing, "pathlib")
        helper = "noxfile_compat_builtins.py.in" if builtins else "noxfile_compat.py.in"
        parts.append(template(helper).replace("@INSTALL@", json.dumps(install)))
    for name in missing:
        text = template("noxfile_session.py.in")
        filled = {"PYTHON": f'"{python}"', "NAME": name, "DOC": SESSIONS[name]}
        for key, value in filled.items():
            text = text.replace(f"@{key}@", value)
        parts.append(text)
    return "".join(parts), missing


def _literals(tree: ast.Module, name: str) -> list[object]:
    """The values assigned to `name` at the top of a module, as literals."""
    found = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == [name]:
            try:
                found.append(ast.literal_eval(node.value))
            except ValueError:
                continue
    return found


def _check_python(existing: str, text: str, install: str, helper: bool) -> None:
    """The noxfile init would write parses as Python (when the project's own did) and,
    with `helper` (init adds its helper, or sets its line), names `install` as
    ONNX_COMPAT; else nothing is written."""
    try:
        ast.parse(existing)
    except (SyntaxError, ValueError):
        return  # the project's own noxfile does not parse: nothing to hold the rest to
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        tree = None
    if tree is None or (helper and install not in _literals(tree, "ONNX_COMPAT")):
        raise CompatError(
            "noxfile.py: the sessions init made read back otherwise than meant, so nothing "
            "was written: a bug of onnx-compat; please report it with your --install value"
        )


def installs(text: str) -> ast.Assign | None:
    """The line of init's helper naming what the sessions install, `ONNX_COMPAT = "…"`:
    the one top-level assignment of a string to it, in a noxfile with `_onnx_compat`."""
    if "def _onnx_compat(" not in text:
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    found = [
        node
        for node in tree.body
        if isinstance(node, ast.Assign)
        and [getattr(t, "id", "") for t in node.targets] == ["ONNX_COMPAT"]
    ]
    if len(found) != 1 or not isinstance(found[0].value, ast.Constant):
        return None
    return found[0] if isinstance(found[0].value.value, str) else None


def installed(text: str) -> str | None:
    """What a noxfile of init's installs (its ONNX_COMPAT), None when it is not init's."""
    node = installs(text)
    return None if node is None else str(ast.literal_eval(node.value))


def _with_install(existing: str, install: str) -> tuple[str, list[str], bool]:
    """`existing` with init's ONNX_COMPAT line installing `install` (`--install` given),
    what init says of it, and whether it installs `install` now; a noxfile without
    init's line is left, said so."""
    node = installs(existing)
    value = None if node is None else node.value
    if node is None or value is None or value.lineno != value.end_lineno:
        why = "its sessions are not init's (no ONNX_COMPAT line)" if node is None else ""
        why = why or "its ONNX_COMPAT string spans lines"
        said = f"  --install {shown(install)} not applied to noxfile.py: {why}: make them "
        return existing, [said + f"session.install({json.dumps(install)})"], False
    was = ast.literal_eval(value)
    if was == install:
        return existing, [], True
    lines = existing.split("\n")  # as the parser counts lines
    line = lines[value.lineno - 1].encode()  # the offsets count UTF-8 bytes
    end = value.end_col_offset or len(line)
    lines[value.lineno - 1] = (
        line[: value.col_offset] + json.dumps(install).encode() + line[end:]
    ).decode()
    said = f"  ONNX_COMPAT, what the sessions install: {shown(was)} → {shown(install)} (--install)"
    return "\n".join(lines), [said], True


def noxfile_edit(project: Path, install: str, python: str, given: bool = False) -> Edit:
    """noxfile.py with the sessions it lacks appended (or a new one), read back. With
    `given` (`--install` given), an existing noxfile's ONNX_COMPAT line installs
    `install`: changed when it differs, said when the noxfile has no such line."""
    name = Path("noxfile.py")
    existing = read_text(project, str(name))
    changed = existing
    said: list[str] = []
    applied = "def _onnx_compat(" not in existing  # its helper, installing `install`, added
    if given and existing and not (applied and _missing(existing)):
        changed, said, applied = _with_install(existing, install)
    text, added = noxfile_text(changed, install, python)
    if not added:
        left = f"{name}: has the sessions {', '.join(SESSIONS)}"
        if changed == existing:
            return Edit(name, None, [f"{left}; left as it is", *said])
        _check_python(existing, changed, install, helper=True)
        return Edit(name, changed.encode(), [f"{left}; their ONNX_COMPAT line changed", *said])
    text = changed + ("\n" if changed and not changed.endswith("\n") else "") + text
    _check_python(existing, text, install, helper=applied)
    sessions = ", ".join(added)
    if existing:
        kept = [s for s in SESSIONS if s not in added]
        there = f" ({', '.join(kept)} kept as they were)" if kept else ""
        return Edit(name, text.encode(), [f"{name}: sessions {sessions} appended{there}", *said])
    return Edit(name, text.encode(), [f"{name}: written, sessions {sessions} (Python {python})"])
