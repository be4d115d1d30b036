"""Time a real project's matrix: the first run, a no-change rerun, one after a test edit.

    nox -s bench -- project_rerun [--commits BASELINE,HEAD] [--onnx V,V] [--ort V,V]
                                  [--python 3.11] [--work DIR] [--keep]

The project is spox 0.18.2 with its whole suite (tests/data/adopted/make_project.py
DEST --tests all: 665 tests, some failing on both axes), adopted as
docs/how-to/adopt.md says, once per commit compared (default: 9b9fa91, the commit
before issue 32's items 1-3, and HEAD), each in a folder of its own:

1. a fresh clone of the commit, its wheel built with `uv build --wheel`;
2. a developer venv with that wheel, nox, uv and pytest, active and first on PATH;
3. `onnx-compat init --install WHEEL` in a fresh copy of spox (no hand edits);
4. `nox -s matrix -- --python 3.11` four times, each timed (wall, through nox):
   the first run (nox's venv, the project's build and every environment made; uv's
   package cache warm), a no-change rerun, a rerun after `touch tests/test_function.py`
   (its modification time only), then one after a line was appended to it (the
   project's tree changed: its wheel is built again and every cell runs its suite).

Every run must end with exit 1 (spox fails tests on some releases) and print the
terminal's summary; any other end stops the bench with the command and its output's
tail. `--onnx` / `--ort` narrow the axes for a quicker figure (say so beside it). The
machine (date, cores, load average) is printed with the table: on 2 shared cores the
figures vary by the hour.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

from adopting import developer, provenance
from timing import ROOT, Run, machine, run

BASELINE = "9b9fa91"
#: what a matrix of spox ends with: some cells fail its tests
SAYS = r"computed|from earlier runs"
TOUCHED = "tests/test_function.py"


def adopt(side: Path, wheel: Path, env: dict[str, str]) -> Path:
    """A fresh spox with its whole suite, adopted with `onnx-compat init --install`."""
    project = side / "spox"
    script = ROOT / "tests" / "data" / "adopted" / "make_project.py"
    run([sys.executable, script, project, "--tests", "all"])
    run(["onnx-compat", "init", "--install", wheel], cwd=project, environ=env)
    return project


def matrix(project: Path, env: dict[str, str], args: list[str]) -> Run:
    return run(["nox", "-s", "matrix", "--", *args], cwd=project, environ=env, expect=1, says=SAYS)


def measure(side: Path, commit: str, args: list[str]) -> list[tuple[str, Run]]:
    wheel, env = developer(side, commit, "pytest")
    project = adopt(side, wheel, env)
    first = matrix(project, env, args)
    print(f"  {commit}: first run {first.seconds:.1f} s: {provenance(first)}", flush=True)
    again = matrix(project, env, args)
    print(f"  {commit}: no-change rerun {again.seconds:.1f} s: {provenance(again)}", flush=True)
    os.utime(project / TOUCHED)
    touched = matrix(project, env, args)
    print(f"  {commit}: after touch {touched.seconds:.1f} s: {provenance(touched)}", flush=True)
    with (project / TOUCHED).open("a") as f:
        f.write("# edited by bench/project_rerun.py\n")
    edited = matrix(project, env, args)
    print(f"  {commit}: after the edit {edited.seconds:.1f} s: {provenance(edited)}", flush=True)
    return [
        ("first run", first),
        ("no-change rerun", again),
        (f"`touch {TOUCHED}`", touched),
        (f"{TOUCHED} edited (a line appended)", edited),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--commits", default=f"{BASELINE},HEAD", help="the commits compared")
    parser.add_argument("--python", default="3.11", help="the matrix's --python")
    parser.add_argument("--onnx", help="the matrix's --onnx (default: what init chose)")
    parser.add_argument("--ort", help="the matrix's --ort (default: what init chose)")
    parser.add_argument("--work", type=Path, help="work here (default: a temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    options = parser.parse_args()
    args = ["--python", options.python]
    args += ["--onnx", options.onnx] if options.onnx else []
    args += ["--ort", options.ort] if options.ort else []
    work = options.work or Path(tempfile.mkdtemp(prefix="compat-bench-project-"))
    print(f"started {machine()}; nox -s matrix -- {' '.join(args)}", flush=True)
    table: dict[str, list[tuple[str, Run]]] = {}
    try:
        for commit in options.commits.split(","):
            table[commit] = measure(work / commit, commit, args)
    finally:
        if not options.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"ended {machine()}\n")
    commits = list(table)
    print("| spox 0.18.2, whole suite | " + " | ".join(f"`{c}`" for c in commits) + " |")
    print("|---" * (len(commits) + 1) + "|")
    for index, (what, _) in enumerate(table[commits[0]]):
        cells = [f"{table[c][index][1].seconds:.1f} s" for c in commits]
        print(f"| {what} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
