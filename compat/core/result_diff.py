"""How one result reads beside its counterpart in a baseline (compat/core/changes.py):
its one line, that line without what differs between two runs of the same code, and,
for a test command failing in both, which of its tests came and went."""

from __future__ import annotations

import re

from compat.core.outcomes import CellRecord, CheckResult

#: What differs between two runs of the same code and says nothing of it: an object's
#: address, a temporary folder's random name, a duration. A message is compared without.
_VOLATILE = re.compile(
    r"\b0x[0-9a-fA-F]{6,}\b"
    r"|/tmp/[^\s:'\"]*"
    r"|\b\d+(?:\.\d+)?\s?(?:s|ms|seconds)\b"
)
#: the tests a change names before it counts the rest
SHOWN = 5


def said(item: CheckResult | CellRecord) -> str:
    """A result's one line (`fail@check: …`), or a broken cell's state and why."""
    if isinstance(item, CellRecord):
        return f"{item.state.value}: {item.summary}"
    return item.summary.replace("\n", " ")


def steady(line: str) -> str:
    """`line` with its addresses, temporary paths and durations blanked."""
    return _VOLATILE.sub("…", line)


def tests_moved(
    before: CheckResult | CellRecord, after: CheckResult | CellRecord
) -> tuple[list[str], list[str]] | None:
    """(the tests failing now that did not, those no longer failing) of a test command
    whose runner named its failing tests in both runs; None where either named none."""
    if not isinstance(before, CheckResult) or not isinstance(after, CheckResult):
        return None
    if not before.failing or not after.failing:
        return None
    added = [test for test in after.failing if test not in before.failing]
    removed = [test for test in before.failing if test not in after.failing]
    return added, removed


def few(tests: list[str]) -> str:
    """The first SHOWN tests, and how many more."""
    more = f" (+{len(tests) - SHOWN} more)" if len(tests) > SHOWN else ""
    return ", ".join(tests[:SHOWN]) + more
