"""`compat.scan`: the known incompatibilities a model carries for a target range, in well
under a second and with no environment, from what the corpus knows
(compat/corpus/knowledge.py): each detector that finds its construct in the model and
whose bug's release range meets the target is a `Finding`, with the releases of the
project's axis it affects, the checks that fail there, the upstream link and the
portable spelling; the operators no model of the corpus exercises are `uncovered`, the
part of the model the scan cannot judge.

It reads the model with onnx alone: importable and usable where onnxruntime is not
installed, as an exporter's own unit test (`assert not compat.scan(exported)`). Its work
follows the model's size (compat/corpus/walk.py), within a time budget (`BUDGET`, given
up on in one line), and a model's external data is read from its own folder, with the
refusals of the cells, only when a detector asks for a constant's value.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compat.core.case import Detector
from compat.core.errors import ConfigError, UsageError
from compat.core.versions import in_range, intersect, parse_range
from compat.corpus.bindings import bind, from_inputs
from compat.corpus.findings import Finding, at_zero, detect, in_target, once
from compat.corpus.knowledge import covered, detectors, operators
from compat.corpus.load_limits import refusals
from compat.corpus.project_axes import axis_releases, config_file
from compat.corpus.session import GaveUp, Reader, external_files, reader, scanning

if TYPE_CHECKING:
    import numpy as np
    import onnx

#: the seconds a scan may take (`scan --budget`): a model of 10^5 nodes takes a few, a
#: model built to make its walk explode takes them all
BUDGET = 30.0


@dataclass(frozen=True)
class Uncovered:
    """An operator of the model that no model of the corpus exercises."""

    domain: str  # "" is the default domain
    op_type: str
    count: int  # its nodes in the model

    def __str__(self) -> str:
        name = f"{self.domain}.{self.op_type}" if self.domain else self.op_type
        return name if self.count == 1 else f"{name} ×{self.count}"


@dataclass(frozen=True)
class Scan:
    """What `scan_model` found: the findings in the target range, the detected bugs whose
    range misses it, and the operators the corpus cannot judge."""

    findings: tuple[Finding, ...]
    outside: tuple[Finding, ...] = ()
    uncovered: tuple[Uncovered, ...] = ()
    target: dict[str, str] = field(default_factory=dict)  # package -> range given
    #: findings in the target on inputs the model allows and none shipped with it has:
    #: a symbolic dim at 0 (only when no inputs came with the model)
    conditional: tuple[Finding, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The `scan --json` document (docs/how-to/scan.md)."""
        return {
            "version": 1,
            "target": dict(self.target),
            "findings": [f.to_dict() for f in self.findings],
            "outside": [f.to_dict() for f in self.outside],
            "uncovered": [asdict(u) for u in self.uncovered],
            "conditional": [f.to_dict() for f in self.conditional],
        }


# -- the scan -----------------------------------------------------------------------------


def load(path: str | os.PathLike[str]) -> onnx.ModelProto:
    """The model's graph (its external data left where it is: compat/corpus/session.py
    checks and reads it), or one line naming the file and what to do."""
    import onnx
    from google.protobuf.message import DecodeError

    file = Path(path)
    if not file.is_file():
        raise UsageError(f"{file}: no such model file; give the path of an .onnx model")
    try:
        model = onnx.load_model(str(file), load_external_data=False)
    except (DecodeError, OSError, ValueError) as exc:
        raise ConfigError(
            f"{file}: not a readable ONNX model ({type(exc).__name__}: {exc}); export or "
            "copy it again"
        ) from None
    if not model.graph.output or not model.opset_import:
        raise ConfigError(
            f"{file}: not a complete ONNX model (no graph outputs or no opset_import: "
            "truncated, or not an ONNX file); export or copy it again"
        )
    return model


def limits(
    model: onnx.ModelProto, target: dict[str, str | None], releases: dict[str, tuple[str, ...]]
) -> tuple[list[Finding], list[Finding]]:
    """The releases that cannot load the model (compat/corpus/load_limits.py) as findings
    of kind `limit`: those that meet the target, and those outside it."""
    inside: list[Finding] = []
    outside: list[Finding] = []
    for refusal in refusals(model):
        affected = intersect(refusal.known, target[refusal.package] or "")
        finding = Finding(
            detector=f"support_limits.{refusal.kind}",
            construct=refusal.construct,
            where=(refusal.where,),
            package=refusal.package,
            known=refusal.known,
            affected=refusal.known if affected is None else affected,
            releases=()
            if affected is None
            else tuple(v for v in releases.get(refusal.package, ()) if in_range(v, affected)),
            checks=refusal.checks,
            reason=refusal.reason,
            link="",
            rewrite="",
            portable=refusal.portable,
            kind="limit",
        )
        (outside if affected is None else inside).append(finding)
    return inside, outside


def uncovered(model: onnx.ModelProto, corpus: Path | None = None) -> tuple[Uncovered, ...]:
    """The model's operators that no model of the corpus exercises, custom domains
    included: what a clean scan says nothing about."""
    seen = covered(corpus)
    counts = Counter((d, op) for d, op, _ in operators(model) if (d, op) not in seen)
    return tuple(Uncovered(d, op, n) for (d, op), n in sorted(counts.items()))


def scan_model(
    model: onnx.ModelProto | str | os.PathLike[str],
    onnx: str | None = ">=1.18",
    onnxruntime: str | None = ">=1.20",
    *,
    corpus: Path | None = None,
    config: Path | None = None,
    budget: float | None = BUDGET,
    inputs: Sequence[Mapping[str, np.ndarray]] | None = None,
) -> Scan:
    """Every detector of the corpus run on the model: see `scan`; also the detections
    whose range misses the target (`outside`), the operators it cannot judge, and what
    a symbolic dim at 0 would add (`conditional`, when no `inputs` are given nor
    shipped beside the model file: MODEL.npz, MODEL.1.npz …)."""
    target = {"onnx": onnx, "onnxruntime": onnxruntime}
    for package, text in target.items():
        if text is not None:
            flag = "--onnx" if package == "onnx" else "--ort"
            parse_range(text, f"{flag} {text!r}" if text else flag)
    read: Reader | None = None
    runs: list[Mapping[str, np.ndarray]] = list(inputs or ())
    if isinstance(model, str | os.PathLike):
        proto = load(model)
        name = str(model)
        read = reader(external_files(proto, Path(model)), Path(model))
        runs = runs if inputs is not None else _shipped(Path(model))
    else:
        proto = model
        name = f"the model {model.graph.name!r}"
    releases = axis_releases(config_file(config))
    known = detectors(corpus)
    _ = covered(corpus)  # the corpus loaded, then the clock runs
    doing = "its load limits"
    zeroed: list[tuple[Detector, list[str], str]] = []
    clock = (budget, read, time.monotonic())  # one budget for every copy the scan reads
    try:
        with scanning(proto, *clock):
            findings, outside = limits(proto, target, releases)
        for bound in [bind(proto, from_inputs(proto, run)) for run in runs] or [proto]:
            with scanning(bound, *clock):
                for detector in known:
                    doing = f"detector {detector.id}"
                    detect(detector, bound, target, releases, (findings, outside))
        findings = once(findings)
        outside = once(outside)
        with scanning(proto, *clock):
            doing = "its operators"
            missing = uncovered(proto, corpus)
        if not runs:
            doing = "its symbolic dims at 0"
            seen = {f.detector for f in findings}
            zeroed = at_zero(proto, [d for d in known if d.id not in seen], clock)
    except GaveUp as exc:
        at = exc.at if len(exc.at) < 160 else f"…{exc.at[-150:]}"
        raise ConfigError(
            f"{name}: the scan gave up after {exc.seconds:g} s in {doing}, at {at}: the model "
            "is too large, or built so that its walk explodes; give it more time (scan "
            "--budget SECONDS, compat.scan(budget=...)) or report the model"
        ) from None
    given = {p: t for p, t in target.items() if t is not None}
    conditional = [in_target(d, w, c, target, releases) for d, w, c in zeroed]
    return Scan(tuple(findings), tuple(outside), missing, given, tuple(filter(None, conditional)))


def _shipped(path: Path) -> list[Mapping[str, np.ndarray]]:
    """The inputs shipped beside the model: MODEL.npz, MODEL.1.npz … (none: [])."""
    from compat.corpus.dropin import run_files  # numpy and the cells' readers: when used
    from compat.corpus.inputs import load_npz

    return [load_npz(file) for file in run_files(path, [])]


def scan(
    model: onnx.ModelProto | str | os.PathLike[str],
    onnx: str | None = ">=1.18",
    onnxruntime: str | None = ">=1.20",
    *,
    corpus: Path | None = None,
    config: Path | None = None,
    budget: float | None = BUDGET,
) -> list[Finding]:
    """The known incompatibilities `model` carries for the target releases.

    Args:
        model: a ModelProto, or the path of an .onnx file (its external data is read,
            from the model's folder, only where a detector asks for a constant's value;
            a ModelProto's external data is not read).
        onnx: the onnx releases the model must work with, as a range (`">=1.18"`; `""`
            or None: every release).
        onnxruntime: the same for onnxruntime.
        corpus: a directory of case modules whose DETECTORS to use (default: the
            built-in corpus).
        config: the `[tool.compat]` whose axes name the affected releases (default:
            ./pyproject.toml when it has one, else the built-in one).
        budget: the seconds the scan may take (None: no limit).

    Returns:
        One Finding per construct found whose known bug's range meets the target, empty
        when none does: `assert not compat.scan(exported, onnx=">=1.18")`.

    Raises:
        compat.core.errors.UsageError: a range that is not one, a path that is no
            readable model, external data outside the model's folder, or a scan that
            gave up (one line naming it).
    """
    found = scan_model(model, onnx, onnxruntime, corpus=corpus, config=config, budget=budget)
    return list(found.findings)
