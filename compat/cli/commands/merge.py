"""`onnx-compat merge`: the `--out` directories of shards combined into one report, with
the terminal summary of a whole run."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compat.cli.options import add_baseline, add_config


@dataclass(frozen=True)
class MergeRequest:
    """The shards' report directories, and where the merged report goes."""

    dirs: tuple[Path, ...]
    out: Path = Path("reports")
    config: Path = Path("pyproject.toml")  # where `--baseline git:REV` finds the repository
    baseline: str | None = None
    fail_on: str = "unexpected"


PARSER: dict[str, Any] = {
    "description": "Combines the --out directories of `matrix --shard K/N` runs into the "
    "report one run would have written, prints its summary (what changed since --baseline "
    "first) and exits as that run would. "
    "Refuses shards of different plans, case files or generator onnx.",
    "epilog": "example: onnx-compat merge shard1 shard2 shard3 shard4 --out reports",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dirs", nargs="+", type=Path, metavar="DIR", help="a shard's --out")
    parser.add_argument(
        "--out", type=Path, default=Path("reports"), help="where the merged report goes"
    )
    add_config(parser)
    add_baseline(parser)


def request(args: argparse.Namespace) -> MergeRequest:
    from compat.workflow.baseline import fail_on

    fail_on(args.fail_on, args.baseline)
    return MergeRequest(tuple(args.dirs), args.out, args.config, args.baseline, args.fail_on)


def run(request: MergeRequest) -> int:
    from compat.core.files import warn
    from compat.render.outputs import write_reports
    from compat.state.merge import merge, merge_logs
    from compat.workflow.baseline import load_baseline, with_baseline
    from compat.workflow.finish import finish

    given = request.baseline
    baseline = load_baseline(given, request.config) if given else None
    report = with_baseline(merge(list(request.dirs)), baseline)
    for left in merge_logs(list(request.dirs), request.out):
        warn(f"{left}: not copied")
    written = write_reports(report, request.out)
    return finish(report, written, fail_on=request.fail_on)
