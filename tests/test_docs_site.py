"""The documentation site (mkdocs.yml, docs/), checked like code.

- The reference is complete: every option of every command, every `[tool.compat]` key
  the loader accepts, every field of matrix.json and of the case spec has its entry,
  and every option its help and every command an example; adding one without it fails
  here.
- Every command a guide shows (`onnx-compat …`, `nox -s …`, `python -m compat …` in a
  `bash` or `console` block) parses with the real parsers, as the program itself would.
- The site builds with `mkdocs build --strict` (a warning or a broken link fails), and
  in Debian's headless Chromium its navigation leads to a guide and a family page, the
  summary picture renders and search finds "bisect".

The build needs the `docs` extra (mkdocs, mkdocs-material); without it those tests skip.
"""

from __future__ import annotations

import ast
import contextlib
import gzip
import io
import json
import os
import re
import shlex
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compat.cli import reference
from compat.cli.commands import COMMANDS
from compat.cli.main import parse
from compat.cli.reference_json import samples
from compat.cli.reference_meanings import CASE_SPEC, EXIT_CODES, MATRIX_JSON
from compat.cli.reference_pages import checks_page, outcomes_page, rewrites_page
from compat.core.errors import CompatError
from compat.render.text import md_code
from tests.conftest import ROOT
from tests.helpers import start_chromium

DOCS = ROOT / "docs"


# -- the reference is complete ---------------------------------------------------------


def _sections(page: str) -> dict[str, str]:
    """The page's `## ` and `### ` sections by their `{#anchor}`."""
    found = {}
    for part in re.split(r"\n(?=##+ )", page):
        anchor = re.search(r"\{#([\w-]+)\}", part.splitlines()[0])
        if anchor:
            found[anchor.group(1)] = part
    return found


@pytest.mark.parametrize("name", list(COMMANDS))
def test_the_commands_page_lists_every_option_of_the_command(name: str) -> None:
    """Read against the parser itself: each option is in the command's section or in a
    shared section that section links to."""
    sections = _sections(reference.commands_page())
    own = sections[name]
    shared = "".join(sections[a] for a in re.findall(r"\(#(shared-[\w-]+)\)", own))
    for action in reference.actions(reference.command_parser(name)):
        written = md_code(reference.invocation(action))
        assert written in own + shared, f"{name}: {written} is not in the reference"


def test_an_option_added_to_a_command_is_on_its_page() -> None:
    parser = reference.command_parser("merge")
    parser.add_argument("--brand-new", metavar="X", help="a new option")
    table = "\n".join(reference.option_table(reference.own_actions(parser)))
    assert "| `--brand-new X` | a new option |" in table


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_option_says_what_it_means(name: str) -> None:
    undocumented = [
        reference.invocation(a)
        for a in reference.actions(reference.command_parser(name))
        if not (a.help or "").strip()
    ]
    assert not undocumented, f"{name}: give these a help= text: {undocumented}"


def _checked(line: str) -> str:
    """'' when the command line parses with the real parsers, else why not."""
    argv = _program_argv(shlex.split(line, comments=True))
    if argv is None:
        return f"not an onnx-compat command: {line}"
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            if argv[:1] == ["annotations"]:
                from compat.cell.annotations_cli import build_parser

                build_parser().parse_args(argv[1:])
            elif argv and argv[0] in COMMANDS:
                parse(argv)
            elif argv and argv[0] not in _sessions():
                return f"no nox session {argv[0]!r}: {line}"
    except SystemExit as exit:
        return "" if exit.code == 0 else f"{line}\n  {stderr.getvalue().strip()}"
    except CompatError as error:
        return f"{line}\n  {error}"
    return ""


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_s_help_ends_with_an_example_that_parses(name: str) -> None:
    example = reference.example(reference.command_parser(name))
    assert example.startswith(f"onnx-compat {name}"), f"{name}: no `example: …` epilog"
    assert _checked(example) == ""


def test_every_field_of_matrix_json_and_of_the_case_spec_has_a_meaning() -> None:
    from compat.cell import protocol

    for place, record in samples().items():
        assert set(record) == set(MATRIX_JSON[place]), place
    for name, fields in CASE_SPEC.items():
        assert set(fields) == set(getattr(protocol, name).__annotations__), name
    for stored in sorted(DOCS.glob("*.json.gz")):  # the runs this repository keeps
        run = json.loads(gzip.decompress(stored.read_bytes()))["run"]
        assert set(run) <= set(MATRIX_JSON["run"]), (
            f"{stored.name}: {set(run) - set(MATRIX_JSON['run'])}"
        )


def test_every_table_the_reference_reads_is_on_its_page() -> None:
    from compat.cell.checks import CHECKS
    from compat.core.outcomes import CellState, Outcome
    from compat.corpus.rewrites import CATALOGUE

    assert all(f"`{c.name}`" in checks_page() for c in CHECKS)
    assert all(f"`{r.name}`" in rewrites_page() for r in CATALOGUE)
    page = outcomes_page()
    assert all(f"`{v.value}`" in page for v in (*Outcome, *CellState))
    codes = {CompatError.return_code, *(c.return_code for c in CompatError.__subclasses__())}
    assert codes <= set(EXIT_CODES) and all(f"| {c} |" in page for c in EXIT_CODES)


# -- every command a guide shows parses ------------------------------------------------


def _sessions() -> set[str]:
    """The sessions of this repository's noxfile (a project's, written by `init`, has
    matrix, repro, bisect, triage and report: all among them)."""
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and any("session" in ast.unparse(d) for d in node.decorator_list)
    }


def _program_argv(words: list[str]) -> list[str] | None:
    """`onnx-compat ARGS`, `python -m compat ARGS` and `nox -s NAME -- ARGS` as the
    program's own argv (a nox session that is not a command: its name alone)."""
    if words[:1] == ["onnx-compat"]:
        return words[1:]
    if words[:3] == ["python", "-m", "compat"]:
        return words[3:]
    if words[:2] == ["nox", "-s"] and len(words) > 2:
        rest = words[3:]
        return [words[2], *(rest[1:] if rest[:1] == ["--"] else rest)]
    return None


def shown_commands(text: str) -> list[str]:
    """The onnx-compat command lines of a page's `bash` and `console` blocks: in a
    console block the lines after `$ `, in a bash block every line; `a && b` is two."""
    found = []
    for language, body in re.findall(r"^ *```(bash|console)\n(.*?)^ *```", text, re.M | re.S):
        lines = body.replace("\\\n", " ").splitlines()
        if language == "console":
            lines = [line.strip()[2:] for line in lines if line.strip().startswith("$ ")]
        for line in lines:
            for part in re.split(r"&&|\|\||;", line):
                words = shlex.split(part, comments=True)
                if words and _program_argv(words) is not None:
                    found.append(shlex.join(words))
    return found


GUIDES = sorted(p for p in DOCS.rglob("*.md") if p.parent != DOCS / "families")


@pytest.mark.parametrize("page", GUIDES, ids=lambda p: str(p.relative_to(DOCS)))
def test_every_command_a_page_shows_parses(page: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    failing = [why for why in map(_checked, shown_commands(page.read_text())) if why]
    assert not failing, "\n".join(failing)


def test_the_guides_show_commands_and_a_wrong_one_is_caught() -> None:
    guides = [p for p in GUIDES if p.parent.name == "how-to" and p.name != "index.md"]
    assert all(shown_commands(p.read_text()) for p in guides), "a guide without a command"
    wrong = "```bash\nnox -s matrix -- --no-such-option\nonnx-compat bisect --case x\n```\n"
    assert len(shown_commands(wrong)) == 2
    assert all("error" in _checked(line) for line in shown_commands(wrong))


# -- the site builds, and reads in a browser -------------------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`mkdocs build --strict` of this repository into a temporary folder."""
    pytest.importorskip("mkdocs", reason="the docs extra: pip install -e .[docs]")
    pytest.importorskip("material", reason="the docs extra: pip install -e .[docs]")
    out = tmp_path_factory.mktemp("site")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert built.returncode == 0, built.stderr
    assert "WARNING" not in built.stderr, built.stderr
    return out


@pytest.mark.subprocess
def test_the_site_builds_strictly_with_every_page(site: Path) -> None:
    for page in (
        "index.html",
        "tutorial/index.html",
        "how-to/bisect/index.html",
        "reference/commands/index.html",
        "families/pad_pads_from_constant/index.html",
        "compatibility/index.html",
        "summary.svg",
    ):
        assert (site / page).is_file(), page
    commands = (site / "reference/commands/index.html").read_text()
    assert 'id="shared-axes"' in commands and "--cases-dir" in commands


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    """The built site over http (Material's search loads its index with fetch)."""
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "http.server",
            str(port),
            "--bind",
            "127.0.0.1",
            "--directory",
            str(site),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        for _ in range(100):
            with contextlib.suppress(OSError):
                urllib.request.urlopen(url, timeout=1).close()
                break
            time.sleep(0.1)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)


def _click(browser: Any, text: str) -> None:
    """Clicks the link a reader sees with this text."""
    links = [a for a in browser.find_elements("link text", text) if a.is_displayed()]
    assert links, f"no visible link {text!r} on {browser.current_url}"
    links[0].click()


def _heading(browser: Any) -> str:
    return str(browser.find_element("css selector", "article h1").text).replace("¶", "").strip()


def _shot(browser: Any, tmp_path: Path, name: str) -> None:
    shot = Path(os.environ.get("COMPAT_ARTIFACTS", tmp_path)) / name
    shot.parent.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(shot))


@pytest.mark.browser
def test_a_reader_finds_a_guide_a_family_page_a_picture_and_bisect(
    served: str, tmp_path: Path
) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    browser = start_chromium("--window-size=1400,900")
    try:
        browser.get(served)
        picture = browser.find_element("css selector", "article img[src$='summary.svg']")
        assert browser.execute_script("return arguments[0].naturalWidth", picture) > 0
        _shot(browser, tmp_path, "docs-index.png")
        _click(browser, "How-to guides")
        _click(browser, "Reproduce a CI failure")
        assert _heading(browser) == "Reproduce a CI failure"
        _shot(browser, tmp_path, "docs-guide.png")
        _click(browser, "Results")
        assert _heading(browser) == "Compatibility"
        _click(browser, "pad_pads_from_constant")
        assert browser.current_url.endswith("/families/pad_pads_from_constant/")
        assert "pad_pads_from_constant" in _heading(browser)
        _shot(browser, tmp_path, "docs-family.png")
        browser.find_element("css selector", "input.md-search__input").click()
        browser.find_element("css selector", "input.md-search__input").send_keys("bisect")
        # The results list is redrawn as the search index answers: read the
        # links in one script, so no element can go stale between find and read.
        found = WebDriverWait(browser, 20).until(
            lambda b: b.execute_script(
                "return Array.from(document.querySelectorAll("
                "'.md-search-result__link'), a => a.href)"
                ".filter(h => h.includes('/how-to/bisect/'))"
            )
        )
        assert any("/how-to/bisect/" in href for href in found), found
        _shot(browser, tmp_path, "docs-search.png")
    finally:
        browser.quit()
