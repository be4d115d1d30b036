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
from compat.adopt.writes import Edit, read_text
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


def noxfile_text(existing: str, install: str, python: str) -> tuple[str, list[str]]:
    """What to append to a noxfile that holds `existing` (empty: a new file), and the
    sessions that adds. An existing noxfile gains no import below its own code (the
    project's linters would refuse it, E402): the code added uses pathlib only where
    the noxfile imports it already, else builtins; only a missing `import nox` is added."""
    missing = [name for name in SESSIONS if name not in defined_sessions(existing)]
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


def _check_python(existing: str, text: str, install: str) -> None:
    """The noxfile init would write parses as Python (when the project's own did) and,
    when init adds its helper, names `install` as ONNX_COMPAT; else nothing is written."""
    try:
        ast.parse(existing)
    except (SyntaxError, ValueError):
        return  # the project's own noxfile does not parse: nothing to hold the rest to
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        tree = None
    helper = "def _onnx_compat(" not in existing
    if tree is None or (helper and install not in _literals(tree, "ONNX_COMPAT")):
        raise CompatError(
            "noxfile.py: the sessions init made read back otherwise than meant, so nothing "
            "was written: a bug of onnx-compat; please report it with your --install value"
        )


def noxfile_edit(project: Path, install: str, python: str) -> Edit:
    """noxfile.py with the sessions it lacks appended (or a new one), read back."""
    name = Path("noxfile.py")
    existing = read_text(project, str(name))
    text, added = noxfile_text(existing, install, python)
    if not added:
        return Edit(name, None, [f"{name}: has the sessions {', '.join(SESSIONS)}; left as it is"])
    text = existing + ("\n" if existing and not existing.endswith("\n") else "") + text
    _check_python(existing, text, install)
    sessions = ", ".join(added)
    if existing:
        kept = [s for s in SESSIONS if s not in added]
        there = f" ({', '.join(kept)} kept as they were)" if kept else ""
        return Edit(name, text.encode(), [f"{name}: sessions {sessions} appended{there}"])
    return Edit(name, text.encode(), [f"{name}: written, sessions {sessions} (Python {python})"])
