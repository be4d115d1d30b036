"""README.md's families table, rendered from the families' rows (compat/core/family.py).

`nox -s report` rewrites the block between the two markers in README.md;
`nox -s report -- --check` fails with a diff when the committed block differs.
"""

from __future__ import annotations

import difflib
import textwrap
from pathlib import Path

from compat.core.errors import UsageError
from compat.core.family import FamilyRow
from compat.render.text import md_code, md_text

START = "<!-- families:start: generated from the cases/*.py docstrings by `nox -s report` -->"
END = "<!-- families:end -->"
_START_PREFIX = "<!-- families:start"


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


def families_drift(readme: Path, rows: list[FamilyRow], source: str) -> str | None:
    """A unified diff from README's committed block to what the rows (read from the
    docstrings in `source`) render, or None when they agree."""
    committed = readme.read_text()
    rendered = splice(committed, render_block(rows), readme)
    if committed == rendered:
        return None
    return "".join(
        difflib.unified_diff(
            committed.splitlines(keepends=True),
            rendered.splitlines(keepends=True),
            f"{readme} (committed)",
            f"{readme} (rendered from the {source}/*.py docstrings)",
        )
    )


def write_families(readme: Path, rows: list[FamilyRow]) -> bool:
    """Rewrites README's families block from the rows; True when it changed."""
    committed = readme.read_text()
    rendered = splice(committed, render_block(rows), readme)
    if rendered != committed:
        readme.write_text(rendered)
    return rendered != committed
