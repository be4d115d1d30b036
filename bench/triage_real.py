"""Benchmark `nox -s triage` on a real exporter's model: PaddleOCR's v4 recognizer
(paddle2onnx, 860 nodes, 10.9 MB, from the rapidocr-onnxruntime 1.4.4 wheel; see
tests/data/exporters/), on the default plan (27 cells), side by side with an earlier
commit ("today" when issue #22 was filed: 7ed6a8c).

    python bench/triage_real.py [--baseline 7ed6a8c] [--cap 1800] [--skip-baseline]

What users type, on a fresh clone of each commit: `nox -s triage -- MODEL --fresh`, the
environments warm (the shared `.compat/` state directory; a `nox -s matrix` of one seed
case builds them first), every check run again. A run past `--cap` seconds is stopped and
reported as "> cap". Prints the date, the calibration figure, the phases HEAD printed and
a table with the ratio; README's figure comes from it.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from matrix_vs_noxfile import calibration, clone  # noqa: E402  (bench/ is this script's path)

STATE = ROOT / ".compat"


def model(folder: Path) -> Path:
    """The recognizer and its inputs, from the pinned wheel (sha256-checked)."""
    subprocess.run([sys.executable, str(ROOT / "tests/data/exporters/make_models.py"),
                    "--out", str(folder), "--only", "ppocr_v4_rec"], check=True,
                   capture_output=True)  # fmt: skip
    return folder / "ppocr_v4_rec.onnx"


def nox(repo: Path, *args: str, cap: float | None = None) -> tuple[float | None, str]:
    """Seconds (None: stopped at `cap`) and what it printed."""
    started = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-m", "nox", *args], cwd=repo,
                              capture_output=True, text=True, timeout=cap, check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        return None, ""
    if done.returncode not in (0, 1):
        sys.exit(f"nox {' '.join(args)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return time.perf_counter() - started, done.stdout + done.stderr


def triage(repo: Path, path: Path, out: Path, cap: float) -> tuple[float | None, str]:
    nox(repo, "-s", "matrix", "--", "--cases", "pad_pads_from_constant.tensor",
        "--state-dir", str(STATE), "--out", str(out / "warm"))  # fmt: skip
    return nox(repo, "-s", "triage", "--", str(path), "--fresh", "--state-dir", str(STATE),
               "--out", str(out / "triage"), cap=cap)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", default="7ed6a8c", help="the commit to compare with")
    parser.add_argument("--cap", type=float, default=1800, help="seconds before a run stops")
    parser.add_argument("--skip-baseline", action="store_true", help="time HEAD only")
    args = parser.parse_args()
    print(f"{date.today()}, calibrate: {calibration()} (10.8 s or more: a slow hour)")
    with tempfile.TemporaryDirectory(prefix="compat-bench-") as tmp:
        work = Path(tmp)
        path = model(work / "model")
        ours, printed = triage(clone("HEAD", work / "ours"), path, work / "ours-out", args.cap)
        phases = ("1/", "2/", "3/", "4/", "5/", "triaged in")
        print("\n".join(line for line in printed.splitlines() if line.startswith(phases)))
        theirs: float | None = None
        if not args.skip_baseline:
            repo = clone(args.baseline, work / "theirs")
            theirs, _ = triage(repo, path, work / "theirs-out", args.cap)

    def shown(seconds: float | None) -> str:
        return f"> {args.cap:.0f} s (stopped)" if seconds is None else f"{seconds:.0f} s"

    ratio = f"{ours / theirs:.2f}" if ours and theirs else "-"
    print("\n| nox -s triage -- ppocr_v4_rec.onnx --fresh (860 nodes, 27 cells) | HEAD | "
          f"{args.baseline} | ratio |")  # fmt: skip
    print("|---|---|---|---|")
    print(f"| seconds | {shown(ours)} | {'-' if args.skip_baseline else shown(theirs)} | {ratio} |")


if __name__ == "__main__":
    main()
