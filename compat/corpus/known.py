"""Known failures: attached to cases from data (`attach`), then applied to results
(`classify`): fail in range -> xfail, pass in range -> xpass."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Sequence
from dataclasses import replace

from compat.core.case import BUILTIN_CHECKS, Case, KnownFailure
from compat.core.errors import ConfigError
from compat.core.outcomes import CheckResult, Outcome
from compat.core.versions import in_range
from compat.plan.known_tables import KnownEntry
from compat.plan.matrix import Cell


def attach(
    cases: Sequence[Case],
    entries: Sequence[KnownEntry],
    name: Callable[[Case], str] = lambda case: case.id,
    must_match: str = "",
) -> list[Case]:
    """Adds each entry's known failure to every case whose `name` matches its glob, after
    the case's own. A check the matched cases do not have is an error; so is a glob that
    matches nothing when `must_match` says what it should have matched."""
    extra: dict[str, list[KnownFailure]] = {c.id: [] for c in cases}
    for entry in entries:
        matched = [c for c in cases if fnmatch.fnmatchcase(name(c), entry.cases)]
        if not matched and must_match:
            raise ConfigError(f"{entry.where}: cases {entry.cases!r} matches no {must_match}")
        have = {check for c in matched for check in c.checks} if matched else (
            set(BUILTIN_CHECKS) | {check for c in cases for check in c.checks}
        )  # fmt: skip
        for check in entry.failure.checks:
            if check not in have:
                whose = f"the cases {entry.cases!r} matches" if matched else "any case"
                raise ConfigError(
                    f"{entry.where}: check {check!r} is not a check of {whose}; "
                    f"use one of {', '.join(sorted(have))}"
                )
        for case in matched:
            extra[case.id].append(entry.failure)
    return [replace(c, known=c.known + tuple(extra[c.id])) if extra[c.id] else c for c in cases]


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
    label = known.link or known.reason  # a user's own bug may have no public link
    if result.outcome.value in known.outcomes:  # only the symptoms the bug is known for
        return replace(result, outcome=Outcome.XFAIL, known=label)
    if result.outcome is Outcome.PASS and "flaky" in known.outcomes:
        return replace(result, outcome=Outcome.XFAIL, known=label)  # a flaky bug may pass
    if result.outcome is Outcome.PASS:
        range_text = known.versions or "every release"
        where = f"{known.reason}; {known.link}" if known.link else known.reason
        detail = (
            f"passes although known to fail on {known.package} {range_text} "
            f"({where}): the bug looks fixed, narrow the range"
        )
        return replace(result, outcome=Outcome.XPASS, detail=detail, known=label)
    return result
