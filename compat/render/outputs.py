"""Every report format, dispatched from one table: file name -> renderer."""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from compat.render.docs import render_docs
from compat.render.html import render_html
from compat.render.junit import render_junit
from compat.render.markdown import render_markdown
from compat.render.scoreboard import render_scoreboard
from compat.report import Report, write_json


@dataclass(frozen=True)
class Style:
    """How the docs tables look: `--ascii` marks, `--collapse` release ranges."""

    ascii: bool = False
    collapse: bool = False


#: None from a renderer means "nothing to say for this run" (no file is written).
RENDERERS: dict[str, Callable[[Report, Style], str | None]] = {
    "matrix.md": lambda report, style: render_markdown(report),
    "compatibility.md": lambda report, style: render_docs(report, style.ascii, style.collapse),
    "matrix.html": lambda report, style: render_html(report),
    "junit.xml": lambda report, style: render_junit(report),
    "scoreboard.md": lambda report, style: render_scoreboard(report),
}


def write_reports(
    report: Report, out: Path, style: Style = Style(), names: tuple[str, ...] = tuple(RENDERERS)
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
    write_json(report, out / "matrix.json")
    paths = [out / "matrix.json", *render_files(report, out, style, names)]
    stamp.write_text("\n".join([key, *(p.name for p in paths)]) + "\n" if key else "")
    return paths


#: Beside the reports: which inputs and renderers made them, and the files written.
RENDERED = ".compat-rendered"


def _render_key(report: Report, style: Style, names: tuple[str, ...]) -> str:
    digest = report.run.get("digest")
    if not digest:
        return ""
    code = hashlib.sha256(str(digest).encode() + repr((style, names)).encode())
    folder = Path(__file__).parent
    for path in sorted([*folder.glob("*.py"), *folder.glob("page/*")]):
        code.update(path.read_bytes())
    return code.hexdigest()


def render_files(report: Report, out: Path, style: Style, names: tuple[str, ...]) -> list[Path]:
    """Writes the named renderings of stored results; returns the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in names:
        text = RENDERERS[name](report, style)
        if text is not None:
            (out / name).write_text(text)
            paths.append(out / name)
    return paths


def drift(report: Report, out: Path, style: Style, names: tuple[str, ...]) -> list[str]:
    """Unified diffs between the committed files and what the results render."""
    diffs = []
    for name in names:
        path = out / name
        committed = path.read_text() if path.exists() else ""
        rendered = RENDERERS[name](report, style) or ""
        if committed != rendered:
            diffs.append("".join(difflib.unified_diff(
                committed.splitlines(keepends=True), rendered.splitlines(keepends=True),
                f"{path} (committed)", f"{path} (rendered from the stored results)",
            )))  # fmt: skip
    return diffs
