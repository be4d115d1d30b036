"""compat/core/vocabulary.py: one row per outcome, cell state, summary square and axis,
and every renderer reads its words, marks and colours from there.

The tables are checked against what really produces their keys (the enums, the summary's
squares, the plan's axes), both ways; then one word or mark is changed in the table and
each renderer is expected to show the change.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from compat.core import axis_names
from compat.core.axis_names import AXES, axis_row, split_axis
from compat.core.outcomes import CellRecord, CellState, CheckResult, Outcome
from compat.core.squares import SQUARES, SquareRow
from compat.core.vocabulary import (
    BREAKS,
    CELL_STATES,
    ENTRIES,
    ENUM_ORDER,
    NOT_RUN,
    OUTCOMES,
    WORKS,
    EntryRow,
)
from compat.plan.config import load_config
from compat.plan.matrix import expand
from compat.render.docs import render_docs
from compat.render.docs_pages import family_page
from compat.render.grid import build_tables, verdict
from compat.render.heatmap import heatmap_svg
from compat.render.html import page_data
from compat.render.junit import render_junit
from compat.render.markdown import render_markdown
from compat.render.summary import square_of
from compat.render.terminal import closing_line, render_grid, render_summary
from compat.render.writer_reader import render_writer_reader
from tests.conftest import ROOT
from tests.test_report import ready, sample_report


def _cell(state: CellState) -> CellRecord:
    return replace(ready("1.23.2", "1.24.4"), state=state)


def _results(*outcomes: Outcome) -> list[CheckResult]:
    return [CheckResult("c", "f.case", f"check{i}", o) for i, o in enumerate(outcomes)]


def test_every_outcome_and_every_cell_state_has_exactly_one_row() -> None:
    assert list(OUTCOMES) != list(Outcome)  # the legends' order, not the enum's ...
    assert sorted(OUTCOMES) == sorted(Outcome)  # ... but every one of them, once
    assert sorted(CELL_STATES) == sorted(CellState)
    broken = [s.value for s in CellState if s is not CellState.READY]
    assert list(ENTRIES) == [*(o.value for o in OUTCOMES), NOT_RUN, *broken]
    assert (*(o.value for o in Outcome), *broken) == ENUM_ORDER


def test_every_state_the_summary_gives_a_square_has_exactly_one_row() -> None:
    given = {
        square_of(_cell(CellState.INSTALL_ERROR), []).state,
        square_of(_cell(CellState.READY), []).state,
        *(square_of(_cell(CellState.READY), _results(Outcome.PASS, o)).state for o in Outcome),
        square_of(_cell(CellState.READY), _results(Outcome.SKIP)).state,
    }
    assert given == set(SQUARES)
    assert set(SQUARES) == {"broken", "unexpected", "known", "pass", "skip", NOT_RUN}


def test_every_axis_a_plan_has_exactly_one_row() -> None:
    config = load_config(ROOT / "pyproject.toml")
    onnx, ort = ("1.18.0", "1.23.2"), ("1.17.3", "1.24.4")
    pythons = ("3.11", "3.12")
    plans = [
        expand(config, onnx, ort, cross=cross, pythons=p)
        for cross in (False, True)
        for p in ((), pythons)
    ]
    named = {part for plan in plans for key in plan.axes for part in split_axis(key) if part}
    ids = {axis for plan in plans for cell in plan.cells for axis, _ in cell.releases}
    assert named - set(pythons) | ids == set(AXES)
    assert axis_row("onnxruntime").short == "ort"
    assert axis_row("onnx@3.12").releases == "onnx releases on Python 3.12"
    unknown = axis_names.AxisRow("protobuf", "protobuf", "protobuf", "protobuf", "")
    assert axis_row("protobuf") == unknown


@pytest.mark.parametrize(
    ("table", "fields"),
    [
        (ENTRIES, ("mark", "ascii", "letter", "word", "meaning", "colours")),
        (OUTCOMES, ("counted",)),
        (SQUARES, ("mark", "ascii", "letter", "name", "meaning", "colours", "picture")),
        (AXES, ("name", "short", "releases", "heading")),
    ],
    ids=["entries", "outcomes", "squares", "axes"],
)
def test_marks_and_words_are_unique_within_a_table(
    table: dict[Any, Any], fields: tuple[str, ...]
) -> None:
    for field in fields:
        values = [getattr(row, field) for row in table.values()]
        assert len(set(values)) == len(values), field
        assert all(values), field


def test_plain_text_marks_are_ascii_and_terminal_marks_one_character() -> None:
    rows: list[EntryRow | SquareRow] = [*ENTRIES.values(), *SQUARES.values()]
    for row in rows:
        assert row.ascii.isascii() and row.letter.isascii() and len(row.letter) == 1, row
    pages = [row.page for row in ENTRIES.values() if row.page]  # "": the colour says it
    assert all(page.isascii() and len(page) == 1 for page in pages)
    assert len(set(pages)) == len(pages)
    assert all(row.ansi.replace(";", "").isdigit() or not row.ansi for row in SQUARES.values())


def test_a_ready_cell_has_words_only_and_no_entry() -> None:
    """A ready cell's entries are its results: READY shows nowhere, in no legend."""
    row = CELL_STATES[CellState.READY]
    assert (row.mark, row.ascii, row.letter, row.page) == ("", "", "", "")
    assert CellState.READY.value not in ENTRIES


def test_works_and_breaks_split_the_outcomes_with_skip_in_neither() -> None:
    assert {Outcome.PASS, Outcome.XPASS} == WORKS
    assert set(Outcome) - {Outcome.SKIP} == WORKS | BREAKS and not WORKS & BREAKS
    assert {o for o, row in OUTCOMES.items() if row.junit in ("failure", "error")} == {
        o for o in Outcome if o.unexpected
    }


#: The tables that hold each concept's rows (an entry's row is in two).
CONCEPTS: dict[str, list[dict[Any, Any]]] = {
    "entry": [OUTCOMES, CELL_STATES, ENTRIES],
    "square": [SQUARES],
    "axis": [AXES],
}


def reword(monkeypatch: pytest.MonkeyPatch, concept: str, key: str, **changes: Any) -> None:
    """Changes a row wherever the tables hold it: the renderers must show the change."""
    for table in CONCEPTS[concept]:
        if key in table:
            monkeypatch.setitem(table, key, replace(table[key], **changes))


def test_the_terminal_reads_its_letters_and_words_from_the_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    report = sample_report()
    before = render_grid(report, every_row=True)
    assert " C " in before and "C crash" in before
    reword(monkeypatch, "entry", "crash", letter="%", counted="went down")
    reword(monkeypatch, "square", "known", letter="k", said="only bugs we know")
    reword(monkeypatch, "axis", "onnxruntime", name="runtime", short="rt")
    grid = render_grid(report, every_row=True)
    assert " % " in grid and "% crash" in grid and " C " not in grid
    assert "pads \\ runtime" in grid
    summary = render_summary(report)
    assert "k only bugs we know" in summary and "rt 1.x" in summary
    assert "1 went down" in closing_line(report, "here")


def test_the_docs_and_matrix_md_read_their_marks_and_words_from_the_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    report = sample_report()
    reword(monkeypatch, "entry", "xfail", mark="🐛", ascii="KNOWN", meaning="a bug: reported")
    reword(monkeypatch, "entry", "pass", word="is fine", note="all good")
    reword(monkeypatch, "square", "unexpected", mark="🔥")
    reword(monkeypatch, "axis", "onnx", heading="Across onnx")
    page = family_page(report, "pads")
    assert "🐛" in page and "🐞" not in page and "🐛 a bug" in page
    assert "## Across onnx" in page
    assert "`KNOWN`" in render_docs(report, ascii_marks=True)
    assert "🔥" in render_docs(report)
    matrix = render_markdown(report)
    assert "**pass** (all good)" in matrix and "is fine" in matrix


def test_the_pictures_and_the_page_read_their_names_and_colours_from_the_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    report = sample_report()
    reword(monkeypatch, "square", "known", name="bugs we know", picture=("#123456", "#ffffff"))
    reword(monkeypatch, "entry", "fail", page="!", colours=("#654321", "#ffffff"))
    svg = heatmap_svg(report)
    assert "bugs we know" in svg and 'fill="#123456"' in svg
    words = page_data(report)["vocabulary"]
    assert words["entries"]["fail"] == {
        "page": "!",
        "colours": ["#654321", "#ffffff"],
        "unexpected": True,
    }
    assert words["squares"]["unexpected"]["colours"] == ["#c62828", "#ffffff"]  # unchanged


def test_junit_and_the_verdicts_read_their_kinds_and_words_from_the_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    report = sample_report()
    assert "<failure" not in render_junit(report)  # its one unexpected result crashed
    reword(monkeypatch, "entry", "crash", junit="failure")
    assert '<failure message="crash: worker killed' in render_junit(report)
    reword(monkeypatch, "entry", "install-error", word="no wheel")
    onnxruntime = next(t for t in build_tables(report) if t.axis == "onnxruntime")
    idle = replace(onnxruntime.rows[0], entries=("install-error",) * len(onnxruntime.labels))
    assert verdict("onnxruntime", onnxruntime.labels, idle) == "not tested: no wheel"


def test_writer_reader_reads_its_marks_from_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    cell = ready("1.23.2", "1.24.4")
    result = CheckResult(
        cell.id,
        "writer_reader.default_model",
        "default_model_loads",
        Outcome.PASS,
        detail="writes IR 10, opset 23",
    )
    report = replace(sample_report(), cells=(cell,), results=(result,))
    reword(monkeypatch, "entry", "pass", mark="👍")
    text = render_writer_reader(report) or ""
    assert "👍 loads it" in text and "| 👍 |" in text
