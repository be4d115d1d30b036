"""Nondeterminism is a state: an unexpected outcome runs again in fresh workers, and a
task whose runs disagree is `flaky`, with the counts and the first differing detail."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from compat.cell import protocol
from compat.cell.protocol import RawRecord
from compat.execute.worker import Task, run_worker

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
        again = run_worker(python, tasks, workdir / f"rerun{k}", timeout, code, limits,
                           memory=memory)  # fmt: skip
        for runs, record in zip(history, again, strict=True):
            runs.append(record)
    return [judge_runs(runs) for runs in history]
