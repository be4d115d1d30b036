"""Benchmark `onnx-compat scan` on a 200-node model, side by side with the matrix run
that confirms it (`scan --verify`).

    python bench/scan.py [--unrelated 180] [--repeat 7] [--state-dir DIR]

The model: value_ints pads (Constant(value_ints) -> Pad, rejected by onnx < 1.21's
strict shape inference) buried in the middle of ~200 ordinary nodes (tests/helpers.py
`buried`: 221 nodes).

1. `onnx-compat scan MODEL` as users type it, a fresh interpreter each time (the median
   of --repeat runs), and `python -c "import onnx"` beside it: the floor no scan of an
   ONNX file goes under on this machine.
2. `onnx-compat scan MODEL --verify`: the model run on the releases the scan names and
   one outside the affected range on each side, in a state directory of its own (every
   environment built from this machine's warm uv package cache, as on a CI runner with
   a cache), then again with nothing changed (environments and results kept).

Prints the date, the times and the ratios; README's scan figure comes from it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from triage import build_model  # noqa: E402  (bench/ is this script's path: triage's model)


def wall(command: list[str], cwd: Path, codes: tuple[int, ...] = (0, 1)) -> float:
    """Wall seconds of one run; an exit code outside `codes` stops the benchmark. Bytecode
    is written (PYTHONDONTWRITEBYTECODE unset), as `pip install` compiles it: the runs time
    the scan, not the compiler."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - started
    if done.returncode not in codes:
        sys.exit(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return seconds


def median(command: list[str], cwd: Path, repeat: int) -> float:
    wall(command, cwd)  # the first run writes the bytecode; not counted
    return statistics.median(wall(command, cwd) for _ in range(repeat))


def main() -> None:
    import onnx

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--unrelated", type=int, default=180)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--state-dir", type=Path, help="verify's (default: a fresh one)")
    args = parser.parse_args()
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="compat-bench-scan-") as tmp:
        folder = Path(tmp)
        model = build_model(folder, args.unrelated)
        nodes = len(onnx.load(model).graph.node)
        config = str(ROOT / "pyproject.toml")
        scan = [python, "-m", "compat", "scan", str(model), "--config", config]
        floor = median([python, "-c", "import onnx"], folder, args.repeat)
        scanned = median(scan, folder, args.repeat)
        state = args.state_dir or folder / "state"
        verify = [*scan, "--verify", "--state-dir", str(state)]
        fresh = wall(verify, folder)
        again = wall(verify, folder)
    print(f"{date.today()}, a {nodes}-node model (value_ints pads buried in the middle), "
          f"{os.cpu_count()} cores; scan: the median of {args.repeat} fresh "
          "interpreters")  # fmt: skip
    print()
    print("| measurement | seconds | ratio to scan |")
    print("|---|---|---|")
    print(f"| `onnx-compat scan MODEL` | {scanned:.2f} s | 1 |")
    print(f"| `python -c 'import onnx'` (the floor) | {floor:.2f} s | {floor / scanned:.2f} |")
    state_said = "the given state directory" if args.state_dir else "fresh state directory"
    print(f"| `scan --verify`, {state_said} | {fresh:.1f} s | {fresh / scanned:.0f} |")
    print(f"| `scan --verify`, nothing changed | {again:.1f} s | {again / scanned:.0f} |")


if __name__ == "__main__":
    main()
