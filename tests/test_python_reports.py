"""Reports of a run of several Pythons: every renderer, no-wheel cells as n/a.

tests/data/pythons/matrix.json is a real run (`--python 3.9,3.13`, two onnx and two
onnxruntime releases, one family): 7 cells, 4 of them with a release the index has no
wheel of for their Python. Every renderer reads it, none counts a no-wheel cell as a
failure, the terminal gives each Python a block and stays within a screen for five,
the page's Python filter works in a real browser (marked `browser`), and docs/pythons.md
says which release runs on which Python.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs
from xml.etree import ElementTree

import pytest

from compat.core.outcomes import CellState, CheckResult, Outcome
from compat.core.report import Report, read_json
from compat.core.versions import version_key
from compat.core.vocabulary import ENTRIES
from compat.plan.config import load_config
from compat.render.docs import render_docs
from compat.render.docs_pages import family_page
from compat.render.grid import build_tables
from compat.render.heatmap import heatmap_svg
from compat.render.html import page_data, render_html
from compat.render.junit import render_junit
from compat.render.markdown import render_markdown
from compat.render.outputs import RENDERERS, Style
from compat.render.pythons import render_pythons
from compat.render.summary import summarize
from compat.render.terminal import closing_line, render_grid, render_summary, render_unexpected
from compat.render.writer_reader import render_writer_reader
from compat.workflow.finish import claims, finish
from tests.conftest import ROOT
from tests.test_report import check_golden, ready, sample_report

SMOKE = Path(__file__).parent / "data" / "pythons" / "matrix.json"
FAMILY = "pad_pads_from_constant"


def smoke() -> Report:
    return read_json(SMOKE)


def test_every_renderer_reads_a_run_of_several_pythons() -> None:
    report = smoke()
    written = {name for name, render in RENDERERS.items() if render(report, Style()) is not None}
    assert written == {
        "matrix.md",
        "compatibility.md",
        "families",
        "summary.svg",
        "matrix.html",
        "junit.xml",
        "pythons.md",
    }
    assert render_pythons(sample_report()) is None  # a run of one Python: no such page


def test_axes_go_by_python_then_package_whatever_order_the_json_keeps() -> None:
    report = smoke()
    assert list(report.axes)[:2] == ["onnx@3.13", "onnx@3.9"]  # sorted keys, as stored
    axes = list(dict.fromkeys(t.axis for t in build_tables(report)))
    assert axes == ["onnx@3.9", "onnxruntime@3.9", "onnx@3.13", "onnxruntime@3.13"]
    titles = [c.title for c in summarize(report).columns]
    assert titles[0] == "onnx 1.16.2 on Python 3.9" and titles[-1] == "ort 1.24.4 on Python 3.13"


def test_a_cell_without_a_wheel_is_not_applicable_and_never_unexpected() -> None:
    report = smoke()
    assert sum(c.state is CellState.NO_WHEEL for c in report.cells) == 4
    assert render_unexpected(report) == ""  # nothing needs a look: 4 xfail, 4 skip
    said = closing_line(report, "here")
    assert "4 no wheel" in said and "broken" not in said
    summary = summarize(report)
    states = [summary.squares[(FAMILY, i)].state for i in range(len(summary.columns))]
    assert states == ["known", "n/a", "pass", "n/a", "n/a", "known", "n/a", "pass"]
    data = page_data(report)
    assert data["unexpected"] == [] and data["summary"]["headline"]["broken"] == 0
    assert data["summary"]["headline"]["nowheel"] == 4
    assert data["vocabulary"]["entries"]["no-wheel"]["unexpected"] is False
    assert 'class="square n/a"' in heatmap_svg(report)
    assert heatmap_svg(report).count('class="square n/a"') == 4


def test_no_wheel_reads_as_n_a_in_every_legend_and_as_no_failure_in_every_sentence() -> None:
    report = smoke()
    matrix = render_markdown(report)
    assert "**no-wheel** (the index has no wheel of a release for this Python" in matrix
    assert "no wheel ≥ 1.20.1" in matrix  # the row's summary
    assert ": no-wheel" not in matrix.split("## Environments")[0]  # no detail bullet
    docs = render_docs(report)
    assert "| n/a    | no-wheel      | no wheel of this release for this Python" in docs
    assert "| n/a        | not run, or no wheel of that release for that Python" in docs
    assert "≥ 1.20.1" not in docs  # 1.20.1 has no wheel for 3.9: nothing works "since" it
    page = family_page(report, FAMILY)
    assert "## On onnx releases, Python 3.9" in page
    assert "every onnx release on Python 3.9 of the matrix, onnxruntime held at 1.19.2" in page
    assert "n/a on 1.20.1 (no wheel for this Python)" in page
    assert "n/a no wheel of this release for this Python" in page  # the closing marks
    for text in (
        render_markdown(sample_report()),
        render_docs(sample_report()),
        family_page(sample_report(), "pads"),
    ):
        assert "no-wheel" not in text and "no wheel" not in text  # only on demand


def test_junit_skips_a_cell_without_a_wheel_and_says_why() -> None:
    root = ElementTree.fromstring(render_junit(smoke()))
    assert root.get("errors") == "0" and root.get("failures") == "0"
    skipped = {s.get("name"): s.find("testcase/skipped") for s in root.iter("testsuite")}
    no_wheel = {
        name: e for name, e in skipped.items() if e is not None and e.get("type") == "no-wheel"
    }
    assert sorted(no_wheel) == [
        "py3.13-onnx1.16.2-ort1.24.4",
        "py3.13-onnx1.23.2-ort1.19.2",
        "py3.9-onnx1.16.2-ort1.24.4",
        "py3.9-onnx1.20.1-ort1.19.2",
    ]
    assert (
        no_wheel["py3.9-onnx1.20.1-ort1.19.2"]
        .get("message", "")
        .startswith("no-wheel: onnx 1.20.1 has no wheel for CPython 3.9")
    )
    scoped = replace(smoke(), run={**smoke().run, "junit_scope": "unexpected"})
    assert ElementTree.fromstring(render_junit(scoped)).get("tests") == "0"


def test_matrix_exits_0_with_cells_without_a_wheel_and_1_with_a_broken_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    report = smoke()
    assert finish(report, [Path("reports/matrix.json")]) == 0
    assert "no unexpected results" in capsys.readouterr().out
    broken = tuple(
        replace(c, state=CellState.INSTALL_ERROR) if c.id == "py3.9-onnx1.20.1-ort1.19.2" else c
        for c in report.cells
    )
    assert finish(replace(report, cells=broken), [Path("reports/matrix.json")]) == 1
    assert "1 unexpected:" in capsys.readouterr().out


def test_the_terminal_has_a_block_per_python_under_shared_release_columns() -> None:
    report = smoke()
    lines = render_summary(report).splitlines()
    assert lines[:2] == [
        "                        onnx 1.x   ort 1.x",
        "family                  16 20      19 24",
    ]
    assert [line.split(" (")[0] for line in lines if line.startswith("Python ")] == [
        "Python 3.9",
        "Python 3.13",
    ]
    assert "Python 3.9 (onnx with ort 1.19.2; ort with onnx 1.16.2)" in lines
    rows = [line for line in lines if line.startswith(FAMILY)]
    assert rows == [f"{FAMILY}   x          .", f"{FAMILY}      x          ."]  # blank: n/a
    assert "(blank) n/a: no wheel" in lines[-1]
    text = "\n\n".join([render_summary(report), render_grid(report, every_row=True)])
    check_golden("pythons-terminal.txt", text + "\n")


def test_matrix_md_and_the_pythons_page_match_their_snapshots() -> None:
    report = smoke()
    check_golden("pythons-matrix.md", render_markdown(report))
    check_golden("pythons.md", render_pythons(report) or "")
    page = render_pythons(report) or ""
    assert "| 1.16.2 | runs | n/a (no wheel) |" in page
    assert "| *with onnxruntime* | 1.19.2 | 1.24.4 |" in page
    assert "`nox -s matrix -- --python 3.9,3.13 --python-releases all`" in page


def test_the_docs_page_of_pythons_is_configured_and_in_sync() -> None:
    docs = load_config(ROOT / "pyproject.toml").docs
    assert docs is not None and docs.pythons == ROOT / "docs" / "pythons.json.gz"
    rendered = render_pythons(read_json(docs.pythons))
    assert rendered == (ROOT / "docs" / "pythons.md").read_text()


def test_the_page_data_carries_the_pythons_for_its_filter() -> None:
    data = page_data(smoke())
    assert [p for p, _ in data["pythons"]] == ["3.9", "3.13"]
    assert data["pythons"][0][1] == (
        "Python 3.9 (onnx with onnxruntime 1.19.2; onnxruntime with onnx 1.16.2)"
    )
    assert [t["python"] for t in data["tables"]] == ["3.9", "3.9", "3.13", "3.13"]
    assert data["tables"][0]["title"] == "onnx on Python 3.9 (with onnxruntime 1.19.2)"
    assert {c["python"] for c in data["summary"]["columns"]} == {"3.9", "3.13"}
    assert "pythons" not in page_data(sample_report())  # a run of one: no filter


#: Which releases have no wheel on each Python of the five-Python report: onnx below,
#: onnxruntime below, onnxruntime from.
NO_WHEEL = {
    "3.9": ("0", "0", "1.20"),
    "3.10": ("0", "0", "99"),
    "3.11": ("0", "0", "99"),
    "3.12": ("1.16", "1.17", "99"),
    "3.13": ("1.17", "1.20", "99"),
}


def five_pythons() -> Report:
    """The committed default run (27 cells, 30 families) on five Pythons: the same
    results wherever the release has a wheel, no-wheel cells where it has none."""
    base = read_json(ROOT / "docs" / "matrix.json.gz")
    cells, results, axes = [], [], {}
    by_cell: dict[str, list[CheckResult]] = {}
    for r in base.results:
        by_cell.setdefault(r.cell, []).append(r)
    for python, (onnx_below, ort_below, ort_from) in NO_WHEEL.items():
        for c in base.cells:
            new = f"py{python}-{c.id}"
            gone = version_key(c.onnx) < version_key(onnx_below) or not version_key(
                ort_below
            ) <= version_key(c.onnxruntime) < version_key(ort_from)
            if gone:
                cells.append(
                    replace(
                        c,
                        id=new,
                        state=CellState.NO_WHEEL,
                        packages={},
                        python=python,
                        detail="no wheel",
                    )
                )
                continue
            cells.append(replace(c, id=new, python=f"{python}.1"))
            results += [replace(r, cell=new) for r in by_cell.get(c.id, [])]
        for key, ids in base.axes.items():
            axes[f"{key}@{python}"] = tuple(f"py{python}-{i}" for i in ids)
    return replace(base, cells=tuple(cells), results=tuple(results), axes=axes)


def test_five_pythons_of_the_default_run_fit_a_screen_and_name_a_python_where_it_differs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    one = render_summary(read_json(ROOT / "docs" / "matrix.json.gz")).splitlines()
    report = five_pythons()
    finish(report, [Path("reports/matrix.json"), Path("reports/matrix.md")])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) <= 60, len(lines)
    assert max(len(line) for line in lines[:-3]) <= 120  # the closing line may be longer
    assert sum(line.startswith("Python ") for line in lines) == 5
    said = one[one.index(next(x for x in one if x.startswith("works since"))) :]
    since = lines[lines.index(said[0]) :]
    assert since[: len(said)] == said  # the same fixes on every Python: no Python named

    # one Python breaks where the others pass: its block shows it, its line names it
    failing = tuple(
        replace(r, outcome=Outcome.FAIL)
        if r.cell == "py3.13-onnx1.23.2-ort1.27.0"
        and r.case.startswith("dropout_mask_output")
        and r.outcome is Outcome.PASS
        else r
        for r in report.results
    )
    text = render_summary(replace(report, results=failing))
    block = text.split("Python 3.13 (")[1].splitlines()
    others = len({c.family for c in report.cases}) - 1  # all but dropout_mask_output
    assert block[0].endswith(f"{others} families as on Python 3.11")
    assert block[1].startswith("dropout_mask_output ")
    assert "  dropout_mask_output · ort_run: onnxruntime ≥ 1.28.0 on Python 3.13" in text


def test_claims_name_the_python_only_where_they_differ(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nname = "x"\ndependencies = ["onnx>=1.13"]\n')
    report = smoke()
    cells = [c for c in report.cells if c.state is CellState.READY]
    passes = {"py3.9-onnx1.16.2-ort1.19.2": False}
    results = tuple(
        CheckResult(
            c.id,
            "command.tests",
            "command",
            Outcome.PASS if passes.get(c.id, True) else Outcome.FAIL,
        )
        for c in cells
    )
    lines = claims(replace(report, results=results), pyproject)
    assert lines == [
        "on Python 3.9: pyproject says onnx>=1.13; your tests fail on every release tested "
        "(1.16.2)",
        "on Python 3.13: pyproject says onnx>=1.13; your tests pass on every release tested "
        "(1.20.1)",
    ]


def test_writer_reader_has_a_table_per_python() -> None:
    cells = tuple(
        replace(ready("1.23.2", "1.24.4"), id=f"py{p}-c", python=f"{p}.1") for p in ("3.12", "3.13")
    )
    results = tuple(
        CheckResult(
            c.id,
            "writer_reader.default_model",
            "default_model_loads",
            Outcome.PASS,
            detail="writes IR 10, opset 23",
        )
        for c in cells
    )
    axes = {f"cell@{p}": (f"py{p}-c",) for p in ("3.12", "3.13")}
    text = render_writer_reader(replace(sample_report(), cells=cells, results=results, axes=axes))
    assert text is not None and "1 onnx × 1 onnxruntime releases on Python 3.12, 3.13" in text
    assert text.count("| 1.23.2 (IR 10, opset 23) | ✅ |") == 2
    assert "## Python 3.12" in text and "## Python 3.13" in text


def open_page(browser: Any, tmp_path: Path, hash: str = "") -> Any:
    page = tmp_path / "matrix.html"
    page.write_text(render_html(smoke()))
    browser.get("about:blank")
    browser.get(page.as_uri() + hash)
    return browser


def headings(browser: Any) -> list[str]:
    return [
        h.text
        for h in browser.find_elements("css selector", "#tables section h2")
        if h.is_displayed()
    ]


def summary_pythons(browser: Any) -> list[str]:
    """The Python of every summary column header a user sees."""
    return [
        th.get_attribute("data-python")
        for th in browser.find_elements("css selector", "#squares thead th.v")
        if th.is_displayed()
    ]


@pytest.mark.browser
def test_the_python_filter_hides_the_other_pythons_and_survives_a_reload(tmp_path: Path) -> None:
    from selenium.webdriver.support.ui import Select

    from tests.helpers import start_chromium

    browser = start_chromium("--window-size=1400,900", logs=True)
    try:
        open_page(browser, tmp_path)
        assert browser.find_element("id", "python").is_displayed()
        assert summary_pythons(browser) == ["3.9"] * 4 + ["3.13"] * 4
        assert len(headings(browser)) == 4
        Select(browser.find_element("id", "python")).select_by_value("3.13")
        assert headings(browser) == [
            f"{FAMILY} · onnx on Python 3.13 (with onnxruntime 1.24.4)",
            f"{FAMILY} · onnxruntime on Python 3.13 (with onnx 1.23.2)",
        ]
        assert summary_pythons(browser) == ["3.13"] * 4
        squares = browser.find_elements("css selector", "#squares tbody td")
        assert [td.is_displayed() for td in squares] == [False] * 4 + [True] * 4
        url = browser.current_url
        assert parse_qs(url.split("#", 1)[1]) == {"python": ["3.13"]}
        for reload in (browser.refresh, lambda: browser.get("about:blank") or browser.get(url)):
            reload()
            assert browser.find_element("id", "python").get_attribute("value") == "3.13"
            assert summary_pythons(browser) == ["3.13"] * 4 and len(headings(browser)) == 2
        # the no-wheel entries read "-" in their legend colour, never as a failure
        cells = [
            c
            for c in browser.find_elements("css selector", "#tables td.o")
            if c.is_displayed() and c.text == "-"
        ]
        assert len(cells) == 16  # onnx 1.16.2 and onnxruntime 1.19.2 on 3.13, every row
        painted = cells[0].value_of_css_property("background-color")
        assert (
            painted
            == "rgba(158, 154, 145, 1)"
            == "rgba({}, {}, {}, 1)".format(
                *(int(ENTRIES["no-wheel"].colours[0][i : i + 2], 16) for i in (1, 3, 5))
            )
        )
        assert browser.find_element("id", "legend").text.splitlines()[-1] == "no-wheel"
        unexpected = browser.find_element("id", "unexpected").text
        assert unexpected.startswith("No unexpected results")
        browser.find_element("id", "clear").click()
        assert len(headings(browser)) == 4 and "#" not in browser.current_url
        assert not [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    finally:
        browser.quit()


def test_the_smoke_results_are_small_and_real() -> None:
    data = json.loads(SMOKE.read_text())
    assert sorted(data["run"]["pythons"]) == ["3.13", "3.9"] and len(data["cells"]) == 7
