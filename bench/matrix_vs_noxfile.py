"""Benchmark what users type, side by side in one run: `nox -s matrix` on a fresh clone.

    python bench/matrix_vs_noxfile.py [--baseline COMMIT] [--skip-handwritten]

Three comparisons, each run back to back on this machine (its speed varies up to 2x
by the hour; the calibration figure of ../shared/tools/calibrate is printed first
when that tool is there):

1. The default matrix with `--fresh` and warm environments: `nox -s matrix` on a
   fresh clone of HEAD vs the same on a fresh clone of the baseline commit (default
   8d46758, the release before distinct-work scheduling), sharing one state
   directory's environments and one package cache.
2. A no-change rerun of the default matrix through `nox -s matrix` (wall) and inside
   the engine (its own "in N s"), for both.
3. `nox -s matrix` on the benchmark's 8 cells (4 onnx + 4 onnxruntime releases) and
   the seed cases, fresh environments, warm package cache, vs a hand-written
   noxfile (bench/handwritten_noxfile.py: nox's default virtualenv + pip, one
   session after another) running the same cases with the same in-cell code.

Prints a table of wall times and ratios, with the date; README's figures come from it.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEED_CASES = "pad_*,conv_*,shape_*"
CELLS_8 = ["--onnx", "1.17.0,1.18.0,1.20.1,1.21.0", "--ort", "1.17.3,1.20.1,1.22.1,1.24.4"]


def clone(commit: str, where: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(ROOT), str(where)], check=True)
    subprocess.run(["git", "-C", str(where), "checkout", "-q", commit], check=True)
    return where


def nox_matrix(repo: Path, *args: str) -> tuple[float, float | None, str]:
    """Wall seconds of `nox -s matrix -- ARGS`, the engine's own seconds, the output."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "nox", "-s", "matrix", "--", *args],
        cwd=repo, capture_output=True, text=True, check=False,
    )  # fmt: skip
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        sys.exit(f"nox -s matrix -- {' '.join(args)} in {repo} failed:\n{done.stdout[-3000:]}")
    engine = re.findall(r" in ([0-9.]+) s", done.stdout)
    return wall, float(engine[-1]) if engine else None, done.stdout


def calibration() -> str:
    tool = ROOT.parent / "shared" / "tools" / "calibrate"
    pythons = sorted((ROOT / ".compat" / "envs").glob("onnx1.23.2-ort1.24.4/bin/python"))
    if not tool.exists() or not pythons:
        return "n/a"
    done = subprocess.run([str(tool), str(pythons[0])], capture_output=True, text=True)
    lines = done.stdout.strip().splitlines()
    return lines[-1] if lines else "n/a"


def handwritten(work: Path, repo: Path) -> float:
    """The same cells and seed cases through bench/handwritten_noxfile.py, fresh venvs."""
    sys.path.insert(0, str(repo))
    from compat.corpus.discover import discover_cases, write_case
    from compat.plan.config import load_config
    from compat.plan.matrix import expand
    from compat.state import cellcode

    hand = work / "handwritten"
    hand.mkdir()
    shutil.copy(repo / "bench" / "handwritten_noxfile.py", hand / "noxfile.py")
    shutil.copytree(cellcode.stage(work / "staged"), hand / "code")
    corpus = discover_cases(repo / "cases")
    seed = [c for c in corpus.cases if re.match(r"(pad_|conv_|shape_)", c.id)]
    tasks = [
        {"case": f.case.id, "check": check, "case_dir": str(f.directory)}
        for f in (write_case(c, hand / "cases") for c in seed)
        for check in f.case.checks
    ]
    (hand / "plan.json").write_text(json.dumps({"tasks": tasks}))
    config = load_config(repo / "pyproject.toml")
    onnx, ort = CELLS_8[1].split(","), CELLS_8[3].split(",")
    plan = expand(config, tuple(onnx), tuple(ort))
    pairs = [{"onnx": c.onnx, "onnxruntime": c.onnxruntime, "extra": list(c.requirements[4:])}
             for c in plan.cells]  # fmt: skip
    (hand / "pairs.json").write_text(json.dumps(pairs))
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "nox", "-f", "noxfile.py", "--no-color"], cwd=hand,
                   capture_output=True, check=False)  # fmt: skip
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", default="8d46758", help="the commit to compare with")
    parser.add_argument("--skip-handwritten", action="store_true", help="skip comparison 3")
    args = parser.parse_args()
    print(f"{date.today()}, calibrate: {calibration()} (10.8 s or more: a slow hour)")
    rows: list[tuple[str, str, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="compat-bench-") as tmp:
        work = Path(tmp)
        ours_repo = clone("HEAD", work / "ours")
        base_repo = clone(args.baseline, work / "baseline")
        # each side its own state directory with the same pins (an older onnx-compat
        # keys environments by the interpreter path and would rebuild the other's)
        common = ["--state-dir", str(ROOT / ".compat")]  # the environments users have
        base = ["--state-dir", str(work / "baseline-state")]
        # warm: both sides' environments exist and their code is staged
        nox_matrix(ours_repo, *common, "--out", str(work / "o0"))
        nox_matrix(base_repo, *base, "--out", str(work / "b0"))

        ours_fresh, ours_engine, _ = nox_matrix(ours_repo, *common, "--fresh", "--out",
                                                str(work / "o1"))  # fmt: skip
        base_fresh, base_engine, _ = nox_matrix(base_repo, *base, "--fresh", "--out",
                                                str(work / "b1"))  # fmt: skip
        rows.append(("default matrix, --fresh, warm environments", f"{ours_fresh:.1f} s",
                     f"{base_fresh:.1f} s", f"{ours_fresh / base_fresh:.2f}"))  # fmt: skip
        ours_again, ours_engine, _ = nox_matrix(ours_repo, *common, "--out", str(work / "o1"))
        base_again, base_engine, _ = nox_matrix(base_repo, *base, "--out", str(work / "b1"))
        rows.append(("no-change rerun through nox -s matrix", f"{ours_again:.2f} s",
                     f"{base_again:.2f} s", f"{ours_again / base_again:.2f}"))  # fmt: skip
        rows.append(("no-change rerun inside the engine", f"{ours_engine} s", f"{base_engine} s",
                     f"{(ours_engine or 0) / (base_engine or 1):.2f}"))  # fmt: skip

        if not args.skip_handwritten:
            fresh = work / "fresh-state"
            seed = [*CELLS_8, "--cases", SEED_CASES, "--state-dir", str(fresh)]
            nox_matrix(ours_repo, *seed, "--out", str(work / "warm"))  # warms the uv cache
            shutil.rmtree(fresh)
            ours_8, _, _ = nox_matrix(ours_repo, *seed, "--out", str(work / "o8"))
            hand_8 = handwritten(work, ours_repo)
            hand = f"{hand_8:.1f} s (hand-written noxfile)"
            rows.append(("8 cells, seed cases, fresh environments", f"{ours_8:.1f} s", hand,
                         f"{hand_8 / ours_8:.1f}x"))  # fmt: skip

    print(
        f"\n| measurement | nox -s matrix (HEAD) | alternative ({args.baseline} or noted) | ratio |"
    )
    print("|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
