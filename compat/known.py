"""Applies a case's known failures: fail in range -> xfail, pass in range -> xpass."""

from __future__ import annotations

from dataclasses import replace

from compat.case import Case, KnownFailure
from compat.matrix import Cell
from compat.outcomes import CheckResult, Outcome
from compat.versions import in_range


def matching(case: Case, check: str, cell: Cell) -> KnownFailure | None:
    """The first known failure of `case` that covers `check` in `cell`, if any."""
    for known in case.known:
        if check in known.checks and in_range(cell.version(known.package), known.versions):
            return known
    return None


def classify(result: CheckResult, case: Case, cell: Cell) -> CheckResult:
    """Maps a raw result through the case's known failures."""
    known = matching(case, result.check, cell)
    if known is None:
        return result
    if result.outcome.value in known.outcomes:  # only the symptoms the bug is known for
        return replace(result, outcome=Outcome.XFAIL, known=known.link)
    if result.outcome is Outcome.PASS:
        range_text = known.versions or "every release"
        detail = (
            f"passes although known to fail on {known.package} {range_text} "
            f"({known.reason}; {known.link}): the bug looks fixed, narrow the range"
        )
        return replace(result, outcome=Outcome.XPASS, detail=detail, known=known.link)
    return result
