"""Version gates, one tiny helper per question (cf. onnx-ir's _version_utils)."""

from __future__ import annotations

from packaging.specifiers import InvalidSpecifier, SpecifierSet
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


def version_key(version: str) -> Version:
    """Sort and compare key for release strings."""
    return Version(version)
