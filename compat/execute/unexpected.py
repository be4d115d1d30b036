"""What came out unexpected runs again: every key behind a result that is unexpected in
some cell (every part of it) runs `Settings.reruns` more times in fresh workers of the
cell that computed it (compat/execute/reruns.py judges the runs: all alike, or
`flaky`), and every cell that shows one of those keys has its results read again. A
project's command runs once more at most, a pytest suite only its failing tests, and
a command's verdict served from the cache (its attempts judged in an earlier run) does
not run again."""

from __future__ import annotations

from dataclasses import replace

from compat.core.outcomes import Outcome
from compat.corpus.usercommand import cached
from compat.execute.backends import Rerunner
from compat.execute.envs import Environment
from compat.execute.progress import Progress
from compat.execute.schedule import Job
from compat.execute.slots import Ledger
from compat.execute.tree import checked_out
from compat.state.cache import ResultCache

#: Most reruns of a project's command: a test suite is slow and deterministic as a rule;
#: one more run tells a flaky suite from a failing one.
COMMAND_RERUNS = 1
#: Unexpected outcomes that are a judgement already: never run again.
_JUDGED = (Outcome.FLAKY, Outcome.UNSUPPORTED)


def rerun_unexpected(
    ledger: Ledger,
    envs: dict[str, Environment],
    cache: ResultCache | None,
    progress: Progress,
    rerun: Rerunner,
) -> None:
    """Runs the suspects again, cell by cell, and updates the ledger's runs."""
    reruns = ledger.settings.reruns
    if reruns <= 0:
        return
    suspects = _suspects(ledger, envs)
    if not suspects:
        return
    by_cell: dict[str, list[Job]] = {}
    for job in suspects.values():
        by_cell.setdefault(job.cell, []).append(job)
    # minutes, for a test suite: say so, never a silent wait
    failing = sum(1 for jobs in by_cell.values() for j in jobs if j.files.case.command)
    progress.note(
        f"running {len(suspects)} unexpected results again in fresh workers "
        f"(each {reruns} more time{'s' * (reruns != 1)}, a project's "
        f"command {COMMAND_RERUNS}), to tell nondeterminism from failure"
        if len(suspects) > failing
        else f"running {failing} failing command{'s' * (failing != 1)} once more (pytest: "
        "only the failing tests), to tell flaky tests from failing ones"
    )
    rounds_of: dict[str, int] = {}
    for cell, jobs in by_cell.items():
        rounds_of.update(_rerun_cell(ledger, envs[cell], cell, jobs, cache, progress, rerun))
    for cell_id, run in list(ledger.runs.items()):
        jobs = [j for slot in ledger.slots[cell_id] for j in slot.jobs]
        if any(j.key in suspects for j in jobs):
            reran = sum(
                rounds_of[j.key]
                for j in jobs
                if j.key in suspects and j.cell == ledger.origin[j.key]
            )
            ledger.runs[cell_id] = replace(run, results=ledger.results(cell_id), reran=reran)


def _suspects(ledger: Ledger, envs: dict[str, Environment]) -> dict[str, Job]:
    """Each key behind an unexpected result (flaky is a judgement already, and a limit
    of the release a measured fact), as a job of the cell that computed it (of the cell
    that shows it, when it came from the cache)."""
    suspects: dict[str, Job] = {}
    for cell_id, run in ledger.runs.items():
        for slot, result in zip(ledger.slots[cell_id], run.results, strict=True):
            if result.outcome.unexpected and result.outcome not in _JUDGED:
                for job in slot.jobs:
                    if ledger.origin[job.key] == "cache" and "runs" in ledger.raw[job.key]:
                        continue  # an earlier run's judgement of its attempts: served
                    owner = ledger.origin[job.key] if ledger.origin[job.key] in envs else job.cell
                    suspects.setdefault(job.key, replace(job, cell=owner))
    return suspects


def _rerun_cell(
    ledger: Ledger,
    env: Environment,
    cell: str,
    jobs: list[Job],
    cache: ResultCache | None,
    progress: Progress,
    rerun: Rerunner,
) -> dict[str, int]:
    """One cell's suspects run again; returns the rounds each key ran."""
    settings = ledger.settings
    rounds_of: dict[str, int] = {}
    # a project's command reruns once at most; checks of models `settings.reruns` times
    commands = [j for j in jobs if j.files.case.command]
    models = [j for j in jobs if not j.files.case.command]
    for mine, rounds in ((models, settings.reruns), (commands, COMMAND_RERUNS)):
        if not mine:
            continue
        label = f"rerunning {cell}: " + (
            ", ".join(sorted({j.files.case.id for j in mine}))[:60]
            if mine is commands
            else f"{len(mine)} unexpected"
        )
        progress.start(label)
        with checked_out(settings.copies(mine), settings.outputs):  # commands' folders
            judged = rerun(
                env.python,
                env.code,
                [settings.task(j) for j in mine],
                [ledger.raw[j.key] for j in mine],
                min(rounds, settings.reruns),
                settings.work_dir / "reruns" / cell,
                settings.timeout,
                env.record.limits,
                settings.memory,
            )
        progress.done_unit(label)
        for job, record in zip(mine, judged, strict=True):
            ledger.put(job.key, record, cell)
            rounds_of[job.key] = min(rounds, settings.reruns)
        if cache:
            pairs = zip(mine, judged, strict=True)
            cache.put([(j.key, r) for j, r in pairs if cached(j.files.case)])
    return rounds_of
