"""Find the first release where a check's outcome changes, testing O(log n) releases."""

from __future__ import annotations

import json
import math
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field

from packaging.tags import Tag, sys_tags
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from compat.errors import CompatError, UsageError

INDEX_JSON = "https://pypi.org/pypi/{package}/json"
#: Outcomes that mean "the bug is there" vs "it is not", whatever the known-bug data says.
SAME = {"xfail": "fail", "xpass": "pass"}


def _has_wheel_for(files: list[dict[str, object]], tags: set[Tag]) -> bool:
    for f in files:
        name = str(f.get("filename", ""))
        if not name.endswith(".whl") or f.get("yanked"):
            continue
        try:
            _, _, _, wheel_tags = parse_wheel_filename(name)
        except InvalidWheelFilename:
            continue
        if wheel_tags & tags:
            return True
    return False


def releases(package: str, pre: bool = False, yanked: bool = False) -> list[str]:
    """Releases of `package` on the index with a wheel this interpreter can install."""
    try:
        with urllib.request.urlopen(INDEX_JSON.format(package=package), timeout=60) as answer:
            data = json.load(answer)
    except OSError as exc:
        raise CompatError(f"cannot list {package} releases from the package index: {exc}") from None
    tags = set(sys_tags())
    found = []
    for text, files in data.get("releases", {}).items():
        try:
            version = Version(text)
        except InvalidVersion:
            continue
        if version.is_prerelease and not pre:
            continue
        usable = [f for f in files if yanked or not f.get("yanked")]
        if _has_wheel_for(usable, tags):
            found.append(text)
    return sorted(found, key=Version)


@dataclass
class Bisection:
    """The releases bisected over, those tested, and the boundary found."""

    versions: list[str]
    tested: dict[str, str] = field(default_factory=dict)  # version -> outcome, in test order
    skipped: list[str] = field(default_factory=list)  # releases that would not install
    last: str = ""  # the last release with the starting outcome
    first: str = ""  # the first release with the other outcome

    @property
    def bound(self) -> int:
        """The promised cost: ⌈log2(n)⌉ + 2 releases installed."""
        return math.ceil(math.log2(max(len(self.versions), 2))) + 2

    def verdict(self) -> str:
        before, after = self.tested[self.last], self.tested[self.first]
        if (before, after) == ("fail", "pass"):
            return f"last failing {self.last}, first passing {self.first}: fixed in {self.first}"
        if (before, after) == ("pass", "fail"):
            return f"last good {self.last}, first bad {self.first}"
        return f"last {before} {self.last}, first {after} {self.first}"


def bisect(versions: list[str], probe: Callable[[str], str | None]) -> Bisection:
    """Binary search for the change, assuming one change between the two ends.

    `probe(version)` returns the outcome there, or None when the release cannot
    be installed (skipped, like `git bisect skip`).
    """
    result = Bisection(list(versions))
    candidates = list(versions)

    def outcome(index: int) -> str | None:
        version = candidates[index]
        got = probe(version)
        if got is None:
            result.skipped.append(version)
            return None
        result.tested[version] = SAME.get(got, got)
        return result.tested[version]

    while candidates and outcome(0) is None:
        candidates.pop(0)
    while len(candidates) > 1 and outcome(len(candidates) - 1) is None:
        candidates.pop()
    if len(candidates) < 2:
        raise UsageError("fewer than two installable releases to bisect between")
    lo, hi = 0, len(candidates) - 1
    start, end = result.tested[candidates[lo]], result.tested[candidates[hi]]
    if start == end:
        raise UsageError(
            f"{candidates[lo]} and {candidates[hi]} both {start}: nothing changes in between"
        )
    while hi - lo > 1:
        mid = (lo + hi) // 2
        got = outcome(mid)
        if got is None:
            candidates.pop(mid)
            hi -= 1
            continue
        if got == start:
            lo = mid
        else:
            hi = mid
    result.last, result.first = candidates[lo], candidates[hi]
    return result
