"""Expands the configured axes into the cells of a run."""

from __future__ import annotations

import fnmatch
import functools
import itertools
from dataclasses import dataclass, field, replace
from pathlib import Path

from packaging.utils import canonicalize_name

from compat.core.axis_names import axis_row, split_axis
from compat.core.errors import UsageError
from compat.core.install import InstallRequest
from compat.core.versions import exact_pin, in_range, parse_version
from compat.plan.config import Config, Constraint


@dataclass(frozen=True)
class Cell:
    """One environment of the matrix: exact onnx and onnxruntime releases, and the release
    of every extra axis (`--pkg protobuf=5.29.5`: `pins`)."""

    onnx: str
    onnxruntime: str
    requirements: InstallRequest
    tag: str = ""  # set when extra pins (a CI's numpy==...) make it a different environment
    pins: tuple[tuple[str, str], ...] = ()  # (package, release) of each extra axis
    onnx_dist: str = "onnx"  # the distribution onnx comes from: "onnx-weekly" for previews
    #: the CPython it runs on (`3.12`), "" for the run's interpreter (`--python PATH`)
    python: str = ""
    #: the plan has several Pythons: the id names this one (`py3.12-onnx…`)
    show_python: bool = False

    @property
    def releases(self) -> tuple[tuple[str, str], ...]:
        """(axis, release) of every axis the cell is on, in the order its id names them."""
        python = (("python", self.python),) if self.show_python else ()
        return (*python, ("onnx", self.onnx), ("onnxruntime", self.onnxruntime), *self.pins)

    @property
    def env_name(self) -> str:
        """Its environment's folder: the id, with the Python when the id leaves it out (a
        run on one other Python keeps its ids and builds environments of its own)."""
        hidden = self.python and not self.show_python
        return f"py{self.python}-{self.id}" if hidden else self.id

    @functools.cached_property  # read for every result of a run: made once
    def id(self) -> str:
        base = "-".join(axis_row(axis).label(release) for axis, release in self.releases)
        return f"{base}-{self.tag}" if self.tag else base

    def version(self, package: str) -> str:
        if package == "python":
            return self.python
        if package == "onnx":
            return self.onnx
        if package == "onnxruntime":
            return self.onnxruntime
        return dict(self.pins).get(package, "")


@dataclass(frozen=True)
class Plan:
    """The resolved run: cells in order, and which cells make up each axis."""

    cells: tuple[Cell, ...]
    #: "onnx" / "onnxruntime", or "cell" in cross mode; `onnx@3.12` … with several Pythons
    axes: dict[str, tuple[Cell, ...]]
    cross: bool
    #: per Python of a Python axis: (the onnxruntime release the onnx axis runs with, the
    #: onnx release the onnxruntime axis runs with), as the index let them follow it
    pairs: dict[str, tuple[str, str]] = field(default_factory=dict)

    def meta(self) -> dict[str, object]:
        """What a report records of the plan's Pythons: each one's pairs."""
        if not self.pairs:
            return {}
        return {
            "pythons": {
                python: {"onnx": onnx, "onnxruntime": ort}
                for python, (onnx, ort) in self.pairs.items()
            }
        }


def requirements(
    onnx: str,
    ort: str,
    constraints: tuple[Constraint, ...],
    pins: tuple[tuple[str, str], ...] = (),
    fixed: tuple[str, ...] = (),
    onnx_dist: str = "onnx",
    python: str = "",
) -> tuple[str, ...]:
    """Exact pins (onnx, onnxruntime, every extra axis) plus every declared constraint
    whose range holds (a constraint may name `python`), plus `fixed` requirements
    (`--with PKG==V`) for every cell."""
    pinned = {"onnx": onnx, "onnxruntime": ort, **dict(pins)}
    if python:
        pinned["python"] = python
    extra = [
        req
        for c in constraints
        if c.package in pinned and in_range(pinned[c.package], c.versions)
        for req in c.requires
    ]
    base = [f"{onnx_dist}=={onnx}", f"onnxruntime=={ort}", "numpy", "protobuf"]
    for name, version in pins:  # an axis package replaces its unpinned entry
        base = [r for r in base if r != name] + [f"{name}=={version}"]
    return tuple(dict.fromkeys([*base, *extra, *fixed]))


def tag_of(fixed: tuple[str, ...], editables: tuple[Path, ...] = ()) -> str:
    """What fixed requirements (and folders installed editable) add to a cell id:
    `with-numpy1.26.4`, `with-myproject`."""
    tags = []
    for requirement in fixed:
        name, version = exact_pin(requirement) or (requirement, "")
        tags.append(f"with-{name}{version}")
    tags += [f"with-{path.name}" for path in editables]
    return "-".join(tags)


#: What every cell installs: a bare `--with numpy` asks for nothing a cell lacks.
STACK = frozenset({"onnx", "onnx-weekly", "onnxruntime", "numpy", "protobuf"})


def parse_with(text: str, flag: str = "--with") -> tuple[str, bool]:
    """`numpy==1.26.4` or a range, `ml_dtypes>=0.5`: (the requirement, whether it pins one
    release exactly); an exact pin makes environments of its own, a range is resolved in
    each cell like the project's own requirements."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(text.strip())
    except InvalidRequirement:
        raise UsageError(
            f"{flag} {text}: give a requirement, like {flag} numpy==1.26.4 "
            f"or {flag} 'ml_dtypes>=0.5'"
        ) from None
    specs = list(req.specifier)
    if not specs and not req.url and canonicalize_name(req.name) in STACK:
        raise UsageError(
            f"{flag} {text}: every cell has {req.name} already; name a release or a range, "
            f"like {flag} {req.name}==1.26.4 or {flag} '{req.name}>=2'"
        )
    if (
        len(specs) == 1
        and specs[0].operator == "=="
        and "*" not in specs[0].version
        and not (req.marker or req.extras or req.url)
    ):
        parse_version(specs[0].version, f"{flag} {req.name}==")
        return f"{req.name.lower()}=={specs[0].version}", True
    return str(req), False


def parse_axis(text: str, flag: str = "--pkg") -> tuple[str, tuple[str, ...]]:
    """`protobuf=3.20.3,5.29.5` -> ("protobuf", ("3.20.3", "5.29.5"))."""
    name, sep, values = text.partition("=")
    name = name.strip().lower().replace("_", "-")
    if not sep or not name or not name.replace("-", "").replace(".", "").isalnum():
        raise UsageError(f"{flag} {text}: write NAME=V1,V2, like {flag} protobuf=5.29.5,6.33.0")
    if name in ("onnx", "onnxruntime"):
        raise UsageError(f"{flag} {text}: {name} has its own axis: use --{name[:4]} {values}")
    return name, parse_version_list(values, f"{flag} {name}=")


def parse_version_list(text: str, flag: str) -> tuple[str, ...]:
    """`1.18.0,1.21.0` -> ("1.18.0", "1.21.0"), with a clear error for junk."""
    versions = tuple(v.strip() for v in text.split(",") if v.strip())
    if not versions:
        raise UsageError(f"{flag} {text!r}: give at least one release, like {flag} 1.18.0,1.21.0")
    for v in versions:
        parse_version(v, flag)
    return versions


def make_cell(
    config: Config,
    onnx: str,
    ort: str,
    pins: tuple[tuple[str, str], ...] = (),
    fixed: tuple[str, ...] = (),
    onnx_dist: str = "onnx",
    python: str = "",
    show_python: bool = False,
    interpreter: str = "",
) -> Cell:
    """The cell of these releases, with the config's constraints and indexes and the
    `fixed` requirements every cell of the run installs. `interpreter`: the version of
    the run's interpreter, which a cell without a `python` runs on (for constraints)."""
    everywhere = fixed + config.requires  # the project's setup: not in the id
    reqs = requirements(
        onnx, ort, config.constraints, pins, everywhere, onnx_dist, python or interpreter
    )
    request = replace(indexes_of(config), pins=reqs, project=config.project)
    return Cell(onnx, ort, request, tag_of(fixed), pins, onnx_dist, python, show_python)


def indexes_of(config: Config) -> InstallRequest:
    """The indexes the axes' releases come from: the first `index-url` replaces the
    default index (another axis's different one is searched besides it), every
    `extra-index-url` is added."""
    replacing = [a.index_url for a in (config.onnx, config.onnxruntime) if a.index_url]
    added = [a.extra_index_url for a in (config.onnx, config.onnxruntime) if a.extra_index_url]
    extra = tuple(dict.fromkeys(u for u in [*replacing[1:], *added] if u not in replacing[:1]))
    return InstallRequest(index_url=next(iter(replacing), ""), extra_index_urls=extra)


def expand(
    config: Config,
    onnx: tuple[str, ...] | None = None,
    ort: tuple[str, ...] | None = None,
    cross: bool = False,
    extra: tuple[tuple[str, tuple[str, ...]], ...] | None = None,
    fixed: tuple[str, ...] = (),
    dists: dict[str, str] | None = None,
    pythons: tuple[str, ...] = (),
    pairs: dict[str, tuple[str, str]] | None = None,
    interpreter: str = "",
    main: str = "",
) -> Plan:
    """Turns the axes (the config's, or those given on the command line) into cells; each
    extra axis (`extra`, default the config's `[tool.compat.axes.*]`) multiplies them.
    `pairs`: per Python, the onnxruntime release the onnx axis runs with and the onnx
    release the onnxruntime axis runs with (the pair follows the Python:
    compat/plan/pairs.py); the config's by default. With several Pythons each axis is one
    per Python, keyed `onnx@3.12`: every release on every Python of `pythons`, or, with
    `main`, on that one only, and each other Python's axes are one cell, its newest pair
    (the onnx and onnxruntime releases the axes pair with there)."""
    onnx_versions = onnx or config.onnx.versions
    ort_versions = ort or config.onnxruntime.versions
    axes = config.axes if extra is None else extra
    choices = list(itertools.product(*[[(n, v) for v in vs] for n, vs in axes]))
    shown = len(pythons) > 1
    cells: list[Cell] = []
    by_axis: dict[str, tuple[Cell, ...]] = {}
    used = {p: (pairs or {}).get(p, (config.onnx.pair, config.onnxruntime.pair)) for p in pythons}

    def cells_of(o: str, r: str, python: str) -> tuple[Cell, ...]:
        dist = (dists or {}).get(o, "onnx")  # `dists`: onnx releases of a preview package
        return tuple(
            make_cell(config, o, r, pins, fixed, dist, python, shown, interpreter)
            for pins in choices
        )

    for python in ((main,) if main else pythons) or ("",):
        onnx_pair, ort_pair = used.get(python, (config.onnx.pair, config.onnxruntime.pair))
        suffix = f"@{python}" if shown else ""
        if cross:
            block = tuple(
                c for o in onnx_versions for r in ort_versions for c in cells_of(o, r, python)
            )
            by_axis[f"cell{suffix}"] = block
            cells += block
            continue
        onnx_axis = tuple(c for o in onnx_versions for c in cells_of(o, onnx_pair, python))
        ort_axis = tuple(c for r in ort_versions for c in cells_of(ort_pair, r, python))
        by_axis.update({f"onnx{suffix}": onnx_axis, f"onnxruntime{suffix}": ort_axis})
        cells += [*onnx_axis, *ort_axis]
    for python in pythons if main and shown else ():
        if python == main:
            continue
        # its newest pair: the onnx and the onnxruntime release the axes pair with there
        pair = cells_of(used[python][1], used[python][0], python)
        keys = ("cell",) if cross else ("onnx", "onnxruntime")
        by_axis.update({f"{key}@{python}": pair for key in keys})
        cells += pair
    return Plan(tuple(dict.fromkeys(cells)), by_axis, cross=cross, pairs=used)


def select_cells(plan: Plan, patterns: tuple[str, ...]) -> Plan:
    """Keeps the cells whose id matches any glob (used by --cells)."""
    if not patterns:
        return plan
    keep = {c for c in plan.cells if any(fnmatch.fnmatchcase(c.id, p) for p in patterns)}
    if not keep:
        ids = ", ".join(c.id for c in plan.cells)
        raise UsageError(f"--cells {','.join(patterns)} matches no cell; the cells are: {ids}")
    return _keep(plan, keep)


def _keep(plan: Plan, keep: set[Cell], axes: tuple[str, ...] | None = None) -> Plan:
    """The plan narrowed to the cells of `keep` (and to `axes`), in its order."""
    names = plan.axes if axes is None else axes
    return Plan(
        tuple(c for c in plan.cells if c in keep),
        {name: tuple(c for c in plan.axes[name] if c in keep) for name in names},
        plan.cross,
        plan.pairs,
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
    return _keep(plan, set(plan.cells[k - 1 :: n]))


def select_axis(plan: Plan, name: str) -> Plan:
    """Only the cells of one axis (`--axis onnxruntime`: the scoreboard's releases), on
    every Python of the plan."""
    names = tuple(a for a in plan.axes if split_axis(a)[0] == name)
    if not names:
        bases = dict.fromkeys(split_axis(a)[0] for a in plan.axes)
        raise UsageError(f"--axis {name}: this plan's axes are {', '.join(bases)}")
    return _keep(plan, {c for a in names for c in plan.axes[a]}, names)
