"""Loads `[tool.compat]` from pyproject.toml into a frozen Config."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compat.errors import ConfigError
from compat.versions import parse_range, parse_version

PACKAGES = ("onnx", "onnxruntime")


@dataclass(frozen=True)
class Constraint:
    """Extra requirements a cell needs when `package` is in `versions`."""

    package: str
    versions: str
    requires: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class Axis:
    """One package's releases, each run with the other package's `pair` release."""

    package: str
    versions: tuple[str, ...]
    pair: str


@dataclass(frozen=True)
class Docs:
    """Committed docs tables (`compatibility.md` beside `results`), kept in sync by
    `nox -s report` and checked for drift by `nox -s report -- --check`."""

    results: Path
    collapse: bool = False
    ascii: bool = False


@dataclass(frozen=True)
class Config:
    onnx: Axis
    onnxruntime: Axis
    constraints: tuple[Constraint, ...]
    timeout: float
    source: Path
    cases_dirs: tuple[Path, ...] = ()  # drop-in model directories, relative to the config
    docs: Docs | None = None  # the committed docs tables and the results they render from


_TOP_KEYS = {"timeout", "onnx", "onnxruntime", "constraints", "cases-dirs", "docs"}
_DOCS_KEYS = {"results", "collapse", "ascii"}
_AXIS_KEYS = {"versions", "pair"}
_CONSTRAINT_KEYS = {"package", "versions", "requires", "reason"}


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


def _axis(table: dict[str, Any], package: str, path: Path) -> Axis:
    where = f"tool.compat.{package}"
    _reject_unknown(table, _AXIS_KEYS, where, path)
    versions = _require(table, "versions", where, path)
    if not isinstance(versions, list) or not versions:
        raise ConfigError(f"{path}: [{where}] versions must be a non-empty list of releases")
    for v in versions:
        parse_version(str(v), f"{path} [{where}] versions", ConfigError)
    pair = str(_require(table, "pair", where, path))
    parse_version(pair, f"{path} [{where}] pair", ConfigError)
    return Axis(package, tuple(str(v) for v in versions), pair)


def _constraint(table: dict[str, Any], index: int, path: Path) -> Constraint:
    where = f"tool.compat.constraints #{index + 1}"
    _reject_unknown(table, _CONSTRAINT_KEYS, where, path)
    package = _require(table, "package", where, path)
    if package not in PACKAGES:
        raise ConfigError(f"{path}: [{where}] package {package!r} must be one of {PACKAGES}")
    versions = str(_require(table, "versions", where, path))
    parse_range(versions, f"{path} [{where}] versions", ConfigError)
    requires = _require(table, "requires", where, path)
    return Constraint(package, versions, tuple(requires), str(table.get("reason", "")))


def _docs(table: dict[str, Any], path: Path) -> Docs:
    _reject_unknown(table, _DOCS_KEYS, "tool.compat.docs", path)
    results = path.parent / str(_require(table, "results", "tool.compat.docs", path))
    return Docs(results, bool(table.get("collapse", False)), bool(table.get("ascii", False)))


def load_config(path: Path) -> Config:
    """Reads and validates `[tool.compat]`; unknown keys are errors, never ignored."""
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read configuration: {exc}") from None
    table = data.get("tool", {}).get("compat")
    if table is None:
        raise ConfigError(f"{path}: no [tool.compat] table; see README.md for the format")
    _reject_unknown(table, _TOP_KEYS, "tool.compat", path)
    return Config(
        onnx=_axis(_require(table, "onnx", "tool.compat", path), "onnx", path),
        onnxruntime=_axis(_require(table, "onnxruntime", "tool.compat", path), "onnxruntime", path),
        constraints=tuple(
            _constraint(t, i, path) for i, t in enumerate(table.get("constraints", []))
        ),
        timeout=float(table.get("timeout", 60)),
        source=path,
        cases_dirs=tuple(path.parent / d for d in table.get("cases-dirs", [])),
        docs=_docs(table["docs"], path) if "docs" in table else None,
    )
