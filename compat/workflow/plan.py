"""The plan a command runs: the config's axes, followed on the package index, replaced
or extended by the request, expanded into cells and narrowed to the part this process
runs. It reads the config and the index only: no case, no onnx."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from compat.plan.config import Config
from compat.plan.follow import follow, previews
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


def resolve_plan(request: Request, config: Config) -> tuple[Plan, Plan]:
    """(the whole plan, the part this process runs): they differ only with --shard."""
    asked = request.plan
    config, _ = follow_axes(request, config)
    config = project_config(request, config)
    onnx: tuple[str, ...] | None = None
    dists: dict[str, str] = {}
    if asked.onnx is not None:  # `--onnx ""` is an empty list, never the configured axis
        onnx, dists = previews(asked.onnx)
    ort = parse_version_list(asked.ort, "--ort") if asked.ort is not None else None
    if not asked.offline:  # a release the index lacks: said now
        if onnx:
            plain = tuple(v for v in onnx if v not in dists)
            check_on_index(plain, "onnx", "--onnx", config.onnx.index_url)
        if ort:
            check_on_index(ort, "onnxruntime", "--ort", config.onnxruntime.index_url)
    given = dict(parse_axis(text) for text in asked.pkg)
    extra = tuple({**dict(config.axes), **given}.items())
    plan = expand(config, onnx, ort, asked.cross, extra, fixed_requirements(request), dists)
    whole = select_cells(plan, globs(asked.cells))
    if asked.axis:
        whole = select_axis(whole, asked.axis)
    if asked.shard:
        return whole, select_shard(whole, *parse_shard(asked.shard))
    return whole, whole


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
    lines += [f"  {c.id:28} {' '.join(c.requirements)}" for c in plan.cells]
    lines += ["", "cases:"]
    lines += [f"  {c.id:44} {', '.join(c.checks)}" for c in cases]
    return "\n".join(lines)
