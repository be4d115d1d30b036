"""A case family's row of README's families table, parsed from its module's docstring.

Every family module in cases/ ends its docstring with three lines, its row:

    Rare form: `Conv(x, W, "")` + BN/Add/Mul
    Common twin: `Conv(x, W)` + BN/Add/Mul
    Shows: onnxruntime never fuses the follower into the empty-name Conv (onnxruntime #34139)

compat/corpus/families.py reads them from the modules; compat/render/families.py renders
the table.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from compat.core.errors import ConfigError

#: The docstring's last three lines, in this order, one line each.
FIELDS = ("Rare form", "Common twin", "Shows")
#: Longest field line: a table row stays readable (and within ruff's line length).
WIDTH = 100


@dataclass(frozen=True)
class FamilyRow:
    family: str
    rare: str
    twin: str
    shows: str


def parse_row(family: str, doc: str | None, path: Path) -> FamilyRow:
    """A family's row from the last paragraph of its docstring (see FIELDS)."""
    paragraphs = (doc or "").strip().split("\n\n")
    lines = paragraphs[-1].splitlines() if len(paragraphs) > 1 else []
    values = []
    for line, field in zip(lines, FIELDS, strict=False):
        key, colon, value = line.partition(":")
        if key != field or not colon or not value.strip() or len(line) > WIDTH:
            break
        values.append(value.strip())
    if len(lines) != len(FIELDS) or len(values) != len(FIELDS):
        wanted = ", ".join(f"'{f}: …'" for f in FIELDS)
        raise ConfigError(
            f"{path}: the docstring must end with a paragraph of three lines of at most "
            f"{WIDTH} characters, {wanted} (the family's row in README.md; see cases/README.md)"
        )
    return FamilyRow(family, *values)
