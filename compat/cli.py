"""`python -m compat` (and the nox sessions): load config → expand → select → run → render.

Subcommands: `matrix` runs the matrix; `plan` prints it for a CI job matrix;
`merge` combines shard reports; `repro` rebuilds one cell under exact pins;
`bisect` finds the first release where an outcome changes; `annotations`
(handled in compat/__main__.py) checks one model's shape annotations.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from compat.bisection import bisect, releases
from compat.config import Config, load_config
from compat.corpus import Corpus, discover_cases, select_cases, write_case
from compat.dropin import load_dropins
from compat.errors import CompatError, UsageError
from compat.matrix import (
    Cell,
    Plan,
    expand,
    parse_shard,
    parse_version_list,
    requirements,
    select_cells,
    select_shard,
)
from compat.merge import merge
from compat.outcomes import CellState
from compat.outputs import RENDERERS, Style, drift, write_reports
from compat.progress import Progress
from compat.render_terminal import render_grid, render_unexpected
from compat.report import Report, read_json
from compat.repro import FAILING, parse_pins, repro_cell, repro_command, write_script
from compat.run import Settings, run_cell, run_matrix
from compat.versions import version_key


def _globs(text: str | None) -> tuple[str, ...]:
    return tuple(g.strip() for g in (text or "").split(",") if g.strip())


def _add_config(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, default=Path("pyproject.toml"))


def _add_axes(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--onnx", metavar="V1,V2", help="replace the onnx axis")
    parser.add_argument("--ort", metavar="V1,V2", help="replace the onnxruntime axis")
    parser.add_argument(
        "--cross", action="store_true", help="run every onnx × onnxruntime pair instead of axes"
    )
    parser.add_argument("--cells", metavar="GLOB[,GLOB]", help="select cells by id")
    parser.add_argument("--shard", metavar="K/N", help="run only shard K of N (for CI fan-out)")


def _add_corpus(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cases", metavar="GLOB[,GLOB]", help="select cases by id")
    parser.add_argument(
        "--corpus", type=Path, help="directory of case modules (default: cases/ beside the config)"
    )
    parser.add_argument(
        "--cases-dir",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="drop-in models: every *.onnx in DIR becomes a case (repeatable)",
    )


def _add_run(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="cells run at once")
    parser.add_argument("--timeout", type=float, help="seconds one check may run (default: config)")
    parser.add_argument("--out", type=Path, default=Path("reports"), help="report directory")
    parser.add_argument(
        "--state-dir",
        type=Path,
        help="environments (envs/), result cache (cache/), worker files (work/); default .compat/",
    )
    parser.add_argument("--python", default=sys.executable, help="interpreter for the cells")
    parser.add_argument(
        "--fresh", action="store_true", help="ignore the result cache: run every check again"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m compat", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    matrix = commands.add_parser("matrix", help="run the corpus in one environment per release")
    for add in (_add_config, _add_axes, _add_corpus, _add_run):
        add(matrix)
    matrix.add_argument("--list", action="store_true", help="print the plan and exit")
    matrix.set_defaults(func=cmd_matrix)

    plan = commands.add_parser("plan", help="print the cells, e.g. as a CI job matrix")
    _add_config(plan)
    _add_axes(plan)
    plan.add_argument("--json", action="store_true", help='print {"include": [...]} for CI')
    plan.add_argument("--shards", type=int, help="group the cells into N shards")
    plan.set_defaults(func=cmd_plan)

    report = commands.add_parser("report", help="re-render reports from stored results")
    report.add_argument("--results", type=Path, metavar="FILE", help="a stored matrix.json")
    report.add_argument("--out", type=Path, help="where to write (default: beside the results)")
    report.add_argument("--check", action="store_true", help="exit 1 if the docs have drifted")
    report.add_argument("--ascii", action="store_true", help="plain-text marks in the docs tables")
    report.add_argument("--collapse", action="store_true", help="merge equal neighbouring releases")
    _add_config(report)
    report.set_defaults(func=cmd_report)

    merge_ = commands.add_parser("merge", help="combine the --out directories of shards")
    merge_.add_argument("dirs", nargs="+", type=Path, metavar="DIR")
    merge_.add_argument("--out", type=Path, default=Path("reports"))
    merge_.set_defaults(func=cmd_merge)

    repro = commands.add_parser("repro", help="rebuild one cell under exact pins, write scripts")
    repro.add_argument("pins", nargs="*", metavar="PKG==VERSION")
    repro.add_argument("--requirements", type=Path, metavar="FILE", help="a CI's pinned reqs")
    _add_config(repro)
    _add_corpus(repro)
    _add_run(repro)
    repro.set_defaults(func=cmd_repro)

    bisect_ = commands.add_parser("bisect", help="find the release where an outcome changes")
    bisect_.add_argument("--case", required=True, help="the case id")
    bisect_.add_argument("--check", required=True, help="the check id")
    bisect_.add_argument("--package", required=True, choices=("onnx", "onnxruntime"))
    bisect_.add_argument("--good", metavar="V", help="first release (default: the axis start)")
    bisect_.add_argument("--bad", metavar="V", help="last release (default: the newest)")
    bisect_.add_argument("--pre", action="store_true", help="include pre-releases")
    bisect_.add_argument("--yanked", action="store_true", help="include yanked releases")
    _add_config(bisect_)
    _add_corpus(bisect_)
    _add_run(bisect_)
    bisect_.set_defaults(func=cmd_bisect)
    return parser


# --- the steps --------------------------------------------------------------------


def resolve_plan(args: argparse.Namespace, config: Config) -> tuple[Plan, Plan]:
    """(the whole plan, the part this process runs): they differ only with --shard."""
    onnx = parse_version_list(args.onnx, "--onnx") if args.onnx else None
    ort = parse_version_list(args.ort, "--ort") if args.ort else None
    whole = select_cells(expand(config, onnx, ort, args.cross), _globs(args.cells))
    if args.shard:
        return whole, select_shard(whole, *parse_shard(args.shard))
    return whole, whole


def load_corpus(args: argparse.Namespace, config: Config) -> Corpus:
    corpus = discover_cases(args.corpus or args.config.resolve().parent / "cases")
    for directory in [*config.cases_dirs, *args.cases_dir]:
        family, description, cases = load_dropins(directory)
        if family in corpus.families:
            raise UsageError(f"{directory}: drop-in family {family!r} clashes with a case family")
        corpus = Corpus(corpus.cases + cases, {**corpus.families, family: description})
    return Corpus(select_cases(corpus.cases, _globs(args.cases)), corpus.families)


def settings_of(args: argparse.Namespace, config: Config) -> Settings:
    if args.jobs < 1:
        raise UsageError(f"--jobs {args.jobs}: give at least 1")
    state = (args.state_dir or args.config.resolve().parent / ".compat").resolve()
    return Settings(
        envs_dir=state / "envs",
        work_dir=state / "work",
        timeout=args.timeout or config.timeout,
        jobs=args.jobs,
        python=args.python,
        cache_dir=None if args.fresh else state / "cache",
    )


def describe_plan(plan: Plan, corpus: Corpus) -> str:
    checks = sum(len(c.checks) for c in corpus.cases)
    lines = [
        f"{len(plan.cells)} cells × {len(corpus.cases)} cases "
        f"({checks} checks per cell, {checks * len(plan.cells)} in all)",
        "",
        "cells:",
    ]
    lines += [f"  {c.id:28} {' '.join(c.requirements)}" for c in plan.cells]
    lines += ["", "cases:"]
    lines += [f"  {c.id:44} {', '.join(c.checks)}" for c in corpus.cases]
    return "\n".join(lines)


def repro_hints(report: Report) -> list[str]:
    """One `nox -s repro` command per unexpected cell."""
    cells = {c.id: c for c in report.cells}
    hints = []
    for cell in report.broken_cells:
        hints.append(repro_command(cell, []))
    for cell_id in dict.fromkeys(r.cell for r in report.unexpected):
        cases = sorted({r.case for r in report.unexpected if r.cell == cell_id})
        hints.append(repro_command(cells[cell_id], cases))
    return hints


def finish(report: Report, paths: list[Path]) -> int:
    """The terminal summary and the exit code shared by `matrix` and `merge`:
    the grid, then what needs a look (with repro commands), counts, files."""
    print(render_grid(report))
    print()
    print(render_unexpected(report) or "no unexpected results")
    hints = repro_hints(report)
    if hints:
        print("reproduce with:")
        print("\n".join(f"  {hint}" for hint in hints))
    counts: dict[str, int] = {}
    for r in report.results:
        counts[r.outcome.value] = counts.get(r.outcome.value, 0) + 1
    for c in report.broken_cells:
        counts[c.state.value] = counts.get(c.state.value, 0) + 1
    print("\noutcomes: " + ", ".join(f"{n} {o}" for o, n in sorted(counts.items())))
    executed = report.run.get("executed")
    total = len(report.results)
    cached = "" if executed is None else f" ({executed} run, {total - executed} cached)"
    print(f"{total} results{cached} in {report.run.get('seconds', 0)} s")
    print("wrote: " + ", ".join(str(p) for p in paths))
    return 1 if hints else 0


# --- the commands -------------------------------------------------------------------


def cmd_matrix(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    whole, plan = resolve_plan(args, config)
    corpus = load_corpus(args, config)
    if args.list:
        print(describe_plan(plan, corpus))
        return 0
    settings = settings_of(args, config)
    shard = f", shard {args.shard}" if args.shard else ""
    print(f"{describe_plan(plan, corpus).splitlines()[0]}{shard} — {settings.jobs} at a time")
    meta: dict[str, object] = {
        "plan_cells": [c.id for c in whole.cells],
        "plan_axes": {n: [c.id for c in cells] for n, cells in whole.axes.items()},
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
    return finish(report, write_reports(report, args.out))


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
    reports/ when it holds results). With --check, compares instead of writing."""
    config = load_config(args.config)
    asked = Style(args.ascii, args.collapse)
    jobs: list[tuple[Path, Path, Style, tuple[str, ...]]] = []
    if args.results:
        jobs.append((args.results, args.out or args.results.parent, asked, tuple(RENDERERS)))
    else:
        if config.docs is None:
            raise UsageError(f"{args.config}: no [tool.compat.docs]; pass --results FILE")
        docs = config.docs
        style = Style(args.ascii or docs.ascii, args.collapse or docs.collapse)
        jobs.append((docs.results, docs.results.parent, style, ("compatibility.md",)))
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
        for name in names:
            (out / name).write_text(RENDERERS[name](report, style))
        print(f"rendered {results} -> " + ", ".join(str(out / n) for n in names))
    if args.check:
        print(
            f"{drifted} file(s) drifted; run `nox -s report` and commit them"
            if drifted
            else "docs are in sync with their stored results"
        )
    return 1 if drifted else 0


def cmd_merge(args: argparse.Namespace) -> int:
    report = merge(args.dirs)
    return finish(report, write_reports(report, args.out))


def cmd_repro(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    cell = repro_cell(parse_pins(args.pins, args.requirements), config)
    corpus = load_corpus(args, config)
    settings = replace(settings_of(args, config), cache_dir=None)  # always run for real
    print(f"reproducing {cell.id}: {' '.join(cell.requirements)}", flush=True)
    files = [write_case(c, settings.work_dir / "cases") for c in corpus.cases]
    run = run_cell(cell, files, settings)
    record = run.record
    if record.state is not CellState.READY:
        print(f"{record.state.value}:\n{record.detail}")
        return 1
    installed = ", ".join(f"{k} {v}" for k, v in sorted(record.packages.items()))
    print(f"installed: {installed}; Python {record.python}; {record.platform}")
    by_case = {f.case.id: f for f in files}
    failing = [r for r in run.results if r.outcome in FAILING]
    for result in failing:
        print(f"\n== {result.case} · {result.check}: {result.summary}")
        if result.traceback:
            print(result.traceback.rstrip())
        script = write_script(result, record, by_case[result.case], args.out / "repro")
        print(f"   script: {script} (with {script.with_name('requirements.txt')})")
    passed = len(run.results) - len(failing)
    print(f"\n{len(failing)} failing, {passed} passing or skipped checks in {cell.id}")
    return 1 if any(r.outcome.unexpected for r in run.results) else 0


def cmd_bisect(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    corpus = load_corpus(args, config)
    case = next((c for c in corpus.cases if c.id == args.case), None)
    if case is None:
        raise UsageError(f"--case {args.case}: no such case; see `nox -s matrix -- --list`")
    if args.check not in case.checks:
        raise UsageError(f"--check {args.check}: {case.id} has {', '.join(case.checks)}")
    axis = config.onnx if args.package == "onnx" else config.onnxruntime
    good = args.good or axis.versions[0]
    available = releases(args.package, args.pre, args.yanked)
    versions = [v for v in available if version_key(good) <= version_key(v)]
    if args.bad:
        versions = [v for v in versions if version_key(v) <= version_key(args.bad)]
    for flag, value in (("--good", good), ("--bad", args.bad)):
        if value and value not in available:
            raise UsageError(f"{flag} {value}: not an installable release of {args.package}")
    print(f"bisecting {len(versions)} {args.package} releases: {', '.join(versions)}")
    settings = settings_of(args, config)
    only = write_case(
        replace(
            case,
            builtin_checks=tuple(c for c in case.builtin_checks if c == args.check),
            custom_checks=tuple(c for c in case.custom_checks if c.name == args.check),
        ),
        settings.work_dir / "cases",
    )

    def probe(version: str) -> str | None:
        onnx, ort = (
            (version, config.onnx.pair) if args.package == "onnx" else
            (config.onnxruntime.pair, version)
        )  # fmt: skip
        cell = Cell(onnx, ort, requirements(onnx, ort, config.constraints))
        run = run_cell(cell, [only], settings)
        if run.record.state is not CellState.READY:
            print(f"  {version}: {run.record.state.value}, skipped")
            return None
        (result,) = [r for r in run.results if r.check == args.check]
        print(f"  {version}: {result.outcome.value} {result.detail[:120]}", flush=True)
        return result.outcome.value

    found = bisect(versions, probe)
    print(f"tested {len(found.tested)} of {len(versions)} releases "
          f"(bound ⌈log2(n)⌉+2 = {found.bound}): {', '.join(found.tested)}")  # fmt: skip
    print(found.verdict())
    return 0


def main_inner(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    code: int = args.func(args)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """The one top-level handler: a CompatError is one line on stderr and its exit code."""
    try:
        return main_inner(argv)
    except CompatError as exc:
        print(f"onnx-compat: error: {exc}", file=sys.stderr)
        return exc.return_code
    except KeyboardInterrupt:
        print(
            "onnx-compat: interrupted; results so far are in the report directory", file=sys.stderr
        )
        return 130
