"""Known failures declared as data, outside a case module: `[[tool.compat.known]]` in
the config, or `[[known]]` in a drop-in folder's compat.toml, each table parsed into a
KnownEntry. Apart from compat/plan/config.py because drop-in folders
(compat/corpus/dropin.py) read these tables without a config around them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from compat.core.case import KnownFailure, Package
from compat.core.errors import ConfigError
from compat.core.versions import parse_range
from compat.plan.toml_values import as_strings, reject_unknown, require

#: the packages with an axis of their own, the ones a known failure may name
PACKAGES = ("onnx", "onnxruntime")
#: the raw outcomes a known failure may absorb (`outcomes = [...]`)
KNOWN_OUTCOMES = ("fail", "error", "crash", "timeout", "flaky")
_KNOWN_KEYS = {"cases", "package", "versions", "checks", "outcomes", "reason", "link"}


@dataclass(frozen=True)
class KnownEntry:
    """A known failure declared as data outside a case module: `[[tool.compat.known]]`
    in the config, or `[[known]]` in a drop-in folder's compat.toml. `cases` is an
    fnmatch glob (over case ids in the config, over model file names in a folder)."""

    cases: str
    failure: KnownFailure
    where: str  # "FILE [TABLE #N]", for error messages


def parse_known(table: Any, where: str, path: Path) -> KnownEntry:
    """One known-failure table, with the keys and meaning of `compat.core.case.KnownFailure`
    plus `cases`; `versions` defaults to every release, `outcomes` to fail and error."""
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [{where}] must be a table; write [[known]] tables")
    reject_unknown(table, _KNOWN_KEYS, where, path)
    cases = require(table, "cases", where, path)
    if not isinstance(cases, str) or not cases.strip():
        raise ConfigError(f"{path}: [{where}] cases must be one glob string, like cases = 'm.*'")
    package = require(table, "package", where, path)
    if package not in PACKAGES:
        raise ConfigError(f"{path}: [{where}] package {package!r} must be one of {PACKAGES}")
    versions = table.get("versions", "")
    if not isinstance(versions, str):
        raise ConfigError(f"{path}: [{where}] versions must be a string, like '>=1.18,<1.21'")
    parse_range(versions, f"{path} [{where}] versions", ConfigError)
    checks = as_strings(require(table, "checks", where, path), "checks", where, path, "ort_run")
    outcomes = as_strings(table.get("outcomes", ["fail", "error"]), "outcomes", where, path, "fail")
    wrong = [o for o in outcomes if o not in KNOWN_OUTCOMES]
    if wrong:
        raise ConfigError(
            f"{path}: [{where}] outcomes: {wrong[0]!r} is not one a known failure can absorb; "
            f"use {', '.join(KNOWN_OUTCOMES)}"
        )
    reason, link = require(table, "reason", where, path), table.get("link", "")
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
