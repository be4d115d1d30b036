"""Every report format, dispatched from one table: file name -> renderer."""

from __future__ import annotations

import difflib
import hashlib
import os
import pickle
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from compat import resources
from compat.core.errors import UsageError
from compat.core.files import replace_all, replace_text
from compat.core.report import Report, dumps
from compat.core.suite import FAMILY as SUITE
from compat.render.changes_page import render_changes_page
from compat.render.docs import render_docs
from compat.render.docs_pages import FOLDER, family_pages
from compat.render.heatmap import heatmap_svg
from compat.render.html import render_html
from compat.render.junit import render_junit
from compat.render.load_limits import LOAD_LIMITS, render_load_limits
from compat.render.markdown import render_markdown
from compat.render.passrate import passrate_svg
from compat.render.pythons import render_pythons
from compat.render.scoreboard import render_scoreboard, render_scoreboard_html
from compat.render.writer_reader import render_writer_reader


@dataclass(frozen=True)
class Style:
    """How the docs look: `ascii` marks; `collapse`: neighbouring releases with identical
    outcomes share a column on the family pages (the default)."""

    ascii: bool = False
    collapse: bool = True
    scoreboard: bool = False  # the docs index shows the committed scoreboard.svg


#: What a renderer gives: one file's text; for a folder, each file's text by its name in
#: the folder; or None, "nothing to say for this run" (no file is written).
Rendered = str | dict[str, str] | None

RENDERERS: dict[str, Callable[[Report, Style], Rendered]] = {
    "matrix.md": lambda report, style: render_markdown(report),
    "compatibility.md": lambda report, style: render_docs(
        report, style.ascii, style.collapse, style.scoreboard
    ),
    FOLDER: lambda report, style: family_pages(report, style.ascii, style.collapse),
    "summary.svg": lambda report, style: heatmap_svg(report) if report.cases else None,
    "matrix.html": lambda report, style: render_html(report),
    "junit.xml": lambda report, style: render_junit(report),
    "scoreboard.md": lambda report, style: render_scoreboard(report),
    "scoreboard.html": lambda report, style: render_scoreboard_html(report),
    "scoreboard.svg": lambda report, style: passrate_svg(report) if _suite(report) else None,
    "writer_reader.md": lambda report, style: render_writer_reader(report),
    "pythons.md": lambda report, style: render_pythons(report),
    LOAD_LIMITS: lambda report, style: render_load_limits(report),
    "changes.md": lambda report, style: render_changes_page(report),
}
#: The docs: the index, the family pages it links and the picture it shows.
DOCS = ("compatibility.md", FOLDER, "summary.svg", "changes.md")
#: What a run's report folder gets: every rendering but the data file `compat.scan`
#: reads, which only the docs' `load-limits` key asks for.
REPORTS = tuple(name for name in RENDERERS if name != LOAD_LIMITS)


def _suite(report: Report) -> bool:
    return any(case.family == SUITE for case in report.cases)


def files(name: str, rendered: Rendered) -> dict[str, str]:
    """A rendering as files, by path relative to the output folder."""
    if rendered is None:
        return {}
    if isinstance(rendered, str):
        return {name: rendered}
    return {f"{name}/{inner}": text for inner, text in sorted(rendered.items())}


def write_reports(
    report: Report, out: Path, style: Style = Style(), names: tuple[str, ...] = REPORTS
) -> list[Path]:
    """Writes matrix.json and the named renderings; returns the paths written. Nothing is
    rendered again when the same inputs (the run's digest) went through the same renderers
    into this folder last time and every file is still there."""
    out.mkdir(parents=True, exist_ok=True)
    stamp = out / RENDERED
    key = _render_key(report, style, names)
    previous = stamp.read_text() if stamp.exists() else ""
    if key and previous.startswith(key + "\n"):
        paths = [out / line for line in previous.splitlines()[1:]]
        if all(p.exists() for p in paths):
            return paths
    paths = render_files(report, out, style, names, dumps(report))
    written = [str(p.relative_to(out)) for p in paths]  # families/FAMILY.md keeps its folder
    replace_text(stamp, "\n".join([key, *written]) + "\n" if key else "")
    return paths


#: Beside the reports: which inputs and renderers made them, and the files written.
RENDERED = ".compat-rendered"


def _render_key(report: Report, style: Style, names: tuple[str, ...]) -> str:
    digest = report.run.get("digest")
    if not digest:
        return ""
    code = hashlib.sha256(str(digest).encode() + repr((style, names)).encode())
    folder = Path(__file__).parent
    for path in sorted([*folder.glob("*.py"), *resources.PAGE.glob("*")]):
        code.update(path.read_bytes())
    return code.hexdigest()


#: Rendered in a forked second process while this one renders the rest, for a report
#: of at least APART_FROM results: both cores busy at the end of a run too. They build no
#: tables (the others share them: compat/render/grid.py builds them once).
APART = ("junit.xml", "matrix.html", "scoreboard.html")
APART_FROM = 5_000


def render_all(report: Report, style: Style, names: tuple[str, ...]) -> dict[str, Rendered]:
    """Every named rendering; on Linux and a large report, APART in a forked process
    (it shares the report without copying it), the others here meanwhile."""
    apart = [n for n in names if n in APART]
    if not apart or len(report.results) < APART_FROM or sys.platform != "linux":
        return {name: RENDERERS[name](report, style) for name in names}
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the forked renderer
        code = 0
        try:
            with os.fdopen(writer, "wb") as pipe:
                pickle.dump({n: RENDERERS[n](report, style) for n in apart}, pipe)
        except BaseException:
            code = 1
        os._exit(code)
    os.close(writer)
    here = {name: RENDERERS[name](report, style) for name in names if name not in apart}
    with os.fdopen(reader, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(child, 0)
    done: dict[str, Rendered] = pickle.loads(data) if status == 0 and data else {}
    for name in apart:  # the fork failed: render them here
        if name not in done:
            done[name] = RENDERERS[name](report, style)
    return {name: here[name] if name in here else done[name] for name in names}


def render_files(
    report: Report, out: Path, style: Style, names: tuple[str, ...], data: str | None = None
) -> list[Path]:
    """Writes the named renderings of stored results (and `data` as matrix.json) as one
    set, each file inside `out`: every rendering is made before any is written, and the
    set replaces the earlier one whole or not at all (compat/core/files.py replace_all);
    a folder's pages nothing renders any more go after. Returns the paths written."""
    renderings = render_all(report, style, names)
    texts = {"matrix.json": data} if data is not None else {}
    for name in names:
        texts.update(files(name, renderings[name]))
    try:
        out.mkdir(parents=True, exist_ok=True)
        paths = replace_all(out, texts)
    except (OSError, ValueError) as exc:
        where = getattr(exc, "filename", None) or out
        why = getattr(exc, "strerror", None) or str(exc)
        raise UsageError(
            f"{where}: the reports cannot be written there ({why}); {out} keeps the earlier "
            "set as it was, none of its files replaced: make it writable, or pass another "
            "--out"
        ) from None
    for name in names:
        if isinstance(renderings[name], dict) and not (out / name).is_symlink():
            for stale in set((out / name).glob("*")) - set(paths):
                if stale.is_file() and not stale.is_symlink():
                    stale.unlink()
    return paths


def drift(report: Report, out: Path, style: Style, names: tuple[str, ...]) -> list[str]:
    """Unified diffs between the committed files and what the results render: every file
    of a folder of pages, a page nothing renders any more included."""
    diffs = []
    for name in names:
        rendered = RENDERERS[name](report, style)
        expected = files(name, rendered) or {name: ""}
        if isinstance(rendered, dict) and (out / name).is_dir():
            for path in sorted((out / name).glob("*")):
                expected.setdefault(str(path.relative_to(out)), "")
        for relative, text in expected.items():
            diffs += _diff(out / relative, text)
    return diffs


def _diff(path: Path, rendered: str) -> list[str]:
    committed = path.read_text() if path.is_file() else ""
    if committed == rendered:
        return []
    return [
        "".join(
            difflib.unified_diff(
                committed.splitlines(keepends=True),
                rendered.splitlines(keepends=True),
                f"{path} (committed)",
                f"{path} (rendered from the stored results)",
            )
        )
    ]
