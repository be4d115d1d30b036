"""Which releases cannot load a model at all: its IR version or default-domain opset is
newer than they read.

What each release reads is measured, not assumed: the support_limits family of the docs'
stored run (compat/render/load_limits.py writes compat/resources/load_limits.json from
it). A model newer than a release reads is not a bug of that release but a limit by
design, so a `Finding` of kind `limit`: the releases of the target range that cannot
load it, the first measured release that can, and how to write it for the older ones.
Releases between two measured ones are taken to read what the newer one's minor
release reads: onnx and onnxruntime raise their limits in minor releases.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from packaging.version import Version

from compat import resources
from compat.core.case import CHECK_AXIS

if TYPE_CHECKING:
    import onnx

#: what the support_limits family calls each kind, and how a finding spells it
KINDS = {"ir": "IR version", "opset": "opset"}
#: how a model is written for an older release, by kind
OLDER = {
    "ir": "export it for IR ≤ {most} (the exporter's IR version, or "
    "model.ir_version = {most} when it uses nothing IR {value} added)",
    "opset": "export it at opset ≤ {most} (the exporter's opset, or "
    "onnx.version_converter.convert_version(model, {most}))",
}


@dataclass(frozen=True)
class Reads:
    """A measured release and the largest IR version and opset it read."""

    release: str
    ir: int
    opset: int


@cache
def measured() -> dict[str, tuple[Reads, ...]]:
    """Each package's measured releases, oldest first; empty when the file is missing or
    unreadable (a scan then names no limit rather than guessing one)."""
    try:
        document = json.loads(resources.LOAD_LIMITS.read_text(encoding="utf-8"))
        return {
            package: tuple(
                sorted(
                    (Reads(str(r["release"]), int(r["ir"]), int(r["opset"])) for r in rows),
                    key=lambda r: Version(r.release),
                )
            )
            for package, rows in document.items()
            if package in ("onnx", "onnxruntime") and isinstance(rows, list)
        }
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def model_values(model: onnx.ModelProto) -> dict[str, int]:
    """The model's IR version and its default-domain opset."""
    opset = max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), default=0)
    return {"ir": int(model.ir_version), "opset": int(opset)}


@dataclass(frozen=True)
class Refusal:
    """Releases of one package that cannot load the model for one kind of limit."""

    kind: str  # "ir" or "opset"
    package: str
    value: int  # the model's
    most: int  # the most the newest refusing release reads
    refusing: tuple[str, ...]  # the measured releases that cannot load it
    first: str  # the first measured release that can ("" when none can)

    @property
    def known(self) -> str:
        """The range of releases that cannot load it ("" when no measured one can)."""
        if not self.first:
            return ""
        major, minor = Version(self.first).release[:2]
        newest = Version(self.refusing[-1])
        bound = f"{major}.{minor}" if newest < Version(f"{major}.{minor}") else self.first
        return f"<{bound}"

    @property
    def construct(self) -> str:
        return f"{KINDS[self.kind]} {self.value}"

    @property
    def where(self) -> str:
        return "model.ir_version" if self.kind == "ir" else "model.opset_import (ai.onnx)"

    @property
    def reason(self) -> str:
        what = "IR" if self.kind == "ir" else "opset"
        span = self.refusing[0] + (f"–{self.refusing[-1]}" if len(self.refusing) > 1 else "")
        loads = f"loads from {self.first}" if self.first else "no measured release loads it"
        return (
            f"{self.package} {span} read{'s' if len(self.refusing) == 1 else ''} {what} "
            f"≤ {self.most}; this model is {what} {self.value}: {loads}"
        )

    @property
    def portable(self) -> str:
        return OLDER[self.kind].format(most=self.most, value=self.value)

    @property
    def checks(self) -> tuple[str, ...]:
        """The checks of the package: each opens the model with it, so each is refused."""
        return tuple(c for c, p in CHECK_AXIS.items() if p == self.package)


def refusals(model: onnx.ModelProto) -> list[Refusal]:
    """Each (package, kind) whose measured releases include some that cannot load it."""
    values = model_values(model)
    found = []
    for package, releases in measured().items():
        for kind, value in values.items():
            refusing = [r for r in releases if getattr(r, kind) < value]
            if not refusing:
                continue
            newest = Version(refusing[-1].release)
            loading = [
                r.release
                for r in releases
                if getattr(r, kind) >= value and Version(r.release) > newest
            ]
            first = loading[0] if loading else ""
            most = getattr(refusing[-1], kind)
            names = tuple(r.release for r in refusing)
            found.append(Refusal(kind, package, value, most, names, first))
    return found
