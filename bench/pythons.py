"""Time the default matrix on five Pythons against the same on one, through `nox -s matrix`.

    nox -s bench -- pythons [--pythons 3.9,3.10,3.11,3.12,3.13]

On a fresh clone whose nox venv a first, untimed `nox -s matrix -- --list` has made,
four runs back to back, each pair in a state directory of its own (so every environment
is built, from this machine's warm uv package cache, as on a CI runner with a cache):

1. `nox -s matrix` — the default plan on the interpreter nox runs (one Python), fresh.
2. the same again, nothing changed (the no-change rerun).
3. `nox -s matrix -- --python PYTHONS` — the default axes on every Python, fresh.
4. the same again, nothing changed.

Every run must exit 0 (a Python without wheels for a release is a no-wheel cell, not a
failure). Prints the date, the load, the cells built (ready / no-wheel) and a table of
wall times with the ratio five-Python / one-Python.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import Counter
from pathlib import Path

from timing import clone, machine, nox


def nox_matrix(repo: Path, state: Path, out: Path, *args: str) -> float:
    """Wall seconds of `nox -s matrix -- --state-dir STATE --out OUT ARGS`, exit 0."""
    return nox(
        repo, "-s", "matrix", "--", "--state-dir", str(state), "--out", str(out), *args
    ).seconds


def states(out: Path) -> str:
    cells = json.loads((out / "matrix.json").read_text())["cells"]
    counts = Counter(c["state"] for c in cells)
    return ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pythons", default="3.9,3.10,3.11,3.12,3.13")
    args = parser.parse_args()
    print(f"started {machine()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="compat-bench-pythons-") as tmp:
        repo = clone("HEAD", Path(tmp) / "clone")
        nox(repo, "-s", "matrix", "--", "--list")  # makes nox's venv: not timed
        rows = []
        for extra in ((), ("--python", args.pythons)):
            state, out = Path(tmp) / f"state-{len(rows)}", Path(tmp) / f"out-{len(rows)}"
            fresh = nox_matrix(repo, state, out, *extra)
            again = nox_matrix(repo, state, out, *extra)
            rows.append((fresh, again, states(out)))
    (one_fresh, one_again, one_cells), (five_fresh, five_again, five_cells) = rows
    print(f"ended {machine()}")
    print(
        "`nox -s matrix` on a fresh clone, nox's venv made before (not timed), every "
        "environment built from a warm uv package cache in a state directory of its own"
    )
    print(f"one Python: {one_cells}; five Pythons ({args.pythons}): {five_cells}\n")
    print("| measurement | five Pythons | one Python | ratio |")
    print("|---|---|---|---|")
    print(
        f"| default axes, fresh state | {five_fresh:.0f} s | {one_fresh:.0f} s "
        f"| {five_fresh / one_fresh:.1f} |"
    )
    print(
        f"| no-change rerun | {five_again:.1f} s | {one_again:.1f} s "
        f"| {five_again / one_again:.1f} |"
    )


if __name__ == "__main__":
    main()
