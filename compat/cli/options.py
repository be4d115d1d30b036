"""The option groups commands share, each added by one function and read back into its
part of the request (compat/workflow/request.py) by another, and the check of nonsense
values every command gets before anything runs.

A command adds the groups it takes; `request_of` reads back the ones it finds, so a
command without a group gets that group's defaults, as the steps below expect.
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from compat.core.errors import UsageError
from compat.plan.pythons import RELEASES, is_version_list
from compat.workflow.request import (
    CorpusRequest,
    PlanRequest,
    Request,
    RunRequest,
    SetupRequest,
)

#: What an option group's options are added to: a parser, or a group of its options.
Options = argparse._ActionsContainer
#: A group's function as commands call it: the parser first (`add_corpus` takes the
#: default of `--cases` too).
Adder = Callable[..., None]


#: The shared option groups, in the order the reference page documents them: (its
#: anchor there, the heading `--help` and the page give it, the function that adds it);
#: compat/cli/reference.py reads the same table.
GROUPS: list[tuple[str, str, Adder]] = []


def group(anchor: str, heading: str) -> Callable[[Adder], Adder]:
    """Registers the function that adds a group's options: called with a parser, it
    adds them under the group's heading."""

    def register(add: Adder) -> Adder:
        @functools.wraps(add)
        def added(parser: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
            add(parser.add_argument_group(heading), *args, **kwargs)

        GROUPS.append((anchor, heading, added))
        return added

    return register


@group("shared-config", "The configuration file")
def add_config(parser: Options) -> None:
    parser.add_argument(
        "--config", type=Path, default=Path("pyproject.toml"), help="the file of [tool.compat]"
    )


@group("shared-axes", "Which cells")
def add_axes(parser: Options) -> None:
    parser.add_argument(
        "--onnx", metavar="V1,V2", help="replace the onnx axis (1.18: its newest 1.18.x)"
    )
    parser.add_argument(
        "--ort", metavar="V1,V2", help="replace the onnxruntime axis (1.24: its newest 1.24.x)"
    )
    parser.add_argument(
        "--offline",
        action="store_true",
        help='axes that follow the index (versions = ">=1.15") use their recorded '
        "resolution instead of asking the index",
    )
    parser.add_argument(
        "--pkg",
        action="append",
        default=[],
        metavar="NAME=V1,V2",
        help="an extra axis: every cell once per release of NAME (repeatable; replaces "
        "[tool.compat.axes.NAME])",
    )
    parser.add_argument(
        "--cross", action="store_true", help="run every onnx × onnxruntime pair instead of axes"
    )
    parser.add_argument("--cells", metavar="GLOB[,GLOB]", help="select cells by id")
    parser.add_argument("--shard", metavar="K/N", help="run only shard K of N (for CI fan-out)")
    parser.add_argument(
        "--axis", choices=("onnx", "onnxruntime"), help="run only the cells of one axis"
    )


@group("shared-setup", "What every cell installs")
def add_setup(parser: Options) -> None:
    """What every cell installs besides its axes: the same flags on every command that
    builds cells, so a bisect or a repro sees what the matrix saw."""
    parser.add_argument(
        "--with",
        dest="with_",
        action="append",
        default=[],
        metavar="REQ",
        help="a requirement added to every cell (repeatable): an exact pin (numpy==1.26.4, "
        "its own cells) or a range resolved per cell ('ml_dtypes>=0.5')",
    )
    parser.add_argument(
        "--install",
        metavar="PATH",
        help="build this project with its own backend and install it into every cell; "
        "default when commands run: the project itself when it is a package; `none`: nothing",
    )
    parser.add_argument(
        "--python",
        metavar="VERSIONS|PATH",
        help="the Pythons every cell runs on: minor versions (3.10,3.12) or a range "
        "('>=3.10'), each an axis of its own (replaces [tool.compat.python]); or the path "
        "of one interpreter. Default: the interpreter onnx-compat runs on",
    )
    parser.add_argument(
        "--python-releases",
        choices=sorted(RELEASES),
        help="with several Pythons: `newest` runs every release on the Python with wheels "
        "for the most of them and one cell (the newest pair) on each other; `all` runs "
        "every release on every Python (replaces [tool.compat.python] releases; default "
        "newest)",
    )


@group("shared-corpus", "Which cases")
def add_corpus(parser: Options, cases: str | None = None) -> None:
    parser.add_argument("--cases", metavar="GLOB[,GLOB]", default=cases, help="select cases")
    parser.add_argument(
        "--suite",
        choices=("onnx-backend",),
        default="onnx-backend" if cases else None,
        help="add ONNX's backend node tests (onnx_backend.*), generated by the host's onnx",
    )
    parser.add_argument(
        "--corpus",
        type=Path,
        help="directory of case modules (default: cases/ beside the config, else the built-in "
        "corpus)",
    )
    parser.add_argument(
        "--cases-dir",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="drop-in models: every *.onnx in DIR becomes a case (repeatable)",
    )
    parser.add_argument(
        "--run",
        action="append",
        default=[],
        metavar="[NAME=]CMD",
        help="your own command as a check in every cell (its environment active, the "
        "project root as working directory): exit 0 passes; case command.NAME (repeatable; "
        "replaces the config's `run`, `--run +CMD` adds to it)",
    )
    parser.add_argument(
        "--mutate",
        nargs="?",
        const="",
        metavar="GLOB[,GLOB]",
        help="also run every selected case spelled each other legal way (the rewrite "
        "catalogue, or the rewrites matching GLOB): cases CASE~REWRITE",
    )


@group("shared-run", "How it runs")
def add_run(parser: Options) -> None:
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="cells run at once")
    parser.add_argument("--timeout", type=float, help="seconds one check may run (default: config)")
    parser.add_argument(
        "--memory",
        type=float,
        metavar="GB",
        help="memory one worker may use, in GiB (default: half the machine's, shared by "
        "--jobs; 0: no limit); past it a check is a `crash` saying so",
    )
    parser.add_argument("--out", type=Path, default=Path("reports"), help="report directory")
    parser.add_argument(
        "--state-dir",
        type=Path,
        help="environments (envs/), result cache (cache/), worker files (work/); default .compat/",
    )
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="run every check again and replace what the result cache holds",
    )
    parser.add_argument(
        "--reruns",
        type=int,
        default=None,
        help="more runs, each in a fresh worker, of an unexpected result: runs that "
        "disagree are `flaky` (default: [tool.compat] reruns, else 3; a command runs "
        "once more at most, a pytest suite only its failing tests; 0 turns it off)",
    )
    parser.add_argument(
        "--no-share",
        dest="share",
        action="store_false",
        help="every cell computes every check itself (for comparing; slower)",
    )
    parser.add_argument(
        "--tracebacks",
        action="store_true",
        help="keep each failing check's traceback in matrix.json and junit.xml",
    )


#: `--baseline`'s help, on every command that takes it (`report` takes it alone).
BASELINE = (
    "the run to compare with, whose changes every report shows first: a reports folder, a "
    "matrix.json(.gz) file, or git:REV for the results REV committed (the docs' results, "
    "[tool.compat.docs] results, else docs/matrix.json.gz; git:REV:PATH another file)"
)


@group("shared-baseline", "Compared with a baseline")
def add_baseline(parser: Options) -> None:
    parser.add_argument("--baseline", metavar="DIR|FILE|git:REV", help=BASELINE)
    parser.add_argument(
        "--fail-on",
        choices=("unexpected", "new"),
        default="unexpected",
        help="exit 1 for any unexpected result (the default), or, with --baseline, only "
        "for those that are unexpected now and were not in the baseline; the reports "
        "show all of them either way",
    )


def request_of(args: argparse.Namespace) -> Request:
    """The request of the groups the command added (each found by one of its options);
    the others keep their defaults."""
    given = vars(args)
    plan = PlanRequest()
    setup = SetupRequest()
    corpus = CorpusRequest()
    run = RunRequest()
    if "cells" in given:
        plan = PlanRequest(
            onnx=args.onnx,
            ort=args.ort,
            offline=args.offline,
            pkg=tuple(args.pkg),
            cross=args.cross,
            cells=args.cells,
            shard=args.shard,
            axis=args.axis,
        )
    if "with_" in given:
        setup = SetupRequest(
            with_=tuple(args.with_),
            install=args.install,
            python=_pythons(args.python),
            python_releases=args.python_releases,
        )
    if "cases_dir" in given:
        corpus = CorpusRequest(
            cases=args.cases,
            suite=args.suite,
            corpus=args.corpus,
            cases_dirs=tuple(args.cases_dir),
            commands=tuple(args.run),
            mutate=args.mutate,
        )
    if "jobs" in given:
        run = RunRequest(
            jobs=args.jobs,
            timeout=args.timeout,
            memory=args.memory,
            out=args.out,
            state_dir=args.state_dir,
            python=_interpreter(getattr(args, "python", None)),
            fresh=args.fresh,
            reruns=args.reruns,
            share=args.share,
            tracebacks=args.tracebacks,
        )
    return Request(config=args.config, plan=plan, setup=setup, corpus=corpus, run=run)


def _writable_directory(flag: str, path: Path | None) -> None:
    """An output folder (or the folder it is to be made in) that is a file or cannot be
    written to: found now, not after every check ran."""
    existing = next((p for p in [path, *path.parents] if p.exists()), None) if path else None
    if existing is not None and not existing.is_dir():
        which = "it" if existing == path else str(existing)
        raise UsageError(
            f"{flag} {path}: {which} is a file, not a directory; give a directory "
            "(it is created when missing)"
        )
    if existing is not None and not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(
            f"{flag} {path}: {existing} is not writable; give a directory you can write to"
        )


def check_options(args: argparse.Namespace) -> None:
    """Nonsense numbers and paths, as one usage line before anything runs."""
    numbers = (("jobs", 1, "cells at once"), ("reruns", 0, "reruns of an unexpected result"))
    for name, least, what in numbers:
        value = getattr(args, name, None)
        if value is not None and value < least:
            raise UsageError(f"--{name} {value}: give at least {least} ({what})")
    timeout = getattr(args, "timeout", None)
    if timeout is not None and not 0 < timeout < math.inf:
        raise UsageError(
            f"--timeout {timeout:g}: give a positive number of seconds, like --timeout 60"
        )
    for name in ("out", "state_dir"):
        _writable_directory("--" + name.replace("_", "-"), getattr(args, name, None))
    memory = getattr(args, "memory", None)
    if memory is not None and not 0 <= memory < math.inf:
        raise UsageError(
            f"--memory {memory:g}: give the gigabytes a worker may use, or 0: no limit"
        )
    python = getattr(args, "python", None)
    if python is not None and not is_version_list(python) and shutil.which(python) is None:
        raise UsageError(
            f"--python {python}: no such interpreter; give a Python executable, or minor "
            "versions like --python 3.10,3.12"
        )


def _pythons(python: str | None) -> str | None:
    """`--python` read once for the Python axis: its versions, "" for `--python PATH` (one
    interpreter: no axis, whatever the config says), None when not given."""
    if python is None:
        return None
    return python if is_version_list(python) else ""


def _interpreter(python: str | None) -> str:
    """The one interpreter `--python PATH` names; this one when it names versions (each
    cell's is found by its version, compat/plan/pythons.py)."""
    return python if python and not is_version_list(python) else sys.executable
