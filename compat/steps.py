"""The steps every command shares: resolve the plan, load the corpus, the settings,
and the terminal summary. Each is a plain function of the parsed arguments."""

from __future__ import annotations

import argparse
from pathlib import Path

from compat.backend_suite import backend_cases
from compat.config import Config
from compat.corpus import Corpus, discover_cases, select_cases
from compat.dropin import load_dropins
from compat.errors import UsageError
from compat.followup.repro import repro_command
from compat.matrix import (
    Plan,
    expand,
    parse_shard,
    parse_version_list,
    select_axis,
    select_cells,
    select_shard,
)
from compat.render.terminal import render_grid, render_unexpected
from compat.report import Report
from compat.run import Settings


def globs(text: str | None) -> tuple[str, ...]:
    return tuple(g.strip() for g in (text or "").split(",") if g.strip())


def resolve_plan(args: argparse.Namespace, config: Config) -> tuple[Plan, Plan]:
    """(the whole plan, the part this process runs): they differ only with --shard."""
    onnx = parse_version_list(args.onnx, "--onnx") if args.onnx else None
    ort = parse_version_list(args.ort, "--ort") if args.ort else None
    whole = select_cells(expand(config, onnx, ort, args.cross), globs(args.cells))
    if getattr(args, "axis", None):
        whole = select_axis(whole, args.axis)
    if args.shard:
        return whole, select_shard(whole, *parse_shard(args.shard))
    return whole, whole


def load_corpus(args: argparse.Namespace, config: Config) -> Corpus:
    corpus = discover_cases(args.corpus or args.config.resolve().parent / "cases")
    sources = [load_dropins(d) for d in [*config.cases_dirs, *args.cases_dir]]
    if args.suite == "onnx-backend":
        sources.append(backend_cases())
    for family, description, cases in sources:
        if family in corpus.families:
            raise UsageError(f"case family {family!r} is defined twice (a drop-in directory?)")
        corpus = Corpus(corpus.cases + cases, {**corpus.families, family: description})
    return Corpus(select_cases(corpus.cases, globs(args.cases)), corpus.families)


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
