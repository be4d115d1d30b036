"""`python -m compat` (and the nox sessions): parse the command line and dispatch.

The subcommands are the rows of `COMMANDS` (compat/cli/commands/__init__.py), each one
module of compat/cli/commands/; `onnx-compat --help` lists them from that table, so
nothing here names them. This module only parses and dispatches.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any, cast

from compat.cli.commands import COMMANDS, Command
from compat.core.errors import CompatError

# A command's module is imported when it runs (or shows its --help), never to build the
# list of commands: `--help` stays quick, and `python -m compat annotations` also runs
# inside a cell, where only onnx, onnxruntime and numpy are installed.

DESCRIPTION = """\
Which onnx and onnxruntime releases your models and tests work with: one isolated
environment per pinned release, your models, your test command and a corpus of rare-but-
legal ONNX forms in each, and a table of what passes and fails where, with the reason.

start here:
  onnx-compat init                 adopt it in this project ([tool.compat], nox sessions)
  nox -s matrix                    run the matrix -> reports/ (compatibility.md, matrix.html)
  nox -s repro -- onnx==1.18.0     one cell under CI's exact pins, with repro scripts
  nox -s bisect -- --run 'pytest -q' --package onnxruntime
                                   the release where your tests started failing

`onnx-compat COMMAND --help` tells each command's options, with an example; the
documentation site (`nox -s docs` in a clone) has a tutorial, guides and the reference."""


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("onnx-compat")
    except PackageNotFoundError:  # run from a checkout that is not installed
        return "unknown (not installed)"


def load(name: str) -> Command:
    """The module of command `name` (compat/cli/commands/)."""
    return cast(Command, importlib.import_module(COMMANDS[name].module))


def build_parser(name: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, with the options of command `name` only: the others
    are their line of `--help`, so that no other command's module is imported."""
    parser = argparse.ArgumentParser(
        prog="onnx-compat",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"onnx-compat {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for each, row in COMMANDS.items():
        if each != name:
            commands.add_parser(each, help=row.help)
            continue
        command = load(each)
        keywords: dict[str, Any] = getattr(command, "PARSER", {})
        command.add_arguments(commands.add_parser(each, help=row.help, **keywords))
    return parser


def parse(argv: Sequence[str]) -> tuple[Command, object]:
    """The command asked for and its request: the first word not an option names it (the
    top level's options take no value), so only its module is imported."""
    from compat.cli.options import check_options

    name = next((a for a in argv if not a.startswith("-")), None)
    args = build_parser(name if name in COMMANDS else None).parse_args(argv)
    check_options(args)  # nonsense numbers and paths: one line, exit 2, before anything runs
    command = load(args.command)
    return command, command.request(args)


def main_inner(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["annotations"]:  # the in-cell CLI, without the host's dependencies
        from compat.cell.annotations_cli import main as annotations

        return int(annotations(argv[1:]))
    command, request = parse(argv)  # `--help` and `--version` end here, quickly
    return command.run(request)


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
    except BrokenPipeError:  # `onnx-compat plan | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit
        return 0
