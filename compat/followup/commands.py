"""The follow-up commands: `repro` (one cell under exact pins, with scripts) and
`bisect` (the first release where an outcome changes)."""

from __future__ import annotations

import argparse
from dataclasses import replace

from compat.core.errors import UsageError
from compat.core.outcomes import CellState
from compat.core.versions import version_key
from compat.corpus.discover import write_case
from compat.execute.run import run_cell
from compat.followup.bisection import bisect
from compat.followup.repro import FAILING, parse_pins, repro_cell, write_script
from compat.plan.config import load_config
from compat.plan.index import releases
from compat.plan.matrix import make_cell
from compat.workflow.steps import (
    fixed_requirements,
    follow_axes,
    load_corpus,
    prepare_project,
    project_config,
    settings_of,
)


def cmd_repro(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    prepare_project(args, config)
    config = project_config(args, config)
    pins = parse_pins(args.pins, args.requirements)
    cell = repro_cell(replace(pins, extra=pins.extra + fixed_requirements(args)), config)
    corpus = load_corpus(args, config)
    # always run for real, and keep the worker's tracebacks to print them
    settings = replace(settings_of(args, config), cache_dir=None, tracebacks=True)
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
    for result in run.results:
        if result.outcome in FAILING:
            print(f"\n== {result.case} · {result.check}: {result.summary}")
            if result.traceback:
                print(result.traceback.rstrip())
            script = write_script(result, record, by_case[result.case], args.out / "repro")
            print(f"   script: {script} (with {script.with_name('requirements.txt')})")
            if result.log:  # a command's whole output
                print(f"   log: {args.out / result.log}")
        elif result.outcome.unexpected:  # an xpass: nothing fails, so no script
            print(f"\n== {result.case} · {result.check}: {result.summary}")
    passed = len(run.results) - len(failing)
    unexpected = sum(r.outcome.unexpected for r in run.results)
    print(
        f"\n{len(failing)} failing, {passed} passing or skipped checks in {cell.id}; "
        f"{unexpected} unexpected"
    )
    return 1 if unexpected else 0


def cmd_bisect(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    corpus = load_corpus(args, config)
    commands = [c for c in corpus.cases if c.command]
    if args.case is None and len(commands) == 1:  # `bisect --run 'pytest …'`
        args.case, args.check = commands[0].id, args.check or "command"
    if args.case is None or args.check is None:
        raise UsageError("name the --case and --check to bisect (or give one --run command)")
    case = next((c for c in corpus.cases if c.id == args.case), None)
    if case is None:
        raise UsageError(f"--case {args.case}: no such case; see `nox -s matrix -- --list`")
    if args.check not in case.checks:
        raise UsageError(f"--check {args.check}: {case.id} has {', '.join(case.checks)}")
    config, _ = follow_axes(args, config)
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
    prepare_project(args, config)  # the project a --run command imports, and its setup
    config, fixed = project_config(args, config), fixed_requirements(args)
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
        run = run_cell(make_cell(config, onnx, ort, (), fixed), [only], settings)
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
