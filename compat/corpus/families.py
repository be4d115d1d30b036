"""Each case family's row of README's families table, read from its module's docstring."""

from __future__ import annotations

import ast
from pathlib import Path

from compat.core.family import FamilyRow, parse_row
from compat.corpus.discover import discover_cases


def family_rows(cases_dir: Path) -> list[FamilyRow]:
    """One row per family that `discover_cases` finds, in its (alphabetical) order."""
    rows = []
    for family in discover_cases(cases_dir).families:
        path = cases_dir / f"{family}.py"
        doc = ast.get_docstring(ast.parse(path.read_text(), str(path)))
        rows.append(parse_row(family, doc, path))
    return rows
