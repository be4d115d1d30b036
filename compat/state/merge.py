"""Combines the reports of a sharded run into the report one machine would write."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

from compat.core.errors import UsageError
from compat.core.names import component
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


def merge_logs(directories: list[Path], out: Path) -> list[str]:
    """The shards' command logs (`logs/CELL/NAME.log`) beside the merged report, where its
    results link them; shards hold different cells, so nothing is overwritten. Only
    regular files of that shape are copied: a link (to /etc, to another shard), a FIFO, a
    folder deeper down or a name that is no path component is left where it is, and
    returned, each as one line saying why."""
    left: list[str] = []
    target = out / "logs"
    if target.is_symlink():
        raise UsageError(f"{target}: a link; merge writes no log through one: remove it")
    for directory in directories:
        logs = directory / "logs"
        if logs.is_symlink() or not logs.is_dir() or logs.resolve() == target.resolve():
            left += [f"{logs}: a link, not the shard's own folder"] if logs.is_symlink() else []
            continue
        for cell in sorted(logs.iterdir()):
            if cell.is_symlink() or not cell.is_dir():
                left.append(f"{cell}: not a folder of a cell's logs")
                continue
            for log in sorted(cell.iterdir()):
                why = _not_a_log(log)
                if why:
                    left.append(f"{log}: {why}")
                    continue
                (target / cell.name).mkdir(parents=True, exist_ok=True)
                shutil.copyfile(log, target / cell.name / log.name, follow_symlinks=False)
    return left


def _not_a_log(path: Path) -> str:
    """Why `path` is not a log merge copies ("" when it is one)."""
    try:
        component(path.parent.name, "cell")
        component(path.name, "log")
    except ValueError as exc:
        return str(exc)
    mode = path.lstat().st_mode
    if not stat.S_ISREG(mode):
        return "not a regular file (a link, a FIFO or a folder)"
    return "" if path.suffix == ".log" else "not a .log file"
