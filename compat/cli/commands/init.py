"""`onnx-compat init`: adopt onnx-compat in the current folder (compat/adopt/)."""

from __future__ import annotations

import argparse
from typing import Any

from compat.adopt.ci import GATES
from compat.adopt.init import InitOptions, cmd_init
from compat.core.errors import UsageError

PARSER: dict[str, Any] = {
    "description": "Reads this project (its declared onnx / onnxruntime ranges, "
    "requires-python, test folder and test dependencies) and writes what is missing: "
    "[tool.compat] in pyproject.toml (a Python axis from requires-python and the "
    "interpreters installed here), the nox sessions matrix, repro, bisect, triage and "
    "report in noxfile.py, .gitignore entries and, with --ci, a CI workflow (with --watch, a "
    "weekly watch of new releases too). Never "
    "overwrites: a file that has its part already is left as it is. Then: nox -s matrix.",
    "epilog": "example: onnx-compat init --ci github --watch --run 'tests=pytest -q tests'",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--run",
        action="append",
        default=[],
        metavar="[NAME=]CMD",
        help="a command to run in every cell, passing on exit 0, like "
        "'tests=python -m pytest -q tests' (repeatable; default: your tests/ folder)",
    )
    parser.add_argument(
        "--models",
        action="append",
        default=[],
        metavar="DIR",
        help="a folder of your .onnx models to check in every cell (repeatable; default: "
        "models/ when it exists)",
    )
    parser.add_argument(
        "--install",
        metavar="SPEC",
        help="what the nox sessions and the CI jobs install to run onnx-compat: a release "
        "like 'onnx-compat==0.2' or a wheel file (default: onnx-compat); given, it also "
        "changes the ONNX_COMPAT line of a noxfile init wrote before",
    )
    parser.add_argument(
        "--ci",
        choices=("github",),
        help="also write a CI workflow: github writes .github/workflows/onnx-compat.yml, the "
        "matrix spread over parallel jobs, their reports merged into one",
    )
    parser.add_argument(
        # dest: not `python`, which the shared option check reads as an interpreter
        "--python",
        dest="python_axis",
        metavar="VERSIONS",
        help="the Pythons of the run, written as [tool.compat.python]: minor versions like "
        "3.10,3.12, or none (default: the oldest, the newest and this one of the CPythons "
        "installed here that requires-python allows, when two or more)",
    )
    parser.add_argument(
        "--shards",
        type=int,
        default=4,
        metavar="N",
        help="how many parallel jobs the workflow spreads the cells over (default 4)",
    )
    parser.add_argument(
        "--branch",
        metavar="NAME",
        help="with --ci github, the branch whose pushes run the workflow (default: the one "
        "git remote origin's HEAD names, else the one checked out, else main)",
    )
    parser.add_argument(
        "--gate",
        choices=GATES,
        default="unexpected",
        help="with --ci github, what fails a pull request: unexpected, any unexpected "
        "result (the default); new, only those the base branch's committed results lack "
        "(--baseline git:origin/BASE --fail-on new)",
    )
    parser.add_argument(
        "--watch",
        action="store_true",
        help="with --ci github, also write .github/workflows/onnx-compat-watch.yml: weekly, "
        "the onnx / onnxruntime releases (and onnx-weekly builds) the CI's last reports "
        "lack, and one issue opened or updated when something changed",
    )


def request(args: argparse.Namespace) -> InitOptions:
    if args.watch and args.ci != "github":
        raise UsageError(
            "--watch: the watch compares with the CI workflow's reports; give --ci github too"
        )
    for flag, given in (
        ("--branch", args.branch is not None),
        ("--gate", args.gate != "unexpected"),
    ):
        if given and args.ci != "github":
            raise UsageError(f"{flag}: it sets the CI workflow; give --ci github too")
    return InitOptions(
        args.install,
        list(args.models),
        list(args.run),
        args.ci,
        args.shards,
        args.python_axis,
        args.watch,
        args.branch,
        args.gate,
    )


def run(request: InitOptions) -> int:
    from compat.execute.installer import clash  # uv's resolver: the pairs must install

    return cmd_init(request, clash)
