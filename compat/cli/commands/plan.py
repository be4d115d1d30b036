"""`onnx-compat plan`: the cells of the plan, one a line or as a CI job matrix, from the
config and the package index alone (no case is loaded, no onnx imported). On a Python
axis each job says the Pythons its cells run on, and `--pythons` the ones the whole
plan needs, so a CI job can install them first."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass

from compat.cli.options import add_axes, add_config, add_setup, request_of
from compat.core.errors import UsageError
from compat.core.versions import version_key
from compat.plan.config import load_config
from compat.plan.matrix import Cell, select_shard
from compat.workflow.plan import plan_pythons, resolve_plan
from compat.workflow.request import Request


@dataclass(frozen=True)
class PlanCommand:
    """The shared options, and how to print the cells: as JSON, in N shards."""

    common: Request
    json: bool = False
    shards: int | None = None
    pythons: bool = False


PARSER = {"epilog": "example: onnx-compat plan --json --shards 4  # a CI job matrix"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_config(parser)
    add_axes(parser)
    add_setup(parser)
    parser.add_argument("--json", action="store_true", help='print {"include": [...]} for CI')
    parser.add_argument("--shards", type=int, help="group the cells into N shards")
    parser.add_argument(
        "--pythons",
        action="store_true",
        help="print the Python versions the cells run on (--python, [tool.compat.python]), "
        "for CI to install before planning; nothing without a Python axis",
    )


def request(args: argparse.Namespace) -> PlanCommand:
    return PlanCommand(request_of(args), args.json, args.shards, args.pythons)


def run(request: PlanCommand) -> int:
    if request.pythons:
        print(" ".join(needed_pythons(request.common)))
        return 0
    _, plan = resolve_plan(request.common, load_config(request.common.config))
    shards = request.shards
    if shards is not None and shards < 1:
        raise UsageError(f"--shards {shards}: give at least 1")
    include: list[dict[str, str]] = []
    if shards:  # every shard takes every N-th cell: each gets cells of every Python
        for k in range(1, shards + 1):
            cells = select_shard(plan, k, shards).cells
            include.append(
                {
                    "shard": f"{k}/{shards}",
                    "cells": ",".join(c.id for c in cells),
                    **_pythons(cells),
                }
            )
    else:
        include = [
            {"cell": c.id, "onnx": c.onnx, "onnxruntime": c.onnxruntime, **_pythons((c,))}
            for c in plan.cells
        ]
    if request.json:
        print(json.dumps({"include": include}))
    else:
        print("\n".join(" ".join(item.values()) for item in include))
    return 0


def _pythons(cells: tuple[Cell, ...]) -> dict[str, str]:
    """`{"python": "3.10 3.12"}`: the Pythons a job's cells run on (what it installs),
    oldest first; nothing on the run's own interpreter."""
    found = sorted({c.python for c in cells if c.python}, key=version_key)
    return {"python": " ".join(found)} if found else {}


def needed_pythons(common: Request) -> tuple[str, ...]:
    """The minor versions of `--python` or `[tool.compat.python]`, read without looking
    for their interpreters (CI installs them next); () without a Python axis."""
    return plan_pythons(common, load_config(common.config), find=False)
