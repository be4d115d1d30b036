"""Time ONNX's whole backend node-test suite on every onnxruntime release (the scoreboard).

    nox -s bench -- scoreboard [--ort V,V,...]

Runs `onnx-compat scoreboard --fresh` (`python -m compat`, no nox) with environments
already built — an untimed scoreboard of one test (`onnx_backend.test_abs*`) builds them
first, in a state directory of its own, from the warm uv package cache — and no result
cache (`--fresh`); the wall time includes generating the suite with the host's onnx.
Both runs must exit 0 (no broken cell). Prints the date, the load, cells, checks, wall
time and checks per second. The target: well under 15 minutes on 2 cores for the
default axis.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from timing import calibration, machine, run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ort", help="onnxruntime releases (default: the configured axis)")
    args = parser.parse_args()
    print(f"started {machine()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="compat-scoreboard-") as tmp:
        state, out = Path(tmp) / "state", Path(tmp) / "out"
        command = [sys.executable, "-m", "compat", "scoreboard", "--state-dir", str(state)]
        if args.ort:
            command += ["--ort", args.ort]
        warm = ["--cases", "onnx_backend.test_abs*", "--out", str(Path(tmp) / "warm")]
        run([*command, *warm])
        done = run([*command, "--fresh", "--out", str(out)], says=r"results in ")
        report = json.loads((out / "matrix.json").read_text())
        calibrated = calibration(state)
    cells, checks = len(report["cells"]), len(report["results"])
    print(f"ended {machine()}; calibrate: {calibrated} (lower is faster)")
    print(
        f"{cells} onnxruntime releases, {checks} checks ({checks // max(cells, 1)} per "
        f"release), wall {done.seconds:.0f} s (environments built before, no result cache, "
        f"the suite's generation included), {checks / done.seconds:.0f} checks/s"
    )


if __name__ == "__main__":
    main()
