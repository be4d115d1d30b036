"""The findings of a scan (compat/corpus/scan.py): a detector run on a model, or on a
copy whose symbolic dims the inputs bound (compat/corpus/bindings.py), gives a `Finding`
when it finds its construct, in the target range or outside it; one per detector
however many runs bound the model; and, when no inputs came with the model, the
conditional findings a symbolic dim at 0 would add ("if n = 0").
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

from compat.core.case import Detector
from compat.core.versions import in_range, intersect
from compat.corpus.bindings import bind, symbols
from compat.corpus.session import Reader, scanning

if TYPE_CHECKING:
    import onnx


@dataclass(frozen=True)
class Finding:
    """A known upstream bug the model runs into within the target range.

    `affected` is the bug's range (`known`) within the target, as range text ("" means
    every release); `releases` the releases of the project's axis in it (from
    `[tool.compat]`, none when the axis follows the index and was never resolved)."""

    detector: str  # the detector's id, FAMILY.NAME
    construct: str
    where: tuple[str, ...]  # node paths, subgraphs and local functions included
    package: str  # "onnx" or "onnxruntime"
    known: str  # the bug's release range
    affected: str  # that range within the target
    releases: tuple[str, ...]
    checks: tuple[str, ...]
    reason: str
    link: str
    rewrite: str  # the catalogue's rewrite that removes it; "" when there is none
    portable: str  # that rewrite in words: the portable spelling
    #: "bug": a known upstream bug a detector found; "limit": releases that cannot load
    #: the model at all, its IR version or opset newer than they read (by design)
    kind: str = "bug"
    requires: tuple[str, ...] = ()  # what else a cell must have for it to show: numpy>=2.4
    condition: str = ""  # for a finding the inputs decide: "if n = 0"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        tuples = {"where", "releases", "checks", "requires"}
        values: dict[str, Any] = {k: tuple(v) if k in tuples else v for k, v in data.items()}
        return cls(**values)


def finding_of(
    detector: Detector, where: list[str], affected: str, releases: tuple[str, ...]
) -> Finding:
    from compat.corpus.rewrites import BY_NAME

    known = detector.known
    return Finding(
        detector=detector.id,
        construct=detector.construct,
        where=tuple(where),
        package=known.package,
        known=known.versions,
        affected=affected,
        releases=tuple(v for v in releases if in_range(v, affected)),
        checks=known.checks,
        reason=known.reason,
        link=known.link,
        rewrite=detector.rewrite,
        portable=BY_NAME[detector.rewrite].description if detector.rewrite else "",
        requires=detector.requires,
    )


def once(findings: list[Finding]) -> list[Finding]:
    """One finding per detector and package (the first run's), a model bound to several
    runs' sizes; a load limit names each package it holds for."""
    firsts: dict[tuple[str, str], Finding] = {}
    for finding in findings:
        firsts.setdefault((finding.detector, finding.package), finding)
    return list(firsts.values())


def at_zero(
    model: onnx.ModelProto,
    detectors: list[Detector],
    clock: tuple[float | None, Reader | None, float],
) -> list[tuple[Detector, list[str], str]]:
    """The detectors that find their construct once every symbolic dim of the inputs is 0,
    each with where and the condition: the symbols whose 0 alone is enough ("if n = 0 or
    m = 0"), else all of them together ("if n = 0 and m = 0"). `clock`: the scan's
    budget, data reader and start (compat/corpus/session.py `scanning`)."""
    names = symbols(model)
    if not names:
        return []
    zero = bind(model, dict.fromkeys(names, 0))
    with scanning(zero, *clock):
        firing = [(d, where) for d in detectors if (where := d.find(zero))]
    found = []
    for detector, where in firing:
        alone = []
        for name in names:
            one = bind(model, {name: 0})
            with scanning(one, *clock):
                if detector.find(one):
                    alone.append(name)
        said = " or ".join(f"{n} = 0" for n in alone) or " and ".join(f"{n} = 0" for n in names)
        found.append((detector, where, f"if {said}"))
    return found


def in_target(
    detector: Detector,
    where: list[str],
    condition: str,
    target: dict[str, str | None],
    releases: dict[str, tuple[str, ...]],
) -> Finding | None:
    """A conditional finding when its bug's range meets the target."""
    package = detector.known.package
    affected = intersect(detector.known.versions, target[package] or "")
    if affected is None:
        return None
    finding = finding_of(detector, where, affected, releases.get(package, ()))
    return replace(finding, condition=condition)


def detect(
    detector: Detector,
    model: onnx.ModelProto,
    target: dict[str, str | None],
    releases: dict[str, tuple[str, ...]],
    into: tuple[list[Finding], list[Finding]],
) -> None:
    """The detector's finding, if it finds its construct: in the target, or outside."""
    where = detector.find(model)
    if not where:
        return
    package = detector.known.package
    affected = intersect(detector.known.versions, target[package] or "")
    if affected is None:
        into[1].append(finding_of(detector, where, detector.known.versions, ()))
    else:
        into[0].append(finding_of(detector, where, affected, releases.get(package, ())))
