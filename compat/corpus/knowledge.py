"""What the corpus knows, as data a model can be checked against without running it:
every family's `DETECTORS` (compat.core.case.Detector: where a model carries a construct
a known upstream bug hits, with the bug's package, range, checks and link, and the
rewrite that spells it the portable way), and the operators its models exercise.

The case modules are loaded by path, as compat/corpus/discover.py loads them, from the
built-in corpus or a `--corpus DIR`, once per process: `onnx-compat scan` reads them in
tens of milliseconds, and an exporter's test suite calling `compat.scan` many times
reads them once. `onnx-compat knowledge --json` prints them for tools in other languages.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from packaging.requirements import InvalidRequirement, Requirement

from compat.core.case import Detector
from compat.core.errors import ConfigError

if TYPE_CHECKING:
    import onnx

    from compat.core.case import Case


@dataclass(frozen=True)
class Family:
    """One case module as the scan reads it: its detectors, and its `cases()` (called
    only when the operators the corpus covers are asked for)."""

    name: str
    path: Path
    detectors: tuple[Detector, ...]
    cases: Callable[[], list[Case]]


def builtin_corpus() -> Path:
    """The built-in corpus: `compat.builtin_cases` when onnx-compat is installed, else
    `cases/` of the checkout this package is imported from (PYTHONPATH=CHECKOUT)."""
    checkout = Path(__file__).resolve().parents[2] / "cases"
    try:
        import importlib.resources

        found = Path(str(importlib.resources.files("compat.builtin_cases")))
    except ModuleNotFoundError:
        return checkout
    return found if found.is_dir() else checkout


def _module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"compat_cases_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"{path}: cannot be imported as a case module")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _detectors(module: ModuleType, path: Path) -> tuple[Detector, ...]:
    """The module's DETECTORS, each checked: a Detector, its id `FAMILY.NAME`, a rewrite
    the catalogue has, a check the bug names."""
    from compat.corpus.rewrites import BY_NAME  # onnx: only when there are detectors

    found = getattr(module, "DETECTORS", [])
    if not isinstance(found, list | tuple):
        raise ConfigError(f"{path}: DETECTORS must be a list of compat.Detector")
    for detector in found:
        if not isinstance(detector, Detector):
            raise ConfigError(f"{path}: DETECTORS holds {detector!r}, not a compat.Detector")
        if not detector.id.startswith(f"{path.stem}."):
            raise ConfigError(
                f"{path}: detector id {detector.id!r} must look like '{path.stem}.NAME'"
            )
        if detector.rewrite and detector.rewrite not in BY_NAME:
            raise ConfigError(
                f"{path}: detector {detector.id} names rewrite {detector.rewrite!r}, which the "
                f"catalogue lacks; use one of {', '.join(BY_NAME)} or ''"
            )
        if not detector.known.checks:
            raise ConfigError(f"{path}: detector {detector.id}'s known failure names no check")
        for text in detector.requires:
            try:
                Requirement(text)
            except InvalidRequirement:
                raise ConfigError(
                    f"{path}: detector {detector.id} requires {text!r}, not a requirement; "
                    "write one like 'numpy>=2.4'"
                ) from None
    return tuple(found)


@functools.cache
def _families(directory: Path) -> tuple[Family, ...]:
    if not directory.is_dir():
        raise ConfigError(f"{directory}: case directory not found; pass --corpus DIR")
    families = []
    for path in sorted(directory.glob("*.py")):
        if path.name.startswith("_"):
            continue
        module = _module(path)
        make = getattr(module, "cases", None)
        if make is None:
            raise ConfigError(f"{path}: defines no cases() function; see cases/README.md")
        families.append(Family(path.stem, path, _detectors(module, path), make))
    ids = [d.id for f in families for d in f.detectors]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise ConfigError(f"{directory}: detector id {twice[0]!r} is declared twice")
    return tuple(families)


def families(corpus: Path | None = None) -> tuple[Family, ...]:
    """Every family of the corpus (`corpus`, else the built-in one), loaded once."""
    return _families((corpus or builtin_corpus()).resolve())


def detectors(corpus: Path | None = None) -> tuple[Detector, ...]:
    """Every detector of the corpus, family by family (alphabetical), as declared."""
    return tuple(d for f in families(corpus) for d in f.detectors)


def operators(model: onnx.ModelProto) -> Iterator[tuple[str, str, str]]:
    """(domain, op_type, where) of every node of the model, in its subgraphs and in its
    local functions too (compat/corpus/walk.py); a call of a model-local function is its
    body, not an operator."""
    from compat.corpus.walk import nodes

    local = {(f.domain, f.name) for f in model.functions}
    for site in nodes(model):
        node = site.node
        if (node.domain, node.op_type) not in local:
            yield ("" if node.domain == "ai.onnx" else node.domain), node.op_type, site.path


@functools.cache
def _covered(directory: Path) -> frozenset[tuple[str, str]]:
    return frozenset(
        (domain, op)
        for family in _families(directory)
        for case in family.cases()
        for domain, op, _ in operators(case.model)
    )


def covered(corpus: Path | None = None) -> frozenset[tuple[str, str]]:
    """(domain, op_type) of every operator some model of the corpus exercises: what the
    corpus has seen, and so can say something about (the family modules build their
    models in tens of milliseconds, once per process)."""
    return _covered((corpus or builtin_corpus()).resolve())


def detector_json(detector: Detector) -> dict[str, Any]:
    """One detector as `knowledge --json` prints it (the portable spelling in words)."""
    from compat.corpus.rewrites import BY_NAME

    known = detector.known
    rewrite = BY_NAME[detector.rewrite].description if detector.rewrite else ""
    return {
        "id": detector.id,
        "family": detector.id.split(".", 1)[0],
        "construct": detector.construct,
        "package": known.package,
        "versions": known.versions,
        "checks": list(known.checks),
        "outcomes": list(known.outcomes),
        # what the failure looks like: a failure in range that looks otherwise is not it
        "phase": list(known.phase),
        "raises": list(known.raises),
        "match": known.match,
        "reason": known.reason,
        "link": known.link,
        "rewrite": detector.rewrite,
        "requires": list(detector.requires),
        "portable": rewrite,
    }


def knowledge_json(corpus: Path | None = None) -> dict[str, Any]:
    """Every known bug the corpus can detect in a model, for tools in other languages:
    `{"version": 1, "detectors": [...]}`, one entry per detector (docs/how-to/scan.md)."""
    return {"version": 1, "detectors": [detector_json(d) for d in detectors(corpus)]}
