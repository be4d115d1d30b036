"""The plan a command runs: the config's axes, followed on the package index, replaced
or extended by the request, expanded into cells and narrowed to the part this process
runs. It reads the config and the index only: no case, no onnx."""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from compat.plan.config import Config
from compat.plan.follow import follow, newest_of_minors, previews
from compat.plan.index import check_on_index
from compat.plan.matrix import (
    Plan,
    expand,
    parse_axis,
    parse_shard,
    parse_version_list,
    select_axis,
    select_cells,
    select_shard,
)
from compat.plan.pairs import follow_pairs, main_python
from compat.plan.pythons import find_python, parse_pythons, python_version
from compat.workflow.project import fixed_requirements, project_config
from compat.workflow.request import Request

if TYPE_CHECKING:  # the case module imports onnx; the plan alone never needs it
    from compat.core.case import Case
    from compat.state.listing import Listed


def globs(text: str | None) -> tuple[str, ...]:
    return tuple(g.strip() for g in (text or "").split(",") if g.strip())


def follow_axes(request: Request, config: Config) -> tuple[Config, dict[str, object]]:
    """The config with its range axes resolved from the package index (compat/plan/follow.py),
    or from the state directory's record with --offline; and what was resolved."""
    return follow(config, request.state_dir(), request.plan.offline)


def given_axes(
    request: Request, config: Config
) -> tuple[tuple[str, ...] | None, dict[str, str], tuple[str, ...] | None]:
    """`--onnx` and `--ort` as releases (None: not given): previews and minor versions
    (`1.18`, its newest 1.18.x) resolved from the index, and each release checked there;
    with the distributions of the previews."""
    asked = request.plan
    onnx: tuple[str, ...] | None = None
    dists: dict[str, str] = {}
    if asked.onnx is not None:  # `--onnx ""` is an empty list, never the configured axis
        onnx, dists = previews(asked.onnx)
        onnx = newest_of_minors(onnx, config.onnx, "--onnx", asked.offline)
    ort = parse_version_list(asked.ort, "--ort") if asked.ort is not None else None
    if ort:
        ort = newest_of_minors(ort, config.onnxruntime, "--ort", asked.offline)
    if not asked.offline:  # a release the index lacks: said now
        if onnx:
            plain = tuple(v for v in onnx if v not in dists)
            check_on_index(plain, "onnx", "--onnx", config.onnx.index)
        if ort:
            check_on_index(ort, "onnxruntime", "--ort", config.onnxruntime.index)
    return onnx, dists, ort


def resolve_plan(request: Request, config: Config) -> tuple[Plan, Plan]:
    """(the whole plan, the part this process runs): they differ only with --shard."""
    asked = request.plan
    config, _ = follow_axes(request, config)
    config = project_config(request, config)
    onnx, dists, ort = given_axes(request, config)
    given = dict(parse_axis(text) for text in asked.pkg)
    extra = tuple({**dict(config.axes), **given}.items())
    pythons = plan_pythons(request, config)
    onnx_releases = onnx or config.onnx.versions
    ort_releases = ort or config.onnxruntime.versions
    pairs = None
    if pythons and not asked.offline:
        pairs = follow_pairs(config, pythons, onnx_releases, ort_releases)
    main = ""
    if len(pythons) > 1 and python_releases(request, config) == "newest":
        running = python_version(request.run.python)
        index = (onnx_releases, ort_releases) if not asked.offline else ((), ())
        main = main_python(config, pythons, *index, running)
    named = any(c.package == "python" for c in config.constraints)  # else never asked
    interpreter = python_version(request.run.python) if named else ""
    plan = expand(
        config,
        onnx,
        ort,
        asked.cross,
        extra,
        fixed_requirements(request),
        dists,
        pythons,
        pairs,
        interpreter,
        main,
    )
    whole = select_cells(plan, globs(asked.cells))
    if asked.axis:
        whole = select_axis(whole, asked.axis)
    if asked.shard:
        return whole, select_shard(whole, *parse_shard(asked.shard))
    return whole, whole


def plan_pythons(request: Request, config: Config, find: bool = True) -> tuple[str, ...]:
    """The Python axis: `--python` versions, else `[tool.compat.python]`, within the
    project's requires-python for a range; () for the one interpreter of the run. With
    `find`, every interpreter is found now (compat/plan/pythons.py): a missing one is
    one line; without, the versions are only read (CI installs them next)."""
    given = request.setup.python
    text, where = (
        (config.python.versions, "[tool.compat.python]") if given is None else (given, "--python")
    )
    if not text:
        return ()
    pythons = parse_pythons(text, where, requires_python(config.source))
    for version in pythons if find else ():
        find_python(version, where)
    return pythons


def python_releases(request: Request, config: Config) -> str:
    """What runs on each Python but one: `newest` (its newest pair) or `all` (every
    release): `--python-releases`, else the config's."""
    return request.setup.python_releases or config.python.releases


def requires_python(pyproject: Path) -> str:
    """The project's `requires-python` (when the config is its pyproject.toml), or ""."""
    try:
        project = tomllib.loads(pyproject.read_text()).get("project", {})
    except (OSError, tomllib.TOMLDecodeError):
        return ""
    value = project.get("requires-python", "") if isinstance(project, dict) else ""
    return value if isinstance(value, str) else ""


def describe_plan(plan: Plan, cases: Sequence[Case | Listed]) -> str:
    """The plan as `--list` prints it: the cells with their requirements, then the cases
    with their checks (a run prints the first line)."""
    checks = sum(len(c.checks) for c in cases)
    lines = [
        f"{len(plan.cells)} cells × {len(cases)} cases "
        f"({checks} checks per cell, {checks * len(plan.cells)} in all)",
        "",
        "cells:",
    ]
    lines += [f"  {c.id:28} {c.requirements.shown()}" for c in plan.cells]
    lines += ["", "cases:"]
    lines += [f"  {c.id:44} {', '.join(c.checks)}" for c in cases]
    return "\n".join(lines)
