"""`onnx-compat annotations MODEL …`: the in-cell annotation checker
(compat/cell/annotations_cli.py), run here. main() hands it the command line before any
parsing; this module is its line in `--help`, and the way there for a command line that
does not start with it."""

from __future__ import annotations

import argparse
from typing import Any

#: every option belongs to the annotations CLI itself
PARSER: dict[str, Any] = {"add_help": False, "prefix_chars": "\0"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rest", nargs="*")


def request(args: argparse.Namespace) -> tuple[str, ...]:
    return tuple(args.rest)


def run(request: tuple[str, ...]) -> int:
    from compat.cell.annotations_cli import main

    return int(main(list(request)))
