"""`onnx-compat init`: adopt onnx-compat in the current project, never overwriting.

Appends a `[tool.compat]` section to pyproject.toml (created when missing) and a
`matrix` session to noxfile.py (created when missing); a file that already has
either is left as it is, and the command says so. The texts are files beside this
module: compat/templates/.
"""

from __future__ import annotations

import sys
from pathlib import Path

TEMPLATES = Path(__file__).with_name("templates")


def _toml_list(values: list[str]) -> str:
    return ", ".join('"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values)


def tool_compat(cases_dirs: list[str], runs: list[str]) -> str:
    text = (TEMPLATES / "tool_compat.toml").read_text()
    return text.replace("CASES_DIRS", _toml_list(cases_dirs)).replace("RUN", _toml_list(runs))


def nox_session(install: str) -> str:
    text = (TEMPLATES / "noxfile_session.py.in").read_text()
    python = f'"{sys.version_info.major}.{sys.version_info.minor}"'
    return text.replace("PYTHON", python).replace("INSTALL", repr(install))


def init(project: Path, install: str, cases_dirs: list[str], runs: list[str]) -> list[str]:
    """Writes what is missing; returns one line per file saying what was done."""
    said = []
    pyproject = project / "pyproject.toml"
    existing = pyproject.read_text() if pyproject.exists() else ""
    if "[tool.compat" in existing:
        said.append(f"{pyproject}: has a [tool.compat] section already; left as it is")
    else:
        with pyproject.open("a") as f:
            f.write(("\n" if existing and not existing.endswith("\n") else "")
                    + tool_compat(cases_dirs, runs))  # fmt: skip
        said.append(f"{pyproject}: [tool.compat] {'appended' if existing else 'written'}")
    noxfile = project / "noxfile.py"
    existing = noxfile.read_text() if noxfile.exists() else ""
    if "def matrix(" in existing:
        said.append(f"{noxfile}: has a `matrix` session already; left as it is")
    else:
        head = "" if existing else '"""nox sessions of this project."""\n\nimport nox\n'
        if existing and "import nox" not in existing:
            head = "\nimport nox\n"
        with noxfile.open("a") as f:
            f.write(head + nox_session(install))
        said.append(f"{noxfile}: `matrix` session {'appended' if existing else 'written'}")
    said.append("next: nox -s matrix   (reports in reports/: compatibility.md, matrix.html)")
    return said
