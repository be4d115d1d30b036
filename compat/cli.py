"""`python -m compat` (and `nox -s matrix`): load config → expand → select → run → render."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from compat.config import load_config
from compat.corpus import Corpus, discover_cases, select_cases
from compat.dropin import load_dropins
from compat.errors import CompatError, UsageError
from compat.matrix import Plan, expand, parse_version_list, select_cells
from compat.progress import Progress
from compat.render_md import render_markdown
from compat.render_terminal import render_grid, render_unexpected
from compat.report import Report, write_json
from compat.run import Settings, run_matrix


def _globs(text: str | None) -> tuple[str, ...]:
    return tuple(g.strip() for g in (text or "").split(",") if g.strip())


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m compat", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    matrix = commands.add_parser(
        "matrix", help="run the case corpus in one environment per onnx/onnxruntime release"
    )
    matrix.add_argument("--onnx", metavar="V1,V2", help="replace the onnx axis")
    matrix.add_argument("--ort", metavar="V1,V2", help="replace the onnxruntime axis")
    matrix.add_argument(
        "--cross", action="store_true", help="run every onnx × onnxruntime pair instead of axes"
    )
    matrix.add_argument("--cases", metavar="GLOB[,GLOB]", help="select cases by id")
    matrix.add_argument("--cells", metavar="GLOB[,GLOB]", help="select cells by id")
    matrix.add_argument(
        "--list", action="store_true", help="print the resolved plan (cells × cases) and exit"
    )
    matrix.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="cells run at once")
    matrix.add_argument("--timeout", type=float, help="seconds one check may run (default: config)")
    matrix.add_argument("--out", type=Path, default=Path("reports"), help="report directory")
    matrix.add_argument("--config", type=Path, default=Path("pyproject.toml"))
    matrix.add_argument(
        "--corpus", type=Path, help="directory of case modules (default: cases/ beside the config)"
    )
    matrix.add_argument(
        "--cases-dir",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="drop-in models: every *.onnx in DIR becomes a case (repeatable)",
    )
    matrix.add_argument(
        "--state-dir",
        type=Path,
        help="cell environments (envs/) and worker files (work/); default: .compat/ by config",
    )
    matrix.add_argument("--python", default=sys.executable, help="interpreter for the cells")
    matrix.set_defaults(func=cmd_matrix)
    return parser


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


def repro_hint(report: Report) -> str:
    """A one-line command that reruns the first unexpected cell alone."""
    ids = [c.id for c in report.broken_cells] + [r.cell for r in report.unexpected]
    if not ids:
        return ""
    cell = next(c for c in report.cells if c.id == ids[0])
    cases = sorted({r.case for r in report.unexpected if r.cell == cell.id})
    command = f"nox -s matrix -- --onnx {cell.onnx} --ort {cell.onnxruntime} --cross"
    return command + (f" --cases {','.join(cases)}" if cases else "")


def write_reports(report: Report, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out / "matrix.json", out / "matrix.md"
    write_json(report, json_path)
    md_path.write_text(render_markdown(report))
    return [json_path, md_path]


def cmd_matrix(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    root = args.config.resolve().parent
    onnx = parse_version_list(args.onnx, "--onnx") if args.onnx else None
    ort = parse_version_list(args.ort, "--ort") if args.ort else None
    plan = select_cells(expand(config, onnx, ort, args.cross), _globs(args.cells))
    corpus = discover_cases(args.corpus or root / "cases")
    for directory in [*config.cases_dirs, *args.cases_dir]:
        family, description, cases = load_dropins(directory)
        if family in corpus.families:
            raise UsageError(f"{directory}: drop-in family {family!r} clashes with a case family")
        corpus = Corpus(corpus.cases + cases, {**corpus.families, family: description})
    corpus = Corpus(select_cases(corpus.cases, _globs(args.cases)), corpus.families)
    if args.list:
        print(describe_plan(plan, corpus))
        return 0
    if args.jobs < 1:
        raise CompatError(f"--jobs {args.jobs}: give at least 1")
    state = (args.state_dir or root / ".compat").resolve()
    settings = Settings(
        envs_dir=state / "envs",
        work_dir=state / "work",
        timeout=args.timeout or config.timeout,
        jobs=args.jobs,
        python=args.python,
    )
    print(describe_plan(plan, corpus).split("\n", 1)[0], f"— {settings.jobs} at a time", flush=True)
    report = run_matrix(
        plan, corpus, settings, Progress(len(plan.cells)), lambda r: write_reports(r, args.out)
    )
    paths = write_reports(report, args.out)
    print(render_grid(report))
    unexpected = render_unexpected(report, repro_hint(report))
    print()
    print(unexpected or "no unexpected results")
    print(f"{len(report.results)} results in {report.run.get('seconds', 0)} s; wrote", *paths)
    return 1 if unexpected else 0


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
