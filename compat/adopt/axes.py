"""The axes `init` writes: the project's declared range of onnx and of onnxruntime
(else a default range) as an axis that follows the package index, each paired with the
other package's newest release that has a wheel for this Python."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from packaging.version import Version

from compat.core.errors import CompatError
from compat.core.versions import in_range
from compat.plan.follow import newest_per_minor

#: the ranges an axis follows when the project declares none
DEFAULT_RANGES = {"onnx": ">=1.14", "onnxruntime": ">=1.17"}

#: written when the package index cannot be asked: one release per minor, spread out
FALLBACK = {
    "onnx": ("1.14.1", "1.16.2", "1.18.0", "1.20.1", "1.21.0", "1.23.2"),
    "onnxruntime": ("1.17.3", "1.20.1", "1.22.1", "1.24.4", "1.32.0"),
}

OTHER = {"onnx": "onnxruntime", "onnxruntime": "onnx"}


@dataclass(frozen=True)
class AxisChoice:
    """One axis as written: a range that follows the index, or (when the index could not
    be asked) a fixed list; `pair` is the other package's release its cells run with."""

    package: str
    follows: str
    versions: tuple[str, ...]
    pair: str
    declared: bool

    def toml(self) -> str:
        """The body of `[tool.compat.PACKAGE]`."""
        other = OTHER[self.package]
        if self.versions:
            versions = "[" + ", ".join(f'"{v}"' for v in self.versions) + "]"
            note = "fixed: the package index could not be asked"
        else:
            versions = f'"{self.follows}"'
            origin = "your declared range" if self.declared else "a default range"
            note = f"{origin}: one release per minor with a wheel, from the index at each run"
        pair = f"the {other} release every {self.package} cell runs with"
        return f'versions = {versions}  # {note}\npair = "{self.pair}"  # {pair}\n'


def _newest(found: list[str], spec: str) -> str | None:
    inside = [v for v in found if in_range(v, spec) and not Version(v).is_prerelease]
    return max(inside, key=Version) if inside else None


def choose_axes(
    ranges: dict[str, str],
    releases: Callable[[str], list[str]],
    fits: Callable[[str, list[str]], tuple[str | None, str]] | None = None,
) -> tuple[list[AxisChoice], list[str]]:
    """Both axes from the declared ranges, with what `init` says about them.

    Args:
        ranges: the project's declared ranges (`declared_ranges`); a package it does not
            declare, or declares without a range, gets DEFAULT_RANGES.
        releases: the index's releases with a wheel for this Python (compat.plan.index).
        fits: of a package's releases, the newest that installs beside the project's own
            requirements, and why newer ones do not (compat/adopt/pins.py); None: the
            newest.
    """
    spec = {p: ranges.get(p) or DEFAULT_RANGES[p] for p in OTHER}
    declared = {p: bool(ranges.get(p)) for p in OTHER}
    said: list[str] = []
    try:
        found = {p: releases(p) for p in OTHER}
    except CompatError as exc:
        said.append(
            f"{exc}: wrote fixed release lists; when the index is reachable, "
            f'`versions = "{spec["onnx"]}"` follows it'
        )
        fixed = {
            p: tuple(v for v in FALLBACK[p] if in_range(v, spec[p])) or FALLBACK[p][-1:]
            for p in OTHER
        }
        return [
            AxisChoice(p, spec[p], fixed[p], fixed[OTHER[p]][-1], declared[p]) for p in OTHER
        ], said
    axes = []
    for package in OTHER:
        minors = newest_per_minor([v for v in found[package] if in_range(v, spec[package])])
        other = OTHER[package]
        pair = _newest(found[other], spec[other])
        passed = ""
        if fits is not None and pair is not None:
            inside = [v for v in found[other] if in_range(v, spec[other])]
            stable = newest_per_minor([v for v in inside if not Version(v).is_prerelease])
            fitting, passed = fits(other, list(stable))
            pair = fitting or pair  # none fits: the newest, whose cells will say why
        if pair is None:
            raise CompatError(
                f"{OTHER[package]}{spec[OTHER[package]]}: no release on the "
                "package index has a wheel for this Python"
            )
        origin = "declared" if declared[package] else "default range"
        today = f"{minors[0]} … {minors[-1]}, {len(minors)} releases" if minors else "none yet"
        said.append(
            f"{package} axis: {spec[package]} ({origin}; today {today}), "
            f"with {OTHER[package]} {pair}"
        )
        if passed:
            said.append(f"  (passed over, they do not install beside your pins: {passed})")
        axes.append(AxisChoice(package, spec[package], (), pair, declared[package]))
    return axes, said
