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
from compat.plan.schema import shown

#: the packages with an axis of their own, the ones a known failure may name
PACKAGES = ("onnx", "onnxruntime")


@dataclass(frozen=True)
class KnownEntry:
    """A known failure declared as data outside a case module: `[[tool.compat.known]]`
    in the config, or `[[known]]` in a drop-in folder's compat.toml. `cases` is an
    fnmatch glob (over case ids in the config, over model file names in a folder)."""

    cases: str
    failure: KnownFailure
    where: str  # "FILE [TABLE #N]", for error messages


def parse_known(table: dict[str, Any], where: str, path: Path) -> KnownEntry:
    """One known-failure table, with the keys and meaning of `compat.core.case.KnownFailure`
    plus `cases`; `versions` defaults to every release, `outcomes` to fail and error. The
    schema (compat/plan/schema.py) has checked each key's type; here what it cannot say."""
    versions = table.get("versions", "")
    parse_range(versions, f"{path} [{where}] versions", ConfigError)
    failure = KnownFailure(
        cast(Package, table["package"]),
        versions,
        tuple(table["checks"]),
        table["reason"],
        table.get("link", ""),
        tuple(table.get("outcomes", ["fail", "error"])),
        phase=_names(table.get("phase", ())),
        raises=_names(table.get("raises", ())),
        match=_pattern(table, where, path),
    )
    return KnownEntry(table["cases"].strip(), failure, f"{path} [{where}]")


def _names(value: str | list[str]) -> tuple[str, ...]:
    """A name or a list of names, as a tuple; () when left out."""
    return (value,) if isinstance(value, str) else tuple(value)


def _pattern(table: dict[str, Any], where: str, path: Path) -> str:
    """`match`: a regular expression that compiles; "" when left out."""
    match: str = table.get("match", "")
    try:
        re.compile(match)
    except re.error as exc:
        raise ConfigError(
            f"{path}: [{where}] match = {shown(match)}: not a regular expression ({exc}); "
            "escape what is meant literally, like match = 'splits \\(0\\)'"
        ) from None
    return match


def known_tables(tables: list[dict[str, Any]], where: str, path: Path) -> list[KnownEntry]:
    """An array of known-failure tables (`[[where]]`), numbered from 1 in errors."""
    return [parse_known(t, f"{where} #{i + 1}", path) for i, t in enumerate(tables)]
