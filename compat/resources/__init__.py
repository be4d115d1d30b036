"""Every non-Python file the host loads, and the programs it fills in, named once.

The files are real files in this folder — the HTML page and its script, the noxfile and
workflow templates `init` writes, the repro script, triage's check snippets — seen by
editors, linters and tests. Like `compat.cell`, this package imports nothing from the
host, so every layer may read it.
"""

from __future__ import annotations

from pathlib import Path

#: this folder
FOLDER = Path(__file__).parent
#: the HTML report's page, style sheet and script (compat/render/html.py)
PAGE = FOLDER / "page"
#: plain-Python versions of the checks, printed in a triage report
TRIAGE_SNIPPETS = FOLDER / "triage"
#: what each release loads, as the docs' stored run measured it (compat/render/load_limits.py
#: writes it, compat/corpus/load_limits.py reads it)
LOAD_LIMITS = FOLDER / "load_limits.json"
#: the script every repro folder gets, filled in (compat/followup/repro.py)
REPRO_SCRIPT = FOLDER / "repro_script.py"
#: the JSON schema of `[tool.compat]` and of a drop-in folder's compat.toml (compat/plan/schema.py)
TOOL_COMPAT_SCHEMA = FOLDER / "tool_compat.schema.json"


def text(name: str) -> str:
    """The text of the resource NAME (a path relative to this folder)."""
    return (FOLDER / name).read_text(encoding="utf-8")
