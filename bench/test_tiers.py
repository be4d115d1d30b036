"""Time the edit loop and the whole suite as a developer types them, against an earlier commit.

    nox -s bench -- test_tiers [--baseline c818d4c] [--tier quick|tests]

`nox -s quick` (or `nox -s tests` with `--tier tests`) on a fresh clone of HEAD, side by
side with the same on a fresh clone of the baseline (default c818d4c, before issue #31
put the suite on both cores). Each side runs the session once untimed (nox creates and
fills its venv from the warm uv cache), then once timed: the figure is that second
run's wall time, nox included, venv reused. Both must exit 0. Prints the date, the load,
a table with the ratio and the ten slowest tests of HEAD's timed run (pytest's
`--durations=10`).
"""

from __future__ import annotations

import argparse
import re
import tempfile
from pathlib import Path

from timing import clone, machine, nox


def timed(repo: Path, tier: str) -> tuple[float, list[str]]:
    """The wall seconds of the second `nox -s TIER` in `repo`, and its slowest tests."""
    quiet = ("-q", "-p", "no:cacheprovider")
    nox(repo, "-s", tier, "--", *quiet, says=r" passed")
    done = nox(repo, "-s", tier, "--", *quiet, "--durations=10", says=r" passed")
    slowest = re.findall(r"^\s*[0-9.]+s (?:call|setup|teardown)\s+\S+", done.stdout, re.M)
    return done.seconds, slowest[:10]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", default="c818d4c", help="the commit to compare with")
    parser.add_argument("--tier", choices=("quick", "tests"), default="quick")
    args = parser.parse_args()
    print(f"started {machine()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="compat-bench-tiers-") as tmp:
        ours, slowest = timed(clone("HEAD", Path(tmp) / "head"), args.tier)
        theirs, _ = timed(clone(args.baseline, Path(tmp) / "baseline"), args.tier)
    print(f"ended {machine()}")
    print(f"nox -s {args.tier} on a fresh clone, its venv made by an untimed first run")
    print(f"\n| nox -s {args.tier} (wall) | HEAD | {args.baseline} | ratio |")
    print("|---|---|---|---|")
    print(f"| second run | {ours:.1f} s | {theirs:.1f} s | {ours / theirs:.2f} |")
    print("\nslowest tests at HEAD:")
    for line in slowest:
        print(f"  {line.strip()}")


if __name__ == "__main__":
    main()
