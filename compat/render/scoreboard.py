"""reports/scoreboard.md: ONNX's backend node tests against every onnxruntime release.

Three tables: the scoreboard (one row per release: passed, failed, errors, crashes,
timeouts, skipped, total, and the pass rate of what was attempted — skips are
counted apart, never as passes or failures); a per-op table (passed/attempted); and
what changed between consecutive releases, regressions first, each with the failing
detail.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator

from compat.core.axis_names import split_axis
from compat.core.outcomes import CellRecord, CellState, CheckResult, Outcome
from compat.core.report import Report
from compat.core.suite import FAMILY
from compat.core.versions import version_key
from compat.core.vocabulary import OUTCOMES, WORKS
from compat.render.axes import axes_of, pythons
from compat.render.grid import text_table
from compat.render.text import md_code, md_text

CHECK = "ort_run"
#: The columns of counts, in order: each outcome's `bucket` in compat/core/vocabulary.py.
COLUMNS = ("passed", "failed", "errors", "crashes", "timeouts", "skipped")


def _releases(report: Report) -> list[CellRecord]:
    """The onnxruntime releases, one cell each: on a run of several Pythons
    (`onnxruntime@3.12`), the newest Python's where the release ran there, else the
    newest Python's that has the release."""
    cells = {c.id: c for c in report.cells}
    if not pythons(report):
        ids = report.axes.get("onnxruntime") or tuple(c.id for c in report.cells)
        return sorted((cells[i] for i in ids), key=lambda c: version_key(c.onnxruntime))
    keys = [k for k in axes_of(report) if split_axis(k)[0] == "onnxruntime"]
    every = [i for k in keys for i in report.axes[k]] or [c.id for c in report.cells]
    chosen: dict[str, CellRecord] = {}
    for cell in (cells[i] for i in every):  # the newest Python last: its ready cell wins
        held = chosen.get(cell.onnxruntime)
        if held is None or cell.state is CellState.READY or held.state is not CellState.READY:
            chosen[cell.onnxruntime] = cell
    return sorted(chosen.values(), key=lambda c: version_key(c.onnxruntime))


def _results(report: Report, check: str = CHECK) -> dict[tuple[str, str], CheckResult]:
    """One check's suite results by (cell, case)."""
    return {
        (r.cell, r.case): r
        for r in report.results
        if r.check == check and r.case.startswith(FAMILY + ".")
    }


def _regressed(
    results: dict[tuple[str, str], CheckResult], releases: list[CellRecord]
) -> Iterator[tuple[CellRecord, CellRecord, str, CheckResult]]:
    """(before, after, test, result after) for every test that passed on a release and
    not on the next one."""
    for before, after in itertools.pairwise(releases):
        for (cell, case), new in sorted(results.items()):
            old = results.get((before.id, case))
            was = old and old.outcome in WORKS
            now = new.outcome in WORKS
            if cell == after.id and was and not now:
                yield before, after, case[len(FAMILY) + 1 :], new


def scoreboard_rows(report: Report) -> list[list[str]]:
    results = _results(report)
    rows = []
    for cell in _releases(report):
        counts = Counter(
            OUTCOMES[r.outcome].bucket for (c, _), r in results.items() if c == cell.id
        )
        total = sum(counts.values())
        attempted = total - counts["skipped"]
        rate = f"{100 * counts['passed'] / attempted:.1f}%" if attempted else "—"
        if cell.state is not CellState.READY:
            rows.append([cell.onnxruntime, *["—"] * len(COLUMNS), "0", cell.state.value])
            continue
        rows.append([cell.onnxruntime, *(str(counts[k]) for k in COLUMNS), str(total), rate])
    return rows


def _per_op(report: Report, releases: list[CellRecord]) -> str:
    op_of = {c.id: (c.tags[0] if c.tags else "?") for c in report.cases if c.family == FAMILY}
    results = _results(report)
    ops = sorted(set(op_of.values()))
    rows = []
    for op in ops:
        row = [op]
        for cell in releases:
            mine = [r for (c, case), r in results.items() if c == cell.id and op_of.get(case) == op]
            attempted = [r for r in mine if r.outcome is not Outcome.SKIP]
            passed = [r for r in attempted if r.outcome in WORKS]
            row.append(f"{len(passed)}/{len(attempted)}" if attempted else "—")
        rows.append([md_text(text) for text in row])
    return text_table(rows, ["op", *(md_text(c.onnxruntime) for c in releases)])


def _changes(report: Report, releases: list[CellRecord]) -> list[str]:
    results = _results(report)
    cases = sorted({case for _, case in results})
    out = []
    for before, after in itertools.pairwise(releases):
        regressed: list[str] = []
        fixed: list[str] = []
        supported: list[str] = []
        for case in cases:
            old = results.get((before.id, case))
            new = results.get((after.id, case))
            if old is None or new is None:
                continue
            was = old.outcome.value
            now = new.outcome.value
            name = md_code(case[len(FAMILY) + 1 :])
            if was in WORKS and now not in WORKS:
                regressed.append(f"- {name}: {md_text(new.summary)}")
            elif now in WORKS and was not in WORKS:
                (supported if was == "skip" else fixed).append(name)
        was_on = md_text(before.onnxruntime)
        now_on = md_text(after.onnxruntime)
        out += [f"### {was_on} → {now_on}", ""]
        out += [
            f"**{len(regressed)} regressed** (passed on {was_on}, not on "
            f"{now_on})" + (":" if regressed else "."),
            "",
        ]
        if regressed:
            out += [*regressed, ""]
        out += [
            f"**{len(fixed)} started passing**" + (": " + ", ".join(fixed) if fixed else "."),
            "",
        ]
        if supported:
            out += [
                f"**{len(supported)} newly supported** (skipped before, now pass): "
                + ", ".join(supported),
                "",
            ]
    return out


def _regressions(report: Report, releases: list[CellRecord]) -> list[str]:
    """The headline: every test that passed on a release and not on the next one."""
    return [
        f"- {md_text(before.onnxruntime)} → {md_text(after.onnxruntime)}: {md_code(name)}: "
        + md_text(new.summary)
        for before, after, name, new in _regressed(_results(report), releases)
    ]


def render_scoreboard(report: Report) -> str | None:
    """The three tables, or None when the run had no backend tests."""
    if not any(c.family == FAMILY for c in report.cases):
        return None
    releases = [c for c in _releases(report) if c.state is CellState.READY]
    tests = sum(1 for c in report.cases if c.family == FAMILY)
    generator = md_text(str(report.run.get("generator_onnx", "?")))
    headers = ["onnxruntime", *COLUMNS, "total", "pass rate (of attempted)"]
    headline = _regressions(report, releases)
    return (
        "\n".join(
            [
                "# ONNX backend scoreboard",
                "",
                f"{tests} node tests generated by onnx {generator} (`onnx.backend.test`), run with "
                f"`{CHECK}` in one environment per onnxruntime release. A test whose model is "
                "newer than a release supports is skipped, and skips are counted apart: the pass "
                "rate is passed / (total − skipped).",
                "",
                f"## {len(headline)} regressions between consecutive releases",
                "",
                *(headline or ["None: no test that passed on a release fails on the next."]),
                "",
                "## Scoreboard",
                "",
                text_table(
                    [[md_text(text) for text in row] for row in scoreboard_rows(report)], headers
                ),
                "",
                "## Per op (passed / attempted)",
                "",
                _per_op(report, releases),
                "",
                "## What changed",
                "",
                *_changes(report, releases),
            ]
        )
        + "\n"
    )


# reports/scoreboard.html: the same answers as a page of its own (the matrix keeps
# matrix.html); the data is JSON, page/scoreboard.{html,css,js} lay it out.

#: The pass-rate chart beside the page, when one was drawn: shown if present.
CHART = "scoreboard.svg"


def scoreboard_page_data(report: Report) -> dict[str, object]:
    """What scoreboard.html shows: the scoreboard rows, every check of the suite per
    release (passed / attempted), regressions between consecutive releases on each check,
    and the per-op table."""
    from compat.core.suite import CHECKS as SUITE_CHECKS

    releases = _releases(report)
    ready = [c for c in releases if c.state is CellState.READY]
    present = {r.check for r in report.results if r.case.startswith(FAMILY + ".")}
    checks = [c for c in SUITE_CHECKS if c in present] + sorted(present - set(SUITE_CHECKS))
    by_check = {check: _results(report, check) for check in checks}
    per_check = []
    for cell in releases:
        line: list[object] = [cell.onnxruntime, cell.state.value]
        for check in checks:
            counts = Counter(
                OUTCOMES[r.outcome].bucket for (c, _), r in by_check[check].items() if c == cell.id
            )
            line.append(
                [
                    counts["passed"],
                    sum(counts.values()) - counts["skipped"],
                    counts["skipped"],
                    sum(counts.values()),
                ]
            )
        per_check.append(line)
    regressions = [
        [before.onnxruntime, after.onnxruntime, check, name, new.summary.replace("\n", " ")]
        for check in checks
        for before, after, name, new in _regressed(by_check[check], ready)
    ]
    op_of = {c.id: (c.tags[0] if c.tags else "?") for c in report.cases if c.family == FAMILY}
    ops = []
    results = by_check.get(CHECK, {})
    for op in sorted(set(op_of.values())):
        row: list[object] = [op]
        for cell in ready:
            mine = [r for (c, case), r in results.items() if c == cell.id and op_of.get(case) == op]
            attempted = [r for r in mine if r.outcome is not Outcome.SKIP]
            passed = [r for r in attempted if r.outcome in WORKS]
            row.append([len(passed), len(attempted)])
        ops.append(row)
    return {
        "tests": sum(1 for c in report.cases if c.family == FAMILY),
        "generator": str(report.run.get("generator_onnx", "?")),
        "check": CHECK,
        "headers": ["onnxruntime", *COLUMNS, "total", "pass rate"],
        "rows": scoreboard_rows(report),
        "checks": checks,
        "per_check": per_check,
        "regressions": regressions,
        "releases": [c.onnxruntime for c in ready],
        "ops": ops,
        "chart": CHART,
    }


def render_scoreboard_html(report: Report) -> str | None:
    """reports/scoreboard.html, or None when the run had no backend tests."""
    from compat.render.html import fill

    if not any(c.family == FAMILY for c in report.cases):
        return None
    return fill("scoreboard", scoreboard_page_data(report))
