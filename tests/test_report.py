"""matrix.json round trip, and the Markdown and terminal renderings (snapshots)."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from xml.etree import ElementTree

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compat.cli.main import main
from compat.core.outcomes import CellRecord, CellState, CheckResult, Outcome
from compat.core.report import CaseInfo, Report, read_json, write_json
from compat.render.docs import render_docs
from compat.render.grid import build_tables, link_label, verdict
from compat.render.html import page_data, render_html
from compat.render.junit import render_junit
from compat.render.markdown import render_markdown
from compat.render.terminal import render_grid, render_summary, render_unexpected
from tests.conftest import ROOT
from tests.test_install_request import REQUESTS

GOLDEN = Path(__file__).with_name("golden")
ONNX_CHECKS = {"checker": "onnx", "shape_inference": "onnx"}
ORT_CHECKS = {"ort_run": "onnxruntime", "ort_optimized": "onnxruntime"}


def ready(onnx: str, ort: str, numpy: str = "2.4.6") -> CellRecord:
    packages = {"onnx": onnx, "onnxruntime": ort, "numpy": numpy, "protobuf": "7.36.2"}
    return CellRecord(
        f"onnx{onnx}-ort{ort}", onnx, ort, CellState.READY, packages, "3.11.7", "Linux"
    )


def sample_report() -> Report:
    cells = (
        ready("1.18.0", "1.24.4"),
        ready("1.21.0", "1.24.4"),
        ready("1.23.2", "1.17.3", numpy="1.26.4"),
        CellRecord(
            "onnx1.23.2-ort1.14.1",
            "1.23.2",
            "1.14.1",
            CellState.INSTALL_ERROR,
            detail="× No solution found\n╰─▶ onnxruntime==1.14.1 has no usable wheels",
        ),
    )
    cases = (
        CaseInfo(
            "pads.value_ints",
            "pads",
            "Pad(x, Constant(value_ints))",
            "ab12",
            {**ONNX_CHECKS, **ORT_CHECKS},
            (
                {
                    "package": "onnx",
                    "versions": "<1.21",
                    "checks": ["shape_inference"],
                    "reason": "rejected",
                    "link": "https://example.org/bug/1",
                },
            ),
        ),
        CaseInfo(
            "pads.tensor",
            "pads",
            "Pad(x, Constant(value=tensor))",
            "cd34",
            {**ONNX_CHECKS, **ORT_CHECKS},
        ),
    )
    xfail = CheckResult(
        "onnx1.18.0-ort1.24.4",
        "pads.value_ints",
        "shape_inference",
        Outcome.XFAIL,
        detail="InferenceError: 'pads' must be 1D",
        phase="infer",
        known="https://example.org/bug/1",
        seconds=0.02,
    )
    crash = CheckResult(
        "onnx1.23.2-ort1.17.3",
        "pads.tensor",
        "ort_run",
        Outcome.CRASH,
        detail="worker killed by SIGSEGV (exit -11)",
    )
    special = {(r.cell, r.case, r.check): r for r in (xfail, crash)}
    results = []
    for cell in cells[:3]:
        for case in cases:
            for check, outcome, detail in [
                ("checker", Outcome.PASS, ""),
                ("shape_inference", Outcome.PASS, ""),
                ("ort_run", Outcome.PASS, ""),
                ("ort_optimized", Outcome.SKIP, "no expectation"),
            ]:
                plain = CheckResult(cell.id, case.id, check, outcome, detail=detail)
                results.append(special.get((cell.id, case.id, check), plain))
    return Report(
        cells=cells,
        cases=cases,
        results=tuple(results),
        axes={
            "onnx": ("onnx1.18.0-ort1.24.4", "onnx1.21.0-ort1.24.4"),
            "onnxruntime": ("onnx1.23.2-ort1.14.1", "onnx1.23.2-ort1.17.3"),
        },
        families={"pads": "Pad whose pads come from a Constant."},
        run={"started": "2026-11-29T00:00:00+00:00", "seconds": 1.5},
    )


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text(), f"{name} changed; rerun with UPDATE_GOLDEN=1 if intended"


def test_markdown_matches_the_snapshot() -> None:
    check_golden("matrix.md", render_markdown(sample_report()))


def test_terminal_summary_grid_and_unexpected_list_match_the_snapshot() -> None:
    report = sample_report()
    text = "\n\n".join(
        [render_summary(report), render_unexpected(report), render_grid(report, every_row=True)]
    )
    check_golden("terminal.txt", text + "\n")


def test_the_terminal_summary_of_the_default_run_fits_a_screen(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The committed default run (docs/matrix.json.gz: 27 cells, 151 cases): at most 60
    lines, none over 120 characters, the family × release grid first."""
    from compat.workflow.finish import finish

    report = read_json(ROOT / "docs" / "matrix.json.gz")
    finish(report, [Path("reports/matrix.json"), Path("reports/matrix.md")])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) <= 60, len(lines)
    assert max(len(line) for line in lines) <= 120
    assert lines[1].startswith("family ")  # the grid's header, under the axis titles
    assert len(lines[2:]) >= len({c.family for c in report.cases})
    assert lines[-2].endswith(")") and " passed" in lines[-2]  # the closing line of counts


def test_rendering_is_deterministic_and_free_of_run_metadata() -> None:
    a = sample_report()
    b = Report(a.cells, a.cases, a.results, a.axes, a.families, run={"seconds": 99, "host": "x"})
    assert render_markdown(a) == render_markdown(b)
    assert "2026-11-29" not in render_markdown(a)


def test_unexpected_lists_broken_cells_and_crashes_but_not_xfail_or_skip() -> None:
    text = render_unexpected(sample_report())
    assert text.splitlines()[0] == "2 unexpected:"
    assert (
        "onnx1.23.2-ort1.14.1: install-error: × No solution found ╰─▶ onnxruntime==1.14.1" in text
    )
    assert "onnx1.23.2-ort1.17.3 · pads.tensor · ort_run: crash: worker killed by SIGSEGV" in text
    assert "xfail" not in text


def test_a_failure_alike_in_several_cells_is_one_entry_and_in_every_cell_says_so() -> None:
    releases = ("1.18.0", "1.19.1", "1.20.1")
    cells = tuple(CellRecord(f"onnx{v}-ort1.24.4", v, "1.24.4", CellState.READY) for v in releases)
    case = CaseInfo("command.tests", "command", "", "00", {"command": "both"})
    said = "exit 1: 1 failed: tests/test_x.py::test_a (TypeError: Strings must be encoded)"

    def run(*details: str) -> Report:
        results = tuple(
            CheckResult(c.id, case.id, "command", Outcome.FAIL, d, "command")
            for c, d in zip(cells, details, strict=True)
        )
        return Report(cells, (case,), results, {"onnx": tuple(c.id for c in cells)})

    # the same words, but for the time each took: one entry, and the likely cause
    text = render_unexpected(run(f"{said} in 1.2s", f"{said} in 0.9s", f"{said} in 1.4s"))
    lines = text.splitlines()
    assert lines[0] == "3 unexpected:"
    assert lines[1].startswith("onnx1.18.0-ort1.24.4 (and 2 more cells) · command.tests")
    assert lines[2].startswith("    the same in all 3 cells: likely not an onnx or onnxruntime")
    assert len(lines) == 3
    # one cell says otherwise: two entries, and no claim about every cell
    text = render_unexpected(run(said, said, "exit 1: 2 failed: tests/test_x.py::test_b"))
    assert "(and 1 more cell)" in text and "onnx1.20.1-ort1.24.4 · command.tests" in text
    assert "the same in all" not in text
    # a cell's repro command once, after its last entry, however many it has
    two = replace(run(said, said, said), results=run(said, said, said).results[:1])
    other = CheckResult(cells[0].id, case.id, "command", Outcome.ERROR, "boom", "command")
    text = render_unexpected(replace(two, results=(*two.results, other)), {cells[0].id: "REPRO"})
    assert text.count("REPRO") == 1 and text.splitlines()[-1] == "    REPRO"


def test_json_round_trip(tmp_path: Path) -> None:
    report = sample_report()
    write_json(report, tmp_path / "matrix.json")
    again = read_json(tmp_path / "matrix.json")
    assert again == report
    assert render_markdown(again) == render_markdown(report)  # order survives the file
    data = json.loads((tmp_path / "matrix.json").read_text())
    assert data["schema_version"] == 1
    assert set(data["cells"][0]) >= {"id", "packages", "python", "state", "detail"}
    assert set(data["results"][0]) >= {"cell", "case", "check", "outcome", "detail", "seconds"}


text = st.text(max_size=30)


@given(
    st.builds(
        CheckResult,
        cell=text,
        case=text,
        check=text,
        outcome=st.sampled_from(Outcome),
        detail=text,
        phase=text,
        seconds=st.floats(0, 1e6, allow_nan=False),
        known=text,
    ),
    st.builds(
        CellRecord,
        id=text,
        onnx=text,
        onnxruntime=text,
        state=st.sampled_from(CellState),
        packages=st.dictionaries(text, text, max_size=4),
        python=text,
        platform=text,
        detail=text,
        requirements=REQUESTS,
    ),
)
def test_records_survive_json_whatever_they_hold(result: CheckResult, cell: CellRecord) -> None:
    assert CheckResult.from_dict(json.loads(json.dumps(result.serialize()))) == result
    assert CellRecord.from_dict(json.loads(json.dumps(cell.serialize()))) == cell


def test_docs_tables_match_the_snapshot() -> None:
    check_golden("compatibility.md", render_docs(sample_report()))


def test_docs_tables_in_ascii_with_collapsed_ranges_match_the_snapshot() -> None:
    text = render_docs(sample_report(), ascii_marks=True, squash=True)
    assert not any(ord(ch) > 0x2FFF for ch in text)  # no emoji marks
    check_golden("compatibility-ascii-collapsed.md", text)


def test_junit_matches_the_snapshot() -> None:
    check_golden("junit.xml", render_junit(sample_report()))


def test_junit_counts_are_what_ci_systems_show() -> None:
    root = ElementTree.fromstring(render_junit(sample_report()))
    suites = {s.get("name"): s for s in root}
    broken = suites["onnx1.23.2-ort1.14.1"]
    assert (broken.get("tests"), broken.get("errors")) == ("1", "1")
    crashed = suites["onnx1.23.2-ort1.17.3"]
    assert (crashed.get("tests"), crashed.get("errors"), crashed.get("skipped")) == ("8", "1", "2")
    xfailed = suites["onnx1.18.0-ort1.24.4"]
    (skipped,) = [
        c
        for c in xfailed
        if c.find("skipped") is not None and "xfail" in c.find("skipped").get("message", "")
    ]
    assert skipped.get("name") == "shape_inference[onnx1.18.0-ort1.24.4]"


def test_junit_tells_xfail_from_skip_and_failures_carry_versions_and_repro() -> None:
    root = ElementTree.fromstring(render_junit(sample_report()))
    kinds = {s.get("type") for s in root.iter("skipped")}
    assert kinds == {"pytest.xfail", "skip"}  # known bugs and real skips differ by attribute
    for suite in root:
        names = {p.get("name") for p in suite.iter("property")}
        broken = suite.find("testcase[@name='environment']") is not None
        assert "requirements" in names and (broken or {"python", "onnx"} <= names)
    crashed = next(root.iter("error"))
    for problem in [*root.iter("failure"), *root.iter("error")]:
        assert "reproduce: nox -s repro -- onnx==" in (problem.text or "")
    assert "installed: " in (
        next(e for e in root.iter("error") if e.get("type") == "crash").text or ""
    )
    assert crashed is not None and root.get("time") is not None


def test_junit_scope_unexpected_keeps_only_what_needs_a_look() -> None:
    report = sample_report()
    scoped = Report(
        report.cells,
        report.cases,
        report.results,
        report.axes,
        report.families,
        run={"junit_scope": "unexpected"},
    )
    root = ElementTree.fromstring(render_junit(scoped))
    cases = list(root.iter("testcase"))
    assert cases and all(
        c.find("failure") is not None or c.find("error") is not None for c in cases
    )
    assert len(cases) == len(report.unexpected) + len(report.broken_cells)


def test_html_data_matches_the_snapshot_and_the_page_is_self_contained() -> None:
    report = sample_report()
    check_golden("matrix-html-data.json", json.dumps(page_data(report), indent=1, sort_keys=True))
    page = render_html(report)
    assert page == render_html(report)  # deterministic
    for needle in (
        'id="family"',
        'id="release"',
        'id="check"',
        'id="outcome"',
        'id="detail"',
        'id="close"',
        'id="squares"',
        'id="unexpected"',
        "position: sticky",
        "<title>onnx-compat matrix</title>",
    ):
        assert needle in page
    data = page_data(report)  # the summary first: squares, the unexpected results, twins
    states = [square[0] for square in data["summary"]["squares"][0]]
    assert states == ["known", "pass", "broken", "unexpected"]
    assert [(u["cell"], u["case"], u["outcome"]) for u in data["unexpected"]] == [
        ("onnx1.23.2-ort1.14.1", "", "install-error"),
        ("onnx1.23.2-ort1.17.3", "pads.tensor", "crash"),
    ]
    assert data["unexpected"][1]["repro"] == (
        "nox -s repro -- onnx==1.23.2 onnxruntime==1.17.3 --cases pads.tensor"
    )
    assert {row["group"] for t in data["tables"] for row in t["rows"]} == {"pads"}
    assert "http://" not in page.replace("https://example.org", "")  # nothing loaded from afar
    assert "<script src" not in page and "<link" not in page


def test_verdicts_read_as_a_sentence() -> None:
    tables = build_tables(sample_report())
    onnx = next(t for t in tables if t.axis == "onnx")
    row = next(r for r in onnx.rows if r.case == "pads.value_ints" and r.check == "shape_inference")
    assert verdict("onnx", onnx.labels, row) == (
        "works on onnx ≥ 1.21.0; broken on 1.18.0 (https://example.org/bug/1)"
    )
    assert link_label("https://github.com/onnx/onnx/issues/6697") == "onnx #6697"
    assert link_label("https://github.com/microsoft/onnxruntime/pull/34141") == "onnxruntime #34141"


def test_the_docs_drift_check_fails_on_a_stale_file_and_prints_the_diff(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_json(sample_report(), tmp_path / "matrix.json")
    args = ["report", "--results", str(tmp_path / "matrix.json"), "--out", str(tmp_path)]
    assert main(args) == 0  # renders every format
    assert main([*args, "--check"]) == 0
    stale = tmp_path / "compatibility.md"
    stale.write_text(stale.read_text().replace("| ✅", "| ✔", 1))
    capsys.readouterr()
    assert main([*args, "--check"]) == 1
    out = capsys.readouterr().out
    assert "(committed)" in out and "-| " in out and "+| " in out
    assert "1 file(s) drifted" in out


def test_a_gz_report_round_trips_byte_for_byte(tmp_path: Path) -> None:
    report = sample_report()
    write_json(report, tmp_path / "a.json.gz")
    write_json(report, tmp_path / "b.json.gz")
    assert (tmp_path / "a.json.gz").read_bytes() == (tmp_path / "b.json.gz").read_bytes()
    assert read_json(tmp_path / "a.json.gz") == read_json(tmp_path / "a.json.gz")
    assert render_markdown(read_json(tmp_path / "a.json.gz")) == render_markdown(report)


def test_the_docs_index_shows_the_committed_scoreboard_picture() -> None:
    index = (ROOT / "docs" / "compatibility.md").read_text()
    assert "](scoreboard.svg)" in index and "](summary.svg)" in index
    assert (ROOT / "docs" / "scoreboard.svg").read_text().startswith("<svg")


def test_an_unexpected_result_served_from_the_cache_says_so() -> None:
    from dataclasses import replace

    report = sample_report()
    cached = tuple(
        replace(r, origin="cache") if r.outcome.unexpected else r for r in report.results
    )
    text = render_unexpected(replace(report, results=cached))
    assert "[from an earlier run; --fresh recomputes]" in text
    assert "[from an earlier run" not in render_unexpected(report)


def test_renderings_of_a_large_report_made_in_a_forked_process_equal_those_made_here(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The committed docs run (27,000 results): junit.xml and matrix.html come from a
    second process while this one renders the rest, byte for byte what one would make."""
    import compat.render.outputs as outputs

    report = read_json(ROOT / "docs" / "matrix.json.gz")
    assert len(report.results) >= outputs.APART_FROM
    names = tuple(outputs.RENDERERS)
    together = outputs.render_all(report, outputs.Style(), names)
    monkeypatch.setattr(outputs, "APART_FROM", 10**9)
    alone = outputs.render_all(report, outputs.Style(), names)
    assert together == alone
    assert together["junit.xml"] and together["matrix.html"]
    monkeypatch.setattr(outputs, "APART_FROM", 0)  # and it is another process's work
    monkeypatch.setitem(outputs.RENDERERS, "pid", lambda report, style: str(os.getpid()))
    monkeypatch.setattr(outputs, "APART", (*outputs.APART, "pid"))
    assert outputs.render_all(report, outputs.Style(), ("pid",))["pid"] != str(os.getpid())
