"""`onnx-compat plan`: the cells of the plan, one a line or as a CI job matrix, from the
config and the package index alone (no case is loaded, no onnx imported)."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass

from compat.cli.options import add_axes, add_config, add_setup, request_of
from compat.core.errors import UsageError
from compat.plan.config import load_config
from compat.plan.matrix import select_shard
from compat.workflow.plan import resolve_plan
from compat.workflow.request import Request


@dataclass(frozen=True)
class PlanCommand:
    """The shared options, and how to print the cells: as JSON, in N shards."""

    common: Request
    json: bool = False
    shards: int | None = None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_config(parser)
    add_axes(parser)
    add_setup(parser)
    parser.add_argument("--json", action="store_true", help='print {"include": [...]} for CI')
    parser.add_argument("--shards", type=int, help="group the cells into N shards")


def request(args: argparse.Namespace) -> PlanCommand:
    return PlanCommand(request_of(args), args.json, args.shards)


def run(request: PlanCommand) -> int:
    _, plan = resolve_plan(request.common, load_config(request.common.config))
    shards = request.shards
    if shards is not None and shards < 1:
        raise UsageError(f"--shards {shards}: give at least 1")
    if shards:
        include: list[dict[str, str]] = []
        for k in range(1, shards + 1):
            cells = select_shard(plan, k, shards).cells
            include.append({"shard": f"{k}/{shards}", "cells": ",".join(c.id for c in cells)})
    else:
        include = [{"cell": c.id, "onnx": c.onnx, "onnxruntime": c.onnxruntime} for c in plan.cells]
    if request.json:
        print(json.dumps({"include": include}))
    else:
        print("\n".join(" ".join(item.values()) for item in include))
    return 0
