"""Loads `[tool.compat]` from pyproject.toml into a frozen Config: how each key becomes
the Config's value. Its keys, their types and their meanings are the schema's
(compat/resources/tool_compat.schema.json, checked by compat/plan/schema.py); what a
schema cannot say is checked here: releases and ranges that parse, requirements, a
constraint's axis. The known-failure tables are compat/plan/known_tables.py's."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compat import resources
from compat.core.errors import ConfigError
from compat.core.install import Project
from compat.core.versions import parse_range, parse_version
from compat.plan.index_config import AxisIndex
from compat.plan.known_tables import PACKAGES, KnownEntry, known_tables
from compat.plan.pythons import PythonTable, python_table
from compat.plan.schema import validate
from compat.plan.tolerance import Tolerance, read_tolerance
from compat.plan.toml_values import read_compat_table


@dataclass(frozen=True)
class Constraint:
    """Extra requirements a cell needs when `package` is in `versions`."""

    package: str
    versions: str
    requires: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class Axis:
    """One package's releases, each run with the other package's `pair` release;
    `follows`: a range (`versions = ">=1.15"`) the releases are resolved from, on the
    package index at plan time (compat/plan/follow.py), one per minor release."""

    package: str
    versions: tuple[str, ...]
    pair: str
    follows: str = ""
    #: where its releases come from when not the default index (onnxruntime nightlies
    #: live on another one): `index-url` replaces the index, `extra-index-url` adds one
    index_url: str = ""
    extra_index_url: str = ""

    @property
    def index(self) -> AxisIndex:
        """Its own indexes, as the plan asks them (compat/plan/index.py)."""
        extras = (self.extra_index_url,) if self.extra_index_url else ()
        return AxisIndex(self.index_url, extras)


@dataclass(frozen=True)
class Docs:
    """Committed docs tables (`compatibility.md` beside `results`), kept in sync by
    `nox -s report` and checked for drift by `nox -s report -- --check`."""

    results: Path
    collapse: bool = False
    ascii: bool = False
    #: a scoreboard run's stored results: docs/scoreboard.svg renders from them
    scoreboard: Path | None = None
    #: a --cross run's stored results: docs/writer_reader.md renders from them
    writer_reader: Path | None = None
    #: a --python run's stored results: docs/pythons.md renders from them
    pythons: Path | None = None
    #: where `results`' measured load limits are written for `compat.scan`
    load_limits: Path | None = None
    #: the configuration file that names them, for errors
    source: Path | None = None

    def named(self) -> dict[str, Path]:
        """The stored results the docs render from, by their key, as configured."""
        named = {
            "results": self.results,
            "scoreboard": self.scoreboard,
            "writer-reader": self.writer_reader,
            "pythons": self.pythons,
        }
        return {key: file for key, file in named.items() if file is not None}

    def stored(self) -> list[Path]:
        """The stored results the docs render from, each checked to exist: a missing one
        is one line naming the configuration file, the key and the value."""
        named = self.named()
        for key, file in named.items():
            if not file.is_file():
                where = f"{self.source}: " if self.source else ""
                value = os.path.relpath(file, self.source.parent) if self.source else str(file)
                raise ConfigError(
                    f"{where}[tool.compat.docs] {key} = {value!r}: no such file ({file}); "
                    "run the matrix and store its results there, or fix the path"
                )
        return list(named.values())


@dataclass(frozen=True)
class Config:
    onnx: Axis
    onnxruntime: Axis
    constraints: tuple[Constraint, ...]
    timeout: float
    source: Path
    cases_dirs: tuple[Path, ...] = ()  # drop-in model directories, relative to the config
    docs: Docs | None = None  # the committed docs tables and the results they render from
    known: tuple[KnownEntry, ...] = ()  # known failures of any case, as data
    #: extra axes, `[tool.compat.axes.NAME] versions = [...]`: each multiplies the cells
    axes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: the project's own commands, run in every cell like `--run` (`run = ["pytest -q"]`)
    run: tuple[str, ...] = ()
    #: what every cell installs besides its axes: requirements, ranges allowed, each
    #: resolved per cell (`requires = ["pytest", "hypothesis>=6"]`)
    requires: tuple[str, ...] = ()
    #: the project's PEP 735 dependency groups and its extras, installed in every cell
    groups: tuple[str, ...] = ()
    extras: tuple[str, ...] = ()
    #: the project every cell installs (its wheel): set by compat/workflow/project.py
    project: Project | None = None
    #: the built-in cases run beside the project's own models and commands
    corpus: str = "all"
    #: seconds one of the project's commands may run (a whole test suite), apart from
    #: `timeout`, which bounds one check of a model
    command_timeout: float = 900.0
    #: `[tool.compat.python]`: the Pythons of the run and what runs on each
    python: PythonTable = field(default_factory=PythonTable)
    #: the commands of `run`, by name, whose results are never cached: they run again
    #: every time (`no-cache = ["integration"]`)
    no_cache: tuple[str, ...] = ()
    #: more runs of an unexpected result (`--reruns` replaces it; None: its default)
    reruns: int | None = None
    #: `rtol`, `atol`: what your models' outputs may differ by (compat/plan/tolerance.py)
    tolerance: Tolerance = field(default_factory=Tolerance)


def _releases(versions: list[str], where: str) -> tuple[str, ...]:
    """Exact releases, each one that parses (the schema holds them non-empty strings)."""
    for version in versions:
        parse_version(version, f"{where} versions", ConfigError)
    return tuple(versions)


def _axis(table: dict[str, Any], package: str, path: Path) -> Axis:
    where = f"{path} [tool.compat.{package}]"
    pair = table["pair"]
    parse_version(pair, f"{where} pair", ConfigError)
    indexes = {
        "index_url": table.get("index-url", ""),
        "extra_index_url": table.get("extra-index-url", ""),
    }
    versions = table["versions"]
    if isinstance(versions, str):  # a range that follows the index
        parse_range(versions, f"{where} versions", ConfigError)
        return Axis(package, (), pair, versions.strip(), **indexes)
    return Axis(package, _releases(versions, where), pair, **indexes)


def _constraint(table: dict[str, Any], index: int, axes: tuple[str, ...], path: Path) -> Constraint:
    """One `[[tool.compat.constraints]]` table, on a package with an axis."""
    where = f"tool.compat.constraints #{index + 1}"
    package = table["package"]
    versions = table["versions"]
    if package not in axes:
        raise ConfigError(
            f"{path}: [{where}] package = {package!r}: no axis has this package, so the "
            f"constraint would never apply; expected one of {', '.join(axes)}"
        )
    parse_range(versions, f"{path} [{where}] versions", ConfigError)
    return Constraint(package, versions, tuple(table["requires"]), table.get("reason", ""))


def _requirements(items: list[str], path: Path) -> tuple[str, ...]:
    """`requires = [...]`: PEP 508 requirements, each checked here so a typo is one
    line naming it, not an install error in every cell."""
    from packaging.requirements import InvalidRequirement, Requirement

    for item in items:
        try:
            Requirement(item)
        except InvalidRequirement as exc:
            raise ConfigError(
                f"{path}: [tool.compat] requires: {item!r} is not a requirement ({exc}); "
                "write them like requires = ['pytest', 'hypothesis>=6']"
            ) from None
    return tuple(items)


def _docs(table: dict[str, Any], path: Path) -> Docs:
    def file(key: str) -> Path | None:
        return path.parent / table[key] if key in table else None

    return Docs(
        path.parent / table["results"],
        table.get("collapse", False),
        table.get("ascii", False),
        file("scoreboard"),
        file("writer-reader"),
        file("pythons"),
        _load_limits(table, path),
        source=path,
    )


def _load_limits(table: dict[str, Any], path: Path) -> Path | None:
    """`load-limits = "compat/resources/load_limits.json"`: the file's name is fixed (it is
    the name `compat.scan` reads); its folder is the key's."""
    name = resources.LOAD_LIMITS.name
    if "load-limits" not in table:
        return None
    value: str = table["load-limits"]
    if Path(value).name != name:
        raise ConfigError(
            f"{path}: [tool.compat.docs] load-limits = {value!r}: the file must be named {name} "
            f'(compat.scan reads that name); like load-limits = "compat/resources/{name}"'
        )
    return path.parent / value


def load_config(path: Path) -> Config:
    """Reads `[tool.compat]` and validates it against its schema (compat/plan/schema.py),
    then what a schema cannot say; unknown keys are errors, never ignored."""
    table = read_compat_table(path)
    validate(table, path)
    axes = _extra_axes(table.get("axes", {}), path)
    names = (*PACKAGES, "python", *(name for name, _ in axes))
    reruns = table.get("reruns")

    def listed(key: str) -> tuple[str, ...]:
        return tuple(table.get(key, []))

    return Config(
        onnx=_axis(table["onnx"], "onnx", path),
        onnxruntime=_axis(table["onnxruntime"], "onnxruntime", path),
        constraints=tuple(
            _constraint(t, i, names, path) for i, t in enumerate(table.get("constraints", []))
        ),
        timeout=float(table.get("timeout", 60)),
        source=path,
        cases_dirs=tuple(path.parent / d for d in listed("cases-dirs")),
        docs=_docs(table["docs"], path) if "docs" in table else None,
        known=tuple(known_tables(table.get("known", []), "tool.compat.known", path)),
        axes=axes,
        run=listed("run"),
        requires=_requirements(table.get("requires", []), path),
        groups=listed("groups"),
        extras=listed("extras"),
        corpus=table.get("corpus", "all"),
        command_timeout=float(table.get("command-timeout", 900)),
        python=python_table(table.get("python"), path),
        no_cache=listed("no-cache"),
        reruns=None if reruns is None else int(reruns),
        tolerance=read_tolerance(table),
    )


def _extra_axes(table: dict[str, Any], path: Path) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """`[tool.compat.axes.protobuf] versions = ["5.29.5", "6.33.0"]`, one table per package."""
    axes = []
    for name, axis in table.items():
        where = f"tool.compat.axes.{name}"
        if name in PACKAGES:
            raise ConfigError(f"{path}: [{where}]: {name} has its own axis, [tool.compat.{name}]")
        axes.append((name, _releases(axis["versions"], f"{path} [{where}]")))
    return tuple(axes)
