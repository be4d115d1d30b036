"""Where a default matrix run's time goes: per phase, and per check in the workers.

    nox -s bench -- profile [MATRIX.json]

Without a file: `nox -s matrix -- --fresh` on a fresh clone, warm environments and nox's
venv kept (an untimed `nox -s matrix` in the same state directory builds them from the
warm uv package cache); both must exit 0. Then, for that run (or the stored run given):
the seconds per phase (the run's own timings), and per check how many results were
computed in their cell (a check computed in parts counts in every cell that computed a
part, with that part's time), how many were shared from another cell, and the CPU
seconds inside the workers.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from timing import clone, machine, nox


def fresh_run(work: Path) -> tuple[dict[str, Any], float]:
    """The report of a `--fresh` default matrix on a fresh clone, and its wall seconds."""
    repo, state = clone("HEAD", work / "clone"), ["--state-dir", str(work / "state")]
    nox(repo, "-s", "matrix", "--", *state, "--out", str(work / "warm"))
    done = nox(repo, "-s", "matrix", "--", *state, "--fresh", "--out", str(work / "out"))
    return json.loads((work / "out" / "matrix.json").read_text()), done.seconds


def main() -> None:
    print(f"started {machine()}", flush=True)
    if len(sys.argv) > 1:
        path = Path(sys.argv[1])
        report, said = json.loads(path.read_text()), f"{path}"
    else:
        with tempfile.TemporaryDirectory(prefix="compat-bench-") as tmp:
            report, wall = fresh_run(Path(tmp))
        said = (
            f"`nox -s matrix -- --fresh` on a fresh clone, warm environments, nox's venv "
            f"kept: {wall:.1f} s through nox"
        )
        print(f"ended {machine()}")
    run = report["run"]
    print(f"{said}: {len(report['results'])} results, {run.get('seconds')} s in the engine")
    print("\nphase            seconds")
    for phase, seconds in run.get("phases", {}).items():
        print(f"{phase:<16} {seconds:>7}")
    seconds: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    shared: dict[str, int] = defaultdict(int)
    for result in report["results"]:
        if result.get("origin", "") == "":
            seconds[result["check"]] += result["seconds"]
            counts[result["check"]] += 1
        elif result["origin"] != "cache":
            shared[result["check"]] += 1
    total = sum(seconds.values()) or 1.0
    print("\ncheck                 computed  shared  worker s   share   ms each")
    for check in sorted(seconds, key=lambda c: -seconds[c]):
        each = 1000 * seconds[check] / counts[check]
        print(
            f"{check:<21} {counts[check]:>8} {shared[check]:>7} {seconds[check]:>9.1f} "
            f"{seconds[check] / total:>7.0%} {each:>9.2f}"
        )
    print(f"{'total':<21} {sum(counts.values()):>8} {sum(shared.values()):>7} {total:>9.1f}")


if __name__ == "__main__":
    main()
