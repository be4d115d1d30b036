"""Text from models, configs and commands is data (compat/render/text.py): hostile names,
details, reasons and links go through every renderer and come out inert — no tag, no
link but http(s), no terminal escape, no character XML cannot hold — while ordinary
text renders as it always did (the golden files of test_report and test_docs_pages)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import onnx
import pytest
from onnx import TensorProto, helper

from compat.core.family import FamilyRow
from compat.core.install import InstallRequest
from compat.core.outcomes import CellRecord, CellState, CheckResult, Outcome
from compat.core.report import CaseInfo, Report
from compat.corpus.backend_suite import FAMILY as SUITE
from compat.followup.triage.finding_report import finding_markdown
from compat.followup.triage.findings import Finding
from compat.followup.triage.triaged import Triaged
from compat.plan.matrix import Cell
from compat.render.families import render_block
from compat.render.outputs import RENDERERS, Style, files
from compat.render.spellings import render_spellings
from compat.render.terminal import closing_line, render_grid, render_summary, render_unexpected
from compat.render.text import md_code, md_fence, md_link, md_text, printable, safe_link
from compat.render.writer_reader import CASE as WR_CASE
from compat.render.writer_reader import CHECK as WR_CHECK
from tests.helpers import start_chromium
from tests.test_report import ready

UNDECODABLE = b"\x80\xfe\xff"
#: Each piece of a hostile name: markup, a link, a table's pipe, code spans, terminal
#: escapes (a window title, a cleared screen), NUL, undecodable bytes both ways.
PIECES = (
    "<img src=x onerror=alert(1)>",
    "](javascript:alert(1))",
    "a|b",
    "tick`s ``x",
    "\x1b]0;pwned-title\x07",
    "\x1b[2J",
    "nul\x00",
    UNDECODABLE.decode("utf-8", "surrogateescape"),
    UNDECODABLE.decode("utf-8", "replace"),
)
EVIL = "".join(PIECES)
#: Names become file names (families/FAMILY.md): no control character there.
EVIL_NAME = "evil<img src=x onerror=alert(1)>](javascript:alert(1))|x`y"
LINK = "javascript:alert(1)"
#: What must never be in a file or on a terminal: C0 controls but tab and newline, DEL,
#: C1 controls, lone surrogates.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def hostile_report() -> Report:
    """A run whose every name, detail, reason and link a stranger wrote: a family, a case
    and a check with markup and escapes in their names, a known failure linking to
    `javascript:`, a broken cell whose installer printed binary, backend tests and a
    writer × reader pair with hostile details."""
    good, bad = ready("1.18.0", "1.24.4"), ready("1.21.0", "1.24.4")
    broken = CellRecord(
        "onnx1.23.2-ort1.17.3",
        "1.23.2",
        "1.17.3",
        CellState.INSTALL_ERROR,
        detail=f"pip said {EVIL}\nand more {EVIL}",
    )
    checks = {"checker": "onnx", f"check{EVIL_NAME}": "onnx", "ort_run": "onnxruntime"}
    known = {
        "package": "onnx",
        "versions": "<1.21",
        "checks": ["checker"],
        "reason": f"[ref]: {LINK} {EVIL}",
        "link": LINK,
    }
    case = CaseInfo(
        f"{EVIL_NAME}.v{EVIL_NAME}", EVIL_NAME, f"made by {EVIL}", "0", checks, (known,)
    )
    twin = CaseInfo(f"{EVIL_NAME}.plain", EVIL_NAME, "plain twin", "1", checks)
    suite = CaseInfo(
        f"{SUITE}.test{EVIL_NAME}",
        SUITE,
        EVIL,
        "2",
        {"ort_run": "onnxruntime"},
        tags=(f"Op{EVIL_NAME}",),
    )
    writer = CaseInfo(WR_CASE, "writer_reader", "default model", "3", {WR_CHECK: "onnxruntime"})
    results = []
    for cell in (good, bad):
        first = cell is good
        results += [
            CheckResult(
                cell.id,
                case.id,
                "checker",
                Outcome.XFAIL if first else Outcome.XPASS,
                detail=f"InferenceError: {EVIL}",
                phase="check",
                known=LINK,
            ),
            CheckResult(
                cell.id,
                case.id,
                f"check{EVIL_NAME}",
                Outcome.FAIL if first else Outcome.PASS,
                detail=EVIL,
                known="https://example.org/bug/1" if first else "",
                log=f"logs/{EVIL_NAME}.log",
            ),
            CheckResult(
                cell.id, case.id, "ort_run", Outcome.CRASH, detail=f"worker printed {EVIL}"
            ),
            CheckResult(cell.id, twin.id, "checker", Outcome.ERROR, detail=EVIL),
            CheckResult(
                cell.id, suite.id, "ort_run", Outcome.PASS if first else Outcome.FAIL, detail=EVIL
            ),
            CheckResult(cell.id, writer.id, WR_CHECK, Outcome.FAIL, detail=f"writes {EVIL}"),
        ]
    axes = {"onnx": (good.id, bad.id), "onnxruntime": (broken.id,)}
    return Report(
        (good, bad, broken),
        (case, twin, suite, writer),
        tuple(results),
        axes,
        families={EVIL_NAME: f"A family by {EVIL}", SUITE: EVIL},
        run={"seconds": 1.0, "generator_onnx": EVIL},
    )


def rendered() -> dict[str, str]:
    """Every report file a run writes, by its path in the output folder."""
    report, out = hostile_report(), {}
    for style in (Style(), Style(ascii=True, collapse=False)):
        for name, renderer in RENDERERS.items():
            out.update(files(name, renderer(report, style)))
    return out


def inert_markdown(text: str) -> None:
    """What a Markdown viewer (CommonMark + GitHub tables) would make of `text` holds no
    tag but our anchors, no link but http(s) and relative ones, no reference definition,
    and every table row has its header's cells."""
    assert not re.search(r"(?m)^```", text) or text.count("```") % 2 == 0
    plain = re.sub(r"\\.", "", text)  # escaped characters are text
    plain = re.sub(r"(?<!`)(`+)(?!`).+?(?<!`)\1(?!`)", "", plain)  # code spans are inert
    tags = re.findall(r"<[A-Za-z/!?][^>]*>?", plain)
    ours = r'<a id="[^"<>]*">|</a>|<!-- [^<>]* -->'
    assert all(re.fullmatch(ours, tag) for tag in tags), tags
    for target in re.findall(r"\]\(([^)\s]*)", plain):
        assert re.match(r"https?://", target) or not re.match(r"[\w+.-]*:", target), target
    assert not re.search(r"(?m)^ {0,3}(?:[-*] )?\[[^\]]*\]:", plain)
    for table in re.findall(r"(?m)(?:^\|.*\n?)+", text):
        cells = [len(re.findall(r"(?<!\\)(?:\\\\)*\|", row)) for row in table.splitlines()]
        assert len(set(cells)) == 1, table


def no_control(text: str) -> None:
    assert not CONTROL.search(text), repr(CONTROL.search(text))
    text.encode("utf-8")  # writable as a file: no lone surrogate


@pytest.fixture(scope="module")
def outputs() -> dict[str, str]:
    return rendered()


def test_every_renderer_gets_the_hostile_run(outputs: dict[str, str]) -> None:
    """The table of renderers is covered: each file holds the hostile names, escaped."""
    assert {
        "matrix.md",
        "compatibility.md",
        f"families/{EVIL_NAME}.md",
        "summary.svg",
        "matrix.html",
        "junit.xml",
        "scoreboard.md",
        "scoreboard.html",
        "scoreboard.svg",
        "writer_reader.md",
    } <= set(outputs)
    for name, text in outputs.items():
        if name not in (
            "summary.svg",
            "scoreboard.svg",
            "writer_reader.md",
            "families/onnx_backend.md",
            "families/writer_reader.md",
        ):
            assert "onerror=alert(1)" in text, name  # shown, as text


@pytest.mark.parametrize("name", sorted(set(rendered())))
def test_no_file_holds_a_control_character(outputs: dict[str, str], name: str) -> None:
    no_control(outputs[name])
    if name.endswith(".html"):  # (in Markdown, inside a code span it is text)
        assert "<img src=x" not in outputs[name]


@pytest.mark.parametrize("name", sorted(n for n in rendered() if n.endswith(".md")))
def test_markdown_is_inert(outputs: dict[str, str], name: str) -> None:
    inert_markdown(outputs[name])


def test_a_javascript_link_is_never_a_link_and_an_http_one_still_is(
    outputs: dict[str, str],
) -> None:
    page = outputs[f"families/{EVIL_NAME}.md"]
    assert "(https://example.org/bug/1)" in page  # the http(s) bug: a link
    assert f"`{LINK}`" in page  # the other: its address shown as code
    assert f"— `{LINK}`" in outputs["matrix.md"]
    assert "— https://example.org/bug/1" in outputs["matrix.md"]


@pytest.mark.parametrize("name", ["junit.xml", "summary.svg", "scoreboard.svg"])
def test_xml_files_parse_and_say_the_names_as_text(outputs: dict[str, str], name: str) -> None:
    root = ET.fromstring(outputs[name])
    assert not [e for e in root.iter() if e.tag.rsplit("}", 1)[-1] in ("img", "script")]
    said = " ".join(
        [*(e.text or "" for e in root.iter()), *(v for e in root.iter() for v in e.attrib.values())]
    )
    assert "<img src=x onerror=alert(1)>" in said


def test_junit_keeps_binary_command_output_as_escapes() -> None:
    root = ET.fromstring(rendered()["junit.xml"])
    texts = "".join(e.text or "" for e in root.iter())
    assert "\\x1b]0;pwned-title\\x07" in texts and "\\x80\\xfe\\xff" in texts
    assert "nul\\x00" in texts


def test_the_page_data_says_the_names_and_no_tag_reaches_the_html(
    outputs: dict[str, str],
) -> None:
    page = outputs["matrix.html"]
    data = page.split('<script type="application/json" id="data">', 1)[1]
    data = json.loads(data.split("</script>", 1)[0])
    assert "<img src=x onerror=alert(1)>" in json.dumps(data, ensure_ascii=False)
    assert "\\x1b[2J" in json.dumps(data, ensure_ascii=False)
    assert page.count("<script") == 2 and page.count("</script>") == 2


def test_the_terminal_gets_no_escape_sequence() -> None:
    report = hostile_report()
    printed = "\n".join(
        [
            render_summary(report),
            render_unexpected(report, {}),
            render_grid(report, every_row=True),
            closing_line(report, "run"),
            render_spellings(report),
        ]
    )
    no_control(printed)
    assert "\\x1b]0;pwned-title\\x07" in printed  # shown, escaped, not obeyed


def test_colour_is_still_ours_alone() -> None:
    painted = render_summary(hostile_report(), colour=True)
    sequences = re.findall("\x1b[^m]*m", painted)
    assert sequences and all(re.fullmatch("\x1b\\[[0-9;]*m", s) for s in sequences)
    no_control(re.sub("\x1b\\[[0-9;]*m", "", painted))


def test_mutate_variants_print_escaped() -> None:
    report = hostile_report()
    cases = (
        *report.cases,
        CaseInfo(f"{report.cases[1].id}~{EVIL}", EVIL_NAME, "", "9", {"checker": "onnx"}),
    )
    results = (
        *report.results,
        *(
            CheckResult(c, f"{report.cases[1].id}~{EVIL}", "checker", Outcome.FAIL)
            for c in ("onnx1.18.0-ort1.24.4",)
        ),
    )
    base = {(r.cell, r.case, r.check): r for r in results}
    key = ("onnx1.18.0-ort1.24.4", report.cases[1].id, "checker")
    base[key] = CheckResult(*key, Outcome.PASS)
    said = render_spellings(Report(report.cells, cases, tuple(base.values()), report.axes))
    assert "1 spellings break" in said
    no_control(said)


def hostile_model() -> onnx.ModelProto:
    node = helper.make_node(
        "Relu", ["x"], [f"y{EVIL_NAME}\n```\n<img src=x onerror=alert(1)>"], name=EVIL_NAME
    )
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info(node.output[0], TensorProto.FLOAT, [1])],
    )
    return helper.make_model(graph)


def test_a_triage_report_is_inert(tmp_path: Path) -> None:
    cell = Cell("1.18.0", "1.24.4", InstallRequest())
    result = CheckResult("onnx1.18.0-ort1.24.4", "m", "ort_run", Outcome.FAIL, detail=EVIL)
    finding = Finding(
        "ort_run", "onnxruntime", "always", cell, None, result, states={"1.24.4": "bad"}
    )
    item = Triaged(
        finding,
        1,
        minimal_note=EVIL,
        known=[(f"[x]: {LINK} {EVIL}", LINK)],
        hidden=[("rewrite", "1.24.4", EVIL)],
        behind=EVIL,
    )
    text = finding_markdown(item, tmp_path / f"{EVIL_NAME}.onnx", 1)
    no_control(text)
    inert_markdown(text)
    assert f"`{LINK}`" in text


def test_a_fenced_model_text_cannot_be_closed_by_a_name() -> None:
    from compat.followup.triage.finding_report import model_text

    fenced = md_fence(model_text(hostile_model()))
    fence = fenced.split("\n", 1)[0]
    assert len(fence) > 3 and fenced.count(fence) == 2  # no line of it closes the fence
    no_control(fenced)


def test_the_readme_families_table_escapes_its_fields() -> None:
    block = render_block([FamilyRow(EVIL_NAME, EVIL, "`code | span`", "plain")])
    no_control(block)
    inert_markdown(block)
    assert "`code \\| span`" in block  # a code span with a pipe: GitHub's escape


@pytest.mark.parametrize(
    ("text", "same"),
    [
        ("value_ints · shape_inference", True),
        ("≥ 1.21.0", True),
        ("opset <13, >=1.2", True),
        ("[ONNXRuntimeError] : 1 : FAIL : shape [2, 3] vs [3]", True),
        ("Pad whose `pads` come from a Constant", True),
        ("C:\\path\\to", True),
        ("<float>", False),
        ("a|b", False),
        ("[x](javascript:alert(1))", False),
    ],
)
def test_ordinary_text_is_unchanged_and_markup_is_not(text: str, same: bool) -> None:
    assert (md_text(text) == text) is same


def test_the_helpers() -> None:
    assert (
        printable("\x1b[2J\x07ok\ttab\nline\r\x00\x9b") == "\\x1b[2J\\x07ok\ttab\nline\\r\\x00\\x9b"
    )
    assert printable(UNDECODABLE.decode("utf-8", "surrogateescape")) == "\\x80\\xfe\\xff"
    assert md_code("a``b") == "```a``b```" and md_code("`x") == "`` `x ``"
    assert md_code("a|b", in_table=True) == "`a\\|b`"
    assert md_code("a\\|<b>", in_table=True) == "a\\\\\\|&lt;b>"  # no code span to split
    assert safe_link("https://github.com/o/r/issues/1") == "https://github.com/o/r/issues/1"
    assert safe_link("HTTPS://x.org/a b)") == "HTTPS://x.org/a%20b%29"
    for bad in (LINK, " javascript:x", "data:text/html,x", "//x.org", "/etc", "http://\x1b"):
        assert safe_link(bad) == ""
    assert md_link("bug", "https://x.org/1") == "[bug](https://x.org/1)"
    assert md_link("bug", LINK) == f"bug (`{LINK}`)"


# The page in a real browser: nothing of the data runs, nothing of it is a link.


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    driver = start_chromium("--window-size=1400,900", logs=True)
    yield driver
    driver.quit()


def _no_alert(browser: Any) -> None:
    from selenium.common.exceptions import NoAlertPresentException

    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018


@pytest.mark.browser
def test_the_page_shows_hostile_names_as_text_and_runs_none(browser: Any, tmp_path: Path) -> None:
    from urllib.parse import quote

    page = tmp_path / "matrix.html"
    page.write_text(rendered()["matrix.html"])
    browser.get("about:blank")
    browser.get(page.as_uri() + "#family=" + quote(EVIL_NAME))
    _no_alert(browser)
    assert not browser.find_elements("css selector", "img, iframe, object, embed")
    assert browser.title == "onnx-compat matrix"
    tables = browser.find_element("id", "tables").text
    assert "v" + EVIL_NAME in tables and "<img src=x onerror=alert(1)>" in tables
    unexpected = browser.find_element("id", "unexpected").text
    assert "\\x1b]0;pwned-title\\x07" in unexpected  # the escape shown, not obeyed

    shown = []
    for td in browser.find_elements("css selector", "#tables td.o"):
        if not td.is_displayed():
            continue
        td.click()  # every result's detail panel: a known bug links only over http(s)
        _no_alert(browser)
        body = browser.find_element("id", "detail-body")
        for link in body.find_elements("tag name", "a"):
            assert re.match(r"(https?|file):", link.get_attribute("href")), link.text
        shown.append(body.text)
    assert [text for text in shown if f"known bug\n{LINK}" in text]  # said, as text
    assert [text for text in shown if "known bug\nhttps://example.org/bug/1" in text]
    links = browser.execute_script(
        "return [...document.querySelectorAll('a[href]')].map((a) => a.href)"
    )
    assert not [h for h in links if h.lower().startswith(("javascript:", "data:"))]
    assert browser.execute_script("return document.querySelectorAll('[onerror]').length") == 0
    assert not [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
