"""reports/matrix.html and scoreboard.html in a real browser: Debian's headless
Chromium, driven by Selenium.

The tests read what the pages show a user: the rendered text of the visible rows and
headings after each filter, where on the screen things are (the first screen, a
narrow window), the URL a filtered view leaves behind, the detail panel's text after
a click, and the colours the legend and the cells are painted in.

Needs `apt-get install chromium chromium-driver` (.ci/run does it). Without them the
tests skip, unless COMPAT_REQUIRE_BROWSER=1 (set by .ci/run), where they fail.
Screenshots go to $COMPAT_ARTIFACTS (default: the test's tmp directory); with
COMPAT_SCREENSHOT_RESULTS=path/to/matrix.json one more is taken of that run's page,
whole.
"""

from __future__ import annotations

import base64
import itertools
import math
import os
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest

from compat.core.outcomes import CellRecord, CellState, CheckResult, Outcome
from compat.core.report import CaseInfo, Report, read_json
from compat.core.squares import SQUARES
from compat.core.vocabulary import ENTRIES, ON_DEMAND
from compat.render.html import render_html
from compat.render.scoreboard import render_scoreboard_html
from tests.helpers import ONNX, ORT, start_chromium
from tests.test_report import ready, sample_report

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    driver = start_chromium("--window-size=1400,900", logs=True)
    yield driver
    driver.quit()


@pytest.fixture
def window(browser: Any) -> Iterator[Any]:
    """The browser at 1400×900, whatever size the last test left it at."""
    browser.set_window_size(1400, 900)
    yield browser


def open_page(browser: Any, report: Report, tmp_path: Path, hash: str = "") -> Any:
    page = tmp_path / "matrix.html"
    page.write_text(render_html(report))
    browser.get("about:blank")  # a real load, even when only the hash differs
    browser.get(page.as_uri() + hash)
    return browser


def artifact(browser: Any, tmp_path: Path, name: str) -> Path:
    """A screenshot kept in $COMPAT_ARTIFACTS (or the test's tmp directory)."""
    shot = Path(os.environ.get("COMPAT_ARTIFACTS", tmp_path)) / name
    shot.parent.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000
    return shot


def count(browser: Any) -> str:
    return str(browser.find_element("id", "count").text)


def select(browser: Any, element_id: str, value: str) -> None:
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element("id", element_id)).select_by_value(value)


def shown(browser: Any) -> list[str]:
    """The grid as a user reads it: the rendered text of every visible heading, header
    row and case row (a row shows its label and its cells' marks, a pass shows none)."""
    return str(browser.find_element("id", "tables").text).splitlines()


def twins(browser: Any) -> list[str]:
    """The visible rows shown dimmed as twins of a filtered row."""
    return [
        tr.text
        for tr in browser.find_elements("css selector", "#tables tr.twin")
        if tr.is_displayed()
    ]


def grid_cell(browser: Any, heading: str, row: str, column: str) -> Any:
    """The grid cell a user finds by its table's heading, its row's and its column's label."""
    section = next(
        s
        for s in browser.find_elements("css selector", "section")
        if s.find_element("tag name", "h2").text == heading
    )
    labels = [th.text for th in section.find_elements("css selector", "thead th")]
    line = next(
        tr
        for tr in section.find_elements("css selector", "tbody tr")
        if tr.find_element("tag name", "th").text == row
    )
    return line.find_elements("tag name", "td")[labels.index(column) - 1]


def rgb(colour: str) -> tuple[int, ...]:
    """'#e8a33d', 'rgb(232, 163, 61)' or 'rgba(232, 163, 61, 1)' as (232, 163, 61)."""
    if colour.startswith("#"):
        return tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return tuple(int(part) for part in colour[colour.index("(") + 1 : -1].split(",")[:3])


def contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio of two colours (1 to 21)."""

    def luminance(colour: str) -> float:
        linear = [
            c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
            for c in (v / 255 for v in rgb(colour))
        ]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def severe(browser: Any) -> list[Any]:
    return [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]


def in_view(browser: Any, element: Any) -> bool:
    """The element is on screen and on top: what the point at its centre shows is it."""
    return bool(
        browser.execute_script(
            "const r = arguments[0].getBoundingClientRect();"
            "const x = r.left + r.width / 2, y = r.top + r.height / 2;"
            "if (r.left < 0 || r.top < 0 || r.right > document.documentElement.clientWidth"
            "    || r.bottom > document.documentElement.clientHeight) return false;"
            "const hit = document.elementFromPoint(x, y);"
            "return hit === arguments[0] || arguments[0].contains(hit);",
            element,
        )
    )


ONNX_TABLE = [
    "pads · onnx",
    "Pad whose pads come from a Constant.",
    "shape_inference works since 1.21.0; fails on 1.18.0 (https://example.org/bug/1)",
    "case · check 1.18.0 1.21.0",
]
ORT_TABLE = [
    "pads · onnxruntime",
    "Pad whose pads come from a Constant.",
    "ort_run fails on every release (1.17.3)",  # 1.14.1 never installed: no release
    "case · check 1.14.1 1.17.3",
]


LAST = "onnx1.23.2-ort1.32.0"


def wide_report(families: int = 22) -> Report:
    """The default run's shape: 10 onnx and 18 onnxruntime releases, `families` families
    of long-named twin cases, every result a pass but one: a failure in the last family
    on the last release."""
    cells = tuple(ready(v, "1.24.4") for v in ONNX) + tuple(ready("1.23.2", v) for v in ORT)
    names = [f"layernorm_reducemean_fusion_{i:02d}" for i in range(families)]
    cases = tuple(
        CaseInfo(
            f"{name}.greater_or_equal.cast_mul.{twin}",
            name,
            f"{twin} of {name}",
            "0",
            {"inferred_annotations": "onnx", "ort_run": "onnxruntime"},
        )
        for name in names
        for twin in ("opset15", "opset16")
    )
    failing = (LAST, cases[-1].id, "ort_run")
    results = tuple(
        CheckResult(cell.id, case.id, check, Outcome.PASS)
        if (cell.id, case.id, check) != failing
        else CheckResult(
            cell.id,
            case.id,
            check,
            Outcome.FAIL,
            phase="run",
            detail="ValueError: outputs differ at [0, 3]",
        )
        for cell in cells
        for case in cases
        for check in case.checks
    )
    axes = {
        "onnx": tuple(c.id for c in cells[: len(ONNX)]),
        "onnxruntime": tuple(c.id for c in cells[len(ONNX) :]),
    }
    return Report(
        cells, cases, results, axes, families={n: f"family {n}, a long description" for n in names}
    )


def test_the_page_loads_cleanly_and_its_filters_show_the_matching_rows(
    window: Any, tmp_path: Path
) -> None:
    browser = open_page(window, sample_report(), tmp_path)
    assert browser.title == "onnx-compat matrix"
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
    assert twins(browser) == []

    select(browser, "check", "ort_run")  # the onnx table has no such row: it goes
    assert shown(browser) == [*ORT_TABLE, "value_ints · ort_run I", "tensor · ort_run I C"]
    assert count(browser) == "2 of 8 rows"
    select(browser, "outcome", "crash")  # its twin (value_ints) stays, dimmed, next to it
    assert shown(browser) == [*ORT_TABLE, "value_ints · ort_run I", "tensor · ort_run I C"]
    assert twins(browser) == ["value_ints · ort_run I"]
    assert count(browser) == "1 of 8 rows (+1 twin)"
    select(browser, "check", "")
    select(browser, "outcome", "xfail")
    assert shown(browser) == [
        *ONNX_TABLE,
        "value_ints · shape_inference x",
        "tensor · shape_inference",
    ]
    assert twins(browser) == ["tensor · shape_inference"]

    select(browser, "outcome", "not-pass")  # anything but pass: skips, xfail, broken cells
    assert count(browser) == "5 of 8 rows (+1 twin)"
    select(browser, "outcome", "unexpected")
    assert shown(browser)[len(ORT_TABLE) :] == [
        "value_ints · ort_run I",
        "value_ints · ort_optimized I s",
        "tensor · ort_run I C",
        "tensor · ort_optimized I s",
    ]
    select(browser, "release", "onnxruntime:1.17.3")  # the outcome of that release only
    assert shown(browser) == [*ORT_TABLE, "value_ints · ort_run I", "tensor · ort_run I C"]
    assert twins(browser) == ["value_ints · ort_run I"]

    browser.find_element("id", "clear").click()
    assert count(browser) == "8 of 8 rows"
    browser.find_element("id", "text").send_keys("tensor")
    assert count(browser) == "4 of 8 rows (+4 twins)"
    select(browser, "family", "pads")
    browser.find_element("id", "text").send_keys("_nothing")
    assert shown(browser) == []
    assert count(browser) == "0 of 8 rows"
    assert not severe(browser)


def test_a_click_shows_the_result_message_versions_and_repro_command(
    window: Any, tmp_path: Path
) -> None:
    from selenium.webdriver.common.keys import Keys

    browser = open_page(window, sample_report(), tmp_path)
    detail = browser.find_element("id", "detail")
    body = browser.find_element("id", "detail-body")
    assert not detail.is_displayed() and body.text == ""

    select(browser, "outcome", "xfail")
    grid_cell(browser, "pads · onnx", "value_ints · shape_inference", "1.18.0").click()
    assert detail.is_displayed()
    assert body.text.splitlines() == [
        "pads.value_ints · shape_inference @ onnx1.18.0-ort1.24.4",
        "outcome",
        "xfail @ infer",
        "message",
        "InferenceError: 'pads' must be 1D",
        "known bug",
        "https://example.org/bug/1",
        "installed",
        "numpy 2.4.6, onnx 1.18.0, onnxruntime 1.24.4, protobuf 7.36.2, Python 3.11.7",
        "reproduce",
        "nox -s repro -- onnx==1.18.0 onnxruntime==1.24.4 --cases pads.value_ints",
    ]

    browser.find_element("tag name", "body").send_keys(Keys.ESCAPE)
    assert not detail.is_displayed()

    select(browser, "outcome", "")
    grid_cell(browser, "pads · onnxruntime", "tensor · ort_run", "1.17.3").click()
    assert body.text.splitlines() == [
        "pads.tensor · ort_run @ onnx1.23.2-ort1.17.3",
        "outcome",
        "crash",
        "message",
        "worker killed by SIGSEGV (exit -11)",
        "installed",
        "numpy 1.26.4, onnx 1.23.2, onnxruntime 1.17.3, protobuf 7.36.2, Python 3.11.7",
        "reproduce",
        "nox -s repro -- onnx==1.23.2 onnxruntime==1.17.3 --cases pads.tensor",
    ]
    browser.find_element("id", "close").click()  # closable by click, not only by Escape
    assert not detail.is_displayed()
    assert not browser.find_elements("css selector", "td.sel")

    # a cell whose environment never installed: its install error, and nothing installed
    grid_cell(browser, "pads · onnxruntime", "value_ints · ort_run", "1.14.1").click()
    assert body.text.splitlines() == [
        "pads.value_ints · ort_run @ onnx1.23.2-ort1.14.1",
        "outcome",
        "install-error",
        "message",
        "× No solution found ╰─▶ onnxruntime==1.14.1 has no usable wheels",
        "reproduce",
        "nox -s repro -- onnx==1.23.2 onnxruntime==1.14.1 --cases pads.value_ints",
    ]

    grid_cell(browser, "pads · onnx", "value_ints · shape_inference", "1.18.0").click()
    assert "InferenceError: 'pads' must be 1D" in body.text
    shot = artifact(browser, tmp_path, "matrix.png")
    if not os.environ.get("COMPAT_ARTIFACTS"):
        shutil.copy(shot, tmp_path / "matrix-kept.png")
    assert not severe(browser)


def test_the_one_unexpected_result_is_on_the_first_screen_even_in_the_last_family(
    browser: Any, tmp_path: Path
) -> None:
    browser.set_window_size(1600, 1000)
    open_page(browser, wide_report(), tmp_path)
    height = browser.execute_script("return innerHeight")
    assert 800 <= height <= 1000
    (line,) = browser.find_elements("css selector", "#unexpected li")
    case = "layernorm_reducemean_fusion_21.greater_or_equal.cast_mul.opset16"
    assert " ".join(line.text.split()) == (  # cell · case · check, what it says, the repro
        f"{LAST} · {case} · ort_run fail fail@run: ValueError: outputs differ at [0, 3] "
        f"nox -s repro -- onnx==1.23.2 onnxruntime==1.32.0 --cases {case}"
    )
    assert browser.find_element("css selector", "#unexpected h2").text == "1 unexpected"
    top, bottom = browser.execute_script(
        "const r = arguments[0].getBoundingClientRect(); return [r.top, r.bottom];", line
    )
    assert top >= 0 and bottom <= height, (top, bottom, height)  # no scrolling needed
    assert in_view(browser, line)
    # its square, last family × last release, says so too, and so does nothing else
    squares = browser.find_elements("css selector", "#squares tbody td a")
    unexpected = [
        a
        for a in squares
        if a.get_attribute("title").endswith("ort 1.32.0: unexpected (1 pass, 1 fail)")
    ]
    assert len(unexpected) == 1 and unexpected[0].text == "1" and in_view(browser, unexpected[0])
    assert squares.index(unexpected[0]) == len(squares) - 1
    artifact(browser, tmp_path, "first-screen-1600x1000.png")

    line.find_element("css selector", "a").click()  # to the result, opened
    hash = parse_qs(browser.execute_script("return location.hash.slice(1)"))
    assert hash == {
        "family": ["layernorm_reducemean_fusion_21"],
        "case": [case],
        "release": ["onnxruntime:1.32.0"],
        "outcome": ["unexpected"],
    }
    assert browser.find_element("id", "detail").is_displayed()
    assert "ValueError: outputs differ at [0, 3]" in browser.find_element("id", "detail").text
    assert in_view(browser, browser.find_element("css selector", "td.sel"))
    assert not severe(browser)


def test_filters_live_in_the_url_and_a_loaded_url_restores_them(
    window: Any, tmp_path: Path
) -> None:
    browser = open_page(window, sample_report(), tmp_path)
    select(browser, "family", "pads")
    select(browser, "release", "onnxruntime:1.17.3")
    select(browser, "outcome", "not-pass")
    browser.find_element("id", "text").send_keys("tensor")
    rows, counted = shown(browser), count(browser)
    assert rows == [
        *ORT_TABLE,
        "value_ints · ort_run I",
        "tensor · ort_run I C",
        "value_ints · ort_optimized I s",
        "tensor · ort_optimized I s",
    ]
    assert twins(browser) == ["value_ints · ort_run I", "value_ints · ort_optimized I s"]
    url = browser.current_url
    assert parse_qs(url.split("#", 1)[1]) == {
        "family": ["pads"],
        "release": ["onnxruntime:1.17.3"],
        "outcome": ["not-pass"],
        "case": ["tensor"],
    }

    for reload in (lambda: browser.get("about:blank") or browser.get(url), browser.refresh):
        reload()
        controls = {
            i: browser.find_element("id", i).get_attribute("value")
            for i in ("family", "release", "check", "outcome", "text")
        }
        assert controls == {
            "family": "pads",
            "release": "onnxruntime:1.17.3",
            "check": "",
            "outcome": "not-pass",
            "text": "tensor",
        }
        assert (shown(browser), count(browser)) == (rows, counted)

    browser.find_element("id", "clear").click()
    assert "#" not in browser.current_url and count(browser) == "8 of 8 rows"

    # a square of the summary is a filter: its family and release, what is wrong there
    crash = next(
        a
        for a in browser.find_elements("css selector", "#squares tbody td a")
        if a.get_attribute("title").startswith("pads · ort 1.17.3")
    )
    crash.click()
    assert parse_qs(browser.current_url.split("#", 1)[1]) == {
        "family": ["pads"],
        "release": ["onnxruntime:1.17.3"],
        "outcome": ["unexpected"],
    }
    assert shown(browser) == [*ORT_TABLE, "value_ints · ort_run I", "tensor · ort_run I C"]
    browser.back()  # the square's view is a history entry of its own
    assert count(browser) == "8 of 8 rows"
    assert not severe(browser)


def test_at_800_px_every_release_column_is_reachable_and_nothing_scrolls_inside(
    browser: Any, tmp_path: Path
) -> None:
    report = wide_report()
    for width in (1600, 800):
        browser.set_window_size(width, 1000)
        open_page(browser, report, tmp_path)
        boxes = browser.execute_script(
            "return [...document.querySelectorAll('#summary *, #bar *, #tables *')]"
            ".filter((e) => { const s = getComputedStyle(e);"
            "  return /auto|scroll/.test(s.overflowX + s.overflowY) || s.maxHeight !== 'none'; })"
            ".map((e) => e.tagName + '#' + e.id + '.' + e.className);"
        )
        assert boxes == []  # the page scrolls, never a box inside it
        last_square = browser.find_elements("css selector", "#squares tbody tr:last-child a")[-1]
        last_cells = [
            section.find_elements("css selector", "tbody tr:last-child td")[-1]
            for section in browser.find_elements("css selector", "#tables section")
        ]
        assert len(last_cells) == 2 * 22
        for element in [last_square, last_cells[0], last_cells[1], last_cells[-1]]:
            browser.execute_script(
                "arguments[0].scrollIntoView({block: 'center', inline: 'center'})", element
            )
            assert in_view(browser, element), (width, element.get_attribute("title"))
        if width == 800:
            browser.execute_script("window.scrollTo(0, 0)")
            artifact(browser, tmp_path, "narrow-800.png")
            # the filters stay on screen, also with the page scrolled to the last release
            browser.execute_script(
                "arguments[0].scrollIntoView({block: 'center', inline: 'center'})", last_cells[-1]
            )
            assert in_view(browser, browser.find_element("id", "outcome"))
            artifact(browser, tmp_path, "narrow-800-scrolled.png")
    assert not severe(browser)


def test_every_state_has_its_own_colour_and_its_text_reads_at_aa_contrast(
    window: Any, tmp_path: Path
) -> None:
    colours = {key: row.colours for key, row in ENTRIES.items()}
    square_colours = {state: row.colours for state, row in SQUARES.items()}
    for table in (colours, square_colours):
        for state, (background, text) in table.items():
            assert contrast(background, text) >= 4.5, (state, background, text)
    backgrounds = {state: rgb(bg) for state, (bg, _) in colours.items()}
    for (a, ca), (b, cb) in itertools.combinations(backgrounds.items(), 2):
        assert math.dist(ca, cb) > 60, (a, b)  # install-error vs import-error, flaky, ...
    assert set(square_colours) == {"broken", "unexpected", "known", "pass", "skip", "n/a"}
    assert len(set(square_colours.values())) == len(square_colours)

    browser = open_page(window, sample_report(), tmp_path)
    painted = browser.execute_script(
        "return [...document.querySelectorAll('td.o, #squares td a, #unexpected .badge')]"
        ".map((e) => [e.textContent, getComputedStyle(e).backgroundColor,"
        "             getComputedStyle(e).color]);"
    )
    assert len(painted) > 20
    for text, background, colour in painted:
        assert contrast(background, colour) >= 4.5, (text, background, colour)


def test_the_legend_names_every_outcome_in_the_colour_its_cells_show(
    window: Any, tmp_path: Path
) -> None:
    browser = open_page(window, sample_report(), tmp_path)
    legend = browser.find_element("id", "legend")
    entries = legend.text.splitlines()
    assert entries == [e for e in ENTRIES if e not in ON_DEMAND]  # no-wheel: only on demand
    assert {
        "pass",
        "fail",
        "xfail",
        "xpass",
        "error",
        "crash",
        "timeout",
        "skip",
        "install-error",
        "import-error",
        "flaky",
    } <= set(entries)
    swatches = browser.execute_script(
        "return [...arguments[0].children].map("
        "(item) => getComputedStyle(item, '::before').backgroundColor);",
        legend,
    )
    shown_colours = {entry: rgb(c) for entry, c in zip(entries, swatches, strict=True)}
    assert shown_colours == {entry: rgb(ENTRIES[entry].colours[0]) for entry in entries}
    states = browser.find_element("id", "states")
    assert states.text.splitlines() == ["broken", "unexpected", "known", "pass", "skip", "n/a"]

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
    return replace(
        base,
        cells=cells,
        cases=cases,
        results=results,
        axes={"onnxruntime": tuple(c.id for c in ready)},
    )


def test_the_page_stays_usable_at_5000_rows(window: Any, tmp_path: Path) -> None:
    browser = open_page(window, big_report(5000), tmp_path)
    assert count(browser) == "5000 of 5000 rows"
    select(browser, "outcome", "fail")
    assert count(browser) == "52 of 5000 rows"  # 5,000 tests are a list, not twins
    failing = [f"test_{i:04d} · ort_run F F F" for i in range(0, 5000, 97)]
    assert shown(browser) == [
        "suite · onnxruntime",
        "ort_run fails on every release (1.24.4–1.17.3)",
        "case · check 1.24.4 1.24.4 1.17.3",
        *failing,
    ]
    browser.find_element("id", "text").send_keys("test_0097")
    assert count(browser) == "1 of 5000 rows"
    assert shown(browser)[3:] == ["test_0097 · ort_run F F F"]
    lines = browser.find_elements("css selector", "#unexpected li")
    assert len([li for li in lines if li.is_displayed()]) == 12  # the rest one click away
    assert browser.find_element("css selector", "#unexpected details summary").text == (
        f"{52 * 3 - 12} more"
    )
    assert not severe(browser)


def board() -> Report:
    """A scoreboard run: three onnxruntime releases (one that did not install), backend
    tests with all four checks, a regression on ort_run between the two that ran."""
    cells = (
        CellRecord("onnx1.23.2-ort1.21.1", "1.23.2", "1.21.1", CellState.INSTALL_ERROR),
        ready("1.23.2", "1.22.1"),
        ready("1.23.2", "1.24.4"),
    )
    checks = {
        "ort_run": "onnxruntime",
        "reference": "onnx",
        "shape_inference": "onnx",
        "inferred_annotations": "onnx",
    }
    outcomes = {
        "test_abs": (Outcome.PASS, Outcome.FAIL),
        "test_add": (Outcome.FAIL, Outcome.PASS),
        "test_cos": (Outcome.SKIP, Outcome.PASS),
        "test_div": (Outcome.PASS, Outcome.PASS),
    }
    cases = tuple(
        CaseInfo(
            f"onnx_backend.{name}",
            "onnx_backend",
            name,
            "0",
            checks,
            tags=(name.split("_")[1].capitalize(),),
        )
        for name in outcomes
    )
    results = tuple(
        CheckResult(
            cell.id,
            f"onnx_backend.{name}",
            check,
            pair[i] if check == "ort_run" else Outcome.PASS,
            detail="outputs differ" if pair[i] is Outcome.FAIL else "",
        )
        for name, pair in outcomes.items()
        for i, cell in enumerate(cells[1:])
        for check in checks
    )
    return Report(
        cells,
        cases,
        results,
        {"onnxruntime": tuple(c.id for c in cells)},
        families={"onnx_backend": "ONNX's backend node tests"},
        run={"generator_onnx": "1.23.2"},
    )


def test_the_scoreboard_has_a_page_of_its_own_with_every_check_and_its_chart(
    window: Any, tmp_path: Path
) -> None:
    report = board()
    page = tmp_path / "scoreboard.html"
    page.write_text(render_scoreboard_html(report) or "")
    assert render_scoreboard_html(sample_report()) is None  # no backend tests, no page
    browser = window
    browser.get(page.as_uri())
    assert browser.title == "onnx-compat scoreboard"
    text = lambda i: browser.find_element("id", i).text  # noqa: E731
    assert text("board").splitlines() == [
        "onnxruntime passed failed errors crashes timeouts skipped total pass rate",
        "1.21.1 — — — — — — 0 install-error",
        "1.22.1 2 1 0 0 0 1 4 66.7%",
        "1.24.4 3 1 0 0 0 0 4 75.0%",
    ]
    assert text("checks").splitlines() == [
        "onnxruntime ort_run reference shape_inference inferred_annotations",
        "1.21.1 install-error install-error install-error install-error",
        "1.22.1 2 / 3 · 66.7% 4 / 4 · 100.0% 4 / 4 · 100.0% 4 / 4 · 100.0%",
        "1.24.4 3 / 4 · 75.0% 4 / 4 · 100.0% 4 / 4 · 100.0% 4 / 4 · 100.0%",
    ]
    assert text("regressions").splitlines() == [
        "1 regression between consecutive releases",
        "1.22.1 → 1.24.4 · ort_run · test_abs: fail: outputs differ",
    ]
    chart = browser.find_element("id", "chart")
    assert not chart.is_displayed()  # no scoreboard.svg beside the page: no broken image
    assert not severe(browser) or all("scoreboard.svg" in e["message"] for e in severe(browser))

    (tmp_path / "scoreboard.svg").write_text(
        '<svg xmlns="http://www.w3.org/2000/svg" width="400" height="200">'
        '<rect width="400" height="200" fill="#9fdcae"/></svg>'
    )
    browser.refresh()
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 5).until(lambda b: b.find_element("id", "chart").is_displayed())
    img = browser.find_element("css selector", "#chart img")
    assert img.get_attribute("src").endswith("/scoreboard.svg")
    assert browser.execute_script("return arguments[0].naturalWidth", img) == 400
    artifact(browser, tmp_path, "scoreboard.png")

    # the matrix of a scoreboard run links to it; a plain run's matrix does not
    open_page(browser, report, tmp_path)
    link = browser.find_element("id", "scoreboard")
    assert link.is_displayed() and link.get_attribute("href").endswith("/scoreboard.html")
    open_page(browser, sample_report(), tmp_path)
    assert not browser.find_element("id", "scoreboard").is_displayed()


@pytest.mark.skipif(
    not os.environ.get("COMPAT_SCREENSHOT_RESULTS"),
    reason="set COMPAT_SCREENSHOT_RESULTS=path/to/matrix.json for a screenshot of a real run",
)
def test_a_real_runs_page_whole(browser: Any, tmp_path: Path) -> None:
    """A look at a real run's page: the first screen and the whole page."""
    report = read_json(Path(os.environ["COMPAT_SCREENSHOT_RESULTS"]))
    browser.set_window_size(1600, 1000)
    open_page(browser, report, tmp_path)
    assert not severe(browser)
    artifact(browser, tmp_path, "real-first-screen.png")
    width, height = browser.execute_script(
        "const e = document.documentElement; return [e.scrollWidth, e.scrollHeight];"
    )
    shot = browser.execute_cdp_cmd(
        "Page.captureScreenshot",
        {
            "format": "png",
            "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1},
        },
    )
    whole = Path(os.environ.get("COMPAT_ARTIFACTS", tmp_path)) / "real-whole-page.png"
    whole.write_bytes(base64.b64decode(shot["data"]))
    assert whole.stat().st_size > 100_000


def test_the_changes_since_the_baseline_come_first_and_the_page_filters_on_them(
    window: Any, tmp_path: Path
) -> None:
    from compat.core.changes import Source, attach, compare

    now = sample_report()
    crashed = ("pads.tensor", "ort_run", Outcome.CRASH)
    earlier = replace(  # the crash is new: in the baseline the check passed
        now,
        results=tuple(
            replace(r, outcome=Outcome.PASS, detail="")
            if (r.case, r.check, r.outcome) == crashed
            else r
            for r in now.results
        ),
    )
    compared = attach(now, compare(earlier, now, Source("git:v1.4.0", "v1.4.0", "commit 0a1b")))
    browser = open_page(window, compared, tmp_path)
    assert not severe(browser)
    box = browser.find_element("id", "changes")
    summary = browser.find_element("id", "summary")
    assert box.location["y"] < summary.location["y"] and in_view(browser, box)  # first
    lines = box.text.splitlines()
    assert lines[:2] == [
        "since v1.4.0: 1 new failure, 0 fixed, 0 changed",
        "baseline: git:v1.4.0 (commit 0a1b)",
    ]
    assert lines[2:] == [
        "new failures (1)",
        "pads.tensor · ort_run on onnx1.23.2-ort1.17.3: was pass; now crash: worker killed by "
        "SIGSEGV (exit -11)",
    ]
    select(browser, "change", "new-failure")  # the row the new failure is on, and its twin
    assert shown(browser) == [*ORT_TABLE, "value_ints · ort_run I", "tensor · ort_run I C"]
    assert twins(browser) == ["value_ints · ort_run I"]
    assert "change=new-failure" in browser.current_url
    select(browser, "change", "")
    assert count(browser) == "8 of 8 rows"
    # a page without a baseline has no box and no change filter
    plain = open_page(window, now, tmp_path)
    assert not plain.find_element("id", "changes").is_displayed()
    assert not plain.find_element("id", "change-filter").is_displayed()


def since_baseline(given: str = "git:v1.4.0") -> Report:
    """sample_report against a baseline where the crash passed (a new failure), a result
    failed that passes now (fixed) and the broken cell said something else (changed)."""
    from compat.core.changes import Source, attach, compare

    now = sample_report()
    crashed = ("pads.tensor", "ort_run", Outcome.CRASH)
    fixed = ("onnx1.18.0-ort1.24.4", "pads.value_ints", "ort_run")
    earlier = replace(
        now,
        cells=tuple(
            replace(c, detail="onnxruntime==1.14.1 has no wheel for cp311") if c.detail else c
            for c in now.cells
        ),
        results=tuple(
            replace(r, outcome=Outcome.PASS, detail="")
            if (r.case, r.check, r.outcome) == crashed
            else replace(r, outcome=Outcome.FAIL, detail="ValueError: outputs differ")
            if (r.cell, r.case, r.check) == fixed
            else r
            for r in now.results
        ),
    )
    return attach(now, compare(earlier, now, Source(given, "v1.4.0", "commit 0a1b")))


def test_the_box_of_changes_lists_new_failures_first_as_the_terminal_does(
    window: Any, tmp_path: Path
) -> None:
    from compat.core.changes import HEADINGS
    from compat.render.changes import render_changes

    report = since_baseline()
    box = open_page(window, report, tmp_path).find_element("id", "changes")
    headings = [h.text.split(" (")[0] for h in box.find_elements("tag name", "h3")]
    terminal = [
        line.split(" (")[0]
        for line in render_changes(report).splitlines()
        if line.split(" (")[0] in HEADINGS.values()
    ]
    assert headings == terminal == ["new failures", "fixed", "changed messages"]
    # the change filter offers them in the same order
    options = [o.text for o in box.parent.find_elements("css selector", "#change option")]
    assert options[2:] == headings
    assert not severe(window)


def title_extents(browser: Any) -> list[list[tuple[str, float, float, float, float]]]:
    """Each row of the summary's group titles (Python, axis): every title's text, where
    its text starts and ends on screen and where its box does."""
    return [
        [tuple(x) for x in row]
        for row in browser.execute_script(
            "return [...document.querySelectorAll('#squares thead tr')].map((tr) =>"
            "  [...tr.querySelectorAll('th.axis')].filter((th) => !th.hidden).map((th) => {"
            "    const range = document.createRange(); range.selectNodeContents(th);"
            "    const text = range.getBoundingClientRect(), box = th.getBoundingClientRect();"
            "    return [th.textContent, text.left, text.right, box.left, box.right]; }))"
            ".filter((row) => row.length);"
        )
    ]


def narrowed(report: Report, columns: int, keep: str = "") -> Report:
    """The report with `columns` releases on each axis (axes starting with `keep`)."""
    axes = {k: v[:columns] for k, v in report.axes.items() if k.startswith(keep)}
    ids = {i for v in axes.values() for i in v}
    return replace(
        report,
        axes=axes,
        cells=tuple(c for c in report.cells if c.id in ids),
        results=tuple(r for r in report.results if r.cell in ids),
    )


def test_no_group_title_of_a_run_of_several_pythons_overlaps_another(
    window: Any, tmp_path: Path
) -> None:
    several = read_json(Path(__file__).parent / "data" / "pythons" / "matrix.json")
    for name, report in [
        ("one-onnx", narrowed(several, 1, keep="onnx@")),  # a Python group of one cell
        ("one-each", narrowed(several, 1)),  # onnx and ort of one cell each
        ("two-each", several),
    ]:
        open_page(window, report, tmp_path)
        rows = title_extents(window)
        assert len(rows) == 2, name  # Pythons, then axes
        for row in rows:
            assert len(row) in (2, 4), (name, row)
            for text, start, end, left, right in row:
                assert left - 0.5 <= start and end <= right + 0.5, (name, text)  # not clipped
            for (a, _, a_end, _, _), (b, b_start, _, _, _) in itertools.pairwise(row):
                assert a_end <= b_start, (name, a, b)  # no title runs into the next one
        artifact(window, tmp_path, f"pythons-{name}.png")
    assert not severe(window)


def test_a_new_failure_is_marked_in_the_strip_and_the_grid_with_its_legend(
    window: Any, tmp_path: Path
) -> None:
    marked = (
        "[...document.querySelectorAll(arguments[0])]"
        ".filter((e) => getComputedStyle(e).outlineStyle !== 'none')"
        ".map((e) => e.title)"
    )
    browser = open_page(window, since_baseline(), tmp_path)
    squares = browser.execute_script("return " + marked, "#squares td a")
    assert squares == ["pads · ort 1.17.3: unexpected (1 pass, 1 crash, 2 skip) · new since v1.4.0"]
    grid = browser.execute_script("return " + marked, "#tables td.o")
    assert grid == ["1.17.3: crash · new since v1.4.0"]
    for legend in ("states", "legend"):
        assert browser.find_element("id", legend).text.splitlines()[-1] == "new since v1.4.0"
    artifact(browser, tmp_path, "new-failure-marked.png")
    # without a new failure (the same run as its own baseline) no mark and no legend entry
    from compat.core.changes import Source, attach, compare

    plain = sample_report()
    same = attach(plain, compare(plain, plain, Source("git:v1.4.0", "v1.4.0")))
    for report in (same, plain):
        browser = open_page(window, report, tmp_path)
        assert browser.execute_script("return " + marked, "#squares td a, #tables td.o") == []
        assert "new since" not in browser.find_element("id", "summary").text
        assert "new since" not in browser.find_element("id", "legend").text
    assert not severe(window)


def test_a_result_the_baseline_did_not_run_is_marked_as_new_with_its_own_words(
    window: Any, tmp_path: Path
) -> None:
    from compat.core.changes import Source, attach, compare

    marked = (
        "[...document.querySelectorAll(arguments[0])]"
        ".filter((e) => getComputedStyle(e).outlineStyle !== 'none')"
        ".map((e) => e.title)"
    )
    now = sample_report()
    released = "onnx1.23.2-ort1.17.3"  # onnxruntime 1.17.3 is new: the crash on it is `new`
    earlier = replace(
        now,
        cells=tuple(c for c in now.cells if c.id != released),
        results=tuple(r for r in now.results if r.cell != released),
        axes={axis: tuple(c for c in ids if c != released) for axis, ids in now.axes.items()},
    )
    report = attach(now, compare(earlier, now, Source("git:v1.4.0", "v1.4.0")))
    browser = open_page(window, report, tmp_path)
    words = "new since v1.4.0 (not in the baseline's run)"
    squares = browser.execute_script("return " + marked, "#squares td a")
    assert squares == [f"pads · ort 1.17.3: unexpected (1 pass, 1 crash, 2 skip) · {words}"]
    grid = browser.execute_script("return " + marked, "#tables td.o")
    assert grid == [f"1.17.3: crash · {words}"]
    for legend in ("states", "legend"):  # one entry for both kinds of new
        assert browser.find_element("id", legend).text.splitlines()[-1] == "new since v1.4.0"
    artifact(browser, tmp_path, "new-result-marked.png")
    assert not severe(window)


def test_at_700_px_the_baseline_wraps_and_the_headline_counts_in_words(
    browser: Any, tmp_path: Path
) -> None:
    from compat.core.changes import Source, attach, compare

    wide = wide_report()  # wider than 700 px: the page scrolls sideways to its last release
    earlier = replace(wide, results=tuple(replace(r, outcome=Outcome.PASS) for r in wide.results))
    given = "reports/" + "/".join(["a-long-folder-of-earlier-results"] * 4) + "/matrix.json"
    report = attach(wide, compare(earlier, wide, Source(given, "earlier", "sha256 " + "ab" * 32)))
    browser.set_window_size(700, 900)
    try:
        open_page(browser, report, tmp_path)
        client = browser.execute_script("return document.documentElement.clientWidth")
        for line in browser.find_elements("css selector", "#changes h2, #changes p, #changes li"):
            assert line.location["x"] + line.size["width"] <= client, line.text  # wraps
        baseline = browser.find_element("css selector", "#changes p")
        assert given in baseline.text and baseline.size["height"] > 40
        artifact(browser, tmp_path, "baseline-700.png")
        browser.execute_script("window.scrollTo(document.documentElement.scrollWidth, 0)")
        assert in_view(browser, baseline)  # scrolled to the last release, still readable
        one_case = replace(
            report,
            cases=report.cases[:1],
            results=tuple(r for r in report.results if r.case == report.cases[0].id),
        )
        headline = open_page(browser, one_case, tmp_path).find_element("id", "headline").text
        assert "· 1 case ·" in headline, headline
    finally:
        browser.set_window_size(1400, 900)
    assert not severe(browser)
