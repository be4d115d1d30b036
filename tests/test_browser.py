"""reports/matrix.html in a real browser: Debian's headless Chromium, driven by Selenium.

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
from compat.render.html import render_html
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


def visible_rows(browser: Any) -> list[str]:
    rows = browser.find_elements("css selector", "section:not([hidden]) tbody tr:not([hidden]) th")
    return [row.text for row in rows]


def test_the_page_loads_cleanly_and_its_filters_work(browser: Any, tmp_path: Path) -> None:
    open_page(browser, sample_report(), tmp_path)
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors
    assert count(browser) == "8 of 8 rows"

    select(browser, "check", "ort_run")
    assert visible_rows(browser) == ["value_ints · ort_run", "tensor · ort_run"]
    select(browser, "outcome", "crash")
    assert visible_rows(browser) == ["tensor · ort_run"]
    assert count(browser) == "1 of 8 rows"
    select(browser, "check", "")
    select(browser, "outcome", "xfail")
    assert visible_rows(browser) == ["value_ints · shape_inference"]

    cell = browser.find_element("css selector", "tr:not([hidden]) td.o")
    cell.click()
    detail = browser.find_element("id", "detail")
    assert detail.is_displayed()
    assert "InferenceError: 'pads' must be 1D" in detail.text
    assert "nox -s repro -- onnx==1.18.0 onnxruntime==1.24.4 --cases pads.value_ints" in detail.text

    select(browser, "outcome", "")
    shot = Path(os.environ.get("COMPAT_ARTIFACTS", tmp_path)) / "matrix.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000
    if not os.environ.get("COMPAT_ARTIFACTS"):
        shutil.copy(shot, tmp_path / "matrix-kept.png")


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
    text = browser.find_element("id", "text")
    text.send_keys("test_0097")
    assert count(browser) == "1 of 5000 rows"
    assert not [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
