"""reports/matrix.html in a real browser: Debian's headless Chromium, driven by Selenium.

The tests read what the page shows a user: the rendered text of the visible rows
and headings after each filter, the detail panel's text after a click, the legend's
entries and the colours the legend and the cells are painted in.

Needs `apt-get install chromium chromium-driver` (.ci/run does it). Without them the
test skips, unless COMPAT_REQUIRE_BROWSER=1 (set by .ci/run), where it fails.
The screenshot goes to $COMPAT_ARTIFACTS (default: the test's tmp directory).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from compat.outcomes import CellRecord, CheckResult, Outcome
from compat.render.html import COLOURS, render_html
from compat.report import CaseInfo, Report
from tests.test_report import sample_report

pytestmark = pytest.mark.browser
CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not (Path(CHROMIUM).exists() and Path(DRIVER).exists()):
        if os.environ.get("COMPAT_REQUIRE_BROWSER"):
            pytest.fail(f"{CHROMIUM} or {DRIVER} missing: apt-get install chromium chromium-driver")
        pytest.skip("Debian's chromium and chromium-driver are not installed")
    os.environ.setdefault("SE_OFFLINE", "true")  # never let Selenium fetch a browser
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--window-size=1400,900"):  # fmt: skip
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    yield driver
    driver.quit()


def open_page(browser: Any, report: Report, tmp_path: Path) -> Any:
    page = tmp_path / "matrix.html"
    page.write_text(render_html(report))
    browser.get(page.as_uri())
    return browser


def count(browser: Any) -> str:
    return str(browser.find_element("id", "count").text)


def select(browser: Any, element_id: str, value: str) -> None:
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element("id", element_id)).select_by_value(value)


def shown(browser: Any) -> list[str]:
    """The grid as a user reads it: the rendered text of every visible heading, header
    row and case row (a row shows its label and its cells' marks, a pass shows none)."""
    return str(browser.find_element("id", "tables").text).splitlines()


def grid_cell(browser: Any, heading: str, row: str, column: str) -> Any:
    """The grid cell a user finds by its table's heading, its row's and its column's label."""
    section = next(
        s for s in browser.find_elements("css selector", "section")
        if s.find_element("tag name", "h2").text == heading
    )  # fmt: skip
    labels = [th.text for th in section.find_elements("css selector", "thead th")]
    line = next(
        tr for tr in section.find_elements("css selector", "tbody tr")
        if tr.find_element("tag name", "th").text == row
    )  # fmt: skip
    return line.find_elements("tag name", "td")[labels.index(column) - 1]


def rgb(colour: str) -> tuple[int, ...]:
    """'#e8a33d', 'rgb(232, 163, 61)' or 'rgba(232, 163, 61, 1)' as (232, 163, 61)."""
    if colour.startswith("#"):
        return tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return tuple(int(part) for part in colour[colour.index("(") + 1 : -1].split(",")[:3])


def severe(browser: Any) -> list[Any]:
    return [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]


ONNX_TABLE = ["pads · onnx", "Pad whose pads come from a Constant.", "case · check 1.18.0 1.21.0"]
ORT_TABLE = ["pads · onnxruntime", "Pad whose pads come from a Constant.",
             "case · check 1.14.1 1.17.3"]  # fmt: skip


def test_the_page_loads_cleanly_and_its_filters_show_the_matching_rows(
    browser: Any, tmp_path: Path
) -> None:
    open_page(browser, sample_report(), tmp_path)
    assert not severe(browser)
    assert count(browser) == "8 of 8 rows"
    assert shown(browser) == [
        *ONNX_TABLE,
        "value_ints · checker",
        "value_ints · shape_inference x",  # x: an expected failure, in 1.18.0 only
        "tensor · checker",
        "tensor · shape_inference",
        *ORT_TABLE,
        "value_ints · ort_run I",  # I: onnxruntime 1.14.1 did not install
        "value_ints · ort_optimized I s",
        "tensor · ort_run I C",  # C: the crash in 1.17.3
        "tensor · ort_optimized I s",
    ]

    select(browser, "check", "ort_run")  # the onnx table has no such row: it goes
    assert shown(browser) == [*ORT_TABLE, "value_ints · ort_run I", "tensor · ort_run I C"]
    assert count(browser) == "2 of 8 rows"
    select(browser, "outcome", "crash")
    assert shown(browser) == [*ORT_TABLE, "tensor · ort_run I C"]
    assert count(browser) == "1 of 8 rows"
    select(browser, "check", "")
    select(browser, "outcome", "xfail")
    assert shown(browser) == [*ONNX_TABLE, "value_ints · shape_inference x"]

    select(browser, "outcome", "")
    browser.find_element("id", "text").send_keys("tensor")
    assert shown(browser) == [
        *ONNX_TABLE, "tensor · checker", "tensor · shape_inference",
        *ORT_TABLE, "tensor · ort_run I C", "tensor · ort_optimized I s",
    ]  # fmt: skip
    select(browser, "family", "pads")
    assert count(browser) == "4 of 8 rows"
    browser.find_element("id", "text").send_keys("_nothing")
    assert shown(browser) == []
    assert count(browser) == "0 of 8 rows"
    assert not severe(browser)


def test_a_click_shows_the_result_message_versions_and_repro_command(
    browser: Any, tmp_path: Path
) -> None:
    from selenium.webdriver.common.keys import Keys

    open_page(browser, sample_report(), tmp_path)
    detail = browser.find_element("id", "detail")
    assert not detail.is_displayed() and detail.text == ""

    select(browser, "outcome", "xfail")
    grid_cell(browser, "pads · onnx", "value_ints · shape_inference", "1.18.0").click()
    assert detail.is_displayed()
    assert detail.text.splitlines() == [
        "pads.value_ints · shape_inference @ onnx1.18.0-ort1.24.4",
        "outcome", "xfail @ infer",
        "message", "InferenceError: 'pads' must be 1D",
        "known bug", "https://example.org/bug/1",
        "installed", "numpy 2.4.6, onnx 1.18.0, onnxruntime 1.24.4, protobuf 7.36.2, Python 3.11.7",
        "reproduce", "nox -s repro -- onnx==1.18.0 onnxruntime==1.24.4 --cases pads.value_ints",
    ]  # fmt: skip

    browser.find_element("tag name", "body").send_keys(Keys.ESCAPE)
    assert not detail.is_displayed()

    select(browser, "outcome", "")
    grid_cell(browser, "pads · onnxruntime", "tensor · ort_run", "1.17.3").click()
    assert detail.text.splitlines() == [
        "pads.tensor · ort_run @ onnx1.23.2-ort1.17.3",
        "outcome", "crash",
        "message", "worker killed by SIGSEGV (exit -11)",
        "installed",
        "numpy 1.26.4, onnx 1.23.2, onnxruntime 1.17.3, protobuf 7.36.2, Python 3.11.7",
        "reproduce", "nox -s repro -- onnx==1.23.2 onnxruntime==1.17.3 --cases pads.tensor",
    ]  # fmt: skip

    # a cell whose environment never installed: its install error, and nothing installed
    grid_cell(browser, "pads · onnxruntime", "value_ints · ort_run", "1.14.1").click()
    assert detail.text.splitlines() == [
        "pads.value_ints · ort_run @ onnx1.23.2-ort1.14.1",
        "outcome", "install-error",
        "message", "× No solution found ╰─▶ onnxruntime==1.14.1 has no usable wheels",
        "reproduce", "nox -s repro -- onnx==1.23.2 onnxruntime==1.14.1 --cases pads.value_ints",
    ]  # fmt: skip

    grid_cell(browser, "pads · onnx", "value_ints · shape_inference", "1.18.0").click()
    assert "InferenceError: 'pads' must be 1D" in detail.text
    shot = Path(os.environ.get("COMPAT_ARTIFACTS", tmp_path)) / "matrix.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000
    if not os.environ.get("COMPAT_ARTIFACTS"):
        shutil.copy(shot, tmp_path / "matrix-kept.png")
    assert not severe(browser)


def test_the_legend_names_every_outcome_in_the_colour_its_cells_show(
    browser: Any, tmp_path: Path
) -> None:
    open_page(browser, sample_report(), tmp_path)
    legend = browser.find_element("id", "legend")
    entries = legend.text.splitlines()
    assert entries == list(COLOURS)
    assert {"pass", "fail", "xfail", "xpass", "error", "crash", "timeout", "skip",
            "install-error", "import-error"} <= set(entries)  # fmt: skip
    swatches = browser.execute_script(
        "return [...arguments[0].children].map("
        "(item) => getComputedStyle(item, '::before').backgroundColor);",
        legend,
    )
    shown_colours = {entry: rgb(c) for entry, c in zip(entries, swatches, strict=True)}
    assert shown_colours == {entry: rgb(c) for entry, c in COLOURS.items()}

    for heading, row, column, outcome in [
        ("pads · onnx", "value_ints · shape_inference", "1.18.0", "xfail"),
        ("pads · onnx", "value_ints · shape_inference", "1.21.0", "pass"),
        ("pads · onnxruntime", "tensor · ort_run", "1.17.3", "crash"),
        ("pads · onnxruntime", "tensor · ort_optimized", "1.17.3", "skip"),
        ("pads · onnxruntime", "tensor · ort_optimized", "1.14.1", "install-error"),
    ]:
        painted = grid_cell(browser, heading, row, column).value_of_css_property("background-color")
        assert rgb(painted) == shown_colours[outcome], (row, column, outcome)


def big_report(rows: int) -> Report:
    """The sample's cells with `rows` case · check rows: the size of the backend suite."""
    base = sample_report()
    ready = [c for c in base.cells if c.state.value == "ready"]
    cases = tuple(
        CaseInfo(f"suite.test_{i:04d}", "suite", f"test {i}", "0" * 8, {"ort_run": "onnxruntime"})
        for i in range(rows)
    )
    results = tuple(
        CheckResult(cell.id, case.id, "ort_run", Outcome.FAIL if i % 97 == 0 else Outcome.PASS)
        for i, case in enumerate(cases)
        for cell in ready
    )
    cells: tuple[CellRecord, ...] = tuple(ready)
    return replace(base, cells=cells, cases=cases, results=results,
                   axes={"onnxruntime": tuple(c.id for c in ready)})  # fmt: skip


def test_the_page_stays_usable_at_5000_rows(browser: Any, tmp_path: Path) -> None:
    open_page(browser, big_report(5000), tmp_path)
    assert count(browser) == "5000 of 5000 rows"
    select(browser, "outcome", "fail")
    assert count(browser) == "52 of 5000 rows"
    failing = [f"test_{i:04d} · ort_run F F F" for i in range(0, 5000, 97)]
    assert shown(browser) == ["suite · onnxruntime", "case · check 1.24.4 1.24.4 1.17.3",
                              *failing]  # fmt: skip
    browser.find_element("id", "text").send_keys("test_0097")
    assert count(browser) == "1 of 5000 rows"
    assert shown(browser)[2:] == ["test_0097 · ort_run F F F"]
    assert not severe(browser)
