"""compat/render/changes_page.py: changes.md, what a run gained and lost since its
baseline, per family and per command, with upstream links and repro commands (the real
run is in tests/test_watch.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from compat.cli.main import main
from compat.core.changes import Source, attach, compare
from compat.core.outcomes import CellRecord, CheckResult, Outcome
from compat.core.report import CaseInfo, Report, read_json, write_json
from compat.render.changes_page import render_changes_page
from compat.render.outputs import write_reports
from compat.render.release_diff import BROKEN, WORKS
from tests.conftest import ROOT

SOURCE = Source("git:v1.4.0", "v1.4.0", "commit abc")
BUG = {
    "package": "onnxruntime",
    "versions": "<1.20",
    "checks": ["ort_run"],
    "reason": "Pad drops constant_value",
    "link": "https://github.com/microsoft/onnxruntime/issues/1234",
}
CASES = (
    CaseInfo(
        "pad.constant", "pad", "", "00", {"checker": "onnx", "ort_run": "onnxruntime"}, (BUG,)
    ),
    CaseInfo("pad.edge", "pad", "", "00", {"checker": "onnx", "ort_run": "onnxruntime"}),
    CaseInfo("command.tests", "command", "", "00", {"run": "both"}),
)


def cell(onnx: str, ort: str) -> CellRecord:
    fields = {"id": f"onnx{onnx}-ort{ort}", "onnx": onnx, "onnxruntime": ort, "state": "ready"}
    return CellRecord.from_dict(
        {**fields, "requirements": [f"onnx=={onnx}", f"onnxruntime=={ort}"]}
    )


def report(cells: list[CellRecord], failing: dict[tuple[str, str, str], str]) -> Report:
    """Every check of every case in every cell passes, but (cell, case, check) -> detail."""
    results = tuple(
        CheckResult(c.id, case.id, check, Outcome.FAIL, failing[c.id, case.id, check])
        if (c.id, case.id, check) in failing
        else CheckResult(c.id, case.id, check, Outcome.PASS)
        for c in cells
        for case in CASES
        for check in case.checks
    )
    axes = {"onnxruntime": tuple(c.id for c in cells)}
    return Report(tuple(cells), CASES, results, axes, run={"options": {"run": ["tests=pytest"]}})


OLD, NEW = cell("1.18.0", "1.24.4"), cell("1.18.0", "1.25.0")


def test_the_page_counts_each_family_and_each_command_and_links_the_known_bug() -> None:
    before = report([OLD], {(OLD.id, "pad.edge", "ort_run"): "off by one"})
    after = report(
        [OLD, NEW],
        {
            (OLD.id, "pad.constant", "ort_run"): "constant dropped",
            (NEW.id, "pad.constant", "ort_run"): "constant dropped",
            (NEW.id, "command.tests", "run"): "exit 1",
        },
    )
    page = render_changes_page(attach(after, compare(before, after, SOURCE)))
    assert page is not None
    lines = page.splitlines()
    assert lines[0] == "# What changed since v1.4.0"
    assert "| `command.tests` | 1 | 0 | 0 |" in lines  # each command a row of its own
    assert "| `pad` | 2 | 1 | 0 |" in lines  # one new failure, one on the new release; one fixed
    release = lines.index("## New release onnxruntime 1.25.0: 2 unexpected")
    assert release < lines.index("## New failures (1)") < lines.index("## Fixed (1)")
    link = f"[known upstream bug (onnxruntime <1.20)]({BUG['link']})"
    assert lines.count(f"    - {link}") == 2  # pad.constant · ort_run, on both cells
    repro = (
        "    - repro: `nox -s repro -- onnx==1.18.0 onnxruntime==1.25.0 --cases command.tests "
        "--run tests=pytest`"
    )
    assert repro in lines
    fixed = lines[lines.index("## Fixed (1)") + 2]
    assert fixed == "- `pad.edge` · ort_run on `onnx1.18.0-ort1.24.4`: was fail: off by one"


def test_no_baseline_no_page_and_no_change_says_so(tmp_path: Path) -> None:
    plain = report([OLD], {})
    assert render_changes_page(plain) is None
    write_reports(plain, tmp_path / "plain")
    assert not (tmp_path / "plain" / "changes.md").exists()
    same = attach(plain, compare(plain, plain, SOURCE))
    write_reports(same, tmp_path / "same")
    text = (tmp_path / "same" / "changes.md").read_text()
    assert "since v1.4.0: 0 new failures, 0 fixed, 0 changed." in text
    assert text.rstrip().endswith("No result changed.")


def test_a_real_pair_of_reports_the_newest_release_against_the_one_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The committed docs run, and the same run before its newest onnxruntime release
    existed: `report --baseline` writes changes.md with what that release gained and
    lost against the release before it, counted here from the results themselves."""
    now = read_json(ROOT / "docs" / "matrix.json.gz")
    cells = {c.id: c for c in now.cells}
    axis = [cells[i] for i in now.axes["onnxruntime"]]
    newest, before = axis[-1], axis[-2]
    baseline = replace(
        now,
        cells=tuple(c for c in now.cells if c.id != newest.id),
        results=tuple(r for r in now.results if r.cell != newest.id),
        axes={a: tuple(i for i in ids if i != newest.id) for a, ids in now.axes.items()},
    )
    write_json(baseline, tmp_path / "before.json.gz")
    argv = ["report", "--results", str(ROOT / "docs" / "matrix.json.gz"), "--out"]
    assert main([*argv, str(tmp_path / "out"), "--baseline", str(tmp_path / "before.json.gz")]) == 0
    page = (tmp_path / "out" / "changes.md").read_text()
    assert f"## New release onnxruntime {newest.onnxruntime}: nothing unexpected" in page
    old = {(r.case, r.check): r.outcome for r in now.results if r.cell == before.id}
    new = {(r.case, r.check): r.outcome for r in now.results if r.cell == newest.id}
    both = old.keys() & new.keys()
    lost = sum(1 for k in both if old[k] in WORKS and new[k] in BROKEN)
    gained = sum(1 for k in both if old[k] in BROKEN and new[k] in WORKS)
    assert (
        f"Against onnxruntime {before.onnxruntime} (`{before.id}`), of {len(both)} results "
        f"both have: {lost} lost" in page
    )
    assert f"{gained} gained." in page
    items = [line for line in page.splitlines() if line.startswith("- `")]
    assert len(items) == lost + gained
    # each item's known upstream bug is linked: the corpus's entry for that case and check
    links = [line for line in page.splitlines() if line.startswith("    - [known upstream bug]")]
    moved = [k for k in both if {old[k], new[k]} & WORKS and {old[k], new[k]} & BROKEN]
    assert len(links) >= sum(1 for k in moved if Outcome.XFAIL in (old[k], new[k]))
