"""`onnx-compat report`: renders without running, from stored results: an explicit
`--results` set, or the configured docs (and reports/ when it holds results) and
README.md's families table, from the case modules' docstrings. With `--check`, compares
instead of writing."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compat.cli.options import BASELINE, add_config
from compat.core.errors import UsageError
from compat.core.report import Report, read_json

if TYPE_CHECKING:
    from compat.plan.config import Config
    from compat.render.outputs import Style

#: one rendering: (stored results, folder written, style, the files rendered)
Job = tuple[Path, Path, "Style", tuple[str, ...]]


@dataclass(frozen=True)
class ReportRequest:
    """What to render, where, and whether to compare instead."""

    config: Path = Path("pyproject.toml")
    results: Path | None = None
    out: Path | None = None
    check: bool = False
    ascii: bool = False
    baseline: str | None = None  # every rendering shows what changed since it, first


PARSER: dict[str, Any] = {
    "description": "Renders the reports again from stored results, running nothing: "
    "reports/ from reports/matrix.json, any stored run with --results FILE --out DIR, "
    "and, where [tool.compat.docs] names them, the committed docs pages. --check compares "
    "instead of writing and exits 1 on a difference. --baseline sets every rendering "
    "against an earlier run: what changed comes first.",
    "epilog": "example: onnx-compat report --results reports/matrix.json --out rendered --ascii",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--results", type=Path, metavar="FILE", help="a stored matrix.json")
    parser.add_argument("--out", type=Path, help="where to write (default: beside the results)")
    parser.add_argument("--check", action="store_true", help="exit 1 if the docs have drifted")
    parser.add_argument("--ascii", action="store_true", help="plain-text marks in the docs tables")
    parser.add_argument(
        "--collapse",
        action="store_true",
        help="merge equal neighbouring releases (always on in the docs pages; kept for scripts)",
    )
    parser.add_argument("--baseline", metavar="DIR|FILE|git:REV", help=BASELINE)
    add_config(parser)


def request(args: argparse.Namespace) -> ReportRequest:
    return ReportRequest(args.config, args.results, args.out, args.check, args.ascii, args.baseline)


def _stored(path: Path) -> Report:
    try:
        return read_json(path)
    except FileNotFoundError:
        raise UsageError(f"{path}: no stored results; run `nox -s matrix` first") from None
    except (ValueError, KeyError) as exc:
        raise UsageError(f"{path}: not a matrix report ({exc})") from None


def jobs_of(request: ReportRequest, config: Config) -> list[Job]:
    """The renderings asked for: the --results set; else the configured docs (and
    reports/ when it holds results); else a project's own reports/ re-rendered."""
    from compat.render.load_limits import LOAD_LIMITS
    from compat.render.outputs import DOCS, REPORTS, Style  # the docs: index, family pages

    asked = Style(request.ascii)  # family pages merge identical neighbouring releases always
    reports = request.config.resolve().parent / "reports" / "matrix.json"
    if request.results:
        return [(request.results, request.out or request.results.parent, asked, REPORTS)]
    if config.docs is None:  # a project's own reports: reports/matrix.json re-rendered
        if not reports.is_file():
            raise UsageError(
                f"{reports}: no stored results to render; run `nox -s matrix` first "
                "(or pass --results FILE)"
            )
        return [(reports, request.out or reports.parent, asked, REPORTS)]
    docs = config.docs
    docs.stored()  # each results file it names exists: else one line naming the key
    style = Style(request.ascii or docs.ascii, scoreboard=docs.scoreboard is not None)
    jobs: list[Job] = [(docs.results, docs.results.parent, style, DOCS)]
    if docs.scoreboard is not None:  # the backend scoreboard's picture, from its results
        jobs.append((docs.scoreboard, docs.results.parent, style, ("scoreboard.svg",)))
    if docs.writer_reader is not None:  # the writer × reader table, from a --cross run
        jobs.append((docs.writer_reader, docs.results.parent, style, ("writer_reader.md",)))
    if docs.pythons is not None:  # which release runs on which Python, from a --python run
        jobs.append((docs.pythons, docs.results.parent, style, ("pythons.md",)))
    if docs.load_limits is not None:  # what each release loads, for compat.scan
        jobs.append((docs.results, docs.load_limits.parent, style, (LOAD_LIMITS,)))
    if reports.exists() and not request.check:
        jobs.append((reports, reports.parent, asked, REPORTS))
    return jobs


def _families(request: ReportRequest) -> tuple[bool, int]:
    """README.md's families table from the case modules' docstrings: (whether the
    project has one, how many files drifted)."""
    from compat.corpus.families import family_rows
    from compat.render.families import families_drift, write_families

    root = request.config.resolve().parent
    readme = root / "README.md"
    cases_dir = root / "cases"
    families = not request.results and readme.exists() and cases_dir.is_dir()
    if families and request.check:
        stale = families_drift(readme, family_rows(cases_dir), str(cases_dir))
        if stale:
            print(stale)
            return True, 1
    elif families:
        unchanged = "" if write_families(readme, family_rows(cases_dir)) else ", unchanged"
        print(f"rendered {cases_dir}/*.py docstrings -> {readme} (families table{unchanged})")
    return families, 0


def run(request: ReportRequest) -> int:
    from compat.plan.config import load_config
    from compat.render.outputs import drift, render_files
    from compat.workflow.baseline import load_baseline, with_baseline

    config = load_config(request.config)
    given = request.baseline
    baseline = load_baseline(given, request.config) if given else None
    drifted = 0
    for results, out, style, names in jobs_of(request, config):
        report = with_baseline(_stored(results), baseline)
        if request.check:
            for diff in drift(report, out, style, names):
                print(diff)
                drifted += 1
            continue
        out.mkdir(parents=True, exist_ok=True)
        written = render_files(report, out, style, names)
        print(f"rendered {results} -> " + ", ".join(str(p) for p in written))
    families, stale = _families(request)
    drifted += stale
    if request.check and drifted:
        print(f"{drifted} file(s) drifted; run `nox -s report` and commit them")
    elif request.check:
        families_too = "; README's families table with the case docstrings" if families else ""
        print(f"docs are in sync with their stored results{families_too}")
    return 1 if drifted else 0
