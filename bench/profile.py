"""Where a matrix run's time goes: per phase (from the run's own timings) and per check
(CPU seconds inside the workers, for the results computed in that run; a check computed
in parts counts in every cell that computed a part, with that part's time).

    python bench/profile.py [reports/matrix.json]

Run `nox -s matrix -- --fresh` first for a profile of a run that computes everything.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path


def main() -> None:
    path = Path(sys.argv[1] if len(sys.argv) > 1 else "reports/matrix.json")
    report = json.loads(path.read_text())
    run = report["run"]
    print(f"{path}: {len(report['results'])} results, {run.get('seconds')} s wall")
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
        print(f"{check:<21} {counts[check]:>8} {shared[check]:>7} {seconds[check]:>9.1f} "
              f"{seconds[check] / total:>7.0%} {each:>9.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
