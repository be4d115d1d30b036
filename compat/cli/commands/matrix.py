"""`onnx-compat matrix`: the corpus in one environment per release, its reports written
and summed up on the terminal; `--list` prints the plan and runs nothing."""

from __future__ import annotations

import argparse
import shutil
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compat.cli.options import (
    add_axes,
    add_baseline,
    add_config,
    add_corpus,
    add_run,
    add_setup,
    request_of,
)
from compat.core.errors import CompatError, UsageError
from compat.workflow.request import Request

if TYPE_CHECKING:
    from compat.core.report import Report
    from compat.corpus.discover import Corpus
    from compat.plan.config import Config


@dataclass(frozen=True)
class MatrixRequest:
    """The shared options, and what `matrix` adds: a dry run, the JUnit scope, the grid,
    the baseline to compare with and what the exit code judges."""

    common: Request
    list: bool = False
    junit_scope: str = "all"
    grid: str | None = None  # `changed` or `all`: the rows printed as marks
    baseline: str | None = None  # `--baseline`: a reports folder, a file or git:REV
    fail_on: str = "unexpected"  # or `new`: only what the baseline had not
    new_releases: str | None = None  # `releases` or `weekly`: only what the baseline lacks
    issue_body: Path | None = None  # changes.md's text, when something changed (`-`: printed)


PARSER: dict[str, Any] = {
    "description": "Runs the cases (the built-in corpus, your models in cases-dirs, your "
    "commands in run) in one isolated environment per release of the [tool.compat] axes, "
    "writes the reports (compatibility.md, matrix.html, junit.xml, matrix.json) to --out "
    "and sums them up on the terminal, what changed since --baseline first. Exits 1 when "
    "a result is unexpected (with --fail-on new: unexpected, and not in the baseline).",
    "epilog": "example: onnx-compat matrix --onnx 1.18.0 --ort 1.22.1 --cross  # CI's pins",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    for add in (add_config, add_axes, add_setup, add_corpus, add_run, add_baseline):
        add(parser)
    parser.add_argument("--list", action="store_true", help="print the plan and exit")
    parser.add_argument(
        "--junit-scope",
        choices=("all", "unexpected"),
        default="all",
        help="junit.xml holds every result, or only the unexpected ones (CI size limits)",
    )
    parser.add_argument(
        "--grid",
        nargs="?",
        const="changed",
        choices=("changed", "all"),
        help="also print every table's rows as marks: rows that are not all pass, or all",
    )
    parser.add_argument(
        "--new-releases",
        nargs="?",
        const="releases",
        choices=("releases", "weekly"),
        help="with --baseline: run only the cells of releases the baseline lacks, of the "
        "axes that follow the package index (weekly: and onnx's newest onnx-weekly build); "
        "nothing new is one line and exit 0",
    )
    parser.add_argument(
        "--issue-body",
        type=Path,
        metavar="FILE",
        help="with --baseline: write changes.md's text to FILE when something changed, "
        "else remove FILE (`-`: print it); the weekly watch posts it as its issue",
    )


def request(args: argparse.Namespace) -> MatrixRequest:
    from compat.workflow.baseline import fail_on
    from compat.workflow.new_releases import check_new_releases

    fail_on(args.fail_on, args.baseline)
    check_new_releases("--new-releases", args.new_releases, args.baseline)
    check_new_releases("--issue-body", args.issue_body, args.baseline)
    return MatrixRequest(
        request_of(args),
        args.list,
        args.junit_scope,
        args.grid,
        args.baseline,
        args.fail_on,
        args.new_releases,
        args.issue_body,
    )


def run(request: MatrixRequest) -> int:
    # the pipeline is imported when the command runs: `matrix --help` stays quick
    from compat.plan.config import load_config
    from compat.workflow.listing import list_corpus
    from compat.workflow.plan import describe_plan, follow_axes, resolve_plan

    common = request.common
    config, followed = follow_axes(common, load_config(common.config))
    whole, plan = resolve_plan(common, config)
    from compat.workflow import new_releases as new
    from compat.workflow.baseline import commit_of, load_baseline, with_baseline

    # a baseline that names no stored run: one line before anything runs
    baseline = load_baseline(request.baseline, common.config) if request.baseline else None
    if request.new_releases and baseline is not None:
        which = request.new_releases
        whole, plan = new.new_release_plan(common, config, whole, which, baseline[0], followed)
        if not plan.cells:
            print(new.nothing_new(baseline[1], followed, which == "weekly"))
            new.write_issue_body(None, request.issue_body)
            return 0
    if request.list:  # the listing is remembered: the case modules import onnx
        print(describe_plan(plan, list_corpus(common, config)))
        return 0
    from compat.workflow.corpus import load_corpus, run_options  # the case modules: onnx

    corpus = load_corpus(common, config)
    # what only a run needs, imported when one starts: `--list` stays quick
    from compat.execute.progress import Progress
    from compat.execute.run import run_matrix
    from compat.render.outputs import write_reports
    from compat.workflow.finish import finish
    from compat.workflow.project import prepare_project
    from compat.workflow.settings import settings_of

    out = common.run.out or Path("reports")
    shard = common.plan.shard
    settings = settings_of(common, config)
    prepare_project(common, config)  # a project that cannot be built: one line, no cell run
    shutil.rmtree(out / "logs", ignore_errors=True)  # an earlier run's logs mislead
    said = f", shard {shard}" if shard else ""
    print(f"{describe_plan(plan, corpus.cases).splitlines()[0]}{said} — {settings.jobs} at a time")
    meta: dict[str, object] = {
        "plan_cells": [c.id for c in whole.cells],
        "plan_axes": {n: [c.id for c in cells] for n, cells in whole.axes.items()},
        "options": run_options(common),
        "junit_scope": request.junit_scope,
        **({"axes_followed": followed} if followed else {}),
        **whole.meta(),
        **dropin_scan(common, config, corpus),
    }
    if shard:
        meta["shard"] = shard
    made_of = commit_of(common.root)  # what a later run's "since …" names
    if made_of:
        meta["commit"] = made_of
    report = run_matrix(
        plan,
        corpus,
        settings,
        Progress(len(plan.cells)),
        _as_produced(out),
        meta,
    )
    if request.new_releases and baseline is not None:
        report = new.with_new_releases(report, baseline)  # what it did not plan is not gone
    else:
        report = with_baseline(report, baseline)
    try:
        written = write_reports(report, out)
    except UsageError as exc:  # computed and remembered: only the writing is left
        raise UsageError(
            f"{exc} (this run's results are remembered: the command run again writes "
            "them without running anything again)"
        ) from None
    code = finish(report, written, request.grid, common.config, request.fail_on)
    new.write_issue_body(report, request.issue_body)
    return _stopped(report, len(plan.cells), out) or code


def _as_produced(out: Path) -> Callable[[Report], None]:
    """Writes matrix.json as results come (the renderings at the end); a folder that
    takes no file is said once, and the run goes on: its results are remembered."""
    from compat.core.files import warn
    from compat.render.outputs import write_reports

    failed: list[str] = []

    def write(report: Report) -> None:
        if not failed:
            try:
                write_reports(report, out, names=())
            except UsageError as exc:
                failed.append(str(exc))
                warn(f"results as produced: {exc}")

    return write


def dropin_scan(
    common: Request, config: Config, corpus: Corpus, budget: float | None = None
) -> dict[str, object]:
    """`{"scan": {case: [finding]}}`: each drop-in model (and each respelling of one)
    scanned once, here, for every release (compat/corpus/scan.py), so the terminal can
    say which of its failures the scan predicted; {} when the run has no drop-in. A
    model the scan cannot handle (it gives up, or fails) is said in one line and left
    out: the matrix runs it all the same, its failures just not set against a scan.
    `budget`: the seconds each scan may take (None: the scan's own, `BUDGET`)."""
    from compat.corpus.dropin import slug, warn

    folders = {slug(d.resolve().name) for d in (*config.cases_dirs, *common.corpus.cases_dirs)}
    models = [c for c in corpus.cases if c.family in folders]
    if not models:
        return {}
    from compat.corpus.scan import BUDGET, scan_model

    scanned: dict[str, list[dict[str, object]]] = {}
    detecting = common.corpus.corpus
    seconds = budget or BUDGET
    for case in models:
        try:
            runs = [case.inputs, *case.extra_runs]  # the run's own inputs bind its dims
            found = scan_model(
                case.model, None, None, corpus=detecting, budget=seconds, inputs=runs
            ).findings
        except Exception as exc:  # a scan never stops the run: a bug of it neither
            why = str(exc) if isinstance(exc, CompatError) else f"{type(exc).__name__}: {exc}"
            warn(f"scan of {case.id} skipped, the matrix runs it unpredicted: {why}")
            continue
        scanned[case.id] = [
            {
                "detector": f.detector,
                "package": f.package,
                "known": f.known,
                "checks": list(f.checks),
                "requires": list(f.requires),
            }
            for f in found
        ]
    return {"scan": scanned}


def _stopped(report: Report, cells: int, out: Path) -> int:
    """Ctrl-C or a CI cancel: what was done is written; the exit code says the signal."""
    stopped = report.run.get("interrupted")
    if not isinstance(stopped, dict):
        return 0
    name = signal.Signals(int(stopped["signal"])).name
    print(
        f"onnx-compat: stopped by {name}: {stopped['cells_done']} of {cells} "
        f"cells done, their reports in {out}/; a rerun computes the rest",
        file=sys.stderr,
    )
    return 128 + int(stopped["signal"])
