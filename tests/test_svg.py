"""The pictures: summary.svg (family × release heatmap) and scoreboard.svg (pass rate by
release), read as XML for their structure and looked at in real Chromium for what a
reader sees: no text cut off at the edges, no text on top of other text, the value
labels clear of the line, and a screenshot of each kept as an artifact.

The browser tests need `apt-get install chromium chromium-driver`; they skip without
them unless COMPAT_REQUIRE_BROWSER=1. Screenshots go to $COMPAT_ARTIFACTS (default: the
test's tmp directory).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from compat.core.outcomes import CellRecord, CellState, CheckResult, Outcome
from compat.core.report import CaseInfo, Report
from compat.core.squares import SQUARES
from compat.render.heatmap import heatmap_svg
from compat.render.outputs import RENDERERS, Style
from compat.render.passrate import passrate_svg
from compat.render.scoreboard import scoreboard_rows
from compat.render.summary import summarize
from tests.helpers import ORT, start_chromium
from tests.test_docs_pages import default_matrix
from tests.test_report import sample_report

SVG = "{http://www.w3.org/2000/svg}"


#: (family, check, cell) -> what its first case did instead: every state a square can take.
TROUBLE = {
    ("family_04", "checker", "onnx1.21.0-ort1.24.4"): Outcome.FAIL,
    ("family_11", "ort_run", "onnx1.23.2-ort1.26.0"): Outcome.CRASH,
    ("family_11", "ort_run", "onnx1.23.2-ort1.27.0"): Outcome.ERROR,
    ("family_17", "checker", "onnx1.18.0-ort1.24.4"): Outcome.XPASS,
}


def troubled_matrix() -> Report:
    """The default matrix's shape with unexpected results next to the known bugs,
    passes and a broken release."""
    report = default_matrix()
    results = tuple(
        replace(r, outcome=TROUBLE[key])
        if (key := (r.case.split(".")[0], r.check, r.cell)) in TROUBLE
        and r.case.endswith("variant_0.common")
        else r
        for r in report.results
    )
    return replace(report, results=results)


def scoreboard_report() -> Report:
    """Backend tests on every onnxruntime release of the axis: the pass rate climbs with a
    dip, newer releases support more tests, and one release did not install."""
    cells = tuple(
        CellRecord(
            f"onnx1.23.2-ort{v}",
            "1.23.2",
            v,
            CellState.INSTALL_ERROR if v == "1.16.3" else CellState.READY,
        )
        for v in ORT
    )
    cases = tuple(
        CaseInfo(
            f"onnx_backend.test_{i:03d}",
            "onnx_backend",
            f"test {i}",
            "0",
            {"ort_run": "onnxruntime"},
            tags=("Op",),
        )
        for i in range(120)
    )
    results = []
    for k, cell in enumerate(cells):
        if cell.state is not CellState.READY:
            continue
        failing = 24 - k if k != 9 else 18  # fewer failures each release, one regression
        for i, case in enumerate(cases):
            outcome = (
                Outcome.SKIP if i >= 90 + k else Outcome.FAIL if i % 90 < failing else Outcome.PASS
            )
            results.append(CheckResult(cell.id, case.id, "ort_run", outcome))
    return Report(
        cells,
        cases,
        tuple(results),
        {"onnxruntime": tuple(c.id for c in cells)},
        run={"generator_onnx": "1.23.2"},
    )


def parse(text: str) -> ElementTree.Element:
    root = ElementTree.fromstring(text)
    assert root.tag == f"{SVG}svg"
    width, height = int(root.get("width", "")), int(root.get("height", ""))
    assert root.get("viewBox") == f"0 0 {width} {height}"
    return root


def by_class(root: ElementTree.Element, tag: str, name: str) -> list[ElementTree.Element]:
    return [e for e in root.iter(f"{SVG}{tag}") if name in (e.get("class") or "").split()]


def test_the_heatmap_has_one_square_per_family_and_release_in_its_state_colour() -> None:
    report = troubled_matrix()
    summary = summarize(report)
    root = parse(heatmap_svg(report))
    rows = by_class(root, "g", "row")
    assert [row.get("data-family") for row in rows] == list(summary.families)
    assert len(by_class(root, "rect", "square")) == len(summary.families) * len(summary.columns)
    for row in rows:
        family = row.get("data-family", "")
        squares = by_class(row, "rect", "square")
        wanted = [summary.squares[(family, i)] for i in range(len(summary.columns))]
        assert [s.get("class") for s in squares] == [f"square {w.state}" for w in wanted]
        assert [s.get("fill") for s in squares] == [SQUARES[w.state].picture[0] for w in wanted]
        numbers = [t.text for t in by_class(row, "text", "number")]
        assert numbers == [str(w.number) for w in wanted if w.number]
    states = {s.state for s in summary.squares.values()}
    assert states == {"broken", "unexpected", "known", "pass"}
    assert summary.squares[("family_11", 22)].state == "unexpected"  # ort 1.27.0 errors

    texts = [t.text for t in by_class(root, "text", "axis-title")]
    assert texts == ["onnx releases (onnxruntime 1.24.4)", "onnxruntime releases (onnx 1.23.2)"]
    assert [t.text for t in by_class(root, "text", "release")] == [c.label for c in summary.columns]
    legend = by_class(root, "g", "legend-entry")
    assert [g.get("data-state") for g in legend] == list(SQUARES)
    for entry in legend:
        state = entry.get("data-state", "")
        (swatch,) = by_class(entry, "rect", "swatch")
        assert swatch.get("fill") == SQUARES[state].picture[0]
        assert [t.text for t in entry.iter(f"{SVG}text")] == [SQUARES[state].name]


def test_the_pass_rate_chart_has_a_point_per_release_that_ran() -> None:
    report = scoreboard_report()
    root = parse(passrate_svg(report))
    rows = scoreboard_rows(report)
    points = by_class(root, "g", "point")
    assert len(points) == len(rows) - 1 and len(by_class(root, "g", "missing")) == 1
    ran = [r for r in rows if r[1] != "—"]
    values = [t.text for p in points for t in by_class(p, "text", "value")]
    assert [f"{v}%" for v in values] == [r[-1] for r in ran]  # the scoreboard's own rates
    heights = [float(c.get("cy", "")) for p in points for c in p.iter(f"{SVG}circle")]
    rates = [float(v or "") for v in values]
    for (a, ya), (b, yb) in itertools.pairwise(zip(rates, heights, strict=True)):
        assert (a < b) == (ya > yb) or a == b  # a higher rate is drawn higher
    assert [t.text for t in by_class(root, "text", "release")] == list(ORT)
    ticks = [t.text for t in by_class(root, "text", "tick")]
    assert ticks[-1] == "100%" and all(t and t.endswith("%") for t in ticks)
    assert [t.text for t in by_class(root, "text", "axis-title")] == ["onnxruntime release"]
    assert len(by_class(root, "g", "legend-entry")) == 2


def test_the_pictures_are_outputs_when_there_is_something_to_draw() -> None:
    matrix, board = sample_report(), scoreboard_report()
    assert RENDERERS["summary.svg"](matrix, Style()) == heatmap_svg(matrix)
    assert RENDERERS["scoreboard.svg"](matrix, Style()) is None  # no backend tests
    assert RENDERERS["scoreboard.svg"](board, Style()) == passrate_svg(board)
    empty = Report(matrix.cells, (), (), matrix.axes)
    assert RENDERERS["summary.svg"](empty, Style()) is None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    driver = start_chromium(
        "--hide-scrollbars", "--force-device-scale-factor=1", "--window-size=1200,900"
    )
    yield driver
    driver.quit()


#: Every text's box on the page, and each pair of texts whose boxes overlap.
LAYOUT = """
const svg = document.documentElement;
const box = (e) => { const r = e.getBoundingClientRect();
  return {x: r.left, y: r.top, r: r.right, b: r.bottom, text: e.textContent,
          cls: e.getAttribute('class') || ''}; };
const texts = [...svg.querySelectorAll('text')].map(box);
const meet = (a, b) => a.x < b.r - 0.5 && b.x < a.r - 0.5 && a.y < b.b - 0.5 && b.y < a.b - 0.5;
const overlaps = [];
for (let i = 0; i < texts.length; i++)
  for (let j = i + 1; j < texts.length; j++)
    if (meet(texts[i], texts[j])) overlaps.push([texts[i].text, texts[j].text]);
const values = texts.filter((t) => t.cls === 'value');
const crossed = [];
for (const line of svg.querySelectorAll('path.line')) {
  for (let s = 0; s <= line.getTotalLength(); s += 1) {
    const p = line.getPointAtLength(s);
    for (const v of values)
      if (p.x > v.x && p.x < v.r && p.y > v.y && p.y < v.b) crossed.push(v.text);
  }
}
const numbers = [...svg.querySelectorAll('text.number')].map((t) => {
  const r = box(t), s = box(t.parentNode.querySelector('rect'));
  return r.x >= s.x && r.r <= s.r && r.y >= s.y && r.b <= s.b; });
const squares = [...svg.querySelectorAll('rect.square')].map(box);
const families = [...svg.querySelectorAll('text.family')].map(box);
return {width: svg.width.baseVal.value, height: svg.height.baseVal.value, texts, overlaps,
        crossed: [...new Set(crossed)], numbers,
        left: squares.length ? Math.min(...squares.map((s) => s.x)) : 0,
        labels: families.length ? Math.max(...families.map((f) => f.r)) : 0};
"""


def look(browser: Any, text: str, name: str, tmp_path: Path) -> dict[str, Any]:
    """Opens the SVG as a page of its own, measures its text and keeps a screenshot."""
    path = tmp_path / name
    path.write_text(text)
    browser.get(path.as_uri())
    layout: dict[str, Any] = browser.execute_script(LAYOUT)
    width, height = int(layout["width"]), int(layout["height"])
    inner = browser.execute_script("return [window.innerWidth, window.innerHeight]")
    outer = browser.get_window_size()
    browser.set_window_size(width + outer["width"] - inner[0], height + outer["height"] - inner[1])
    shot = Path(os.environ.get("COMPAT_ARTIFACTS", tmp_path)) / name.replace(".svg", ".png")
    shot.parent.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000
    return layout


def readable(layout: dict[str, Any]) -> None:
    """No text runs off the picture, none sits on another."""
    for t in layout["texts"]:
        inside = t["x"] >= 0 and t["y"] >= 0
        assert inside and t["r"] <= layout["width"] and t["b"] <= layout["height"], t
    assert layout["overlaps"] == []


@pytest.mark.browser
def test_the_heatmap_reads_cleanly_in_chromium(browser: Any, tmp_path: Path) -> None:
    for report, name in [
        (troubled_matrix(), "summary.svg"),
        (sample_report(), "summary-small.svg"),
    ]:
        layout = look(browser, heatmap_svg(report), name, tmp_path)
        readable(layout)
        assert all(layout["numbers"]) and layout["numbers"]  # each number inside its square
        assert layout["labels"] <= layout["left"] - 4  # family names end before the squares
    assert len(layout["texts"]) > 10


@pytest.mark.browser
def test_the_pass_rate_chart_reads_cleanly_in_chromium(browser: Any, tmp_path: Path) -> None:
    layout = look(browser, passrate_svg(scoreboard_report()), "scoreboard.svg", tmp_path)
    readable(layout)
    assert layout["crossed"] == []  # the line runs through no value label


@pytest.mark.browser
def test_the_pictures_load_as_images_the_way_docs_embed_them(browser: Any, tmp_path: Path) -> None:
    (tmp_path / "summary.svg").write_text(heatmap_svg(troubled_matrix()))
    (tmp_path / "scoreboard.svg").write_text(passrate_svg(scoreboard_report()))
    page = tmp_path / "page.html"
    page.write_text('<img id="a" src="summary.svg"><img id="b" src="scoreboard.svg">')
    browser.get(page.as_uri())
    sizes = browser.execute_script(
        "return ['a', 'b'].map((id) => { const i = document.getElementById(id);"
        " return [i.complete, i.naturalWidth, i.naturalHeight]; });"
    )
    for (complete, width, height), name in zip(sizes, ["summary", "scoreboard"], strict=True):
        assert complete and width > 300 and height > 200, name
