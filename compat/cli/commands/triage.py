"""`onnx-compat triage MODEL`: from a failing model to an upstream report
(compat/followup/triage/)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compat.cli.options import add_axes, add_config, add_run, add_setup, request_of

if TYPE_CHECKING:
    from compat.followup.triage.command import TriageRequest

PARSER: dict[str, Any] = {
    "description": "Runs MODEL across the matrix (or the axes given), bisects every finding "
    "on the package index, reduces the model to a minimal one that fails the same way, "
    "tries the rewrite catalogue for a workaround, and writes report.md, triage.json, "
    "minimal.onnx and repro.py to --out (default reports/triage/MODEL/).",
    "epilog": "example: onnx-compat triage model.onnx --axis onnxruntime --check ort_run",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", type=Path, help="the .onnx file")
    parser.add_argument(
        "--inputs",
        type=Path,
        metavar="NPZ",
        help="its inputs (default: MODEL.npz beside it, else generated from the annotations)",
    )
    parser.add_argument("--check", help="triage this check only (default: every check)")
    add_config(parser)
    add_axes(parser)
    add_setup(parser)
    add_run(parser)
    # triage's own defaults for two shared options: no --out is reports/triage/MODEL/
    # (TriageRequest.out), and an unexpected result is run once more, not three times
    parser.set_defaults(out=None, reruns=1)


def request(args: argparse.Namespace) -> TriageRequest:
    from compat.followup.triage.command import TriageRequest

    return TriageRequest(request_of(args), args.model, args.inputs, args.check)


def run(request: TriageRequest) -> int:
    from compat.followup.triage.command import triage

    return triage(request)
