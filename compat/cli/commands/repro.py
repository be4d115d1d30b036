"""`onnx-compat repro PKG==V …`: one cell rebuilt under exact pins (a CI's, say), its
checks run for real, and a standalone repro script written for each failing one; on
`--python 3.12`'s interpreter when given (compat/followup/on_python.py)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from pathlib import Path

from compat.cli.options import add_config, add_corpus, add_run, add_setup, request_of
from compat.workflow.request import Request


@dataclass(frozen=True)
class ReproRequest:
    """The shared options, and the pins: on the command line, in a requirements file."""

    common: Request
    pins: tuple[str, ...] = ()
    requirements: Path | None = None


PARSER = {"epilog": "example: onnx-compat repro onnx==1.18.0 onnxruntime==1.22.1  # CI's pins"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("pins", nargs="*", metavar="PKG==VERSION", help="the pins of the cell")
    parser.add_argument("--requirements", type=Path, metavar="FILE", help="a CI's pinned reqs")
    add_config(parser)
    add_setup(parser)
    add_corpus(parser)
    add_run(parser)


def request(args: argparse.Namespace) -> ReproRequest:
    return ReproRequest(request_of(args), tuple(args.pins), args.requirements)


def run(request: ReproRequest) -> int:
    # the pipeline is imported when the command runs: `repro --help` stays quick
    from compat.core.outcomes import CellState
    from compat.corpus.discover import write_case
    from compat.execute.run import run_cell
    from compat.followup.on_python import follow_up_python, given_python
    from compat.followup.repro import FAILING, parse_pins, repro_cell, write_script
    from compat.plan.config import load_config
    from compat.workflow.corpus import load_corpus
    from compat.workflow.project import fixed_requirements, prepare_project, project_config
    from compat.workflow.settings import settings_of

    common = request.common
    out = common.run.out or Path("reports")
    config = load_config(common.config)
    python = follow_up_python(common, config, "repro")  # several, or a missing one: said now
    prepare_project(common, config)
    config = project_config(common, config)
    pins = parse_pins(list(request.pins), request.requirements)
    pins = replace(pins, extra=pins.extra + fixed_requirements(common))
    cell = repro_cell(pins, config, python, given_python(common))
    corpus = load_corpus(common, config)
    # always run for real, and keep the worker's tracebacks to print them
    settings = replace(settings_of(common, config), cache_dir=None, tracebacks=True)
    print(f"reproducing {cell.id}: {cell.requirements.shown()}", flush=True)
    files = [write_case(c, settings.work_dir / "cases") for c in corpus.cases]
    ran = run_cell(cell, files, settings)
    record = ran.record
    if record.state is not CellState.READY:
        print(f"{record.state.value}:\n{record.detail}")
        return 1
    installed = ", ".join(f"{k} {v}" for k, v in sorted(record.packages.items()))
    print(f"installed: {installed}; Python {record.python}; {record.platform}")
    by_case = {f.case.id: f for f in files}
    failing = [r for r in ran.results if r.outcome in FAILING]
    for result in ran.results:
        if result.outcome in FAILING:
            print(f"\n== {result.case} · {result.check}: {result.summary}")
            if result.traceback:
                print(result.traceback.rstrip())
            script = write_script(result, record, by_case[result.case], out / "repro")
            print(f"   script: {script} (with {script.with_name('requirements.txt')})")
            if result.log:  # a command's whole output
                print(f"   log: {out / result.log}")
        elif result.outcome.unexpected:  # an xpass: nothing fails, so no script
            print(f"\n== {result.case} · {result.check}: {result.summary}")
    passed = len(ran.results) - len(failing)
    unexpected = sum(r.outcome.unexpected for r in ran.results)
    print(
        f"\n{len(failing)} failing, {passed} passing or skipped checks in {cell.id}; "
        f"{unexpected} unexpected"
    )
    return 1 if unexpected else 0
