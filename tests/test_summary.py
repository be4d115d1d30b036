"""The family × release summary: one square per family and release, worst state first."""

from __future__ import annotations

from compat.render.summary import summarize
from tests.test_report import sample_report


def test_every_family_has_a_square_on_every_release_and_the_worst_state_wins() -> None:
    report = sample_report()
    summary = summarize(report)
    assert set(summary.families) == {c.family for c in report.cases}
    assert len(summary.squares) == len(summary.families) * len(summary.columns)
    states = {(f, summary.columns[i].title): s.state for (f, i), s in summary.squares.items()}
    assert set(states.values()) <= {"broken", "unexpected", "known", "pass", "skip", "n/a"}
    broken = [c for c in report.cells if c.state.value != "ready"]
    for cell in broken:  # a broken environment is broken for every family
        for column in summary.columns:
            if column.cell.id == cell.id:
                assert all(states[(f, column.title)] == "broken" for f in summary.families)
    for (family, i), square in summary.squares.items():
        column = summary.columns[i]
        if square.state == "unexpected":
            assert any(
                r.outcome.unexpected
                for r in report.results
                if r.cell == column.cell.id and r.case.startswith(family + ".")
            )


def test_the_headline_counts_the_pair_cell_once_though_both_axes_draw_it() -> None:
    from compat.core.report import read_json
    from tests.conftest import ROOT

    report = read_json(ROOT / "docs" / "matrix.json.gz")
    summary = summarize(report)
    drawn = {c.cell.id for c in summary.columns}
    assert len(summary.columns) == len(drawn) + 1  # the pair: on both axes
    assert sum(summary.totals.values()) == len(summary.families) * len(drawn)


def test_since_when_reads_only_releases_whose_environment_was_built() -> None:
    """onnxruntime 1.14.1 never installed: the crash on 1.17.3 is not a regression
    "until 1.14.1", it is every release that ran."""
    from compat.render.docs import render_docs

    (since,) = [s for s in summarize(sample_report()).since if s.check == "ort_run"]
    assert (since.releases, since.broken, since.first) == (("1.17.3",), ("1.17.3",), "")
    text = render_docs(sample_report())
    assert "until 1.14.1" not in text and "| never | 1.17.3 |" in text
