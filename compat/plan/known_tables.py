"""Known failures declared as data, outside a case module: `[[tool.compat.known]]` in
the config, or `[[known]]` in a drop-in folder's compat.toml, each table parsed into a
KnownEntry. Apart from compat/plan/config.py because drop-in folders
(compat/corpus/dropin.py) read these tables without a config around them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from compat.core.case import KnownFailure, Package
from compat.core.errors import ConfigError
from compat.core.versions import parse_range
from compat.plan.toml_values import as_strings, reject_unknown, require, shown, wrong_type

#: the packages with an axis of their own, the ones a known failure may name
PACKAGES = ("onnx", "onnxruntime")
#: the raw outcomes a known failure may absorb (`outcomes = [...]`)
KNOWN_OUTCOMES = ("fail", "error", "crash", "timeout", "flaky")
#: what the failure looks like (its phase, its exception, its message), as pytest's
#: `xfail(raises=...)` says it: a failure in the range that looks otherwise is unexpected
_SYMPTOM_KEYS = {"phase", "raises", "match"}
_KNOWN_KEYS = {"cases", "package", "versions", "checks", "outcomes", "reason", "link"}
#: a phase as checks name them: `check`, `compare`, `session@all`, `run@disabled`
_PHASE = re.compile(r"[A-Za-z_][\w-]*(@[\w-]+)?")
#: an exception type's name, bare (`InferenceError`) or dotted (`onnx.checker.ValidationError`)
_TYPE_NAME = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
#: what fits each key of the failure's look, as its one-line error says
_PHASE_LIKE = (
    "a check's phase or a list of them, like phase = 'infer' or ['check', 'infer'] "
    "('session' or 'run' alone: at any optimization level)"
)
_RAISES_LIKE = "an exception type's name or a list of them, like raises = 'InferenceError'"
_MATCH_LIKE = "a regular expression searched in the failure's message, like match = 'must be 1D'"


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
    reject_unknown(table, _KNOWN_KEYS | _SYMPTOM_KEYS, where, path)
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
    if not isinstance(link, str) or (link and not re.match(r"https?://[^\s/]", link)):
        raise ConfigError(
            f"{path}: [{where}] link {link!r} is not an http(s) address: give the issue's "
            "URL, like 'https://github.com/onnx/onnx/issues/7910', or leave it out"
        )
    failure = KnownFailure(
        cast(Package, package),
        versions,
        checks,
        reason,
        link,
        outcomes,
        phase=_names(table, "phase", _PHASE, where, path, _PHASE_LIKE),
        raises=_names(table, "raises", _TYPE_NAME, where, path, _RAISES_LIKE),
        match=_pattern(table, where, path),
    )
    return KnownEntry(cases.strip(), failure, f"{path} [{where}]")


def _names(
    table: dict[str, Any], key: str, form: re.Pattern[str], where: str, path: Path, like: str
) -> tuple[str, ...]:
    """A name or a non-empty list of names, each of the `form` given; () when left out."""
    if key not in table:
        return ()
    value = table[key]
    names = [value] if isinstance(value, str) else value
    if (
        not isinstance(names, list)
        or not names
        or not all(isinstance(n, str) and form.fullmatch(n) for n in names)
    ):
        raise wrong_type(path, where, key, value, like)
    return tuple(names)


def _pattern(table: dict[str, Any], where: str, path: Path) -> str:
    """`match`: a regular expression that compiles; "" when left out."""
    match = table.get("match", "")
    if not isinstance(match, str) or ("match" in table and not match):
        raise wrong_type(path, where, "match", match, _MATCH_LIKE)
    try:
        re.compile(match)
    except re.error as exc:
        raise ConfigError(
            f"{path}: [{where}] match = {shown(match)}: not a regular expression ({exc}); "
            "escape what is meant literally, like match = 'splits \\(0\\)'"
        ) from None
    return match


def known_tables(value: Any, where: str, path: Path) -> list[KnownEntry]:
    """An array of known-failure tables (`[[where]]`), numbered from 1 in errors."""
    if not isinstance(value, list):
        raise ConfigError(f"{path}: [{where}] must be an array of tables: write [[{where}]]")
    return [parse_known(t, f"{where} #{i + 1}", path) for i, t in enumerate(value)]
