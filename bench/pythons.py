"""Benchmark the Python axis as users type it: the default matrix on five Pythons against
the default matrix on one, through `nox -s matrix` on a fresh clone.

    python bench/pythons.py [--pythons 3.9,3.10,3.11,3.12,3.13]

Four runs, back to back, each in a state directory of its own (so every environment is
built, from this machine's warm uv package cache, as on a CI runner with a cache):

1. `nox -s matrix` — the default plan on the interpreter nox runs (one Python), fresh.
2. the same again, nothing changed (the no-change rerun).
3. `nox -s matrix -- --python PYTHONS` — the default axes on every Python, fresh.
4. the same again, nothing changed.

Prints the date, the cells built (ready / no-wheel) and a table of wall times with the
ratio five-Python / one-Python; README's figures come from it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def nox_matrix(repo: Path, state: Path, out: Path, *args: str) -> float:
    """Wall seconds of `nox -s matrix -- --state-dir STATE --out OUT ARGS`."""
    command = [sys.executable, "-m", "nox", "-s", "matrix", "--",
               "--state-dir", str(state), "--out", str(out), *args]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(command, cwd=repo, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} exited {done.returncode}:\n{done.stdout[-3000:]}")
    return wall


def states(out: Path) -> str:
    cells = json.loads((out / "matrix.json").read_text())["cells"]
    counts = Counter(c["state"] for c in cells)
    return ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pythons", default="3.9,3.10,3.11,3.12,3.13")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="compat-bench-pythons-") as tmp:
        repo = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(repo)], check=True)
        rows = []
        for label, extra in (("one Python", ()), ("five Pythons", ("--python", args.pythons))):
            state, out = Path(tmp) / f"state-{len(rows)}", Path(tmp) / f"out-{len(rows)}"
            fresh = nox_matrix(repo, state, out, *extra)
            again = nox_matrix(repo, state, out, *extra)
            rows.append((label, fresh, again, states(out)))
    (_, one_fresh, one_again, one_cells), (_, five_fresh, five_again, five_cells) = rows
    print(f"{date.today()}, `nox -s matrix` on a fresh clone, environments built from a warm "
          "package cache")  # fmt: skip
    print(f"one Python: {one_cells}; five Pythons ({args.pythons}): {five_cells}\n")
    print("| measurement | five Pythons | one Python | ratio |")
    print("|---|---|---|---|")
    print(f"| default axes, fresh state | {five_fresh:.0f} s | {one_fresh:.0f} s "
          f"| {five_fresh / one_fresh:.1f} |")  # fmt: skip
    print(f"| no-change rerun | {five_again:.1f} s | {one_again:.1f} s "
          f"| {five_again / one_again:.1f} |")  # fmt: skip


if __name__ == "__main__":
    main()
