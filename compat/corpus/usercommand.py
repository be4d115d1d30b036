"""`--run 'CMD'` / `--run NAME='CMD'`: the user's own command as a case of the matrix,
`command.NAME`, whose one check (`command`, compat/cell/command.py) runs it in each cell."""

from __future__ import annotations

import re
from pathlib import Path

from compat.core.case import Case
from compat.core.errors import ConfigError, UsageError
from compat.corpus.make import stand_in
from compat.plan.config import Config

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


def command_cases(runs: list[str], root: Path, uncached: tuple[str, ...] = ()) -> list[Case]:
    """One case per `--run`, for the project at `root` (the config's folder); the
    commands named in `uncached` are never served from the result cache."""
    cases = []
    seen = set()
    for text in runs:
        name, command = parse_run(text)
        if name in seen:
            raise UsageError(f"--run: two commands are named {name!r}; name them: --run NAME=CMD")
        seen.add(name)
        spec = {"command": command, "cwd": str(root)}
        if name in uncached:
            spec["cache"] = "no"
        cases.append(
            Case(
                id=f"{FAMILY}.{name}",
                description=command,
                model=stand_in("command"),  # only `command` runs, and reads no model
                builtin_checks=("command",),
                command=spec,
            )
        )
    return cases


def check_uncached(config: Config) -> None:
    """`no-cache` names commands of `run` (a typo there is one line, never ignored)."""
    names = [parse_run(text)[0] for text in config.run]
    for name in config.no_cache:
        if name not in names:
            have = ", ".join(names) or "none: run = [...] is empty"
            raise ConfigError(
                f"{config.source}: [tool.compat] no-cache: {name!r} names no command of run "
                f"(their names: {have}); name a command as run = ['NAME=CMD']"
            )


def project_root(case: Case) -> Path | None:
    """The project folder a command case runs for (None: not a command)."""
    if not case.command or not case.command.get("cwd"):
        return None
    return Path(case.command["cwd"])


def cached(case: Case) -> bool:
    """Whether a command case's results may be cached (`no-cache` in [tool.compat] names
    the commands that always run again)."""
    return not case.command or case.command.get("cache", "") != "no"
