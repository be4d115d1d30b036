"""Known failures: attached to cases from data (`attach`), then applied to results
(`classify`): a failure in range that looks like the bug -> xfail, pass in range -> xpass,
a failure in range that looks otherwise stays unexpected and says which bug it is not."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from compat.core.case import BUILTIN_CHECKS, Case, KnownFailure
from compat.core.errors import ConfigError
from compat.core.outcomes import CheckResult, Outcome
from compat.core.versions import in_range
from compat.plan.known_tables import KnownEntry
from compat.plan.matrix import Cell

#: how a symptom the bug does not list reads
_VERBS = {
    Outcome.FAIL: "fails",
    Outcome.ERROR: "errors",
    Outcome.CRASH: "crashes",
    Outcome.TIMEOUT: "times out",
    Outcome.FLAKY: "is flaky",
}
#: the exception at the head of a detail, as the cell writes one (`Type: message`,
#: compat/cell/verdict.py `one_line`); a class name starts with a capital, and the words
#: that start other details (`extended, all: ...`, `ort run 1: ...`) do not
_RAISED = re.compile(r"([A-Z_]\w*): ")
#: a flaky record's head before its odd run's detail: `failed 1 of 4 runs, passed 3 of
#: 4 runs: fail@compare: ` (compat/execute/reruns.py `judge_runs`)
_RUNS = re.compile(r"(?:[a-z ]+ \d+ of \d+ runs(?:, )?)+: [a-z]+(?:@\S+)?: ")


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
        have = (
            {check for c in matched for check in c.checks}
            if matched
            else (set(BUILTIN_CHECKS) | {check for c in cases for check in c.checks})
        )
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


def covering(case: Case, check: str, cell: Cell) -> list[KnownFailure]:
    """The known failures of `case` that cover `check` in `cell`, in the case's order."""
    return [
        known
        for known in case.known
        if check in known.checks and in_range(cell.version(known.package), known.versions)
    ]


def raised(result: CheckResult) -> str:
    """The name of the exception a failure's detail starts with ("" when none does)."""
    detail = result.detail
    if result.outcome is Outcome.FLAKY:  # the odd run's detail, after the counts
        head = _RUNS.match(detail)
        detail = detail[head.end() :] if head else detail
    found = _RAISED.match(detail)
    return found.group(1) if found else ""


def unlike(known: KnownFailure, result: CheckResult, message: bool = True) -> str:
    """How a failure differs from the one `known` declares, in words ("" when it looks
    like it): its phase, its exception, or its message (`message=False` on a model other
    than the bug's own case, whose message names that case's values and tensors)."""
    if known.phase and not any(
        result.phase == phase or result.phase.split("@", 1)[0] == phase for phase in known.phase
    ):
        return f"fails at {result.phase or 'no phase'}, the bug at {' or '.join(known.phase)}"
    if known.raises:
        name = raised(result)
        if name not in {declared.rsplit(".", 1)[-1] for declared in known.raises}:
            return f"raises {name or 'no exception'}, the bug {' or '.join(known.raises)}"
    if message and known.match and not re.search(known.match, result.detail):
        return f"its message does not match the bug's {known.match!r}"
    return ""


def _described(known: KnownFailure) -> str:
    """`onnx <1.22 (reason; link)`: a known failure, as a detail names it."""
    where = f"{known.reason}; {known.link}" if known.link else known.reason
    return f"{known.package} {known.versions or 'every release'} ({where})"


def classify(result: CheckResult, case: Case, cell: Cell) -> CheckResult:
    """Maps a raw result through the case's known failures."""
    known = covering(case, result.check, cell)
    if not known:
        return result
    if result.outcome is Outcome.PASS:
        flaky = next((k for k in known if "flaky" in k.outcomes), None)
        if flaky is not None:  # a flaky bug may pass
            return replace(result, outcome=Outcome.XFAIL, known=flaky.link or flaky.reason)
        detail = (
            f"passes although known to fail on {_described(known[0])}: "
            "the bug looks fixed, narrow the range"
        )
        label = known[0].link or known[0].reason
        return replace(result, outcome=Outcome.XPASS, detail=detail, known=label)
    if result.outcome not in _VERBS:  # a skip: nothing failed
        return result
    differences = []
    for bug in known:
        if result.outcome.value not in bug.outcomes:  # only the symptoms the bug is known for
            said = f"{_VERBS[result.outcome]}; the bug shows {', '.join(bug.outcomes)}"
            differences.append(f"{_described(bug)}: {said}")
            continue
        difference = unlike(bug, result)
        if not difference:  # a user's own bug may have no public link: its reason labels it
            return replace(result, outcome=Outcome.XFAIL, known=bug.link or bug.reason)
        differences.append(f"{_described(bug)}: {difference}")
    said = "; nor ".join(differences)
    return replace(result, detail=f"not the known bug {said} — {result.detail}")
