"""Time a converter library's matrix, adopted as a user does: first run, reruns, an edit.

    nox -s bench -- converter_matrix [--commits c818d4c,HEAD] [--work DIR] [--keep]
                                     [--onnx V,V] [--ort V,V] [--python X.Y,X.Y] [--cross]

The project is onnxconverter-common 1.14.0 from its sdist, every test kept
(tests/data/adopted/make_converter.py DEST: a git checkout of it; its docstring says
what the sdist lacks), adopted exactly as docs/how-to/adopt.md says, once per commit
compared (default: c818d4c, the last commit before issue 32's work, and HEAD), each in
a folder of its own (WORK/COMMIT):

1. a fresh clone of the commit (`repo/`), its wheel built with `uv build --wheel`;
2. a developer venv (`dev/`) with that wheel, nox and uv, active and first on PATH;
3. `onnx-compat init --install WHEEL` in a fresh copy of the project (`project/`): no
   hand edits, init chooses the axes, the Pythons and the command itself (its output is
   printed);
4. `nox -s matrix` four times, each timed (wall, through nox): the first run (nox's
   venv, the project's build and every environment made; uv's package cache warm), a
   no-change rerun, a rerun after `touch TESTFILE` (its modification time only), then
   one after a comment line was appended to it (the project's tree changed).

Every run must exit 0 or 1 (1: some cells fail the project's tests) and print the
terminal's summary ("N computed, N shared between cells, N from earlier runs"); any
other end stops the bench with the command and its output's tail. After each run its
provenance line, the cells by state and the command's outcomes are printed, its whole
output is kept as `nox-N.log` and its reports/ copied to `reports-N/` in the commit's
folder (`--keep` keeps them: bench/plain_venvs.py reads one). `--commits HEAD` runs one
side; the table shows what ran, with the ratio when two sides did. `--onnx`, `--ort`,
`--python` and `--cross` are passed to the matrix (another plan: say so beside its
figure; the axes' partners stay the config's unless `--cross`). The machine
(date, cores, load average) is printed at each side's start and end: on 2 shared cores
the figures vary by the hour.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from adopting import cells, developer, outcomes, provenance, resolved
from timing import ROOT, Run, machine, run

BASELINE = "c818d4c"
PROJECT = "onnxconverter-common 1.14.0"
TOUCHED = "tests/test_float16.py"
#: the terminal's summary a finished matrix prints (compat/workflow/finish.py)
SUMMARY = r"\d+ computed, \d+ shared between cells|nothing changed since the last run"


@dataclass(frozen=True)
class Step:
    """One timed `nox -s matrix` and what its report says."""

    what: str
    run: Run
    provenance: str
    cells: str
    outcomes: str


def adopt(side: Path, wheel: Path, env: dict[str, str]) -> Path:
    """A fresh onnxconverter-common checkout, adopted with `onnx-compat init --install`."""
    project = side / "project"
    script = ROOT / "tests" / "data" / "adopted" / "make_converter.py"
    run([sys.executable, script, project])
    done = run(["onnx-compat", "init", "--install", wheel], cwd=project, environ=env)
    print("    " + done.stdout.strip().replace("\n", "\n    "), flush=True)
    return project


def matrix(project: Path, env: dict[str, str], args: list[str]) -> Run:
    command = ["nox", "-s", "matrix", *(["--", *args] if args else [])]
    return run(command, cwd=project, environ=env, expect=(0, 1), says=SUMMARY)


def step(side: Path, project: Path, env: dict[str, str], args: list[str], what: str) -> Step:
    """One timed matrix run; its output and reports kept in `side`, its summary printed."""
    index = len(list(side.glob("nox-*.log"))) + 1
    done = matrix(project, env, args)
    (side / f"nox-{index}.log").write_text(done.stdout + "\n" + done.stderr)
    shutil.copytree(project / "reports", side / f"reports-{index}", dirs_exist_ok=True)
    taken = Step(what, done, provenance(done), cells(project), outcomes(project))
    print(
        f"  {side.name}: {what}: {done.seconds:.1f} s ({done.seconds / 60:.1f} min); "
        f"{taken.provenance}; {taken.cells}; the command: {taken.outcomes} "
        f"[{machine()}]",
        flush=True,
    )
    return taken


def measure(side: Path, commit: str, args: list[str]) -> tuple[str, list[Step]]:
    """Adopt the project with `commit`'s onnx-compat and time its four matrix runs."""
    print(f"{commit}: started {machine()}", flush=True)
    wheel, env = developer(side, commit)
    name = resolved(side)
    print(f"  {commit} is {name}", flush=True)
    project = adopt(side, wheel, env)
    steps = [
        step(side, project, env, args, "first run"),
        step(side, project, env, args, "no-change rerun"),
    ]
    (project / TOUCHED).touch()
    steps.append(step(side, project, env, args, f"after `touch {TOUCHED}`"))
    with (project / TOUCHED).open("a") as f:
        f.write("# edited by bench/converter_matrix.py\n")
    steps.append(step(side, project, env, args, f"after a comment line appended to {TOUCHED}"))
    print(f"{commit}: ended {machine()}", flush=True)
    return name, steps


def table(sides: dict[str, list[Step]]) -> str:
    """The markdown table, one column per side that ran, the ratio when there are two."""
    names = list(sides)
    two = len(names) == 2
    head = f"| {PROJECT}, whole suite | " + " | ".join(f"`{n}`" for n in names)
    lines = [head + (" | ratio |" if two else " |"), "|---" * (len(names) + 1 + two) + "|"]
    for index, first in enumerate(sides[names[0]]):
        runs = [sides[n][index].run.seconds for n in names]
        row = f"| {first.what} | " + " | ".join(f"{s:.1f} s" for s in runs) + " |"
        lines.append(row + (f" {runs[1] / runs[0]:.2f} |" if two else ""))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--commits", default=f"{BASELINE},HEAD", help="the commits compared")
    parser.add_argument("--onnx", help="the matrix's --onnx (default: what init chose)")
    parser.add_argument("--ort", help="the matrix's --ort (default: what init chose)")
    parser.add_argument("--python", help="the matrix's --python (default: what init chose)")
    parser.add_argument("--cross", action="store_true", help="the matrix's --cross")
    parser.add_argument("--work", type=Path, help="work here (default: a temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    options = parser.parse_args()
    args = []
    for flag in ("onnx", "ort", "python"):
        value = getattr(options, flag)
        args += [f"--{flag}", value] if value else []
    args += ["--cross"] if options.cross else []
    work = (options.work or Path(tempfile.mkdtemp(prefix="compat-bench-converter-"))).resolve()
    shown = " ".join(["nox -s matrix", *(["--", *args] if args else [])])
    print(f"started {machine()}; {shown} in {PROJECT}, in {work}", flush=True)
    sides: dict[str, list[Step]] = {}
    try:
        for commit in options.commits.split(","):
            if (work / commit).exists():
                sys.exit(f"bench: {work / commit} exists; give another --work")
            try:
                name, steps = measure(work / commit, commit, args)
            except SystemExit:  # a run that failed: what the sides before it measured
                if sides:
                    print(table(sides), file=sys.stderr)
                raise
            sides[commit if commit == name else f"{commit} = {name}"] = steps
    finally:
        if not options.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"ended {machine()}\n")
    print(table(sides))
    for name, steps in sides.items():
        print(f"\n{name}:")
        for taken in steps:
            print(f"- {taken.what}: {taken.provenance}; {taken.cells}; {taken.outcomes}")


if __name__ == "__main__":
    main()
