"""`--run 'CMD'` / `--run NAME='CMD'`: the user's own command as a case of the matrix,
`command.NAME`, whose one check (`command`, compat/cell/command.py) runs it in each cell."""

from __future__ import annotations

import re
from pathlib import Path

from compat.core.case import Case
from compat.core.errors import UsageError
from compat.corpus.make import stand_in

FAMILY = "command"
DESCRIPTION = "the project's own commands (`--run`), run in each cell's environment"


def _slug(text: str) -> str:
    words = re.findall(r"[A-Za-z0-9]+", text)
    return "_".join(words)[:40].strip("_").lower() or "command"


def parse_run(text: str) -> tuple[str, str]:
    """`NAME=CMD` or a bare `CMD` (named by its slug) -> (name, command)."""
    named = re.match(r"^([A-Za-z][A-Za-z0-9_-]*)=(.+)$", text.strip(), re.DOTALL)
    name, command = (named.group(1), named.group(2)) if named else (_slug(text), text)
    if not command.strip():
        raise UsageError(f"--run {text!r}: give a command, like --run 'pytest tests'")
    return name, command.strip()


def command_cases(runs: list[str], root: Path) -> list[Case]:
    """One case per `--run`, run from `root` (the project: the config's folder)."""
    cases, seen = [], set()
    for text in runs:
        name, command = parse_run(text)
        if name in seen:
            raise UsageError(f"--run: two commands are named {name!r}; name them: --run NAME=CMD")
        seen.add(name)
        cases.append(
            Case(
                id=f"{FAMILY}.{name}",
                description=command,
                model=stand_in("command"),  # only `command` runs, and reads no model
                builtin_checks=("command",),
                command={"command": command, "cwd": str(root)},
            )
        )
    return cases
