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
