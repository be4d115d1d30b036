"""What every cell installs besides its axes: the config's `requires`, `--with` ranges,
the project's dependency groups, and the project itself, built once per run
(compat/execute/project.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from packaging.utils import canonicalize_name

from compat.core.errors import UsageError
from compat.core.install import Project
from compat.execute.project import build, group_requirements, is_package
from compat.plan.config import Config
from compat.plan.matrix import parse_with
from compat.workflow.request import Request


def fixed_requirements(request: Request) -> tuple[str, ...]:
    """`--with` exact pins: each makes its own environments (`-with-numpy1.26.4` in ids)."""
    return tuple(r for r, exact in map(parse_with, request.setup.with_) if exact)


def project_config(request: Request, config: Config) -> Config:
    """The config with everything every cell installs besides its axes: in `requires`
    its own `requires`, `--with` ranges and the project's dependency groups; in `project`
    the project itself with its extras (built once per run: compat/execute/project.py).
    Cell ids stay as they are: these are the project's setup, the same in every cell."""
    ranges = [r for r, exact in map(parse_with, request.setup.with_) if not exact]
    root = request.root
    groups = group_requirements(root, config.groups, f"{config.source} [tool.compat]")
    project = installed_project(request, config)
    if config.extras and project is None:
        raise UsageError(
            f"{config.source}: [tool.compat] extras = {list(config.extras)} needs the project "
            "installed in the cells; it is when it runs commands and is a package, or with "
            "--install PATH"
        )
    requires = tuple(dict.fromkeys([*config.requires, *ranges, *groups]))
    installed = None
    if project is not None:
        installed = Project(project, config.extras if project == root else ())
    return replace(config, requires=requires, project=installed)


def installed_project(request: Request, config: Config) -> Path | None:
    """The project every cell installs (its wheel, built once per run) before its
    commands run: `--install PATH`, or the project itself when it runs commands (`--run`,
    `run = [...]`) and is a package; `--install none` installs none."""
    given = request.setup.install
    if given == "none":
        return None
    if given:
        path = Path(given).resolve()
        if not is_package(path):
            raise UsageError(
                f"--install {given}: no pyproject.toml with [project] or setup.py there"
            )
        return path
    root = request.root
    if not (config.run or request.corpus.commands):
        return None
    return root if is_package(root) else None


def prepare_project(request: Request, config: Config) -> None:
    """Builds the project the cells install, before any cell: a project that cannot be
    built is one error line now, not a broken cell each."""
    project = installed_project(request, config)
    if project is None:
        return
    built = build(project, request.state_dir(), request.run.python)
    unknown = [e for e in config.extras if canonicalize_name(e) not in built.extras]
    if unknown and project == request.root:
        raise UsageError(
            f"{config.source}: [tool.compat] extras: {unknown[0]!r} is not an extra of "
            f"{built.name} (it has: {', '.join(built.extras) or 'none'})"
        )
