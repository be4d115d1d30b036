"""Benchmark: `nox -s matrix`'s engine vs a hand-written noxfile, side by side, one run.

    python bench/matrix_vs_noxfile.py [--onnx V,V,V,V] [--ort V,V,V,V]

Both sides build one fresh environment per cell (4 onnx + 4 onnxruntime releases)
and run every check of the seed corpus in it; both package caches are warmed by
an untimed first round. Ours: uv environments, cells in parallel, one worker per
cell. Theirs: bench/handwritten_noxfile.py, virtualenv + pip, one session after
another, the same worker and case files. Then ours once more with nothing
changed (the result cache). Prints the three wall times and the ratio.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from compat import cellcode  # noqa: E402
from compat.config import load_config  # noqa: E402
from compat.corpus import discover_cases, write_case  # noqa: E402
from compat.matrix import expand  # noqa: E402

CASES = "pad_*,conv_*,shape_*"


def timed(command: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        sys.exit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return seconds


def ours(state: Path, out: Path, axes: list[str], fresh_envs: bool) -> float:
    if fresh_envs:
        shutil.rmtree(state / "envs", ignore_errors=True)
        shutil.rmtree(state / "cache", ignore_errors=True)
    command = [sys.executable, "-m", "compat", "matrix", *axes, "--cases", CASES,
               "--state-dir", str(state), "--out", str(out)]  # fmt: skip
    return timed(command, ROOT)


def theirs(folder: Path) -> float:
    shutil.rmtree(folder / ".nox", ignore_errors=True)
    return timed([sys.executable, "-m", "nox", "-f", "noxfile.py", "--no-color"], folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--onnx", default="1.17.0,1.18.0,1.20.1,1.21.0")
    parser.add_argument("--ort", default="1.17.3,1.20.1,1.22.1,1.24.4")
    args = parser.parse_args()
    axes = ["--onnx", args.onnx, "--ort", args.ort]
    config = load_config(ROOT / "pyproject.toml")
    plan = expand(config, tuple(args.onnx.split(",")), tuple(args.ort.split(",")))

    with tempfile.TemporaryDirectory(prefix="compat-bench-") as tmp:
        work = Path(tmp)
        hand = work / "handwritten"
        hand.mkdir()
        shutil.copy(ROOT / "bench" / "handwritten_noxfile.py", hand / "noxfile.py")
        shutil.copytree(cellcode.stage(work / "staged"), hand / "code")
        corpus = discover_cases(ROOT / "cases")
        selected = [c for c in corpus.cases if c.family != "annotations"]
        tasks = [
            {"case": f.case.id, "check": check, "case_dir": str(f.directory)}
            for f in (write_case(c, hand / "cases") for c in selected)
            for check in f.case.checks
        ]
        (hand / "plan.json").write_text(json.dumps({"tasks": tasks}))
        pairs = [
            {"onnx": c.onnx, "onnxruntime": c.onnxruntime,
             "extra": [r for r in c.requirements[4:]]}
            for c in plan.cells
        ]  # fmt: skip
        (hand / "pairs.json").write_text(json.dumps(pairs))

        print(f"{len(plan.cells)} cells, {len(tasks)} checks each; warming both package caches")
        ours(work / "state", work / "out", axes, fresh_envs=True)
        theirs(hand)

        ours_fresh = ours(work / "state", work / "out", axes, fresh_envs=True)
        print(f"  onnx-compat, fresh environments:     {ours_fresh:7.1f} s", flush=True)
        hand_fresh = theirs(hand)
        print(f"  hand-written noxfile (virtualenv+pip): {hand_fresh:5.1f} s", flush=True)
        rerun = ours(work / "state", work / "out", axes, fresh_envs=False)
        print(f"  onnx-compat, no-change rerun:        {rerun:7.1f} s")
        print(f"ratio: onnx-compat is {hand_fresh / ours_fresh:.1f}x faster than the hand-written "
              f"noxfile; the cached rerun takes {rerun:.2f} s (target < 3 s)")  # fmt: skip


if __name__ == "__main__":
    main()
