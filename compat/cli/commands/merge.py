"""`onnx-compat merge`: the `--out` directories of shards combined into one report, with
the terminal summary of a whole run."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class MergeRequest:
    """The shards' report directories, and where the merged report goes."""

    dirs: tuple[Path, ...]
    out: Path = Path("reports")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dirs", nargs="+", type=Path, metavar="DIR")
    parser.add_argument("--out", type=Path, default=Path("reports"))


def request(args: argparse.Namespace) -> MergeRequest:
    return MergeRequest(tuple(args.dirs), args.out)


def run(request: MergeRequest) -> int:
    from compat.render.outputs import write_reports
    from compat.state.merge import merge, merge_logs
    from compat.workflow.finish import finish

    report = merge(list(request.dirs))
    merge_logs(list(request.dirs), request.out)
    return finish(report, write_reports(report, request.out))
