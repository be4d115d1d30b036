"""`onnx-compat merge`: the `--out` directories of shards combined into one report, with
the terminal summary of a whole run."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class MergeRequest:
    """The shards' report directories, and where the merged report goes."""

    dirs: tuple[Path, ...]
    out: Path = Path("reports")


PARSER: dict[str, Any] = {
    "description": "Combines the --out directories of `matrix --shard K/N` runs into the "
    "report one run would have written, prints its summary and exits as that run would. "
    "Refuses shards of different plans, case files or generator onnx.",
    "epilog": "example: onnx-compat merge shard1 shard2 shard3 shard4 --out reports",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dirs", nargs="+", type=Path, metavar="DIR", help="a shard's --out")
    parser.add_argument(
        "--out", type=Path, default=Path("reports"), help="where the merged report goes"
    )


def request(args: argparse.Namespace) -> MergeRequest:
    return MergeRequest(tuple(args.dirs), args.out)


def run(request: MergeRequest) -> int:
    from compat.core.files import warn
    from compat.render.outputs import write_reports
    from compat.state.merge import merge, merge_logs
    from compat.workflow.finish import finish

    report = merge(list(request.dirs))
    for left in merge_logs(list(request.dirs), request.out):
        warn(f"{left}: not copied")
    return finish(report, write_reports(report, request.out))
