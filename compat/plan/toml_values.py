"""The checks every value of `[tool.compat]` goes through on its way into a Config, and
the reading of that table from a TOML file. Each returns the value as the Config holds
it, or raises the one-line ConfigError that names the file, the table, the key, the
value and what would fit. Apart from compat/plan/config.py (what the keys mean) because
every table there, and the known-failure tables of compat/plan/known_tables.py, share
them.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from compat.core.errors import ConfigError
from compat.core.versions import parse_version


def shown(value: Any) -> str:
    """A value as the error shows it: TOML-like, one line, at most 60 characters."""
    text = repr(value).replace("\n", "\\n")
    return text if len(text) <= 60 else text[:59] + "…"


def wrong_type(path: Path, where: str, key: str, value: Any, expected: str) -> ConfigError:
    """The one line for a value of the wrong type: file, table, key, value, what fits."""
    return ConfigError(f"{path}: [{where}] {key} = {shown(value)}: expected {expected}")


def as_table(value: Any, where: str, path: Path, example: str) -> dict[str, Any]:
    """A TOML table, or the error naming where it should have been one."""
    if not isinstance(value, dict):
        head, _, key = where.rpartition(".")
        raise wrong_type(path, head or where, key, value, f"a table, like [{where}] {example}")
    return value


def as_text(table: dict[str, Any], key: str, where: str, path: Path, example: str) -> str:
    """A required non-empty string."""
    value = require(table, key, where, path)
    if not isinstance(value, str) or not value.strip():
        raise wrong_type(path, where, key, value, f"a non-empty string, like {key} = {example!r}")
    return value


def as_count(table: dict[str, Any], key: str, where: str, path: Path, example: str) -> int | None:
    """A whole number, 0 or more, when the key is given (None when it is not)."""
    value = table.get(key)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise wrong_type(path, where, key, value, f"a whole number, 0 or more, like {example}")
    return value


def reject_unknown(table: dict[str, Any], allowed: set[str], where: str, path: Path) -> None:
    """An unknown key is an error naming it and the keys allowed, never ignored."""
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ConfigError(
            f"{path}: unknown key {unknown[0]!r} in [{where}]; "
            f"allowed keys are {', '.join(sorted(allowed))}"
        )


def require(table: dict[str, Any], key: str, where: str, path: Path) -> Any:
    """A required key's value, of any type: the caller checks the type."""
    if key not in table:
        raise ConfigError(f"{path}: [{where}] is missing {key!r}")
    return table[key]


def as_releases(versions: Any, where: str, path: Path) -> tuple[str, ...]:
    """A non-empty list of exact releases, each a string (a TOML number like 1.20 would
    silently be another release, 1.2)."""
    if (
        not isinstance(versions, list)
        or not versions
        or not all(isinstance(v, str) and v.strip() for v in versions)
    ):
        raise wrong_type(
            path,
            where,
            "versions",
            versions,
            'a non-empty list of releases as strings, like versions = ["1.18.0", "1.21.0"]',
        )
    for v in versions:
        parse_version(v, f"{path} [{where}] versions", ConfigError)
    return tuple(versions)


def as_strings(
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
            f"{path}: [{where}] {key} = {shown(value)}: {key} must be a list of strings "
            f"({each}), like {key} = [{example!r}]"
        )
    return tuple(value)


def read_compat_table(path: Path) -> dict[str, Any]:
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
        raise wrong_type(path, "top level", "tool", tool, "a table holding [tool.compat]")
    table = tool.get("compat")
    if table is None:
        raise ConfigError(f"{path}: no [tool.compat] table; see README.md for the format")
    return as_table(
        table, "tool.compat", path, "with [tool.compat.onnx] and [tool.compat.onnxruntime]"
    )
