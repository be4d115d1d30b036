"""`onnx-compat scan MODEL`: the known incompatibilities a model carries for a target
range, from what the corpus knows (compat/corpus/scan.py), in well under a second and
with no environment; `--fix` writes it spelled the portable way, `--verify` confirms
each prediction by a run (compat/followup/verify.py)."""

from __future__ import annotations

import argparse
import json
import math
import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compat.core.errors import UsageError
from compat.corpus.scan import BUDGET  # imports no onnx: `scan --help` stays quick

if TYPE_CHECKING:
    import onnx

    from compat.corpus.findings import Finding
    from compat.corpus.scan import Scan
    from compat.followup.verify import Judged


@dataclass(frozen=True)
class ScanRequest:
    """The model, the target range of each package (None: every release), and what else
    to do: print JSON, write the fixed model, verify by running."""

    model: Path
    onnx: str | None = ">=1.18"
    ort: str | None = ">=1.20"
    json: bool = False
    fix: Path | None = None
    verify: bool = False
    corpus: Path | None = None
    config: Path | None = None
    state_dir: Path | None = None
    jobs: int = os.cpu_count() or 1
    budget: float = BUDGET  # seconds
    inputs: Path | None = None  # the .npz whose shapes bind the symbolic dims


PARSER: dict[str, Any] = {
    "description": "Names the known upstream bugs MODEL runs into on the target releases, "
    "from the corpus's detectors, without any environment: the construct, where it is, "
    "which releases fail which check (with the upstream link) and the portable spelling; "
    "the releases that cannot load it at all (its IR version or opset newer than they "
    "read, as measured); and the operators no model of the corpus exercises. Exit 1 when "
    "a finding touches "
    "the target range, 0 when none does, 2 on bad input.",
    "epilog": "example: onnx-compat scan model.onnx --onnx '>=1.18' --fix fixed.onnx",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", type=Path, help="the .onnx file")
    parser.add_argument(
        "--onnx",
        metavar="RANGE",
        default=">=1.18",
        help="the onnx releases it must work with (default '>=1.18'; '': all)",
    )
    parser.add_argument(
        "--ort",
        metavar="RANGE",
        default=">=1.20",
        help="the onnxruntime releases (default '>=1.20'; '': all)",
    )
    parser.add_argument("--json", action="store_true", help="print the findings as JSON")
    parser.add_argument(
        "--fix",
        type=Path,
        metavar="OUT.onnx",
        help="write the model with every applicable portable rewrite applied, "
        "then scan it again (the exit code is then the written model's)",
    )
    parser.add_argument(
        "--verify",
        action="store_true",
        help="run the model on the releases the scan names and one outside "
        "each affected range, and say where prediction and run agree",
    )
    parser.add_argument(
        "--corpus",
        type=Path,
        help="directory of case modules whose detectors to use (default: the built-in corpus)",
    )
    parser.add_argument(
        "--config",
        type=Path,
        help="the file of [tool.compat] whose axes name "
        "the releases (default: ./pyproject.toml when it has one)",
    )
    parser.add_argument(
        "--state-dir",
        type=Path,
        help="--verify's environments and cache (default .compat/ beside the config)",
    )
    parser.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="--verify's cells at once"
    )
    parser.add_argument(
        "--inputs",
        type=Path,
        metavar="NPZ",
        help="the model's inputs, whose shapes give its symbolic dims their sizes (default: "
        "MODEL.npz, MODEL.1.npz … beside it; with none, a dim at 0 is a conditional finding)",
    )
    parser.add_argument(
        "--budget",
        type=float,
        metavar="SECONDS",
        default=BUDGET,
        help=f"give up on a model whose scan takes longer (default {BUDGET:g})",
    )


def request(args: argparse.Namespace) -> ScanRequest:
    if not 0 < args.budget < math.inf:
        raise UsageError(
            f"--budget {args.budget:g}: give a positive number of seconds, like --budget 120"
        )
    if args.fix is not None:
        _check_fix(args.fix, args.model)
    return ScanRequest(**{field.name: getattr(args, field.name) for field in fields(ScanRequest)})


def _check_fix(out: Path, model: Path) -> None:
    """`--fix OUT` names a file that can be written and is not the model: one line
    before anything runs (the model scanned is never written over)."""
    folder = out.absolute().parent
    if out.is_dir():
        example = out / "fixed.onnx"
        raise UsageError(f"--fix {out}: a folder; give the file to write, like --fix {example}")
    if not folder.is_dir():
        raise UsageError(
            f"--fix {out}: no folder {folder} to write it in; create it, or give a file in "
            "a folder that exists"
        )
    if _same_file(out, model):
        raise UsageError(
            f"--fix {out}: that is the model scanned ({model}), which is never written "
            "over; give another file"
        )


def _same_file(one: Path, other: Path) -> bool:
    """The two paths name one file (the same path, links to it, hard links)."""
    if one.resolve() == other.resolve():
        return True
    try:
        return one.samefile(other)
    except OSError:  # one of them does not exist
        return False


def _range(package: str, finding: Finding) -> str:
    return f"{package} {finding.affected}" if finding.affected else f"every {package} release"


def describe(finding: Finding) -> list[str]:
    """A finding as the terminal shows it: what, where, which releases fail how, and the
    portable spelling."""
    where = ", ".join(finding.where[:3]) + (
        f" and {len(finding.where) - 3} more" if len(finding.where) > 3 else ""
    )
    releases = f" (of the axis: {', '.join(finding.releases)})" if finding.releases else ""
    if finding.kind == "limit":  # not a bug: releases older than the model
        axis = f"the axis's {', '.join(finding.releases)}" if finding.releases else "them"
        return [
            f"{finding.construct}: {_range(finding.package, finding)} cannot load it  "
            f"[{finding.detector}]",
            f"    where: {where}",
            f"    measured: {finding.reason}",
            f"    on {axis}: {', '.join(finding.checks)} cannot run",
            f"    portable: {finding.portable}",
        ]
    lines = [
        f"{finding.construct}  [{finding.detector}]",
        f"    where: {where}",
        f"    affects {_range(finding.package, finding)}{releases}: "
        f"{', '.join(finding.checks)} fail — {finding.reason}",
        f"    upstream: {finding.link or 'no public report'}",
    ]
    if finding.rewrite:
        lines.append(f"    portable: {finding.portable} (--fix: rewrite {finding.rewrite})")
    else:
        lines.append("    portable: no rewrite of the catalogue removes it")
    return lines


def scanned(request: ScanRequest, model: onnx.ModelProto | Path) -> Scan:
    """`model` scanned as asked (compat/corpus/scan.py)."""
    from compat.corpus.scan import scan_model

    runs = None
    if request.inputs is not None:
        from compat.corpus.dropin import load_model, model_runs

        loaded = model if not isinstance(model, Path) else load_model(model)
        runs = model_runs(request.model, loaded, request.inputs)
    return scan_model(
        model,
        request.onnx,
        request.ort,
        corpus=request.corpus,
        config=request.config,
        budget=request.budget,
        inputs=runs,
    )


def say_scan(name: str, result: Scan) -> None:
    target = ", ".join(f"{p} {t or '(every release)'}" for p, t in result.target.items())
    count = len(result.findings)
    limits = sum(f.kind == "limit" for f in result.findings)
    of_which = f" ({limits} a load limit)" if limits == 1 else f" ({limits} load limits)"
    print(
        f"{name}: {count} known incompatibilit{'y' if count == 1 else 'ies'}"
        f"{of_which if limits else ''} for {target or 'every release'}"
    )
    for number, finding in enumerate(result.findings, 1):
        first, *rest = describe(finding)
        print(f"  {number}. {first}")
        for line in rest:
            print(f"  {line}")
    for finding in result.outside:
        why = (
            finding.reason
            if finding.kind == "limit"
            else (f"{_range(finding.package, finding)}, {finding.link or finding.reason}")
        )
        print(f"  outside the target: {finding.construct} ({why})")
    for finding in result.conditional:
        where = f"{_range(finding.package, finding)}, {finding.link}"
        said = f"{finding.condition} (no inputs came with the model to say)"
        print(f"  {said}: {finding.construct}: {where}")
    if result.uncovered:
        shown = ", ".join(str(u) for u in result.uncovered)
        print(f"  not covered by the corpus (nothing is known of them here): {shown}")


def fix(request: ScanRequest, result: Scan) -> tuple[Scan, list[dict[str, Any]]]:
    """The model with each finding's rewrite applied, written to `--fix`, scanned again."""
    import onnx

    from compat.corpus.dropin import load_model
    from compat.corpus.rewrites import BY_NAME

    assert request.fix is not None
    model: onnx.ModelProto = load_model(request.model)  # its external data, inlined
    applied: list[dict[str, Any]] = []
    for name in dict.fromkeys(f.rewrite for f in result.findings if f.rewrite):
        done = BY_NAME[name].function(model)
        if done is not None:
            model = done.model
        applied.append({"rewrite": name, "where": list(done.where) if done else []})
    try:
        onnx.save_model(model, str(request.fix))
    except (OSError, ValueError) as exc:  # ValueError: a model of more than 2 GB
        raise UsageError(f"--fix {request.fix}: cannot write the fixed model ({exc})") from None
    again = scanned(request, model)
    return again, applied


def say_verify(judged: list[Judged]) -> None:
    """The counts, then every result the scan predicted or the run contradicts."""
    counts = {
        v: sum(j.verdict == v for j in judged)
        for v in ("agree", "missed", "false alarm", "not observed")
    }
    confirmed = sum(bool(j.predicted) and j.verdict == "agree" for j in judged)
    print(
        f"verify: {len(judged)} (cell, check) results: "
        + ", ".join(f"{n} {v}" for v, n in counts.items() if n)
        + f"; {confirmed} of {sum(bool(j.predicted) for j in judged)} predicted failures "
        "observed"
    )
    for j in judged:
        if j.predicted or j.verdict in ("missed", "false alarm"):
            said = f"predicted by {', '.join(j.predicted)}" if j.predicted else "not predicted"
            detail = f": {j.detail}" if j.detail and j.outcome != "pass" else ""
            print(f"  {j.verdict:12} {j.cell:26} {j.check:22} {j.outcome:6} {said}{detail}")


def _not_its_data(request: ScanRequest) -> None:
    """`--fix` does not name a file of the model's external data either."""
    from compat.corpus.scan import load
    from compat.corpus.session import external_files

    assert request.fix is not None
    for file in external_files(load(request.model), request.model).values():
        if _same_file(request.fix, file):
            raise UsageError(
                f"--fix {request.fix}: that is the external data of the model scanned "
                f"({request.model}), which is never written over; give another file"
            )


def run(request: ScanRequest) -> int:

    if request.fix is not None:
        _not_its_data(request)
    result = scanned(request, request.model)
    document = {"model": str(request.model), **result.to_dict()}
    if not request.json:
        say_scan(str(request.model), result)
    final = result
    if request.fix is not None:
        final, applied = fix(request, result)
        document["fix"] = {"out": str(request.fix), "applied": applied, **final.to_dict()}
        if not request.json:
            for step in applied:
                where = ", ".join(step["where"]) or "nothing: it did not apply"
                print(f"fix: {step['rewrite']} rewrote {where}")
            print(f"fix: wrote {request.fix}; scanned again:")
            say_scan(str(request.fix), final)
    if request.verify:
        from compat.followup.verify import verify

        run_in = (request.config, request.state_dir, request.jobs, request.corpus, request.inputs)
        judged = verify(request.model, result, *run_in)
        document["verify"] = [asdict(j) for j in judged]
        if not request.json:
            say_verify(judged)
        if any(j.verdict in ("missed", "false alarm") for j in judged):
            return _printed(document, request.json, 1)  # the scan was wrong: say it
    return _printed(document, request.json, 1 if final.findings else 0)


def _printed(document: dict[str, Any], as_json: bool, code: int) -> int:
    """`code`, once the JSON document is printed (with --json)."""
    if as_json:
        print(json.dumps(document, indent=1))
    return code
