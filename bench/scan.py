"""Time `onnx-compat scan` on a 221-node model, beside the matrix run that confirms it.

    nox -s bench -- scan [--unrelated 180] [--repeat 7] [--state-dir DIR]

The model: value_ints pads (Constant(value_ints) -> Pad, rejected by onnx < 1.21's
strict shape inference) buried in the middle of ~200 ordinary nodes (tests/helpers.py
`buried`: 221 nodes).

1. `onnx-compat scan MODEL` as users type it (`python -m compat`, no nox), a fresh
   interpreter each time with its bytecode written (the median of --repeat runs after
   an untimed one), and `python -c "import onnx"` beside it: the floor no scan of an
   ONNX file goes under on this machine.
2. `onnx-compat scan MODEL --verify`: the model run on the releases the scan names and
   one outside the affected range on each side, in a state directory of its own (every
   environment built from this machine's warm uv package cache, as on a CI runner with
   a cache), then again with nothing changed (environments and results kept).

The scan exits 1 (it finds the known incompatibility) and must say so; `import onnx`
exits 0. Prints the date, the load, the times and the ratios.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from timing import ROOT, env, machine, repeated, run
from triage import build_model

#: what the scan of the buried model must print (it exits 1 for its finding)
FOUND = r"1 known incompatibility"


def main() -> None:
    import onnx

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--unrelated", type=int, default=180)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--state-dir", type=Path, help="verify's (default: a fresh one)")
    args = parser.parse_args()
    print(f"started {machine()}", flush=True)
    python = sys.executable
    environ = env(PYTHONPATH=str(ROOT))
    with tempfile.TemporaryDirectory(prefix="compat-bench-scan-") as tmp:
        folder = Path(tmp)
        model = build_model(folder, args.unrelated)
        nodes = len(onnx.load(model).graph.node)
        scan = [python, "-m", "compat", "scan", model, "--config", ROOT / "pyproject.toml"]
        floor = statistics.median(
            repeated([python, "-c", "import onnx"], args.repeat, cwd=folder, environ=environ)
        )
        scans = repeated(scan, args.repeat, cwd=folder, expect=1, says=FOUND, environ=environ)
        scanned = statistics.median(scans)
        state = args.state_dir or folder / "state"
        verify = [*scan, "--verify", "--state-dir", state]
        says = FOUND + r"(.|\n)*verify: \d+ \(cell, check\) results"
        fresh = run(verify, cwd=folder, expect=1, says=says, environ=environ).seconds
        again = run(verify, cwd=folder, expect=1, says=says, environ=environ).seconds
    print(f"ended {machine()}")
    print(
        f"a {nodes}-node model (value_ints pads buried in the middle); scan: the median of "
        f"{args.repeat} fresh interpreters, bytecode written, no nox"
    )
    print()
    print("| measurement | seconds | ratio to scan |")
    print("|---|---|---|")
    print(f"| `onnx-compat scan MODEL` | {scanned:.2f} s | 1 |")
    print(f"| `python -c 'import onnx'` (the floor) | {floor:.2f} s | {floor / scanned:.2f} |")
    state_said = (
        "the given state directory"
        if args.state_dir
        else "fresh state directory (environments built from the warm uv cache)"
    )
    print(f"| `scan --verify`, {state_said} | {fresh:.1f} s | {fresh / scanned:.0f} |")
    print(f"| `scan --verify`, nothing changed | {again:.1f} s | {again / scanned:.0f} |")


if __name__ == "__main__":
    main()
