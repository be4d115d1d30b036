"""README's families table is written from the family modules' docstrings and cannot drift."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pytest

from compat.cli.main import main
from compat.core.errors import ConfigError, UsageError
from compat.core.family import FamilyRow, parse_row
from compat.corpus.discover import discover_cases
from compat.corpus.families import family_rows
from compat.render.families import END, START, families_drift, render_block, splice
from tests.conftest import ROOT

README = ROOT / "README.md"
CASES = ROOT / "cases"


def _block(text: str) -> str:
    return text[text.index(START) : text.index(END) + len(END)]


def test_the_committed_readme_is_in_sync_with_the_docstrings() -> None:
    assert START in README.read_text() and END in README.read_text()
    assert families_drift(README, family_rows(CASES), str(CASES)) is None, (
        "run `nox -s report` and commit README.md"
    )


def test_the_table_names_every_family_discover_cases_finds() -> None:
    families = list(discover_cases(CASES).families)
    block = _block(README.read_text())
    named = re.findall(r"^\| `([a-z0-9_]+)` \|", block, flags=re.MULTILINE)
    assert named == families  # every family, once, in discovery order
    assert len(families) > 20
    assert f"These are all {len(families)} families" in block
    assert "more families" not in README.read_text()  # the old hand-counted sentence


def test_every_family_answers_in_the_default_run_or_its_row_says_what_it_needs() -> None:
    """The stored default run (docs/matrix.json.gz, `nox -s matrix`): each family the
    table advertises has a result that is not a skip, or its row says which option it
    needs (`needs `--…``): downstream_imports imports only what --pkg/--with install."""
    stored = json.loads(gzip.decompress((ROOT / "docs" / "matrix.json.gz").read_bytes()))
    family_of = {case["id"]: case["family"] for case in stored["cases"]}
    answers = {family_of[r["case"]] for r in stored["results"] if r["outcome"] != "skip"}
    silent = {row.family for row in family_rows(CASES) if row.family not in answers}
    assert silent  # downstream_imports: a skip in every cell of the default run
    for row in family_rows(CASES):
        if row.family in silent:
            assert "needs `--" in row.shows, row


def test_each_docstring_ends_with_its_row_and_keeps_it_to_one_short_line_per_field() -> None:
    rows = {r.family: r for r in family_rows(CASES)}
    assert rows["conv_bias_fusion"].twin == "`Conv(x, W)` + BN/Add/Mul"
    for row in rows.values():
        assert "\n" not in row.rare + row.twin + row.shows
        assert max(len(row.rare), len(row.twin), len(row.shows)) <= 100


#: the stored run the fixture's docs render from: one family of the committed run, so a
#: `report` there renders the pages around README's table in a fraction of a second
KEPT_FAMILY = "squeeze_empty_axes"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the project's report inputs: config, README and cases, and a stored docs
    run trimmed to one family (the table reads the docstrings, not the results)."""
    config = (ROOT / "pyproject.toml").read_text()
    # the docs render from `results` only: the other stored runs are not this test's
    config = re.sub(r"\n(scoreboard|writer-reader|pythons) = [^\n]*", "", config)
    (tmp_path / "pyproject.toml").write_text(config)
    shutil.copy(README, tmp_path)
    shutil.copytree(CASES, tmp_path / "cases", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "docs").mkdir()
    stored = json.loads(gzip.decompress((ROOT / "docs" / "matrix.json.gz").read_bytes()))
    stored["cases"] = [c for c in stored["cases"] if c["family"] == KEPT_FAMILY]
    kept = {c["id"] for c in stored["cases"]}
    stored["results"] = [r for r in stored["results"] if r["case"] in kept]
    stored["families"] = {KEPT_FAMILY: stored["families"][KEPT_FAMILY]}
    (tmp_path / "docs" / "matrix.json.gz").write_bytes(gzip.compress(json.dumps(stored).encode()))
    return tmp_path


def test_report_check_fails_on_an_edited_docstring_until_report_rewrites_the_table(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["report", "--config", str(project / "pyproject.toml")]
    assert main(args) == 0  # renders docs/compatibility.md; README's table is unchanged
    assert (project / "README.md").read_text() == README.read_text()
    assert main([*args, "--check"]) == 0
    assert "README's families table with the case docstrings" in capsys.readouterr().out

    module = project / "cases" / "squeeze_empty_axes.py"
    old = "Common twin: `Squeeze(x)` and `Squeeze(x, axes)`"
    new = "Common twin: `Squeeze(x)`, or with `axes` given"
    assert old in module.read_text()
    module.write_text(module.read_text().replace(old, new))
    assert main([*args, "--check"]) == 1
    out = capsys.readouterr().out
    assert "README.md (committed)" in out
    row = '| `squeeze_empty_axes` | `Squeeze(x, "")` | '
    assert f"-{row}`Squeeze(x)` and `Squeeze(x, axes)` |" in out
    assert f"+{row}`Squeeze(x)`, or with `axes` given |" in out
    assert "1 file(s) drifted; run `nox -s report`" in out

    assert main(args) == 0  # rewrites the block, and only the block
    rewritten = (project / "README.md").read_text()
    assert "| `Squeeze(x)`, or with `axes` given |" in rewritten
    assert rewritten.replace(_block(rewritten), "") == README.read_text().replace(
        _block(README.read_text()), ""
    )
    assert main([*args, "--check"]) == 0


def test_a_new_family_gets_a_row_and_the_count_follows(project: Path) -> None:
    cases = project / "cases"
    source = (cases / "pad_pads_from_constant.py").read_text()
    (cases / "pad_copy.py").write_text(source.replace("pad_pads_from_constant.", "pad_copy."))
    stale = families_drift(project / "README.md", family_rows(cases), str(cases))
    assert stale is not None
    total = len(discover_cases(cases).families)
    assert "+| `pad_copy` | pads = `Constant(value_ints=…)` |" in stale
    assert f"-These are all {total - 1} families" in stale
    assert f"+These are all {total} families" in stale


def test_a_family_without_its_row_is_an_error_naming_the_module(project: Path) -> None:
    module = project / "cases" / "zero_size_dims.py"
    text = module.read_text()
    module.write_text(re.sub(r"\nShows: [^\n]*", "", text, count=1))
    with pytest.raises(ConfigError, match=r"zero_size_dims\.py: the docstring must end"):
        family_rows(project / "cases")


@pytest.mark.parametrize(
    "doc",
    [
        "Only a first paragraph.",
        "Rare form: a\nCommon twin: b\nShows: c",  # the row is not the description
        "What.\n\nCommon twin: b\nRare form: a\nShows: c",  # order
        "What.\n\nRare form: a\nCommon twin: b",  # a field missing
        "What.\n\nRare form: a\nCommon twin:\nShows: c",  # a field empty
        "What.\n\nRare form: a\nCommon twin: b\nShows: c\nand a fourth line",
        "What.\n\nRare form: a\nCommon twin: b\nShows: " + "c" * 100,  # too long to read
    ],
)
def test_malformed_rows_are_rejected(doc: str) -> None:
    with pytest.raises(ConfigError, match="Rare form"):
        parse_row("fam", doc, Path("cases/fam.py"))


def test_a_row_renders_one_table_line_with_pipes_escaped() -> None:
    doc = "What.\n\nMore.\n\nRare form: `a | b`\nCommon twin: c\nShows: d"
    row = parse_row("fam", doc, Path("cases/fam.py"))
    assert row == FamilyRow("fam", "`a | b`", "c", "d")
    block = render_block([row])
    assert "| `fam` | `a \\| b` | c | d |\n" in block
    assert "These are all 1 families" in block


def test_splice_replaces_only_the_block_and_needs_both_markers() -> None:
    text = f"intro\n\n{START}\nold table\n{END}\n\nafter\n"
    assert splice(text, f"{START}\nnew\n{END}\n", Path("README.md")) == (
        f"intro\n\n{START}\nnew\n{END}\n\nafter\n"
    )
    for broken in ("intro\nno block\n", f"intro\n{START}\nno end\n"):
        with pytest.raises(UsageError, match="no families block"):
            splice(broken, "x", Path("README.md"))
