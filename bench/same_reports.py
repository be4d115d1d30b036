"""Render the same stored results with HEAD and with an earlier commit, and compare the files.

    python bench/same_reports.py [--baseline dac9cd8]

A restructuring of the code must not change what a user reads: each committed result
(docs/matrix.json.gz, docs/scoreboard.json.gz, docs/writer_reader.json.gz) is rendered by
`python -m compat report --results FILE --out DIR` (plain and `--ascii`) in a git worktree
of the baseline and in this checkout, and every file is compared byte for byte. Prints one
line per differing file, then a count; exits 1 when any differs. The baseline's worktree
is removed at the end.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ("docs/matrix.json.gz", "docs/scoreboard.json.gz", "docs/writer_reader.json.gz")


def render(repo: Path, out: Path) -> None:
    """Every stored result, plain and --ascii, rendered by the code in `repo` into `out`."""
    env = {**os.environ, "PYTHONPATH": str(repo)}
    for results in RESULTS:
        for style in ((), ("--ascii",)):
            target = out / Path(results).name.split(".")[0] / ("ascii" if style else "plain")
            command = [sys.executable, "-m", "compat", "report", "--results",
                       str(ROOT / results), "--out", str(target), *style]  # fmt: skip
            subprocess.run(command, cwd=repo, env=env, check=True, capture_output=True)


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
    parser.add_argument("--baseline", default="dac9cd8", help="the commit to compare with")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="compat-same-") as tmp:
        base = Path(tmp) / "baseline"
        subprocess.run(["git", "worktree", "add", "--detach", str(base), args.baseline],
                       cwd=ROOT, check=True, capture_output=True)  # fmt: skip
        try:
            render(base, Path(tmp) / "before")
            render(ROOT, Path(tmp) / "after")
            changed = differing(Path(tmp) / "before", Path(tmp) / "after")
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT,
                           check=False)  # fmt: skip
    for name in changed:
        print(f"differs: {name}")
    total = len(RESULTS) * 2
    print(f"{len(changed)} file(s) differ between {args.baseline} and HEAD "
          f"({total} renderings of {len(RESULTS)} stored results)")  # fmt: skip
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
