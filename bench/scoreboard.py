"""Benchmark: the full ONNX backend node-test suite on every onnxruntime release.

    python bench/scoreboard.py [--ort V,V,...]

Runs `python -m compat scoreboard --fresh` (environments reused, no result cache)
and prints cells, checks, wall time and checks per second, the figures the README
quotes. The target: well under 15 minutes on 2 cores for the default axis.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ort", help="onnxruntime releases (default: the configured axis)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="compat-scoreboard-") as out:
        command = [sys.executable, "-m", "compat", "scoreboard", "--fresh", "--out", out]
        if args.ort:
            command += ["--ort", args.ort]
        started = time.perf_counter()
        subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - started
        report = json.loads((Path(out) / "matrix.json").read_text())
    cells, checks = len(report["cells"]), len(report["results"])
    print(f"{cells} onnxruntime releases, {checks} checks "
          f"({checks // max(cells, 1)} per release), wall {wall:.0f} s "
          f"(suite generation included), {checks / wall:.0f} checks/s")  # fmt: skip


if __name__ == "__main__":
    main()
