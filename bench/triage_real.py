"""Time `nox -s triage` on PaddleOCR's v4 recognizer (860 nodes) against an earlier commit.

    nox -s bench -- triage_real [--baseline 7ed6a8c] [--cap 1800] [--skip-baseline]
                                [--model ppocr_v4_rec|smart_turn_v3_2]

`--model smart_turn_v3_2`: pipecat's Smart Turn v3.2, an 8.7 MB QDQ-quantized Whisper
encoder (tests/data/new_exporters/), instead.

The model: PaddleOCR's v4 recognizer (paddle2onnx, 860 nodes, 10.9 MB, from the
rapidocr-onnxruntime 1.4.4 wheel; see tests/data/exporters/), on the default plan (27
cells), beside an earlier commit ("today" when issue #22 was filed: 7ed6a8c).

What users type, on a fresh clone of each commit: `nox -s triage -- MODEL --fresh`, warm
environments and nox's venv kept (an untimed `nox -s matrix` of one seed case, exit 0,
builds them first, each commit in a state directory of its own, from the warm uv
package cache), every check run again. A triage must exit 0 and say "triaged in"; one
past `--cap` seconds is stopped, with every process it started, and reported as
"> cap". Prints the date, the load, the calibration figure, the phases HEAD printed and
a table with the ratio.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from timing import ROOT, Run, calibration, capped, clone, machine, nox, nox_command, run

#: name -> (the script that makes it from its pinned wheel, what it is)
MODELS = {
    "ppocr_v4_rec": ("tests/data/exporters/make_models.py", "860 nodes"),
    "smart_turn_v3_2": ("tests/data/new_exporters/make_models.py", "8.7 MB QDQ encoder"),
}


def model(folder: Path, name: str) -> Path:
    """The model and its inputs, from the pinned wheel (sha256-checked)."""
    maker = ROOT / MODELS[name][0]
    run([sys.executable, maker, "--out", folder, "--only", name])
    return folder / f"{name}.onnx"


def triage(repo: Path, path: Path, state: Path, out: Path, cap: float) -> Run | None:
    """The warm-up matrix, then the timed triage (None: stopped at `cap`)."""
    warm = ("--cases", "pad_pads_from_constant.tensor", "--out", str(out / "warm"))
    nox(repo, "-s", "matrix", "--", *warm, "--state-dir", str(state))
    command = nox_command("-s", "triage", "--", str(path), "--fresh", "--state-dir", str(state))
    command += ["--out", str(out / "triage")]
    return capped(command, cap, cwd=repo, says=r"triaged in ")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", default="7ed6a8c", help="the commit to compare with")
    parser.add_argument("--cap", type=float, default=1800, help="seconds before a run stops")
    parser.add_argument("--skip-baseline", action="store_true", help="time HEAD only")
    parser.add_argument("--model", choices=sorted(MODELS), default="ppocr_v4_rec")
    args = parser.parse_args()
    print(f"started {machine()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="compat-bench-") as tmp:
        work = Path(tmp)
        path = model(work / "model", args.model)
        repo = clone("HEAD", work / "ours")
        ours = triage(repo, path, work / "ours-state", work / "ours-out", args.cap)
        calibrated = calibration(work / "ours-state")
        if ours is not None:
            phases = ("1/", "2/", "3/", "4/", "5/", "finding ", "triaged in")
            printed = ours.stdout.splitlines()
            print("\n".join(line for line in printed if line.startswith(phases)))
        theirs: Run | None = None
        if not args.skip_baseline:
            repo = clone(args.baseline, work / "theirs")
            theirs = triage(repo, path, work / "theirs-state", work / "theirs-out", args.cap)

    def shown(done: Run | None) -> str:
        return f"> {args.cap:.0f} s (stopped)" if done is None else f"{done.seconds:.0f} s"

    if ours and theirs:
        ratio = f"{ours.seconds / theirs.seconds:.2f}"
    elif ours and not args.skip_baseline:
        ratio = f"< {ours.seconds / args.cap:.2f}"
    else:
        ratio = "-"
    baseline = "-" if args.skip_baseline else shown(theirs)
    print(f"ended {machine()}; calibrate: {calibrated} (lower is faster)")
    print(
        f"\n| nox -s triage -- {args.model}.onnx --fresh ({MODELS[args.model][1]}, 27 cells), "
        "fresh clone, "
        f"warm environments, nox's venv kept | HEAD | {args.baseline} | ratio |"
    )
    print("|---|---|---|---|")
    print(f"| seconds | {shown(ours)} | {baseline} | {ratio} |")


if __name__ == "__main__":
    main()
