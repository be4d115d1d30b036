"""Render the same stored results with HEAD and with an earlier commit, and compare the files.

    nox -s bench -- same_reports [--baseline COMMIT]

A restructuring of the code must not change what a user reads: each committed result
(docs/matrix.json.gz, docs/scoreboard.json.gz, docs/writer_reader.json.gz) is rendered by
`python -m compat report --results FILE --out DIR` (plain and `--ascii`) in a git worktree
of the baseline and in this checkout, and every file is compared byte for byte. The
baseline is HEAD by default (what the checkout's uncommitted changes alter); once a
restructuring is committed, give the commit before it. Every rendering must exit 0.
Prints one line per differing file, then a count; exits 1 when any differs. No time is
measured. The baseline's worktree is removed at the end.
"""

from __future__ import annotations

import argparse
import filecmp
import sys
import tempfile
from pathlib import Path

from timing import ROOT, env, machine, run, worktree

RESULTS = ("docs/matrix.json.gz", "docs/scoreboard.json.gz", "docs/writer_reader.json.gz")


def render(repo: Path, out: Path) -> None:
    """Every stored result, plain and --ascii, rendered by the code in `repo` into `out`."""
    for results in RESULTS:
        for style in ((), ("--ascii",)):
            target = out / Path(results).name.split(".")[0] / ("ascii" if style else "plain")
            command = [sys.executable, "-m", "compat", "report", "--results", ROOT / results]
            command += ["--out", target, *style]
            run(command, cwd=repo, environ=env(PYTHONPATH=str(repo)))


def differing(left: Path, right: Path) -> list[str]:
    """Files present on one side only or different, relative to the roots."""
    found = []
    for path in sorted(
        {*left.rglob("*"), *(left / p.relative_to(right) for p in right.rglob("*"))}
    ):
        other = right / path.relative_to(left)
        if path.is_dir() or other.is_dir():
            continue
        if not path.exists() or not other.exists() or not filecmp.cmp(path, other, shallow=False):
            found.append(str(path.relative_to(left)))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", default="HEAD", help="the commit to compare with")
    args = parser.parse_args()
    print(f"started {machine()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="compat-same-") as tmp:
        with worktree(args.baseline, Path(tmp) / "baseline") as base:
            render(base, Path(tmp) / "before")
        render(ROOT, Path(tmp) / "after")
        changed = differing(Path(tmp) / "before", Path(tmp) / "after")
    for name in changed:
        print(f"differs: {name}")
    total = len(RESULTS) * 2
    print(
        f"{len(changed)} file(s) differ between {args.baseline} and this checkout "
        f"({total} renderings of {len(RESULTS)} stored results)"
    )
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
