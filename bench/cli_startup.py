"""Time the command line's start, `--help` and `matrix --list`, against an earlier commit.

    nox -s bench -- cli_startup [--baseline 7ed6a8c] [--runs 7]

`onnx-compat --help` and `onnx-compat matrix --list` at HEAD, side by side with an
earlier commit ("today" when issue #22 was filed: 7ed6a8c). Each command runs as
`python -m compat ARGS` (what the `onnx-compat` script runs, no nox) with this Python,
in a fresh process, from the checkout's root with the checkout first on PYTHONPATH;
the figure is the best wall time of `--runs` runs, after one untimed run that writes
the bytecode and the listing of the cases (`matrix --list` then reads it while no case
source changed). Every run must exit 0. The baseline is checked out into a temporary
git worktree, removed at the end. Prints the date, the load and a table with the ratio.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from timing import ROOT, env, machine, repeated, worktree

COMMANDS = (("--help",), ("matrix", "--list"))


def best(repo: Path, args: tuple[str, ...], runs: int) -> float:
    """The best wall seconds of `python -m compat ARGS` in `repo`, of `runs` runs."""
    command = [sys.executable, "-m", "compat", *args]
    return min(repeated(command, runs, cwd=repo, environ=env(PYTHONPATH=str(repo))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", default="7ed6a8c", help="the commit to compare with")
    parser.add_argument("--runs", type=int, default=7, help="timed runs of each command")
    args = parser.parse_args()
    print(f"started {machine()}", flush=True)
    with (
        tempfile.TemporaryDirectory(prefix="compat-bench-") as tmp,
        worktree(args.baseline, Path(tmp) / "baseline") as old,
    ):
        rows = [(" ".join(c), best(ROOT, c, args.runs), best(old, c, args.runs)) for c in COMMANDS]
    print(f"ended {machine()}")
    print(
        f"Python {sys.version.split()[0]}, best of {args.runs} fresh processes after an "
        "untimed one (bytecode and the case listing cached), no nox"
    )
    print(f"\n| onnx-compat … (wall) | HEAD | {args.baseline} | ratio |")
    print("|---|---|---|---|")
    for name, ours, theirs in rows:
        print(f"| {name} | {ours:.2f} s | {theirs:.2f} s | {ours / theirs:.2f} |")


if __name__ == "__main__":
    main()
