"""The JSON schema of onnx-compat's settings (compat/resources/tool_compat.schema.json):
`[tool.compat]` in pyproject.toml, and a drop-in folder's compat.toml (its
`definitions/folder`). One file says each table's keys, their types, their meanings
(`description`, the docs' reference reads them: `meanings`) and what fits when a value
does not (`errorMessage`, `examples`); `validate` turns the first error into the one
line onnx-compat prints. What a schema cannot say (a release that parses, a range, a
requirement, a constraint naming an axis) stays in the loaders.

`get_schema` is the validate-pyproject plugin (`validate_pyproject.tool_schema`), as
cibuildwheel offers its own: `validate-pyproject pyproject.toml` checks `[tool.compat]`
with the same file.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from compat import resources
from compat.core.errors import ConfigError

#: the schema's file, shipped in the wheel beside the other resources
SCHEMA_FILE = resources.TOOL_COMPAT_SCHEMA


@functools.cache
def _schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return loaded


def get_schema(tool_name: str = "compat") -> dict[str, Any]:
    """The schema of `[tool.compat]`, for validate-pyproject (a fresh copy each call)."""
    if tool_name != "compat":
        raise ValueError(f"onnx-compat's schema is for [tool.compat], not [tool.{tool_name}]")
    copy: dict[str, Any] = json.loads(json.dumps(_schema()))
    return copy


def meanings() -> dict[str, dict[str, str]]:
    """Each table by its TOML header (its `title`): key -> meaning (its `description`)."""
    root = _schema()
    tables = [root, *root["definitions"].values()]
    return {
        table["title"]: {key: prop["description"] for key, prop in table["properties"].items()}
        for table in tables
    }


def keys(table: str) -> tuple[str, ...]:
    """The keys of one table: "" for `[tool.compat]`, else its definition's name."""
    root = _schema()
    return tuple((root["definitions"][table] if table else root)["properties"])


@functools.cache
def _validator(definition: str) -> Any:
    from jsonschema import Draft7Validator

    root = _schema()
    if not definition:
        return Draft7Validator(root)
    return Draft7Validator(
        {"$ref": f"#/definitions/{definition}", "definitions": root["definitions"]}
    )


def validate(table: dict[str, Any], path: Path, definition: str = "") -> None:
    """`table` checked against `[tool.compat]`'s schema ("") or a definition's (`folder`:
    a compat.toml), or the one-line ConfigError naming the file, the table, the key, the
    value and what fits: of several errors, the one the file shows first (an unknown key
    of a table before a missing one, before its keys' values), as the loaders always
    checked them."""
    from jsonschema.exceptions import ValidationError, best_match

    errors = list(_validator(definition).iter_errors(table))
    errors += [
        ValidationError("nan is no number a setting can have", validator="nan", path=place)
        for place in _nans(table, [])
    ]
    if not errors:
        return
    first = min(_place(table, e) for e in errors)
    error = best_match(e for e in errors if _place(table, e) == first)
    root = _schema()
    schema = root["definitions"][definition] if definition else root
    prefix = [] if definition else ["tool", "compat"]
    raise ConfigError(_line(error, table, schema, path, prefix))


def _nans(value: Any, place: list[str | int]) -> list[list[str | int]]:
    """Where a TOML `nan` is: no comparison fails for it, so no schema refuses it."""
    if isinstance(value, float) and math.isnan(value):
        return [place]
    if isinstance(value, dict):
        items: list[tuple[str | int, Any]] = list(value.items())
    elif isinstance(value, list):
        items = list(enumerate(value))
    else:
        return []
    return [found for key, item in items for found in _nans(item, [*place, key])]


#: of a table's own errors, which one is said first
_TABLE_ERRORS = {"additionalProperties": 0, "required": 1}


def _place(instance: Any, error: Any) -> tuple[int, ...]:
    """Where an error is in the file: the position of each key or item on its way."""
    place = []
    for part in error.absolute_path:
        place.append(list(instance).index(part) if isinstance(instance, dict) else part)
        instance = instance[part]
    return (*place, -2 + _TABLE_ERRORS.get(error.validator, 2))


def _line(error: Any, instance: Any, schema: dict[str, Any], path: Path, prefix: list[str]) -> str:
    """The error as one line: `FILE: [TABLE] KEY = VALUE: what fits, like KEY = EXAMPLE`."""
    parts = list(error.absolute_path)
    if error.validator in ("additionalProperties", "required"):
        at = parts
        key = None
    else:  # the value of the innermost key: an item's list, a table's own key
        cut = max((i for i, p in enumerate(parts) if isinstance(p, str)), default=-1)
        at = parts[:cut]
        key = parts[cut] if cut >= 0 else None
    where = _where(prefix, at)
    head = f"{path}: [{where}] " if where else f"{path}: "
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        unknown = sorted(set(error.instance) - set(allowed))[0]
        table = f"[{where}]" if where else path.name
        return f"{path}: unknown key {unknown!r} in {table}; allowed keys are {', '.join(allowed)}"
    if error.validator == "required":
        missing = next(k for k in error.validator_value if k not in error.instance)
        return f"{head}is missing {missing!r}"
    if key is None:
        return f"{head}{error.message}"
    value = _at(instance, [*at, key])
    prop = _property(schema, [*at, key])
    fits = prop.get("errorMessage") or error.message
    examples = prop.get("examples")
    like = f", like {key} = {toml_value(examples[0])}" if examples else ""
    items = parts[len(at) + 1 :]  # an item of the key's list: said by itself too
    item = f"{shown(_at(value, items[:1]))} does not fit; " if items and len(value) > 1 else ""
    return f"{head}{key} = {shown(value)}: {item}{fits}{like}"


def _where(prefix: list[str], parts: Sequence[str | int]) -> str:
    """`["constraints", 0]` -> `tool.compat.constraints #1`."""
    where = ".".join(prefix)
    for part in parts:
        if isinstance(part, int):
            where += f" #{part + 1}"
        else:
            where = f"{where}.{part}" if where else part
    return where


def _at(instance: Any, parts: Sequence[str | int]) -> Any:
    for part in parts:
        instance = instance[part]
    return instance


def _property(schema: dict[str, Any], parts: Sequence[str | int]) -> dict[str, Any]:
    """The schema of the key at `parts` (the last one), following `$ref`s down to it."""
    for part in parts:
        schema = _resolved(_schema(), schema)
        if isinstance(part, int):
            schema = schema.get("items", {})
        elif part in schema.get("properties", {}):
            schema = schema["properties"][part]
        else:
            schema = schema.get("additionalProperties") or {}
    return schema


def _resolved(root: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = root["definitions"][schema["$ref"].rpartition("/")[2]]
    return schema


def shown(value: Any) -> str:
    """A value as the error shows it: one line, at most 60 characters."""
    text = repr(value).replace("\n", "\\n")
    return text if len(text) <= 60 else text[:59] + "…"


def toml_value(value: Any) -> str:
    """An example as TOML writes it: `"1.24.4"`, `["a", "b"]`, `true`, `60`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float) and 0 < value < 0.01:
        return f"{value:.0e}".replace("e-0", "e-")  # 1e-3, as a tolerance is written
    return repr(value)
