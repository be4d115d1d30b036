"""Version gates, one tiny helper per question (cf. onnx-ir's _version_utils)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, Specifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from compat.core.errors import CompatError, UsageError


def parse_version(text: str, where: str, error: type[CompatError] = UsageError) -> Version:
    """Parses an exact release like `1.18.0`, naming `where` it came from on error."""
    try:
        return Version(text)
    except InvalidVersion:
        raise error(f"{where}: {text!r} is not a version; write a release like 1.18.0") from None


def parse_range(text: str, where: str, error: type[CompatError] = UsageError) -> SpecifierSet:
    """Parses a range like `>=1.18,<1.21` (empty means every release)."""
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        raise error(
            f"{where}: {text!r} is not a version range; write one like '>=1.18,<1.21'"
        ) from None


def in_range(version: str, spec: str) -> bool:
    """True when `version` lies in the range `spec`, pre-releases included."""
    return SpecifierSet(spec).contains(version, prereleases=True)


def holds(requires: Sequence[str], installed: Mapping[str, str]) -> bool:
    """True when every requirement (`numpy>=2.4`) holds for the distributions `installed`
    (name: version); a distribution not installed meets none."""
    for text in requires:
        wanted = Requirement(text)
        version = installed.get(canonicalize_name(wanted.name)) or installed.get(wanted.name)
        if version is None or not wanted.specifier.contains(version, prereleases=True):
            return False
    return True


def exact_pin(text: str) -> tuple[str, str] | None:
    """(name, version) of a plain exact pin, `onnx==1.18.0` -> ("onnx", "1.18.0"), the
    name as written; None for anything else: a range, a wildcard (`==1.18.*`), extras, a
    marker, a URL, or text that is no requirement (`--project /x`)."""
    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        return None
    specs = list(requirement.specifier)
    if requirement.marker or requirement.extras or requirement.url or len(specs) != 1:
        return None
    (spec,) = specs
    if spec.operator != "==" or "*" in spec.version:
        return None
    return requirement.name, spec.version


def version_key(version: str) -> Version:
    """Sort and compare key for release strings."""
    return Version(version)


def _bounds(text: str) -> tuple[list[Specifier], list[Specifier], list[Specifier]]:
    """(lower bounds, upper bounds, everything else) of a range; `~=V` is both bounds."""
    lower = []
    upper = []
    other = []
    for spec in parse_range(text, text):
        if spec.operator in (">", ">="):
            lower.append(spec)
        elif spec.operator in ("<", "<="):
            upper.append(spec)
        elif spec.operator == "~=":
            parts = spec.version.split(".")
            lower.append(Specifier(f">={spec.version}"))
            upper.append(Specifier(f"<{'.'.join([*parts[:-2], str(int(parts[-2]) + 1)])}"))
        else:
            other.append(spec)
    return lower, upper, other


def _tightest(specs: list[Specifier], low: bool) -> Specifier | None:
    """The lower bound that excludes most (`low`), or the upper bound that does."""
    if not specs:
        return None

    def key(s: Specifier) -> tuple[Version, int]:
        strict = s.operator in (">", "<")
        return Version(s.version), (1 if strict else 0) if low else (0 if strict else 1)

    return max(specs, key=key) if low else min(specs, key=key)


def intersect(first: str, second: str) -> str | None:
    """Both ranges at once, as range text (lower bound first; "" is every release), or
    None when no release can be in both: `intersect("<1.21", ">=1.18")` is
    `">=1.18,<1.21"`, `intersect("<1.21", ">=1.21")` None."""
    lower, upper, other = (a + b for a, b in zip(_bounds(first), _bounds(second), strict=True))
    low = _tightest(lower, True)
    high = _tightest(upper, False)
    if low and high:
        below = Version(low.version)
        above = Version(high.version)
        if below > above or (below == above and (low.operator == ">" or high.operator == "<")):
            return None
    pins = [s for s in other if s.operator in ("==", "===") and "*" not in s.version]
    kept = [s for s in (low, high) if s is not None] + sorted(other, key=str)
    text = ",".join(str(s) for s in kept)
    if any(not in_range(p.version, text) for p in pins):
        return None
    return text
