"""The host commands behind `python -m compat`: each turns parsed options into a run,
a render or a plan, and returns the exit code."""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import sys
from pathlib import Path

from compat.core.errors import UsageError
from compat.core.report import Report, read_json
from compat.corpus.families import family_rows
from compat.execute.progress import Progress
from compat.execute.run import run_matrix
from compat.plan.config import load_config
from compat.plan.matrix import select_shard
from compat.render.families import families_drift, write_families
from compat.render.grid import text_table
from compat.render.outputs import RENDERERS, Style, drift, render_files, write_reports
from compat.render.scoreboard import COLUMNS, scoreboard_rows
from compat.state.merge import merge, merge_logs
from compat.workflow.steps import (
    describe_plan,
    finish,
    follow_axes,
    load_corpus,
    prepare_project,
    resolve_plan,
    run_options,
    settings_of,
)


def cmd_matrix(args: argparse.Namespace) -> int:
    config, followed = follow_axes(args, load_config(args.config))
    whole, plan = resolve_plan(args, config)
    corpus = load_corpus(args, config)
    if args.list:
        print(describe_plan(plan, corpus))
        return 0
    settings = settings_of(args, config)
    prepare_project(args, config)  # a project that cannot be built: one line, no cell run
    shutil.rmtree(args.out / "logs", ignore_errors=True)  # an earlier run's logs mislead
    shard = f", shard {args.shard}" if args.shard else ""
    print(f"{describe_plan(plan, corpus).splitlines()[0]}{shard} — {settings.jobs} at a time")
    meta: dict[str, object] = {
        "plan_cells": [c.id for c in whole.cells],
        "plan_axes": {n: [c.id for c in cells] for n, cells in whole.axes.items()},
        "options": run_options(args),
        "junit_scope": args.junit_scope,
        **({"axes_followed": followed} if followed else {}),
    }
    if args.shard:
        meta["shard"] = args.shard
    report = run_matrix(
        plan,
        corpus,
        settings,
        Progress(len(plan.cells)),
        lambda r: write_reports(r, args.out, names=()),  # results as produced; renders at the end
        meta,
    )
    code = finish(report, write_reports(report, args.out), args.grid, args.config)
    stopped = report.run.get("interrupted")
    if isinstance(stopped, dict):  # Ctrl-C or a CI cancel: what was done is written
        name = signal.Signals(int(stopped["signal"])).name
        print(f"onnx-compat: stopped by {name}: {stopped['cells_done']} of {len(plan.cells)} "
              f"cells done, their reports in {args.out}/; a rerun computes the rest",
              file=sys.stderr)  # fmt: skip
        return 128 + int(stopped["signal"])
    return code


def cmd_scoreboard(args: argparse.Namespace) -> int:
    """The matrix run of the backend suite on the onnxruntime axis, reported as a
    scoreboard. Exit 0 once the tables are written (failing tests are the product,
    not an error); 1 when a cell could not be built."""
    config = load_config(args.config)
    whole, plan = resolve_plan(args, config)
    corpus = load_corpus(args, config)
    settings = settings_of(args, config)
    prepare_project(args, config)
    print(f"{describe_plan(plan, corpus).splitlines()[0]} — {settings.jobs} at a time", flush=True)
    meta: dict[str, object] = {
        "plan_cells": [c.id for c in whole.cells],
        "options": run_options(args),
    }
    report = run_matrix(plan, corpus, settings, Progress(len(plan.cells)), extra_meta=meta)
    paths = write_reports(
        report,
        args.out,
        names=("scoreboard.md", "scoreboard.html", "scoreboard.svg", "matrix.html", "junit.xml"),
    )
    print(text_table(scoreboard_rows(report), ["onnxruntime", *COLUMNS, "total", "pass rate"]))
    print(f"\n{len(report.results)} results in {report.run.get('seconds', 0)} s")
    print("wrote: " + ", ".join(str(p) for p in paths))
    return 1 if report.broken_cells else 0


def cmd_plan(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    _, plan = resolve_plan(args, config)
    if args.shards is not None and args.shards < 1:
        raise UsageError(f"--shards {args.shards}: give at least 1")
    if args.shards:
        include: list[dict[str, str]] = []
        for k in range(1, args.shards + 1):
            cells = select_shard(plan, k, args.shards).cells
            include.append({"shard": f"{k}/{args.shards}", "cells": ",".join(c.id for c in cells)})
    else:
        include = [{"cell": c.id, "onnx": c.onnx, "onnxruntime": c.onnxruntime} for c in plan.cells]
    if args.json:
        print(json.dumps({"include": include}))
    else:
        print("\n".join(" ".join(item.values()) for item in include))
    return 0


def _stored(path: Path) -> Report:
    try:
        return read_json(path)
    except FileNotFoundError:
        raise UsageError(f"{path}: no stored results; run `nox -s matrix` first") from None
    except (ValueError, KeyError) as exc:
        raise UsageError(f"{path}: not a matrix report ({exc})") from None


def cmd_report(args: argparse.Namespace) -> int:
    """Renders without running: an explicit --results set, or the configured docs (and
    reports/ when it holds results) and README.md's families table, from the case
    modules' docstrings. With --check, compares instead of writing."""
    from compat.render.outputs import DOCS  # the docs: index, family pages, picture

    config = load_config(args.config)
    asked = Style(args.ascii)  # family pages merge identical neighbouring releases always
    jobs: list[tuple[Path, Path, Style, tuple[str, ...]]] = []
    if args.results:
        jobs.append((args.results, args.out or args.results.parent, asked, tuple(RENDERERS)))
    elif config.docs is None:  # a project's own reports: reports/matrix.json re-rendered
        results = args.config.resolve().parent / "reports" / "matrix.json"
        if not results.is_file():
            raise UsageError(
                f"{results}: no stored results to render; run `nox -s matrix` first "
                "(or pass --results FILE)"
            )
        jobs.append((results, args.out or results.parent, asked, tuple(RENDERERS)))
    else:
        docs = config.docs
        docs.stored()  # each results file it names exists: else one line naming the key
        style = Style(args.ascii or docs.ascii, scoreboard=docs.scoreboard is not None)
        jobs.append((docs.results, docs.results.parent, style, DOCS))
        if docs.scoreboard is not None:  # the backend scoreboard's picture, from its results
            jobs.append((docs.scoreboard, docs.results.parent, style, ("scoreboard.svg",)))
        if docs.writer_reader is not None:  # the writer × reader table, from a --cross run
            jobs.append((docs.writer_reader, docs.results.parent, style, ("writer_reader.md",)))
        reports = args.config.resolve().parent / "reports" / "matrix.json"
        if reports.exists() and not args.check:
            jobs.append((reports, reports.parent, asked, tuple(RENDERERS)))
    drifted = 0
    for results, out, style, names in jobs:
        report = _stored(results)
        if args.check:
            for diff in drift(report, out, style, names):
                print(diff)
                drifted += 1
            continue
        out.mkdir(parents=True, exist_ok=True)
        written = render_files(report, out, style, names)
        print(f"rendered {results} -> " + ", ".join(str(p) for p in written))
    root = args.config.resolve().parent
    readme, cases_dir = root / "README.md", root / "cases"
    families = not args.results and readme.exists() and cases_dir.is_dir()
    if families and args.check:
        stale = families_drift(readme, family_rows(cases_dir), str(cases_dir))
        if stale:
            print(stale)
            drifted += 1
    elif families:
        unchanged = "" if write_families(readme, family_rows(cases_dir)) else ", unchanged"
        print(f"rendered {cases_dir}/*.py docstrings -> {readme} (families table{unchanged})")
    if args.check and drifted:
        print(f"{drifted} file(s) drifted; run `nox -s report` and commit them")
    elif args.check:
        families_too = "; README's families table with the case docstrings" if families else ""
        print(f"docs are in sync with their stored results{families_too}")
    return 1 if drifted else 0


def cmd_merge(args: argparse.Namespace) -> int:
    report = merge(args.dirs)
    merge_logs(args.dirs, args.out)
    return finish(report, write_reports(report, args.out))


def cmd_init(args: argparse.Namespace) -> int:
    """`onnx-compat init`: compat/adopt/."""
    from compat.adopt.init import cmd_init as adopt

    return adopt(args)


def cmd_annotations(args: argparse.Namespace) -> int:
    """`python -m compat annotations MODEL ...`: the in-cell annotation checker, run here."""
    from compat.cell.annotations_cli import main

    return main(args.rest)
