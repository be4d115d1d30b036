"""The pyproject.toml `init` reads and extends, checked both ways.

Read: it must be UTF-8 TOML whose values init reads have the types PEP 621 and PEP 735
give them (`project = "x"` is no project table), else a one-line error names the file,
the value and the fix. Written: the text init would write is parsed back (tomllib)
before the file is replaced: its `[tool.compat]` must hold what was meant and the rest
of the file must read as it did, or nothing is written.
"""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from typing import Any

from compat.adopt.writes import read_text, shown
from compat.core.errors import CompatError, UsageError

NAME = "pyproject.toml"

#: the values init reads, by their keys, and the TOML type each must have
SHAPES: dict[tuple[str, ...], type] = {
    ("project",): dict,
    ("project", "name"): str,
    ("project", "requires-python"): str,
    ("project", "dependencies"): list,
    ("project", "optional-dependencies"): dict,
    ("dependency-groups",): dict,
    ("tool",): dict,
    ("tool", "pytest"): dict,
}
#: tables each value of which is an array of requirements: the extras and the groups
ARRAYS = (("project", "optional-dependencies"), ("dependency-groups",))

_TYPES = {
    dict: "a table",
    list: "an array",
    str: "a string",
    bool: "a boolean",
    int: "an integer",
    float: "a float",
}


def _type(value: object) -> str:
    return next((n for t, n in _TYPES.items() if isinstance(value, t)), "a date or time")


def _value(value: object) -> str:
    text = shown(repr(value))
    return text if len(text) <= 40 else text[:37] + "..."


def _wrong(keys: tuple[str, ...], value: object, want: type) -> UsageError:
    dotted = ".".join(keys)
    table = f"a [{dotted}] table" if want is dict else _TYPES[want]
    return UsageError(
        f"{NAME}: `{dotted}` is {_type(value)} ({_value(value)}), not {_TYPES[want]}: "
        f"write it as {table}, as PEP 621 and PEP 735 define it, then run init again"
    )


def check_shape(data: dict[str, Any]) -> None:
    """The values init reads have their types (SHAPES, ARRAYS), else a one-line error."""
    for keys, want in SHAPES.items():
        value: Any = data
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        if value is not None and not isinstance(value, want):
            raise _wrong(keys, value, want)
    for keys in ARRAYS:
        table = data.get(keys[0], {})
        table = table.get(keys[1], {}) if len(keys) > 1 else table
        for name, value in table.items():
            if not isinstance(value, list):
                raise _wrong((*keys, name), value, list)


def load(project: Path) -> tuple[str, dict[str, Any]]:
    """The text of the project's pyproject.toml ("" when it has none) and its values,
    checked (`check_shape`); a one-line error when it is no file, not UTF-8, not TOML."""
    text = read_text(project, NAME)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(
            f"{NAME} is not valid TOML: {shown(str(exc))}: fix it (pip, uv and nox cannot "
            "read it either), then run init again"
        ) from None
    check_shape(data)
    return text, data


def has_tool_compat(text: str, data: dict[str, Any]) -> bool:
    """Whether the file has a [tool.compat] table already (or a line naming one)."""
    return "[tool.compat" in text or "compat" in data.get("tool", {})


def check_appended(before: dict[str, Any], text: str, meant: dict[str, Any]) -> None:
    """`text`, the whole file init would write, parses; its [tool.compat] holds `meant`
    (key: value) and the rest reads as `before`, the file's values as they were."""
    try:
        after = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(
            f"{NAME}: with [tool.compat] appended it would not be valid TOML "
            f"({shown(str(exc))}), so nothing was written: a `tool = {{...}}` inline table "
            "cannot gain it: write [tool] as a table, or add [tool.compat] by hand"
        ) from None
    rest = copy.deepcopy(after)
    tool = rest.get("tool", {})
    written = tool.pop("compat", None)
    if not tool and "tool" not in before:
        rest.pop("tool", None)
    wrong = not isinstance(written, dict) or any(written.get(k) != v for k, v in meant.items())
    if wrong or rest != before:
        raise CompatError(
            f"{NAME}: the [tool.compat] init made reads back otherwise than meant, so nothing "
            "was written: a bug of onnx-compat; please report it with your pyproject.toml"
        )
