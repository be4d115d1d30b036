"""Loads `[tool.compat]` from pyproject.toml into a frozen Config."""

from __future__ import annotations

import math
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from compat.core.case import KnownFailure, Package
from compat.core.errors import ConfigError
from compat.core.versions import parse_range, parse_version

PACKAGES = ("onnx", "onnxruntime")
#: the raw outcomes a known failure may absorb (`outcomes = [...]`)
KNOWN_OUTCOMES = ("fail", "error", "crash", "timeout", "flaky")


@dataclass(frozen=True)
class Constraint:
    """Extra requirements a cell needs when `package` is in `versions`."""

    package: str
    versions: str
    requires: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class KnownEntry:
    """A known failure declared as data outside a case module: `[[tool.compat.known]]`
    in the config, or `[[known]]` in a drop-in folder's compat.toml. `cases` is an
    fnmatch glob (over case ids in the config, over model file names in a folder)."""

    cases: str
    failure: KnownFailure
    where: str  # "FILE [TABLE #N]", for error messages


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
            for flag, url in (("--index-url", self.index_url),
                              ("--extra-index-url", self.extra_index_url))
            if url
        )  # fmt: skip


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
    #: the configuration file that names them, for errors
    source: Path | None = None

    def stored(self) -> list[Path]:
        """The stored results the docs render from, each checked to exist: a missing one
        is one line naming the configuration file, the key and the value."""
        named = {"results": self.results, "scoreboard": self.scoreboard,
                 "writer-reader": self.writer_reader}  # fmt: skip
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
    #: the built-in cases run beside the project's own models and commands
    corpus: str = "all"
    #: seconds one of the project's commands may run (a whole test suite), apart from
    #: `timeout`, which bounds one check of a model
    command_timeout: float = 900.0


_TOP_KEYS = {
    "timeout", "onnx", "onnxruntime", "constraints", "cases-dirs", "docs", "known", "axes", "run",
    "requires", "groups", "extras", "corpus", "command-timeout",
}  # fmt: skip
#: `corpus = ...`: which built-in cases run beside the project's models and commands
CORPUS_CHOICES = ("all", "seed", "none")
_KNOWN_KEYS = {"cases", "package", "versions", "checks", "outcomes", "reason", "link"}
_DOCS_KEYS = {"results", "collapse", "ascii", "scoreboard", "writer-reader"}
_AXIS_KEYS = {"versions", "pair", "index-url", "extra-index-url"}
_CONSTRAINT_KEYS = {"package", "versions", "requires", "reason"}


def _shown(value: Any) -> str:
    """A value as the error shows it: TOML-like, one line, at most 60 characters."""
    text = repr(value).replace("\n", "\\n")
    return text if len(text) <= 60 else text[:59] + "…"


def _wrong(path: Path, where: str, key: str, value: Any, expected: str) -> ConfigError:
    """The one line for a value of the wrong type: file, table, key, value, what fits."""
    return ConfigError(f"{path}: [{where}] {key} = {_shown(value)}: expected {expected}")


def _table(value: Any, where: str, path: Path, example: str) -> dict[str, Any]:
    """A TOML table, or the error naming where it should have been one."""
    if not isinstance(value, dict):
        head, _, key = where.rpartition(".")
        raise _wrong(path, head or where, key, value, f"a table, like [{where}] {example}")
    return value


def _text(table: dict[str, Any], key: str, where: str, path: Path, example: str) -> str:
    """A required non-empty string."""
    value = _require(table, key, where, path)
    if not isinstance(value, str) or not value.strip():
        raise _wrong(path, where, key, value, f"a non-empty string, like {key} = {example!r}")
    return value


def _reject_unknown(table: dict[str, Any], allowed: set[str], where: str, path: Path) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ConfigError(
            f"{path}: unknown key {unknown[0]!r} in [{where}]; "
            f"allowed keys are {', '.join(sorted(allowed))}"
        )


def _require(table: dict[str, Any], key: str, where: str, path: Path) -> Any:
    if key not in table:
        raise ConfigError(f"{path}: [{where}] is missing {key!r}")
    return table[key]


def _releases(versions: Any, where: str, path: Path) -> tuple[str, ...]:
    """A non-empty list of exact releases, each a string (a TOML number like 1.20 would
    silently be another release, 1.2)."""
    if (
        not isinstance(versions, list)
        or not versions
        or not all(isinstance(v, str) and v.strip() for v in versions)
    ):
        raise _wrong(
            path, where, "versions", versions,
            'a non-empty list of releases as strings, like versions = ["1.18.0", "1.21.0"]',
        )  # fmt: skip
    for v in versions:
        parse_version(v, f"{path} [{where}] versions", ConfigError)
    return tuple(versions)


def _axis(value: Any, package: str, path: Path) -> Axis:
    where = f"tool.compat.{package}"
    table = _table(value, where, path, 'versions = [...] and pair = "1.24.4"')
    _reject_unknown(table, _AXIS_KEYS, where, path)
    versions = _require(table, "versions", where, path)
    pair = _text(table, "pair", where, path, "1.24.4")
    parse_version(pair, f"{path} [{where}] pair", ConfigError)
    urls = {key: table.get(key, "") for key in ("index-url", "extra-index-url")}
    for key, url in urls.items():
        if not isinstance(url, str) or (url and "://" not in url):
            raise ConfigError(f"{path}: [{where}] {key} = {_shown(url)}: {key} must be a URL, "
                              "like 'https://…/simple'")  # fmt: skip
    indexes = {"index_url": urls["index-url"], "extra_index_url": urls["extra-index-url"]}
    if isinstance(versions, str) and versions.strip():  # a range that follows the index
        parse_range(versions, f"{path} [{where}] versions", ConfigError)
        return Axis(package, (), pair, versions.strip(), **indexes)
    if not isinstance(versions, list) or not versions:
        raise _wrong(
            path, where, "versions", versions,
            'a non-empty list of releases, or a range like ">=1.15" that follows the '
            "package index",
        )  # fmt: skip
    return Axis(package, _releases(versions, where, path), pair, **indexes)


def _constraints(value: Any, axes: tuple[str, ...], path: Path) -> tuple[Constraint, ...]:
    """`[[tool.compat.constraints]]`: an array of tables, each on a package with an axis."""
    if not isinstance(value, list):
        raise _wrong(path, "tool.compat", "constraints", value,
                     "an array of tables: write [[tool.compat.constraints]]")  # fmt: skip
    return tuple(_constraint(table, i, axes, path) for i, table in enumerate(value))


def _constraint(value: Any, index: int, axes: tuple[str, ...], path: Path) -> Constraint:
    where = f"tool.compat.constraints #{index + 1}"
    if not isinstance(value, dict):
        raise ConfigError(
            f"{path}: [{where}] = {_shown(value)}: expected a table: write "
            "[[tool.compat.constraints]] with package, versions, requires"
        )
    table = value
    _reject_unknown(table, _CONSTRAINT_KEYS, where, path)
    package = _require(table, "package", where, path)
    if not isinstance(package, str) or not package:
        raise _wrong(path, where, "package", package,
                     "a string: the package must name an axis, like 'onnx'")  # fmt: skip
    if package not in axes:
        raise ConfigError(
            f"{path}: [{where}] package = {package!r}: no axis has this package, so the "
            f"constraint would never apply; expected one of {', '.join(axes)}"
        )
    versions = _require(table, "versions", where, path)
    if not isinstance(versions, str):
        raise _wrong(path, where, "versions", versions, "a range as a string, like '<1.18.1'")
    parse_range(versions, f"{path} [{where}] versions", ConfigError)
    requires = _strings(_require(table, "requires", where, path), "requires", where, path,
                        "numpy<2")  # fmt: skip
    reason = table.get("reason", "")
    if not isinstance(reason, str):
        raise _wrong(path, where, "reason", reason, "a string saying why")
    return Constraint(package, versions, requires, reason)


def _strings(
    value: Any, key: str, where: str, path: Path, example: str, empty: bool = False
) -> tuple[str, ...]:
    """A list of non-empty strings; an empty list only where `empty` allows it (a
    setting that may say "none", like `requires = []`)."""
    if (
        not isinstance(value, list)
        or not all(isinstance(v, str) and v.strip() for v in value)
        or not (value or empty)
    ):
        each = "each non-empty" if empty else "each non-empty, at least one"
        raise ConfigError(
            f"{path}: [{where}] {key} = {_shown(value)}: {key} must be a list of strings "
            f"({each}), like {key} = [{example!r}]"
        )
    return tuple(value)


def parse_known(table: Any, where: str, path: Path) -> KnownEntry:
    """One known-failure table, with the keys and meaning of `compat.core.case.KnownFailure`
    plus `cases`; `versions` defaults to every release, `outcomes` to fail and error."""
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [{where}] must be a table; write [[known]] tables")
    _reject_unknown(table, _KNOWN_KEYS, where, path)
    cases = _require(table, "cases", where, path)
    if not isinstance(cases, str) or not cases.strip():
        raise ConfigError(f"{path}: [{where}] cases must be one glob string, like cases = 'm.*'")
    package = _require(table, "package", where, path)
    if package not in PACKAGES:
        raise ConfigError(f"{path}: [{where}] package {package!r} must be one of {PACKAGES}")
    versions = table.get("versions", "")
    if not isinstance(versions, str):
        raise ConfigError(f"{path}: [{where}] versions must be a string, like '>=1.18,<1.21'")
    parse_range(versions, f"{path} [{where}] versions", ConfigError)
    checks = _strings(_require(table, "checks", where, path), "checks", where, path, "ort_run")
    outcomes = _strings(table.get("outcomes", ["fail", "error"]), "outcomes", where, path, "fail")
    wrong = [o for o in outcomes if o not in KNOWN_OUTCOMES]
    if wrong:
        raise ConfigError(
            f"{path}: [{where}] outcomes: {wrong[0]!r} is not one a known failure can absorb; "
            f"use {', '.join(KNOWN_OUTCOMES)}"
        )
    reason, link = _require(table, "reason", where, path), table.get("link", "")
    if not isinstance(reason, str) or not reason.strip():
        raise ConfigError(f"{path}: [{where}] reason must say what fails and why, as a string")
    if not isinstance(link, str):
        raise ConfigError(f"{path}: [{where}] link must be a string (an issue URL)")
    failure = KnownFailure(cast(Package, package), versions, checks, reason, link, outcomes)
    return KnownEntry(cases.strip(), failure, f"{path} [{where}]")


def known_tables(value: Any, where: str, path: Path) -> list[KnownEntry]:
    """An array of known-failure tables (`[[where]]`), numbered from 1 in errors."""
    if not isinstance(value, list):
        raise ConfigError(f"{path}: [{where}] must be an array of tables: write [[{where}]]")
    return [parse_known(t, f"{where} #{i + 1}", path) for i, t in enumerate(value)]


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

    items = _strings(value, "requires", "tool.compat", path, "pytest>=8", empty=True)
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
    table = _table(value, where, path, 'results = "docs/matrix.json.gz"')
    _reject_unknown(table, _DOCS_KEYS, where, path)
    results = _text(table, "results", where, path, "docs/matrix.json.gz")
    files = {key: _text(table, key, where, path, f"docs/{key}.json.gz")
             for key in ("scoreboard", "writer-reader") if key in table}  # fmt: skip
    flags = {key: table.get(key, False) for key in ("collapse", "ascii")}
    for key, flag in flags.items():
        if not isinstance(flag, bool):
            raise _wrong(path, where, key, flag, f"true or false, like {key} = true")
    return Docs(
        path.parent / results,
        flags["collapse"],
        flags["ascii"],
        path.parent / files["scoreboard"] if "scoreboard" in files else None,
        path.parent / files["writer-reader"] if "writer-reader" in files else None,
        source=path,
    )


def load_config(path: Path) -> Config:
    """Reads and validates `[tool.compat]`; unknown keys are errors, never ignored."""
    table = _compat_table(path)
    _reject_unknown(table, _TOP_KEYS, "tool.compat", path)
    axes = _extra_axes(table.get("axes", {}), path)
    top = "tool.compat"

    def listed(key: str, example: str) -> tuple[str, ...]:
        return _strings(table.get(key, []), key, top, path, example, empty=True)

    return Config(
        onnx=_axis(_require(table, "onnx", top, path), "onnx", path),
        onnxruntime=_axis(_require(table, "onnxruntime", top, path), "onnxruntime", path),
        constraints=_constraints(
            table.get("constraints", []), (*PACKAGES, *(name for name, _ in axes)), path
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
    )


def _compat_table(path: Path) -> dict[str, Any]:
    """`[tool.compat]` of a UTF-8 TOML file, or one line saying why there is none."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read configuration: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: cannot read configuration: not UTF-8 text (byte {raw[exc.start]:#04x} "
            f"at offset {exc.start}); TOML files are UTF-8"
        ) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        said = " ".join(str(exc).split())
        raise ConfigError(f"{path}: cannot read configuration: {said}") from None
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise _wrong(path, "top level", "tool", tool, "a table holding [tool.compat]")
    table = tool.get("compat")
    if table is None:
        raise ConfigError(f"{path}: no [tool.compat] table; see README.md for the format")
    return _table(
        table, "tool.compat", path, "with [tool.compat.onnx] and [tool.compat.onnxruntime]"
    )


def _extra_axes(table: Any, path: Path) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """`[tool.compat.axes.protobuf] versions = ["5.29.5", "6.33.0"]`, one table per package."""
    if not isinstance(table, dict):
        raise _wrong(path, "tool.compat", "axes", table,
                     "one table per package, like [tool.compat.axes.protobuf]")  # fmt: skip
    axes = []
    for name, axis in table.items():
        where = f"tool.compat.axes.{name}"
        _table(axis, where, path, "versions = [...]")
        _reject_unknown(axis, {"versions"}, where, path)
        if name in PACKAGES:
            raise ConfigError(f"{path}: [{where}]: {name} has its own axis, [tool.compat.{name}]")
        axes.append((name, _releases(_require(axis, "versions", where, path), where, path)))
    return tuple(axes)
