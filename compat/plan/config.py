"""Loads `[tool.compat]` from pyproject.toml into a frozen Config: what each key means
and how it becomes the Config's value. The checks every value shares live in
compat/plan/toml_values.py, the known-failure tables in compat/plan/known_tables.py."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compat import resources
from compat.core.errors import ConfigError
from compat.core.install import Project
from compat.core.versions import parse_range, parse_version
from compat.plan.known_tables import PACKAGES, KnownEntry, known_tables
from compat.plan.pythons import PythonTable, python_table
from compat.plan.tolerance import Tolerance, read_tolerance
from compat.plan.toml_values import (
    as_count,
    as_releases,
    as_strings,
    as_table,
    as_text,
    read_compat_table,
    reject_unknown,
    require,
    shown,
    wrong_type,
)


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
    def index_args(self) -> tuple[str, ...]:
        """uv's arguments for this axis's index, as cell requirements carry them."""
        return tuple(
            f"{flag} {url}"
            for flag, url in (
                ("--index-url", self.index_url),
                ("--extra-index-url", self.extra_index_url),
            )
            if url
        )


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

    def stored(self) -> list[Path]:
        """The stored results the docs render from, each checked to exist: a missing one
        is one line naming the configuration file, the key and the value."""
        named = {
            "results": self.results,
            "scoreboard": self.scoreboard,
            "writer-reader": self.writer_reader,
            "pythons": self.pythons,
        }
        for key, file in named.items():
            if file is not None and not file.is_file():
                where = f"{self.source}: " if self.source else ""
                value = os.path.relpath(file, self.source.parent) if self.source else str(file)
                raise ConfigError(
                    f"{where}[tool.compat.docs] {key} = {value!r}: no such file ({file}); "
                    "run the matrix and store its results there, or fix the path"
                )
        return [file for file in named.values() if file is not None]


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


_TOP_KEYS = {
    "timeout",
    "onnx",
    "onnxruntime",
    "constraints",
    "cases-dirs",
    "docs",
    "known",
    "axes",
    "run",
    "requires",
    "groups",
    "extras",
    "corpus",
    "command-timeout",
    "python",
    "no-cache",
    "reruns",
    "rtol",
    "atol",
}


#: `corpus = ...`: which built-in cases run beside the project's models and commands
CORPUS_CHOICES = ("all", "seed", "none")


_DOCS_KEYS = {
    "results",
    "collapse",
    "ascii",
    "scoreboard",
    "writer-reader",
    "pythons",
    "load-limits",
}


_AXIS_KEYS = {"versions", "pair", "index-url", "extra-index-url"}


_CONSTRAINT_KEYS = {"package", "versions", "requires", "reason"}


def _axis(value: Any, package: str, path: Path) -> Axis:
    where = f"tool.compat.{package}"
    table = as_table(value, where, path, 'versions = [...] and pair = "1.24.4"')
    reject_unknown(table, _AXIS_KEYS, where, path)
    versions = require(table, "versions", where, path)
    pair = as_text(table, "pair", where, path, "1.24.4")
    parse_version(pair, f"{path} [{where}] pair", ConfigError)
    urls = {key: table.get(key, "") for key in ("index-url", "extra-index-url")}
    for key, url in urls.items():
        if not isinstance(url, str) or (url and "://" not in url):
            raise ConfigError(
                f"{path}: [{where}] {key} = {shown(url)}: {key} must be a URL, "
                "like 'https://…/simple'"
            )
    indexes = {"index_url": urls["index-url"], "extra_index_url": urls["extra-index-url"]}
    if isinstance(versions, str) and versions.strip():  # a range that follows the index
        parse_range(versions, f"{path} [{where}] versions", ConfigError)
        return Axis(package, (), pair, versions.strip(), **indexes)
    if not isinstance(versions, list) or not versions:
        raise wrong_type(
            path,
            where,
            "versions",
            versions,
            'a non-empty list of releases, or a range like ">=1.15" that follows the package index',
        )
    return Axis(package, as_releases(versions, where, path), pair, **indexes)


def _constraints(value: Any, axes: tuple[str, ...], path: Path) -> tuple[Constraint, ...]:
    """`[[tool.compat.constraints]]`: an array of tables, each on a package with an axis."""
    if not isinstance(value, list):
        raise wrong_type(
            path,
            "tool.compat",
            "constraints",
            value,
            "an array of tables: write [[tool.compat.constraints]]",
        )
    return tuple(_constraint(table, i, axes, path) for i, table in enumerate(value))


def _constraint(value: Any, index: int, axes: tuple[str, ...], path: Path) -> Constraint:
    where = f"tool.compat.constraints #{index + 1}"
    if not isinstance(value, dict):
        raise ConfigError(
            f"{path}: [{where}] = {shown(value)}: expected a table: write "
            "[[tool.compat.constraints]] with package, versions, requires"
        )
    table = value
    reject_unknown(table, _CONSTRAINT_KEYS, where, path)
    package = require(table, "package", where, path)
    if not isinstance(package, str) or not package:
        raise wrong_type(
            path, where, "package", package, "a string: the package must name an axis, like 'onnx'"
        )
    if package not in axes:
        raise ConfigError(
            f"{path}: [{where}] package = {package!r}: no axis has this package, so the "
            f"constraint would never apply; expected one of {', '.join(axes)}"
        )
    versions = require(table, "versions", where, path)
    if not isinstance(versions, str):
        raise wrong_type(path, where, "versions", versions, "a range as a string, like '<1.18.1'")
    parse_range(versions, f"{path} [{where}] versions", ConfigError)
    requires = as_strings(
        require(table, "requires", where, path), "requires", where, path, "numpy<2"
    )
    reason = table.get("reason", "")
    if not isinstance(reason, str):
        raise wrong_type(path, where, "reason", reason, "a string saying why")
    return Constraint(package, versions, requires, reason)


def _timeout(value: Any, path: Path, key: str = "timeout", example: int = 60) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
        raise ConfigError(
            f"{path}: [tool.compat] {key} = {value!r}: give a positive number of seconds, "
            f"like {key} = {example}"
        )
    return float(value)


def _requirements(value: Any, path: Path) -> tuple[str, ...]:
    """`requires = [...]`: PEP 508 requirements, each checked here so a typo is one
    line naming it, not an install error in every cell."""
    from packaging.requirements import InvalidRequirement, Requirement

    items = as_strings(value, "requires", "tool.compat", path, "pytest>=8", empty=True)
    for item in items:
        try:
            Requirement(item)
        except InvalidRequirement as exc:
            raise ConfigError(
                f"{path}: [tool.compat] requires: {item!r} is not a requirement ({exc}); "
                "write them like requires = ['pytest', 'hypothesis>=6']"
            ) from None
    return items


def _corpus(value: Any, path: Path) -> str:
    if value not in CORPUS_CHOICES:
        raise ConfigError(
            f"{path}: [tool.compat] corpus = {value!r}: use one of {', '.join(CORPUS_CHOICES)} "
            "(all: every built-in case; seed: the seed families; none: only your models and "
            "commands)"
        )
    return str(value)


def _docs(value: Any, path: Path) -> Docs:
    where = "tool.compat.docs"
    table = as_table(value, where, path, 'results = "docs/matrix.json.gz"')
    reject_unknown(table, _DOCS_KEYS, where, path)
    results = as_text(table, "results", where, path, "docs/matrix.json.gz")
    files = {
        key: as_text(table, key, where, path, f"docs/{key}.json.gz")
        for key in ("scoreboard", "writer-reader", "pythons")
        if key in table
    }
    flags = {key: table.get(key, False) for key in ("collapse", "ascii")}
    for key, flag in flags.items():
        if not isinstance(flag, bool):
            raise wrong_type(path, where, key, flag, f"true or false, like {key} = true")
    return Docs(
        path.parent / results,
        flags["collapse"],
        flags["ascii"],
        path.parent / files["scoreboard"] if "scoreboard" in files else None,
        path.parent / files["writer-reader"] if "writer-reader" in files else None,
        path.parent / files["pythons"] if "pythons" in files else None,
        _load_limits(table, where, path),
        source=path,
    )


def _load_limits(table: dict[str, Any], where: str, path: Path) -> Path | None:
    """`load-limits = "compat/resources/load_limits.json"`: the file's name is fixed (it is
    the name `compat.scan` reads); its folder is the key's."""
    name = resources.LOAD_LIMITS.name
    if "load-limits" not in table:
        return None
    value = as_text(table, "load-limits", where, path, f"compat/resources/{name}")
    if Path(value).name != name:
        raise ConfigError(
            f"{path}: [{where}] load-limits = {value!r}: the file must be named {name} "
            f'(compat.scan reads that name); like load-limits = "compat/resources/{name}"'
        )
    return path.parent / value


def load_config(path: Path) -> Config:
    """Reads and validates `[tool.compat]`; unknown keys are errors, never ignored."""
    table = read_compat_table(path)
    reject_unknown(table, _TOP_KEYS, "tool.compat", path)
    axes = _extra_axes(table.get("axes", {}), path)
    top = "tool.compat"

    def listed(key: str, example: str) -> tuple[str, ...]:
        return as_strings(table.get(key, []), key, top, path, example, empty=True)

    return Config(
        onnx=_axis(require(table, "onnx", top, path), "onnx", path),
        onnxruntime=_axis(require(table, "onnxruntime", top, path), "onnxruntime", path),
        constraints=_constraints(
            table.get("constraints", []), (*PACKAGES, "python", *(name for name, _ in axes)), path
        ),
        timeout=_timeout(table.get("timeout", 60), path),
        source=path,
        cases_dirs=tuple(path.parent / d for d in listed("cases-dirs", "models")),
        docs=_docs(table["docs"], path) if "docs" in table else None,
        known=tuple(known_tables(table.get("known", []), "tool.compat.known", path)),
        axes=axes,
        run=listed("run", "pytest -q"),
        requires=_requirements(table.get("requires", []), path),
        groups=listed("groups", "test"),
        extras=listed("extras", "test"),
        corpus=_corpus(table.get("corpus", "all"), path),
        command_timeout=_timeout(table.get("command-timeout", 900), path, "command-timeout", 900),
        python=python_table(table.get("python"), path),
        no_cache=listed("no-cache", "integration"),
        reruns=as_count(table, "reruns", "tool.compat", path, "reruns = 1 (0: none)"),
        tolerance=read_tolerance(table, top, path),
    )


def _extra_axes(table: Any, path: Path) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """`[tool.compat.axes.protobuf] versions = ["5.29.5", "6.33.0"]`, one table per package."""
    if not isinstance(table, dict):
        raise wrong_type(
            path,
            "tool.compat",
            "axes",
            table,
            "one table per package, like [tool.compat.axes.protobuf]",
        )
    axes = []
    for name, axis in table.items():
        where = f"tool.compat.axes.{name}"
        as_table(axis, where, path, "versions = [...]")
        reject_unknown(axis, {"versions"}, where, path)
        if name in PACKAGES:
            raise ConfigError(f"{path}: [{where}]: {name} has its own axis, [tool.compat.{name}]")
        axes.append((name, as_releases(require(axis, "versions", where, path), where, path)))
    return tuple(axes)
