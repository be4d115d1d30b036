"""Time `nox -s matrix` on fresh clones against an earlier commit and a hand-written noxfile.

    nox -s bench -- matrix_vs_noxfile [--baseline COMMIT] [--skip-baseline]
                                      [--skip-handwritten]

What users type, each comparison run back to back on this machine (its speed varies up
to 2x by the hour: the date, the load average and, when ../shared/tools/calibrate is
there, its figure are printed with the table):

1. The default matrix with `--fresh`, warm environments: `nox -s matrix` on a fresh
   clone of HEAD vs the same on a fresh clone of the baseline commit (default 8d46758,
   the release before distinct-work scheduling), each with its own state directory,
   both built first by an untimed run (which also makes each clone's nox venv).
2. A no-change rerun of the default matrix through `nox -s matrix` (wall) and inside
   the engine (its own "in N s"), for both.
3. The benchmark's 8 cells (4 onnx + 4 onnxruntime releases) and the seed cases, fresh
   environments, uv's and pip's package caches warm (an untimed run of each side
   first): `nox -s matrix` as a fresh clone's first command (nox's venv and the
   project's install included), the same again with that venv kept, and a hand-written
   noxfile (bench/handwritten_noxfile.py: nox's virtualenv + pip, one session after
   another) running the same cases with the same in-cell code, its venvs new each run.

Every run must exit 0; one that does not stops the bench with its command and the end
of its output, and no figure is printed.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

from timing import ROOT, Run, calibration, clone, fail, machine, nox, run

SEED_CASES = "pad_*,conv_*,shape_*"
ONNX_8 = ("1.17.0", "1.18.0", "1.20.1", "1.21.0")
ORT_8 = ("1.17.3", "1.20.1", "1.22.1", "1.24.4")
CELLS_8 = ["--onnx", ",".join(ONNX_8), "--ort", ",".join(ORT_8)]


def matrix(repo: Path, out: Path, *args: str) -> tuple[Run, dict[str, object]]:
    """`nox -s matrix -- --out OUT ARGS` in `repo`, which must exit 0, and its report."""
    done = nox(repo, "-s", "matrix", "--", "--out", str(out), *args)
    return done, json.loads((out / "matrix.json").read_text())


def engine_seconds(done: Run) -> float:
    """The engine's own "in N s", the last the run printed."""
    found = re.findall(r" in ([0-9.]+) s", done.stdout)
    if not found:
        fail(["nox", "-s", "matrix"], 'printed no "in N s"', done.stdout)
    return float(found[-1])


def size(report: dict[str, object]) -> str:
    cells, results = report["cells"], report["results"]
    assert isinstance(cells, list) and isinstance(results, list)
    return f"{len(cells)} environments, {len(results):,} results"


def handwritten(work: Path) -> float:
    """Wall seconds of the 8 cells and seed cases through bench/handwritten_noxfile.py in
    a folder of its own (so every venv is new), checked: exit 0 and every task's result."""
    from compat.corpus.discover import discover_cases, write_case
    from compat.plan.config import load_config
    from compat.plan.matrix import expand
    from compat.state import cellcode

    work.mkdir(parents=True)
    shutil.copy(ROOT / "bench" / "handwritten_noxfile.py", work / "noxfile.py")
    shutil.copytree(cellcode.stage(work / "staged"), work / "code")
    corpus = discover_cases(ROOT / "cases")
    seed = [c for c in corpus.cases if re.match(r"(pad_|conv_|shape_)", c.id)]
    tasks = [
        {"case": f.case.id, "check": check, "case_dir": str(f.directory)}
        for f in (write_case(c, work / "cases") for c in seed)
        for check in f.case.checks
    ]
    (work / "plan.json").write_text(json.dumps({"tasks": tasks}))
    plan = expand(load_config(ROOT / "pyproject.toml"), ONNX_8, ORT_8)
    pairs = [
        {"onnx": c.onnx, "onnxruntime": c.onnxruntime, "extra": list(c.requirements.pins[4:])}
        for c in plan.cells
    ]
    (work / "pairs.json").write_text(json.dumps(pairs))
    command = [sys.executable, "-m", "nox", "-f", "noxfile.py", "--no-color"]
    done = run(command, cwd=work)
    for pair in pairs:
        results = work / f"results-{pair['onnx']}-{pair['onnxruntime']}.jsonl"
        lines = results.read_text().splitlines() if results.exists() else []
        if len(lines) != len(tasks):
            fail(
                command,
                f"wrote {len(lines)} of {len(tasks)} results to {results.name}",
                done.stderr,
            )
    return done.seconds


def row(measurement: str, ours: float, theirs: float, who: str, digits: int = 1) -> str:
    """A table row: both wall times and their ratio, ours / theirs."""
    times = f"{ours:.{digits}f} s | {theirs:.{digits}f} s ({who})"
    return f"| {measurement} | {times} | {ours / theirs:.2f} ({theirs / ours:.1f}× faster) |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", default="8d46758", help="the commit to compare with")
    parser.add_argument("--skip-baseline", action="store_true", help="skip comparisons 1-2")
    parser.add_argument("--skip-handwritten", action="store_true", help="skip comparison 3")
    args = parser.parse_args()
    print(f"started {machine()}", flush=True)
    rows: list[str] = []
    with tempfile.TemporaryDirectory(prefix="compat-bench-") as tmp:
        work = Path(tmp)
        ours_repo = clone("HEAD", work / "ours")
        state = ["--state-dir", str(work / "state")]
        if not args.skip_baseline:
            base_repo = clone(args.baseline, work / "baseline")
            base = ["--state-dir", str(work / "baseline-state")]
            matrix(ours_repo, work / "o0", *state)  # builds the environments and nox's venv
            matrix(base_repo, work / "b0", *base)
            ours, report = matrix(ours_repo, work / "o1", *state, "--fresh")
            theirs, _ = matrix(base_repo, work / "b1", *base, "--fresh")
            what = f"default matrix ({size(report)}), `--fresh`, warm environments, nox's venv kept"
            rows.append(row(what, ours.seconds, theirs.seconds, args.baseline))
            ours, _ = matrix(ours_repo, work / "o1", *state)
            theirs, _ = matrix(base_repo, work / "b1", *base)
            what = "no-change rerun, through `nox -s matrix`"
            rows.append(row(what, ours.seconds, theirs.seconds, args.baseline, digits=2))
            what = "no-change rerun, inside the engine (its own figure)"
            ours_engine, theirs_engine = engine_seconds(ours), engine_seconds(theirs)
            rows.append(row(what, ours_engine, theirs_engine, args.baseline, digits=2))
        if not args.skip_handwritten:
            seed = [*CELLS_8, "--cases", SEED_CASES]
            # untimed: uv's and pip's package caches hold every wheel of the 8 cells
            matrix(ours_repo, work / "warm", *seed, "--state-dir", str(work / "warm-state"))
            handwritten(work / "hand-warm")
            first_repo = clone("HEAD", work / "first")
            first, report = matrix(first_repo, work / "f1", *seed, "--state-dir", str(work / "s1"))
            kept, _ = matrix(first_repo, work / "f2", *seed, "--state-dir", str(work / "s2"))
            hand = handwritten(work / "hand")
            what = (
                f"8 cells, seed cases ({size(report)}), fresh environments: a fresh clone's "
                "first `nox -s matrix`, its nox venv and the project's install included"
            )
            rows.append(row(what, first.seconds, hand, "hand-written noxfile"))
            what = "the same, nox's venv kept (a second clean state directory)"
            rows.append(row(what, kept.seconds, hand, "hand-written noxfile"))
        calibrated = calibration(work / ("warm-state" if args.skip_baseline else "state"))
    print(f"ended {machine()}; calibrate: {calibrated} (lower is faster)")
    print("every run on a fresh clone of HEAD (or the baseline), uv's package cache warm\n")
    print("| measurement | `nox -s matrix` (HEAD) | alternative | ratio |")
    print("|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
