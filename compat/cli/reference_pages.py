"""The reference pages other than the commands', each generated from the table it
documents: the configuration keys (with their meanings, compat/cli/reference_meanings.py),
the checks (compat/cell/checks.py), outcomes, cell states and summary squares
(compat/core/vocabulary.py), exit codes, the rewrite catalogue (compat/corpus/rewrites.py)
and the families (the case modules' docstrings). The JSON formats' page is
compat/cli/reference_json.py."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from compat.cli.reference_meanings import (
    CONFIG,
    CONFIG_EXAMPLE,
    EXIT_CODES,
)
from compat.core.errors import CompatError
from compat.render.text import md_code, md_text

GENERATED = "Generated from the code at every build of this site"


def table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def configuration_page() -> str:
    lines = [
        "# Configuration",
        "",
        f"{GENERATED}: every key the configuration loader accepts, table by table. "
        "`[tool.compat]` in `pyproject.toml` is the single source of truth for which "
        "releases a run covers and what every cell holds; `--config FILE` reads another "
        "file. An unknown key is an error naming the key and the file, never ignored.",
        "",
        "Every table below is a JSON schema's too: "
        "[`tool_compat.schema.json`](tool_compat.schema.json) (draft-07, shipped in the "
        "package as `compat/resources/tool_compat.schema.json`) holds each key's type and the "
        "meaning shown here, and onnx-compat checks the configuration and each folder's "
        "`compat.toml` (its `definitions/folder`) against it. "
        "[validate-pyproject](https://github.com/abravalheri/validate-pyproject) uses it "
        "too once onnx-compat is installed beside it (a `validate_pyproject.tool_schema` "
        "plugin, as cibuildwheel's): `validate-pyproject pyproject.toml` checks "
        "`[tool.compat]` with the rest of the file.",
        "",
        "```toml",
        CONFIG_EXAMPLE.rstrip(),
        "```",
    ]
    for header, keys in CONFIG.items():
        heading = md_code(header) if header.startswith("[") else md_text(header)
        lines += ["", f"## {heading}", ""]
        lines += table(("key", "meaning"), [(md_code(k), md_text(v)) for k, v in keys.items()])
    return "\n".join(lines) + "\n"


def checks_page() -> str:
    from compat.cell.checks import CHECKS

    lines = [
        "# Checks",
        "",
        f"{GENERATED}, from the table of built-in checks. Their ids are stable: reports, "
        "`--cases` selections, known failures and `bisect --check` use them. A result "
        "depends only on the versions of the packages its check exercises, so it is "
        "computed once and shown in every cell with those versions.",
        "",
        *table(
            ("check", "package", "asks"),
            [(f"[`{c.name}`](#{c.name})", c.package, md_text(c.title)) for c in CHECKS],
        ),
    ]
    for check in CHECKS:
        lines += ["", f"## `{check.name}` {{#{check.name}}}", "", md_text(check.title) + ".", ""]
        lines += [f"- **Calls**: {md_text(check.what)}.", f"- **Runs on**: {_runs_on(check)}."]
        lines.append(f"- **Result depends on**: {', '.join(check.depends)}.")
        if check.parts:
            parts = ", ".join(f"`{p.name}` ({', '.join(p.depends)})" for p in check.parts)
            lines.append(f"- **Computed in parts**, each cached on its own: {parts}.")
        if check.project:
            lines.append(
                "- **Cached by content**: your project's tree, every distribution installed "
                "in the cell, the command, its environment and the Python "
                "([the key](../explanation/verdicts.md#your-commands-results)); "
                "`no-cache` opts a command out."
            )
        if check.suite:
            lines.append("- Run by the [backend scoreboard](../how-to/scoreboard.md) too.")
    lines += [
        "",
        "A case may add checks of its own (`custom_checks`, see "
        "[Add a case family](../how-to/add-a-family.md)); their ids are the case's.",
    ]
    return "\n".join(lines) + "\n"


def _runs_on(check: Any) -> str:
    if check.needs:
        return f"the cases that set `{check.needs}`"
    if not check.default:
        return "your commands (`--run`, `run = [...]`), as cases `command.NAME`"
    return "every case and every drop-in model"


#: how an outcome reads where there are no emoji, in the terminal's grid and in junit.xml
_SHOWN = "`--ascii` · terminal · junit.xml"


def outcomes_page() -> str:
    from compat.core.outcomes import UNEXPECTED
    from compat.core.squares import SQUARES
    from compat.core.vocabulary import BROKEN, CELL_STATES, OUTCOMES

    outcomes = [
        (
            md_code(o.value),
            row.mark,
            md_text(row.meaning),
            "yes" if o in UNEXPECTED else "no",
            f"{md_code(row.ascii)} · {md_code(row.letter)} · {row.junit or 'passed'}",
        )
        for o, row in OUTCOMES.items()
    ]
    states = [
        (
            md_code(s.value),
            row.mark or " ",
            md_code(row.ascii or "-"),
            md_text(row.meaning),
            "yes" if s in BROKEN else "no",
        )
        for s, row in CELL_STATES.items()
    ]
    squares = [
        (
            md_code(name),
            row.mark,
            md_code(row.letter),
            md_text(row.name),
            md_text(row.meaning),
        )
        for name, row in SQUARES.items()
    ]
    codes = sorted({*EXIT_CODES, *(c.return_code for c in _subclasses(CompatError))})
    lines = [
        "# Outcomes and exit codes",
        "",
        f"{GENERATED}, from the vocabulary every report reads: the terminal, the docs "
        "pages, the HTML page, the SVG picture, junit.xml and the scoreboard show the "
        "same words and marks.",
        "",
        "## Outcomes",
        "",
        "What one check of one case came to in one cell. An unexpected outcome makes the "
        "run exit 1.",
        "",
        *table(("outcome", "mark", "meaning", "unexpected", _SHOWN), outcomes),
        "",
        "## Cell states",
        "",
        "Whether a cell's environment could be built and imported. A broken cell ran "
        "nothing and is unexpected; a release with no wheel for the cell's Python is not "
        "applicable, like a skip.",
        "",
        *table(("state", "mark", "plain", "meaning", "unexpected"), states),
        "",
        "## Summary squares",
        "",
        "One family on one release in the summary picture and the terminal's summary: "
        "the worst result shows, worst first below.",
        "",
        *table(("square", "mark", "terminal", "name", "meaning"), squares),
        "",
        "## Exit codes",
        "",
        *table(("code", "when"), [(str(c), md_text(EXIT_CODES.get(c, ""))) for c in codes]),
    ]
    return "\n".join(lines) + "\n"


def _subclasses(cls: type[CompatError]) -> list[type[CompatError]]:
    """An error type and every type below it: each says its exit code."""
    found = [cls]
    for sub in cls.__subclasses__():
        found += _subclasses(sub)
    return found


def rewrites_page() -> str:
    from compat.corpus.rewrites import CATALOGUE

    rows = [
        (
            md_code(r.name),
            md_text(r.description),
            " ".join(f"[{_short(link)}]({link})" for link in r.reports),
            "yes" if r.annotations else "no",
        )
        for r in CATALOGUE
    ]
    lines = [
        "# Rewrites",
        "",
        f"{GENERATED}, from the rewrite catalogue: {len(CATALOGUE)} ways to spell the "
        "same model differently, each preserving what it computes. `onnx-compat variants "
        "MODEL` writes every one that applies to a model; `--mutate` runs every selected "
        "case spelled each way (`CASE~REWRITE`); `triage` tries them all for a "
        "workaround. `--rewrites GLOB` and `--mutate GLOB` select by name. See "
        "[Test every spelling of a model](../how-to/spellings.md).",
        "",
        *table(("rewrite", "what it does", "upstream reports", "changes annotations"), rows),
        "",
        "A rewrite that changes annotations is not applied to a case that expects "
        "annotation violations or symbolic output shapes.",
    ]
    return "\n".join(lines) + "\n"


def _short(link: str) -> str:
    """`onnx #5222` for a GitHub issue or pull request link."""
    parts = link.rstrip("/").split("/")
    return (
        f"{parts[-3]} #{parts[-1]}" if len(parts) >= 4 and parts[-2] in ("issues", "pull") else link
    )


def families_page(cases_dir: Path, docs_dir: Path) -> str:
    from compat.corpus.families import family_rows

    rows = []
    for row in family_rows(cases_dir):
        page = docs_dir / "families" / f"{row.family}.md"
        name = md_code(row.family)
        linked = f"[{name}](../families/{row.family}.md)" if page.is_file() else name
        rows.append((linked, md_text(row.rare), md_text(row.twin), md_text(row.shows)))
    lines = [
        "# Families",
        "",
        f"{GENERATED}, from the docstrings of the case modules in `cases/`: "
        f"{len(rows)} families, each putting a rare-but-legal form next to its common "
        "twin, so each row reads against its twin. A family's page shows its results on "
        "every release.",
        "",
        *table(("family", "rare form", "common twin", "what it shows"), rows),
    ]
    return "\n".join(lines) + "\n"
