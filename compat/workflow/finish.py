"""The end of a run on the terminal: the family × release summary, what needs a look
(with the repro command of each), the spellings that differ, the project's claims set
against its results, where the results came from, and the exit code."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from packaging.version import Version

from compat.core.changes import changes_of
from compat.core.outcomes import CellRecord, CheckResult
from compat.core.printed import repro_command
from compat.core.report import Report
from compat.core.versions import in_range
from compat.core.vocabulary import BROKEN
from compat.corpus.usercommand import FAMILY
from compat.render.axes import pythons
from compat.render.changes import closing_changes, render_changes
from compat.render.spellings import render_spellings
from compat.render.terminal import (
    closing_line,
    render_grid,
    render_predictions,
    render_summary,
    render_unexpected,
    use_colour,
)
from compat.workflow.baseline import gate


def repro_hints(report: Report) -> dict[str, str]:
    """One `nox -s repro` command per unexpected cell, with the run's corpus options."""
    cells = {c.id: c for c in report.cells}
    options = report.run.get("options")
    hints = {}
    for cell in report.broken_cells:  # a cell with no wheel for its Python is no failure
        hints[cell.id] = repro_command(cell, [], options)
    for cell_id in dict.fromkeys(r.cell for r in report.unexpected):
        cases = sorted({r.case for r in report.unexpected if r.cell == cell_id})
        hints[cell_id] = repro_command(cells[cell_id], cases, options)
    return hints


def provenance(report: Report) -> str:
    """Where the results came from: computed here, shared between cells with the same
    versions of what a check depends on, or an earlier run's."""
    if report.run.get("remembered"):
        return "nothing changed since the last run: no check ran"
    here = sum(1 for r in report.results if r.origin == "")
    cached = sum(1 for r in report.results if r.origin == "cache")
    shared = len(report.results) - here - cached
    parts = [f"{here} computed", f"{shared} shared between cells", f"{cached} from earlier runs"]
    reran = report.run.get("reran")
    return ", ".join(parts + ([f"{reran} reruns"] if reran else []))


def failing_partners(
    outcomes: list[tuple[str, str, bool]],
    report: Report,
    cells: dict[str, CellRecord],
    axes: list[tuple[str, str]],
) -> dict[str, tuple[str, list[str]]]:
    """The axes where the command fails on every cell, all run with one partner release
    that fails it on its own axis too while another release there passes: axis -> (the
    partner as a pin, the partner axis's passing releases). An onnx release fails only
    where its partner passes; these failures say nothing of the axis."""
    other = {"onnx": "onnxruntime", "onnxruntime": "onnx"}
    blamed = {}
    for axis, key in axes:
        partners = {cells[c].version(other[axis]) for c in report.axes.get(key, ())}
        if len(partners) != 1:
            continue
        (partner,) = partners
        theirs = [(v, ok) for a, v, ok in outcomes if a == other[axis]]
        passing = sorted({v for v, ok in theirs if ok}, key=Version)
        ours_pass = any(ok for a, _, ok in outcomes if a == axis)
        if passing and not ours_pass and any(v == partner and not ok for v, ok in theirs):
            blamed[axis] = (f"{other[axis]}=={partner}", passing)
    return blamed


def with_packages(
    clause: str | None, results: list[CheckResult], cells: dict[str, CellRecord]
) -> str | None:
    """A failure `clause` with the other packages its failing cells hold where none of
    the passing cells does (numpy 1.26.4 beside an old onnxruntime): the failure may
    follow that package, not the release."""
    judged = [r for r in results if r.outcome.value not in ("skip", "flaky")]
    failing = [cells[r.cell] for r in judged if r.outcome.value != "pass"]
    passing = [cells[r.cell] for r in judged if r.outcome.value == "pass"]
    if not clause or not failing or not passing:
        return clause
    names = {n for c in failing + passing for n in c.packages} - {"onnx", "onnxruntime"}
    notes = []
    for name in sorted(names):
        bad = {c.packages.get(name) or "none" for c in failing}
        good = {c.packages.get(name) or "none" for c in passing}
        if not bad & good:
            there = ", ".join(sorted(bad))
            elsewhere = ", ".join(sorted(good))
            notes.append(f"{name} {there}, the passing ones {elsewhere}")
    return clause + (f" (the failing cells have {'; '.join(notes)})" if notes else "")


def claims(report: Report, pyproject: Path) -> list[str]:
    """ "pyproject says onnx>=1.13; your tests fail on 1.16.2–1.18.0 (passing from 1.19.0)":
    each of the project's commands set against the ranges its pyproject declares, on the
    cells of each axis (compat/adopt/declared.py says it)."""
    from compat.adopt.declared import claims_line, declared_ranges, partner_clause

    if not pyproject.is_file():
        return []
    ranges = declared_ranges(pyproject)
    cells = {c.id: c for c in report.cells}
    names = sorted({r.case for r in report.results if r.case.startswith(f"{FAMILY}.")})
    every = pythons(report) or ("",)
    lines = []
    for case in names:
        said: dict[str, list[str]] = {}  # a claim -> the Pythons it is true on
        for python in every:
            axes = [(a, f"{a}@{python}" if python else a) for a in ("onnx", "onnxruntime")]
            outcomes = [
                (axis, cells[r.cell].version(axis), r.outcome.value == "pass")
                for axis, key in axes  # the axes a project declares ranges of
                for r in report.results
                if r.case == case
                and r.cell in report.axes.get(key, ())
                and r.outcome.value not in ("skip", "flaky")
            ]
            what = "your tests" if len(names) == 1 else f"`{case.split('.', 1)[1]}`"
            blamed = failing_partners(outcomes, report, cells, axes)
            clauses = [
                partner_clause(axis, ranges[axis], *blamed[axis], what)
                if axis in blamed and axis in ranges
                else with_packages(
                    claims_line(ranges, [o for o in outcomes if o[0] == axis], what),
                    [
                        r
                        for r in report.results
                        if r.case == case and r.cell in report.axes.get(key, ())
                    ],
                    cells,
                )
                for axis, key in axes
            ]
            line = " · ".join(c for c in clauses if c)
            if line:
                said.setdefault(line + _untested(report, cells, axes, ranges), []).append(python)
        for line, where in said.items():  # the Python named only where the claims vary
            same = len(said) == 1 and len(where) == len(every)
            lines.append(line if same else f"on Python {', '.join(where)}: {line}")
    return lines


def _untested(
    report: Report,
    cells: dict[str, CellRecord],
    axes: list[tuple[str, str]],
    ranges: dict[str, str],
) -> str:
    """The releases in a declared range a claim could not test: their cells are broken
    (not installable, not importable), so "every release tested" leaves them out."""
    found = sorted(
        {
            cells[cell].version(axis)
            for axis, key in axes
            for cell in report.axes.get(key, ())
            if cells[cell].state in BROKEN
            and axis in ranges
            and (not ranges[axis] or in_range(cells[cell].version(axis), ranges[axis]))
        },
        key=Version,
    )
    if not found:
        return ""
    broken = "its environment" if len(found) == 1 else "their environments"
    return f" (not tested: {', '.join(found)}: {broken} could not be made)"


def finish(
    report: Report,
    paths: list[Path],
    grid: str | None = None,
    pyproject: Path | None = None,
    fail_on: str = "unexpected",
) -> int:
    """The terminal summary and the exit code shared by `matrix` and `merge`: what changed
    since the baseline (if any), the family × release summary, what needs a look (with
    repro commands), a closing line of counts and the files, and the comparison's line;
    the full grid of rows with `--grid` (`--grid=all`: passing rows too). Exit 1 for an
    unexpected result, or with `fail_on` "new" for one the baseline had not."""
    colour = use_colour(sys.stdout.isatty())
    changed = render_changes(report)
    if changed:
        print(changed)
        print()
    if grid:
        print(render_grid(report, every_row=grid == "all"))
        print()
    print(render_summary(report, colour))
    hints = repro_hints(report)
    folder = paths[0].parent if paths else Path()
    unexpected = render_unexpected(report, hints, str(folder))
    print()
    print(unexpected or "no unexpected results")
    spellings = render_spellings(report)
    if spellings:
        print()
        print(spellings)
    predicted = render_predictions(report)  # the drop-in models' scan, set against the run
    if predicted:
        print()
        print(predicted)
    said = claims(report, pyproject) if pyproject else []
    if said:
        print()
        print("\n".join(said))
    print()
    print(closing_line(report, provenance(report)))
    top = [p.name for p in paths if p.parent == folder and p.name != "matrix.json"]
    nested = Counter(p.parent.name for p in paths if p.parent != folder)
    names = ", ".join([*top, *(f"{d}/ ({n} page{'s' * (n != 1)})" for d, n in nested.items())])
    line = f"reports in {folder}/: {names}"
    if len(line) > 118:  # the terminal stays within its width
        print(f"reports in {folder}/:")
        line = f"  {names}"
    hint = "" if grid else "--grid prints every row here"
    print(f"{line}; {hint}" if hint and len(line) + len(hint) < 118 else line)
    if hint and len(line) + len(hint) >= 118:
        print(hint)
    changes = changes_of(report)
    code = gate(changes, bool(hints), fail_on)
    since = closing_changes(report)
    if since and fail_on == "new" and changes is not None:
        gated = len(changes.gated)
        why = f"{gated} unexpected result{'s' * (gated != 1)} new" if gated else "nothing new"
        since += f"; --fail-on new: exit {code} ({why})"
    if since:
        print(since)
    return code
