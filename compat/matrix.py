"""Expands the configured axes into the cells of a run."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

from compat.config import Config, Constraint
from compat.errors import UsageError
from compat.versions import in_range, parse_version


@dataclass(frozen=True)
class Cell:
    """One environment of the matrix: exact onnx and onnxruntime releases."""

    onnx: str
    onnxruntime: str
    requirements: tuple[str, ...]
    tag: str = ""  # set when extra pins (a CI's numpy==...) make it a different environment

    @property
    def id(self) -> str:
        base = f"onnx{self.onnx}-ort{self.onnxruntime}"
        return f"{base}-{self.tag}" if self.tag else base

    def version(self, package: str) -> str:
        return self.onnx if package == "onnx" else self.onnxruntime


@dataclass(frozen=True)
class Plan:
    """The resolved run: cells in order, and which cells make up each axis."""

    cells: tuple[Cell, ...]
    axes: dict[str, tuple[Cell, ...]]  # "onnx" / "onnxruntime", or "cell" in cross mode
    cross: bool


def requirements(onnx: str, ort: str, constraints: tuple[Constraint, ...]) -> tuple[str, ...]:
    """Exact pins plus every declared constraint whose range holds."""
    pinned = {"onnx": onnx, "onnxruntime": ort}
    extra = [
        req for c in constraints if in_range(pinned[c.package], c.versions) for req in c.requires
    ]
    return (f"onnx=={onnx}", f"onnxruntime=={ort}", "numpy", "protobuf", *dict.fromkeys(extra))


def parse_version_list(text: str, flag: str) -> tuple[str, ...]:
    """`1.18.0,1.21.0` -> ("1.18.0", "1.21.0"), with a clear error for junk."""
    versions = tuple(v.strip() for v in text.split(",") if v.strip())
    if not versions:
        raise UsageError(f"{flag}: give at least one release, like {flag} 1.18.0,1.21.0")
    for v in versions:
        parse_version(v, flag)
    return versions


def expand(
    config: Config,
    onnx: tuple[str, ...] | None = None,
    ort: tuple[str, ...] | None = None,
    cross: bool = False,
) -> Plan:
    """Turns the axes (the config's, or those given on the command line) into cells."""
    onnx_versions = onnx or config.onnx.versions
    ort_versions = ort or config.onnxruntime.versions

    def cell(o: str, r: str) -> Cell:
        return Cell(o, r, requirements(o, r, config.constraints))

    if cross:
        cells = tuple(cell(o, r) for o in onnx_versions for r in ort_versions)
        return Plan(cells, {"cell": cells}, cross=True)
    onnx_axis = tuple(cell(o, config.onnx.pair) for o in onnx_versions)
    ort_axis = tuple(cell(config.onnxruntime.pair, r) for r in ort_versions)
    unique = tuple(dict.fromkeys(onnx_axis + ort_axis))
    return Plan(unique, {"onnx": onnx_axis, "onnxruntime": ort_axis}, cross=False)


def select_cells(plan: Plan, patterns: tuple[str, ...]) -> Plan:
    """Keeps the cells whose id matches any glob (used by --cells)."""
    if not patterns:
        return plan
    keep = {c for c in plan.cells if any(fnmatch.fnmatchcase(c.id, p) for p in patterns)}
    if not keep:
        ids = ", ".join(c.id for c in plan.cells)
        raise UsageError(f"--cells {','.join(patterns)} matches no cell; the cells are: {ids}")
    return Plan(
        tuple(c for c in plan.cells if c in keep),
        {name: tuple(c for c in cells if c in keep) for name, cells in plan.axes.items()},
        plan.cross,
    )


def parse_shard(text: str) -> tuple[int, int]:
    """`2/3` -> (2, 3)."""
    k, _, n = text.partition("/")
    if not (k.isdigit() and n.isdigit()) or not 1 <= int(k) <= int(n):
        raise UsageError(f"--shard {text}: write K/N with 1 <= K <= N, like --shard 2/3")
    return int(k), int(n)


def select_shard(plan: Plan, k: int, n: int) -> Plan:
    """Shard K of N: every N-th cell of the plan, starting at the K-th.

    Every job of a sharded run expands the same plan, so the assignment is the
    same on every machine, and the shards cover each cell exactly once.
    """
    keep = set(plan.cells[k - 1 :: n])
    return Plan(
        tuple(c for c in plan.cells if c in keep),
        {name: tuple(c for c in cells if c in keep) for name, cells in plan.axes.items()},
        plan.cross,
    )


def select_axis(plan: Plan, name: str) -> Plan:
    """Only the cells of one axis (`--axis onnxruntime`: the scoreboard's releases)."""
    if name not in plan.axes:
        raise UsageError(f"--axis {name}: this plan's axes are {', '.join(plan.axes)}")
    cells = plan.axes[name]
    return Plan(cells, {name: cells}, plan.cross)
