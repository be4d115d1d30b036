"""README.md's families table, rendered from the family modules' docstrings.

Every family module in cases/ ends its docstring with three lines, its row of the
table:

    Rare form: `Conv(x, W, "")` + BN/Add/Mul
    Common twin: `Conv(x, W)` + BN/Add/Mul
    Shows: onnxruntime never fuses the follower into the empty-name Conv (onnxruntime #34139)

`nox -s report` rewrites the block between the two markers in README.md;
`nox -s report -- --check` fails with a diff when the committed block differs.
"""

from __future__ import annotations

import ast
import difflib
import textwrap
from dataclasses import dataclass
from pathlib import Path

from compat.corpus import discover_cases
from compat.errors import ConfigError, UsageError
from compat.render.text import md_code, md_text

START = "<!-- families:start: generated from the cases/*.py docstrings by `nox -s report` -->"
END = "<!-- families:end -->"
_START_PREFIX = "<!-- families:start"
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


def family_rows(cases_dir: Path) -> list[FamilyRow]:
    """One row per family that `discover_cases` finds, in its (alphabetical) order."""
    rows = []
    for family in discover_cases(cases_dir).families:
        path = cases_dir / f"{family}.py"
        doc = ast.get_docstring(ast.parse(path.read_text(), str(path)))
        rows.append(parse_row(family, doc, path))
    return rows


def render_block(rows: list[FamilyRow]) -> str:
    """The README block, markers included: the table, then the sentence that counts it."""
    sentence = (
        f"These are all {len(rows)} families, one module each in `cases/`. Each module's "
        "docstring says what breaks in which releases, with upstream links; "
        "[cases/README.md](cases/README.md) shows how to add a family."
    )
    lines = [
        START,
        "| family | rare form | common twin | what it shows |",
        "|---|---|---|---|",
        *(
            f"| {md_code(r.family, in_table=True)} | {md_text(r.rare)} | {md_text(r.twin)} | "
            f"{md_text(r.shows)} |"
            for r in rows
        ),
        "",
        *textwrap.wrap(sentence, 88, break_on_hyphens=False, break_long_words=False),
        END,
    ]
    return "\n".join(lines) + "\n"


def _span(text: str, path: Path) -> tuple[int, int]:
    """Where the block sits in README's text: from its start marker's line to the end
    of its end marker's line."""
    start = text.find(_START_PREFIX)
    end = text.find(END, start) if start >= 0 else -1
    if start < 0 or end < 0:
        raise UsageError(
            f"{path}: no families block; put the lines {START!r} and {END!r} "
            "where the families table goes, then run `nox -s report`"
        )
    end += len(END)
    return start, end + 1 if text.startswith("\n", end) else end


def splice(text: str, block: str, path: Path) -> str:
    """README's text with its families block replaced by `block`."""
    start, end = _span(text, path)
    return text[:start] + block + text[end:]


def families_drift(readme: Path, cases_dir: Path) -> str | None:
    """A unified diff from README's committed block to what the docstrings render,
    or None when they agree."""
    committed = readme.read_text()
    rendered = splice(committed, render_block(family_rows(cases_dir)), readme)
    if committed == rendered:
        return None
    return "".join(difflib.unified_diff(
        committed.splitlines(keepends=True), rendered.splitlines(keepends=True),
        f"{readme} (committed)", f"{readme} (rendered from the {cases_dir}/*.py docstrings)",
    ))  # fmt: skip


def write_families(readme: Path, cases_dir: Path) -> bool:
    """Rewrites README's families block from the docstrings; True when it changed."""
    committed = readme.read_text()
    rendered = splice(committed, render_block(family_rows(cases_dir)), readme)
    if rendered != committed:
        readme.write_text(rendered)
    return rendered != committed
