"""Nondeterminism is a state: an unexpected outcome runs again in fresh workers, and a
task whose runs disagree is `flaky`, with the counts and the first differing detail.

A project's command is judged by its tests, not only its exit status: its rerun (its
second attempt) runs, for pytest, only the tests the first reported failing (compat/
cell/pytest_only.py), and the attempts are compared by the SET of failing test ids. A
test that failed in one attempt only is flaky, by name; the command is `flaky` when no
test failed in every attempt, else it fails, naming its flaky tests beside the others.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

from compat.cell import protocol
from compat.cell.outputs import with_ids
from compat.cell.protocol import RawRecord
from compat.execute.worker import Task, run_worker

#: Longest list of flaky test ids a detail quotes (the record's `flaky` has them all).
FLAKY_LIMIT = 250
#: How each outcome reads in "failed 1 of 4 runs".
VERBS = {
    "pass": "passed",
    "fail": "failed",
    "error": "errored",
    "crash": "crashed",
    "timeout": "timed out",
    "skip": "skipped",
    "flaky": "was nondeterministic",
}


def judge_runs(records: list[RawRecord]) -> RawRecord:
    """One raw record for several runs of the same task: the first when all runs agree
    on the outcome, else a `flaky` record that counts them and quotes the first one
    that differs from a pass (or from the first run)."""
    outcomes = [r["outcome"] for r in records]
    if len(set(outcomes)) == 1:
        return records[0]
    counts = Counter(outcomes)
    total = len(records)
    order = sorted(counts, key=lambda o: (o == "pass", outcomes.index(o)))
    said = ", ".join(f"{VERBS.get(o, o)} {counts[o]} of {total} runs" for o in order)
    odd = next((r for r in records if r["outcome"] != "pass"), records[0])
    head = f"{odd['outcome']}@{odd['phase']}" if odd.get("phase") else odd["outcome"]
    judged = protocol.record(
        "flaky",
        f"{said}: {head}: {odd['detail']}",
        odd.get("phase", ""),
        # a run that crashed or was stopped may be the machine's moment, not the check's:
        # the judgement is this run's, computed again next time
        retry=any(r.get("retry") or r["outcome"] in ("crash", "timeout") for r in records),
        runs=outcomes,
        seconds=round(sum(float(r.get("seconds", 0)) for r in records), 4),
    )
    return {**odd, **judged}  # the rest (case, check, traceback, index) is the odd run's


def rerun(
    python: Path,
    code: Path,
    tasks: list[Task],
    first: list[RawRecord],
    rounds: int,
    workdir: Path,
    timeout: float,
    limits: tuple[int, ...] = (),
    memory: int = 0,
) -> list[RawRecord]:
    """Runs `tasks` `rounds` more times, each round in a fresh worker, and returns one
    judged record per task (see `judge_runs`), in task order."""
    history = [[record] for record in first]
    for k in range(1, rounds + 1):
        attempts = [
            next_attempt(task, runs[0], k + 1) for task, runs in zip(tasks, history, strict=True)
        ]
        again = run_worker(
            python, attempts, workdir / f"rerun{k}", timeout, code, limits, memory=memory
        )
        for runs, record in zip(history, again, strict=True):
            runs.append(record)
    return [judge_attempts(runs) if is_command(runs[0]) else judge_runs(runs) for runs in history]


def is_command(record: RawRecord) -> bool:
    return record.get("check") == "command"


def next_attempt(task: Task, first: RawRecord, attempt: int) -> Task:
    """A command's next attempt: appended to its log; for a pytest run that named its
    failing tests, only those. Any other task runs again as it is."""
    if not is_command(first):
        return task
    ids = first.get("failing") or []
    only = tuple(ids) if first.get("runner") == "pytest" and first["outcome"] == "fail" else ()
    return replace(task, attempt=attempt, only=only)


def judge_attempts(records: list[RawRecord]) -> RawRecord:
    """A command's attempts as one record (with `runs`, each attempt's outcome): compared
    by their sets of failing tests when each attempt's runner named them, else by their
    outcomes (`judge_runs`). A test is flaky when it failed in one attempt and ran
    without failing in another; one a rerun never reached (`observed`) counts only
    where it ran."""
    outcomes = [r["outcome"] for r in records]
    runs: protocol.RecordOptions = {"runs": outcomes}
    if not all(map(_named, records)) or not any(r.get("failing") for r in records):
        return {**judge_runs(records), **runs}
    always: list[str] = []
    flaky: list[str] = []
    for nodeid in dict.fromkeys(n for r in records for n in r.get("failing", [])):
        failed = [nodeid in r.get("failing", []) for r in records if _ran(r, nodeid)]
        (always if all(failed) else flaky).append(nodeid)
    if not flaky:
        return {**judge_runs(records), **runs}
    head = (
        f"flaky: {len(flaky)} test{'s' * (len(flaky) != 1)} failed in one attempt, not in another"
    )
    said = with_ids(head, [(nodeid, "") for nodeid in flaky], FLAKY_LIMIT)
    first = records[0]
    if always:  # real failures, and flaky tests beside them
        return {**first, **runs, "flaky": flaky, "detail": f"{first['detail']}; {said}"}
    odd = next(r for r in records if r["outcome"] == "fail")
    detail = f"{said}; attempt {records.index(odd) + 1}: {odd['detail']}"
    judged = protocol.record("flaky", detail, odd.get("phase", ""), runs=outcomes, flaky=flaky)
    seconds = round(sum(float(r.get("seconds", 0)) for r in records), 4)
    return {**odd, **judged, "seconds": seconds}


def _named(record: RawRecord) -> bool:
    """An attempt that passed or failed and whose test runner named its failing tests."""
    return (
        record["outcome"] in ("pass", "fail")
        and bool(record.get("runner"))
        and record.get("failing") is not None
    )


def _ran(record: RawRecord, nodeid: str) -> bool:
    """Whether an attempt ran the test: a whole run ran every test; a rerun of only the
    failing ones, those it says it ran (`observed`) and those that failed in it."""
    if "observed" not in record:
        return True
    return nodeid in record.get("failing", []) or nodeid in record["observed"]
