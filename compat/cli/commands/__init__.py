"""The commands of `onnx-compat`, one module each, in one table read lazily: the
top-level `--help` lists them from the table alone, and `onnx-compat COMMAND …` imports
that command's module only.

A command module has:
    add_arguments(parser)   its options (the shared groups are compat/cli/options.py);
    request(args)           the parsed options as a frozen request, read once;
    run(request) -> int     the command itself, returning the exit code;
and, when it needs one, PARSER: more keywords for its parser (a `description`).
A new command is its module and one row here.
"""

from __future__ import annotations

import argparse
from typing import Any, NamedTuple, Protocol


class Row(NamedTuple):
    """A command: the module that implements it and its line in `onnx-compat --help`."""

    module: str
    help: str


class Command(Protocol):
    """What main() needs of a command module."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def request(self, args: argparse.Namespace) -> Any: ...

    def run(self, request: Any) -> int: ...


_HERE = "compat.cli.commands"

COMMANDS: dict[str, Row] = {
    "matrix": Row(f"{_HERE}.matrix", "run the corpus in one environment per release"),
    "scoreboard": Row(
        f"{_HERE}.scoreboard", "ONNX's backend node tests on every onnxruntime release"
    ),
    "plan": Row(f"{_HERE}.plan", "print the cells, e.g. as a CI job matrix"),
    "report": Row(f"{_HERE}.report", "re-render reports from stored results"),
    "merge": Row(f"{_HERE}.merge", "combine the --out directories of shards"),
    "init": Row(
        f"{_HERE}.init",
        "set this project up to run the matrix: [tool.compat], nox sessions, .gitignore",
    ),
    "variants": Row(
        f"{_HERE}.variants", "write every equivalent spelling of a model (the rewrite catalogue)"
    ),
    "repro": Row(f"{_HERE}.repro", "rebuild one cell under exact pins, write scripts"),
    "bisect": Row(f"{_HERE}.bisect", "find the release where an outcome changes"),
    "triage": Row(
        f"{_HERE}.triage",
        "a failing model: where, since when, a minimal model, a workaround, a report",
    ),
    "annotations": Row(
        f"{_HERE}.annotations",
        "do a model's shape annotations hold on real runs? (`annotations --help`)",
    ),
    "scan": Row(
        f"{_HERE}.scan",
        "the known incompatibilities a model carries, in a second, with no environment",
    ),
    "knowledge": Row(f"{_HERE}.knowledge", "every known bug scan detects, as a list or JSON"),
}
