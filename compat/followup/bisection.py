"""Find the first release where a check's outcome changes, testing O(log n) releases."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from compat.core.errors import UsageError

#: Outcomes that mean "the bug is there" vs "it is not", whatever the known-bug data says.
SAME = {"xfail": "fail", "xpass": "pass"}


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
        before = self.tested[self.last]
        after = self.tested[self.first]
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
    lo = 0
    hi = len(candidates) - 1
    start = result.tested[candidates[lo]]
    end = result.tested[candidates[hi]]
    if start == end:
        raise UsageError(
            f"{candidates[lo]} and {candidates[hi]} both {start}: no change between them to "
            "find; give --good and --bad releases whose outcomes differ (the matrix's table "
            "shows where it passes)"
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
    result.last = candidates[lo]
    result.first = candidates[hi]
    return result
