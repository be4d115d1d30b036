"""`python -m compat annotations MODEL.onnx`: do the model's shape annotations hold on real runs?

Runs wherever onnx and onnxruntime are installed (onnx ≥ 1.14, Python 3.9+):
it imports nothing from the host side of this package.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import zipfile
from typing import Dict, List, Optional, Sequence

import numpy as np
import onnx

from compat.cell.inputs import generate_inputs
from compat.cell.observe import check_runs
from compat.cell.semantics import RunVerdict
from compat.cell.untrusted import UntrustedData, load_untrusted

EXIT_OK = 0
EXIT_VIOLATED = 1
EXIT_BAD_INPUT = 2


class BadInput(Exception):
    """One line naming the file and the problem; exit code 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m compat.cell annotations",
        description="Check a model's shape annotations against real runs "
        "(one binding map per run, names global, as ONNX's shape annotation semantics say).",
        epilog="example: onnx-compat annotations model.onnx --dim batch=2 --dim seq=3",
    )
    parser.add_argument("model", metavar="MODEL.onnx", help="the model")
    parser.add_argument(
        "--inputs",
        metavar="FEEDS.npz",
        action="append",
        default=[],
        help="one run's inputs, keyed by input name (repeat for more runs)",
    )
    parser.add_argument(
        "--runtime",
        choices=("ort", "reference"),
        default="ort",
        help="who observes the values: onnxruntime (top-level values) or onnx's reference "
        "evaluator (every value, subgraphs included)",
    )
    parser.add_argument(
        "--dim",
        metavar="NAME=SIZE",
        action="append",
        default=[],
        help="size of a symbolic dimension when inputs are generated",
    )
    parser.add_argument("--json", action="store_true", help="print the verdict as JSON")
    return parser


def load_model(path: str) -> onnx.ModelProto:
    if not os.path.isfile(path):
        raise BadInput("%s: no such file" % path)
    try:
        return load_untrusted(path)  # external data checked and inlined: it is untrusted
    except UntrustedData as exc:
        raise BadInput(str(exc)) from None
    except Exception as exc:
        raise BadInput("%s: not a readable ONNX model (%s)" % (path, type(exc).__name__)) from None


def load_feeds(path: str, model: onnx.ModelProto) -> Dict[str, np.ndarray]:
    """One run's inputs: exactly the model's inputs (initializer-backed ones optional)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            feeds = {name: data[name] for name in data.files}
    except FileNotFoundError:
        raise BadInput("%s: no such file" % path) from None
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise BadInput("%s: not an npz archive of arrays (%s)" % (path, exc)) from None
    initializers = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input]
    required = [n for n in names if n not in initializers]
    missing = [n for n in required if n not in feeds]
    if missing:
        raise BadInput(
            "%s: missing input %r (the model's inputs: %s)"
            % (path, missing[0], ", ".join(required))
        )
    extra = sorted(set(feeds) - set(names))
    if extra:
        raise BadInput(
            "%s: %r is not an input of the model (its inputs: %s)"
            % (path, extra[0], ", ".join(required))
        )
    return feeds


def parse_dims(items: Sequence[str]) -> Dict[str, int]:
    dims = {}
    for item in items:
        name, _, size = item.partition("=")
        if not name or not size.isdigit():
            raise BadInput(
                "--dim %s: write NAME=SIZE with a non-negative size, like --dim N=4" % item
            )
        dims[name] = int(size)
    return dims


def describe(verdict: RunVerdict, label: str) -> List[str]:
    bindings = ", ".join("%s=%d" % kv for kv in sorted(verdict.bindings.items())) or "none"
    if verdict.ok:
        lines = ["%s: ok (bindings: %s)" % (label, bindings)]
    else:
        count = len(verdict.violations)
        lines = [
            "%s: %d violation%s (bindings: %s)"
            % (label, count, "" if count == 1 else "s", bindings)
        ]
        lines += ["  %s" % v.message for v in verdict.violations]
        if verdict.error:
            lines.append("  %s" % verdict.error)
    if verdict.unchecked:
        lines.append(
            "  unchecked (not observable with this runtime): %s" % ", ".join(verdict.unchecked)
        )
    return lines


def main_inner(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    model = load_model(args.model)
    dims = parse_dims(args.dim)
    if args.inputs:
        runs = [(path, load_feeds(path, model)) for path in args.inputs]
    else:
        try:
            runs = [("generated inputs", generate_inputs(model, dims))]
        except ValueError as exc:
            raise BadInput("%s: %s" % (args.model, exc)) from None
    verdicts = check_runs(model, [feeds for _, feeds in runs], args.runtime)
    ok = all(v.ok for v in verdicts)
    if args.json:
        print(json.dumps({"ok": ok, "runs": [v.to_dict() for v in verdicts]}, indent=1))
    else:
        for index, ((label, _), verdict) in enumerate(zip(runs, verdicts)):
            print(
                "\n".join(describe(verdict, "run %d (%s, %s)" % (index + 1, label, args.runtime)))
            )
        print("every annotation holds" if ok else "annotations violated")
    return EXIT_OK if ok else EXIT_VIOLATED


def main(argv: Optional[Sequence[str]] = None) -> int:
    try:
        return main_inner(argv)
    except BadInput as exc:
        print("compat.cell annotations: error: %s" % exc, file=sys.stderr)
        return EXIT_BAD_INPUT
