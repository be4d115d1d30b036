"""`onnx-compat scoreboard`: the matrix run of ONNX's backend node tests on the
onnxruntime axis, reported as a scoreboard."""

from __future__ import annotations

import argparse
from pathlib import Path

from compat.cli.options import add_axes, add_config, add_corpus, add_run, add_setup, request_of
from compat.workflow.request import Request


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_config(parser)
    add_axes(parser)
    add_setup(parser)
    add_corpus(parser, cases="onnx_backend.*")
    add_run(parser)
    parser.set_defaults(axis="onnxruntime", out=Path("reports/scoreboard"))


def request(args: argparse.Namespace) -> Request:
    return request_of(args)


def run(request: Request) -> int:
    """Exit 0 once the tables are written (failing tests are the product, not an error);
    1 when a cell could not be built."""
    # the pipeline is imported when the command runs: `scoreboard --help` stays quick
    from compat.execute.progress import Progress
    from compat.execute.run import run_matrix
    from compat.plan.config import load_config
    from compat.render.grid import text_table
    from compat.render.outputs import write_reports
    from compat.render.scoreboard import COLUMNS, scoreboard_rows
    from compat.workflow.corpus import load_corpus, run_options
    from compat.workflow.plan import describe_plan, resolve_plan
    from compat.workflow.project import prepare_project
    from compat.workflow.settings import settings_of

    config = load_config(request.config)
    whole, plan = resolve_plan(request, config)
    corpus = load_corpus(request, config)
    settings = settings_of(request, config)
    prepare_project(request, config)
    print(
        f"{describe_plan(plan, corpus.cases).splitlines()[0]} — {settings.jobs} at a time",
        flush=True,
    )
    meta: dict[str, object] = {
        "plan_cells": [c.id for c in whole.cells],
        "options": run_options(request),
    }
    report = run_matrix(plan, corpus, settings, Progress(len(plan.cells)), extra_meta=meta)
    paths = write_reports(
        report,
        request.run.out or Path("reports/scoreboard"),
        names=("scoreboard.md", "scoreboard.html", "scoreboard.svg", "matrix.html", "junit.xml"),
    )
    print(text_table(scoreboard_rows(report), ["onnxruntime", *COLUMNS, "total", "pass rate"]))
    print(f"\n{len(report.results)} results in {report.run.get('seconds', 0)} s")
    print("wrote: " + ", ".join(str(p) for p in paths))
    return 1 if report.broken_cells else 0
