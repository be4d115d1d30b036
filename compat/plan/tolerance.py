"""The tolerance your models' outputs are compared with, as the configuration sets it:
`rtol` and `atol` in `[tool.compat]` (every model of the project), at the top of a
drop-in folder's compat.toml (every model in it), and in its `[[tolerance]]` tables (the
models whose file names a glob matches, or only some of their outputs).

A comparison passes where |got - expected| <= atol + rtol * |expected|, numpy's
`isclose`, element by element. The most specific setting wins, rtol and atol each on its
own: an output's table, then a model's, then the folder's, then `[tool.compat]`'s, then
the default (rtol 1e-4, atol 1e-5); of two tables as specific, the later. Apart from
compat/plan/config.py because a drop-in folder (compat/corpus/dropin.py) reads these
keys without a config around them.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from compat.core.errors import ConfigError

DEFAULT_RTOL = 1e-4
DEFAULT_ATOL = 1e-5


@dataclass(frozen=True)
class Tolerance:
    """What a comparison of outputs allows: a relative and an absolute difference."""

    rtol: float = DEFAULT_RTOL
    atol: float = DEFAULT_ATOL


@dataclass(frozen=True)
class ToleranceTable:
    """One `[[tolerance]]` table of a drop-in folder's compat.toml."""

    cases: str  # an fnmatch glob over the folder's model file names
    outputs: tuple[str, ...]  # the outputs it sets; (): every output of those models
    rtol: float | None
    atol: float | None
    where: str  # "FILE [tolerance #N]", for errors


@dataclass(frozen=True)
class ModelTolerance:
    """One model's tolerance: of every output, and of the outputs with their own."""

    every: Tolerance = field(default_factory=Tolerance)
    outputs: Mapping[str, Tolerance] = field(default_factory=dict)


def read_tolerance(table: Mapping[str, Any], base: Tolerance | None = None) -> Tolerance:
    """`rtol` and `atol` of a table (`[tool.compat]`, a compat.toml's top level), each
    over `base`'s when not given (the schema has checked them: numbers, 0 or more)."""
    base = base or Tolerance()
    return Tolerance(float(table.get("rtol", base.rtol)), float(table.get("atol", base.atol)))


def tolerance_tables(tables: list[dict[str, Any]], path: Path) -> list[ToleranceTable]:
    """The `[[tolerance]]` tables of a compat.toml, numbered from 1 in errors."""
    found = []
    for index, table in enumerate(tables):
        where = f"tolerance #{index + 1}"
        rtol = table.get("rtol")
        atol = table.get("atol")
        if rtol is None and atol is None:
            raise ConfigError(f"{path}: [{where}] sets no tolerance; give rtol, atol or both")
        found.append(
            ToleranceTable(
                table["cases"].strip(),
                tuple(table.get("outputs", [])),
                None if rtol is None else float(rtol),
                None if atol is None else float(atol),
                f"{path} [{where}]",
            )
        )
    return found


def check_tables(tables: Sequence[ToleranceTable], models: Mapping[str, Sequence[str]]) -> None:
    """Every table names a model of the folder (`models`: file name -> output names), and
    every output it lists is an output of one of those models: a typo is an error, never
    a tolerance that silently applies to nothing."""
    for table in tables:
        matched = [name for name in models if fnmatch.fnmatch(name, table.cases)]
        if not matched:
            raise ConfigError(
                f"{table.where}: cases = {table.cases!r} matches no model file here "
                f"({', '.join(sorted(models))}); globs here match file names"
            )
        known = {output for name in matched for output in models[name]}
        for output in table.outputs:
            if output not in known:
                raise ConfigError(
                    f"{table.where}: outputs: {output!r} is no output of {', '.join(matched)} "
                    f"(its outputs: {', '.join(sorted(known))})"
                )


def _over(base: Tolerance, table: ToleranceTable) -> Tolerance:
    return replace(
        base,
        rtol=base.rtol if table.rtol is None else table.rtol,
        atol=base.atol if table.atol is None else table.atol,
    )


def for_model(
    folder: Tolerance, tables: Sequence[ToleranceTable], file_name: str
) -> ModelTolerance:
    """The tolerance of the model in `file_name`: the folder's, then its tables' for every
    output, then theirs for some outputs, each over the one before."""
    mine = [t for t in tables if fnmatch.fnmatch(file_name, t.cases)]
    every = folder
    for table in mine:
        if not table.outputs:
            every = _over(every, table)
    outputs: dict[str, Tolerance] = {}
    for table in mine:
        for output in table.outputs:
            outputs[output] = _over(outputs.get(output, every), table)
    return ModelTolerance(every, outputs)
