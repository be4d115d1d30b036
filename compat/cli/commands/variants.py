"""`onnx-compat variants MODEL`: every applicable spelling of a model, the rewrite
catalogue applied (compat/followup/variants.py)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class VariantsRequest:
    """The model, where its variants go (None: MODEL~variants/ beside it), which rewrites."""

    model: Path
    out: Path | None = None
    rewrites: str | None = None  # `GLOB[,GLOB]`; None: every rewrite


PARSER: dict[str, Any] = {
    "description": "Writes every legal respelling of MODEL that the rewrite catalogue "
    "applies to, each computing the same outputs, with its inputs beside it and "
    "variants.json (rewrite, where, upstream reports). Run them on every release with "
    "`onnx-compat matrix --cases-dir DIR`.",
    "epilog": "example: onnx-compat variants model.onnx --out spellings --rewrites 'constant_*'",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", type=Path, help="the .onnx file (MODEL.npz beside it: inputs)")
    parser.add_argument("--out", type=Path, help="folder (default: MODEL~variants/ beside it)")
    parser.add_argument("--rewrites", metavar="GLOB[,GLOB]", help="only these rewrites")


def request(args: argparse.Namespace) -> VariantsRequest:
    return VariantsRequest(args.model, args.out, args.rewrites)


def run(request: VariantsRequest) -> int:
    from compat.followup.variants import write_variants  # onnx: imported when it runs

    return write_variants(request.model, request.out, request.rewrites)
