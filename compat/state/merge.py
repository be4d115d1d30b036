"""Combines the reports of a sharded run into the report one machine would write."""

from __future__ import annotations

import shutil
from pathlib import Path

from compat.core.errors import UsageError
from compat.core.report import Report, read_json


def _load(directory: Path) -> Report:
    path = directory / "matrix.json"
    if not path.is_file():
        raise UsageError(f"{path}: no shard report here; pass the --out directories of the shards")
    try:
        return read_json(path)
    except (ValueError, KeyError) as exc:
        raise UsageError(f"{path}: not a matrix report ({exc})") from None


def merge(directories: list[Path]) -> Report:
    """Union of the shards' cells and results, in the order of the shared plan.

    Shards must come from the same plan, the same case files (hashes) and the
    same generator onnx; a cell reported twice is an error, not a silent pick.
    """
    shards = [(d, _load(d)) for d in directories]
    first_dir, first = shards[0]
    plan_axes = first.run.get("plan_axes", first.axes)
    identity = (plan_axes, [(c.id, c.sha256) for c in first.cases], first.run.get("generator_onnx"))
    seen: dict[str, Path] = {}
    for directory, shard in shards:
        theirs = (
            shard.run.get("plan_axes", shard.axes),
            [(c.id, c.sha256) for c in shard.cases],
            shard.run.get("generator_onnx"),
        )
        if theirs != identity:
            raise UsageError(
                f"{directory}: not a shard of the same run as {first_dir} "
                "(plan, case hashes or generator onnx differ)"
            )
        for cell in shard.cells:
            if cell.id in seen:
                raise UsageError(f"{directory}: cell {cell.id} is also in {seen[cell.id]}")
            seen[cell.id] = directory
    cells = {c.id: c for _, s in shards for c in s.cells}
    order = first.run.get("plan_cells") or list(
        dict.fromkeys(i for ids in plan_axes.values() for i in ids)
    )
    results = {c: [r for _, s in shards for r in s.results if r.cell == c] for c in cells}
    return Report(
        cells=tuple(cells[i] for i in order if i in cells),
        cases=first.cases,
        results=tuple(r for i in order if i in cells for r in results[i]),
        axes={name: tuple(i for i in ids if i in cells) for name, ids in plan_axes.items()},
        families=first.families,
        run={
            "merged_from": [str(d) for d, _ in shards],
            "plan_cells": order,
            "plan_axes": plan_axes,
            "generator_onnx": first.run.get("generator_onnx"),
            "options": first.run.get("options", {}),
            "seconds": max(float(s.run.get("seconds", 0)) for _, s in shards),
        },
    )


def merge_logs(directories: list[Path], out: Path) -> None:
    """The shards' command logs (`logs/CELL/*.log`) beside the merged report, where its
    results link them; shards hold different cells, so nothing is overwritten."""
    for directory in directories:
        logs = directory / "logs"
        if logs.is_dir() and logs.resolve() != (out / "logs").resolve():
            shutil.copytree(logs, out / "logs", dirs_exist_ok=True)
