"""Benchmark the command line's start: `onnx-compat --help` and `onnx-compat matrix --list`
at HEAD, side by side with an earlier commit ("today" when issue #22 was filed: 7ed6a8c).

    python bench/cli_startup.py [--baseline 7ed6a8c] [--runs 7]

Each command runs as `python -m compat ARGS` (what the `onnx-compat` script runs) with this
Python, in a fresh process, from the checkout's root with the checkout first on
PYTHONPATH; the figure is the best wall time of `--runs` runs, after one untimed run that
writes the bytecode caches. The baseline is checked out into a temporary git worktree,
removed at the end. Prints the date and a table with the ratio.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

COMMANDS = (("--help",), ("matrix", "--list"))


def best(repo: Path, args: tuple[str, ...], runs: int) -> float:
    """The best wall seconds of `python -m compat ARGS` in `repo`, of `runs` runs."""
    env = {**os.environ, "PYTHONPATH": str(repo)}
    command = [sys.executable, "-m", "compat", *args]
    times = []
    for run in range(runs + 1):
        started = time.perf_counter()
        done = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"{' '.join(args)} in {repo} failed:\n{done.stderr[-2000:]}")
        if run:  # the first run writes the bytecode caches
            times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", default="7ed6a8c", help="the commit to compare with")
    parser.add_argument("--runs", type=int, default=7, help="timed runs of each command")
    args = parser.parse_args()
    print(f"{date.today()}, Python {sys.version.split()[0]}, best of {args.runs} runs")
    with tempfile.TemporaryDirectory(prefix="compat-bench-") as tmp:
        old = Path(tmp) / "baseline"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(old),
                        args.baseline], check=True)  # fmt: skip
        try:
            rows = [
                (" ".join(c), best(ROOT, c, args.runs), best(old, c, args.runs)) for c in COMMANDS
            ]
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old)],
                           check=True)  # fmt: skip
    print(f"\n| onnx-compat … (wall) | HEAD | {args.baseline} | ratio |")
    print("|---|---|---|---|")
    for name, ours, theirs in rows:
        print(f"| {name} | {ours:.2f} s | {theirs:.2f} s | {ours / theirs:.2f} |")


if __name__ == "__main__":
    main()
