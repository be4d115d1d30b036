"""The reading of `[tool.compat]` from a TOML file: a UTF-8 TOML document with a
`[tool.compat]` table, or the one-line ConfigError saying why not. What the table holds
is the schema's to check (compat/plan/schema.py). Apart from compat/plan/config.py
because a project's own axes (compat/corpus/project_axes.py) read the table too.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from compat.core.errors import ConfigError
from compat.plan.schema import shown


def _wrong_type(path: Path, where: str, key: str, value: Any, expected: str) -> ConfigError:
    """The one line for a value of the wrong type: file, table, key, value, what fits."""
    return ConfigError(f"{path}: [{where}] {key} = {shown(value)}: expected {expected}")


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
        raise _wrong_type(path, "top level", "tool", tool, "a table holding [tool.compat]")
    table = tool.get("compat")
    if table is None:
        raise ConfigError(f"{path}: no [tool.compat] table; see README.md for the format")
    if not isinstance(table, dict):
        example = (
            "a table: write [tool.compat] with [tool.compat.onnx] and [tool.compat.onnxruntime]"
        )
        raise _wrong_type(path, "tool", "compat", table, example)
    return table
