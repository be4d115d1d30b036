"""The engine: distinct work in every cell of a plan, environments built while checks run,
reruns of what came out unexpected; one `CellRun` per cell."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from compat.cell.checks import tasks_of
from compat.cell.parts import SEPARATOR, combine
from compat.core.case import Case
from compat.core.outcomes import CellRecord, CellState, CheckResult, Outcome
from compat.corpus.discover import CaseFiles
from compat.corpus.known import classify
from compat.execute import interrupt
from compat.execute.envs import Environment, ensure_env, existing_env
from compat.execute.progress import Progress
from compat.execute.reruns import rerun
from compat.execute.schedule import Job, Unit, assign, units
from compat.execute.worker import Task, run_worker
from compat.plan.matrix import Cell
from compat.state.cache import ResultCache, code_hash, result_key


@dataclass(frozen=True)
class Settings:
    envs_dir: Path
    work_dir: Path
    timeout: float
    jobs: int
    python: str
    cache_dir: Path | None = None  # None: no result cache at all
    fresh: bool = False  # run every check again, and replace what the cache holds
    share: bool = True  # a result serves every cell with the same versions it depends on
    reruns: int = 3  # more runs of an unexpected outcome, each in a fresh worker
    tracebacks: bool = False  # keep the worker's tracebacks in the results
    #: seconds one of the project's commands may run (`command-timeout`)
    command_timeout: float = 900.0
    #: where each command's whole output goes, `LOGS/CELL/CASE.log` (None: nowhere)
    logs_dir: Path | None = None
    #: a worker's address-space limit in bytes (0: none; see `steps.memory_limit`)
    memory: int = 0

    def task(self, job: Job) -> Task:
        """The worker's task for a job, with its time: a model's grows with its size (see
        `budget`); a command carries its own timeout and its log file."""
        case = job.files.case
        task = Task(case.id, job.check, str(job.files.directory))
        if not case.command:
            return replace(task, timeout=budget(self.timeout, job.files.directory))
        return replace(task, command_timeout=self.command_timeout, log=str(self.log(job) or ""),
                       timeout=self.command_timeout + self.timeout)  # fmt: skip

    def log(self, job: Job) -> Path | None:
        """Where a command's whole output goes (None: nowhere)."""
        return self.logs_dir / job.cell / f"{job.files.case.id}.log" if self.logs_dir else None


#: Seconds a check of a model gets per megabyte of model, beyond `--timeout`: a 12 MB
#: detector is not judged by the budget of a three-node case.
SECONDS_PER_MB = 10.0


def budget(timeout: float, case_dir: Path) -> float:
    """`timeout` plus SECONDS_PER_MB for every megabyte of the case's model."""
    try:
        size = (case_dir / "model.onnx").stat().st_size
    except OSError:
        return timeout
    return round(timeout + SECONDS_PER_MB * size / 1e6, 1)


#: Most reruns of a project's command: a test suite is slow and deterministic as a rule;
#: one more run tells a flaky suite from a failing one.
COMMAND_RERUNS = 1


@dataclass(frozen=True)
class CellRun:
    record: CellRecord
    results: tuple[CheckResult, ...]
    executed: int = 0  # checks really run now, the rest came from the result cache
    reran: int = 0  # extra runs of unexpected results, in fresh workers


def execute(
    cells: list[Cell],
    files: list[CaseFiles],
    settings: Settings,
    progress: Progress,
    on_progress: Callable[[dict[str, CellRun]], object],
    envs: dict[str, Environment] | None = None,
) -> dict[str, CellRun]:
    """Distinct work only (compat/execute/schedule.py) in every cell, then reruns of what came
    out unexpected; `on_progress` sees every cell whose results are complete. Checks
    start in the environments that exist (`envs`, or those found built) while the
    others are built, a few at a time: each new environment's keys that no cell has
    claimed yet become its work."""
    envs = dict(envs or {})
    for cell in cells:
        if cell.id not in envs and (found := existing(cell, settings)[1]) is not None:
            envs[cell.id] = found
    # --fresh reads nothing back: only writes what it computes
    cache = ResultCache(settings.cache_dir, read=not settings.fresh) if settings.cache_dir else None
    by_id = {cell.id: cell for cell in cells}
    cases = {f.case.id: f.case for f in files}
    # what earlier runs left, as it was when this run started (units add to the cache)
    known = {} if cache is None or settings.fresh else dict(cache.entries)
    seconds = {k: float(r.get("seconds", 0)) for k, r in (cache.entries if cache else {}).items()}
    codes = {f.directory: code_hash(f) for f in files}  # the in-cell code, read once
    raw: dict[str, dict[str, Any]] = {}
    origin: dict[str, str] = {}
    slots_of: dict[str, list[Slot]] = {}
    claimed: set[str] = set()
    executed: dict[str, int] = dict.fromkeys(by_id, 0)
    runs: dict[str, CellRun] = {}
    lock = threading.Lock()
    pool = ThreadPoolExecutor(max_workers=max(1, settings.jobs))
    futures: list[Future[None]] = []

    def complete() -> None:
        """Cells whose every key is known get their results; results are written as
        they are produced (the caller's `on_progress`), one writer at a time."""
        for cell in cells:
            if cell.id in runs or cell.id not in slots_of:
                continue
            mine = slots_of[cell.id]
            if all(j.key in raw for slot in mine for j in slot.jobs):
                results = tuple(_result(cell, slot, raw, origin, cases, settings) for slot in mine)
                runs[cell.id] = CellRun(envs[cell.id].record, results, executed[cell.id])
                progress.finish(cell.id, summary(runs[cell.id]))
        on_progress(dict(runs))

    def schedule(ready: list[Cell]) -> None:
        """The jobs of newly ready cells; keys nobody has yet become their units."""
        if interrupt.STOP.is_set():
            return
        new: list[Job] = []
        for cell in ready:
            env = envs[cell.id]
            mine = []
            if env.record.state is CellState.READY:
                mine = [_slot(cell, env, f, codes[f.directory], check, settings)
                        for f in files for check in f.case.checks]  # fmt: skip
            slots_of[cell.id] = mine
            new += [j for slot in mine for j in slot.jobs]
        for job in new:
            if job.key not in raw and job.key in known and settled(known[job.key], job):
                raw[job.key], origin[job.key] = known[job.key], "cache"
        todo = [j for j in new if j.key not in raw and j.key not in claimed]
        claimed.update(j.key for j in todo)
        for unit in units(assign(todo, seconds), seconds, settings.jobs):
            executed[unit.cell] += len(unit.jobs)
            futures.append(pool.submit(one, len(futures), unit))
        complete()

    def settled(record: dict[str, Any], job: Job) -> bool:
        """An earlier run's record is served only when it is expected here: an unexpected
        one is computed again first (a known failure, a pass or a skip is served)."""
        if record["outcome"] in ("pass", "skip"):
            return True
        check = job.check.split(SEPARATOR, 1)[0]
        result = CheckResult(job.cell, job.files.case.id, check, Outcome(record["outcome"]),
                             record.get("detail", ""), record.get("phase", ""))  # fmt: skip
        return not classify(result, cases[result.case], by_id[job.cell]).outcome.unexpected

    def one(index: int, unit: Unit) -> None:
        if interrupt.STOP.is_set():
            return
        progress.start(unit.label)
        env = envs[unit.cell]
        tasks = [settings.task(j) for j in unit.jobs]
        forget_logs(tasks)
        workdir = settings.work_dir / "units" / f"{index:03d}-{unit.cell}"

        def keep(batch: list[tuple[int, dict[str, Any]]]) -> None:
            if cache:  # as they finish: a host killed mid-unit loses no finished result
                cache.put([(unit.jobs[i].key, r) for i, r in batch])

        records = run_worker(env.python, tasks, workdir, settings.timeout, env.code,
                             env.record.limits, f"onnx {env.record.onnx}", keep,
                             settings.memory)  # fmt: skip
        with lock:
            progress.done_unit(unit.label)
            for job, record in zip(unit.jobs, records, strict=False):  # fewer when stopped
                raw[job.key], origin[job.key] = record, job.cell
            complete()

    with pool:
        with lock:
            schedule([c for c in cells if c.id in envs])
        missing = [c for c in cells if c.id not in envs]
        with ThreadPoolExecutor(max_workers=max(2, settings.jobs)) as builders:
            building = {
                builders.submit(ensure_env, c, settings.envs_dir, settings.python): c
                for c in missing
            }
            for done in as_completed(building):
                if interrupt.STOP.is_set():  # stopped: no environment is started anew
                    for future in building:
                        future.cancel()
                    break
                cell = building[done]
                with lock:
                    envs[cell.id] = done.result()
                    schedule([cell])
        while futures:  # units may be added while earlier ones run
            futures.pop(0).result()
    if not interrupt.STOP.is_set():
        _rerun_unexpected(runs, slots_of, raw, origin, envs, cache, settings, by_id, cases,
                          progress)  # fmt: skip
    return runs


def existing(cell: Cell, settings: Settings) -> tuple[str, Environment | None]:
    return cell.id, existing_env(cell, settings.envs_dir, settings.python)


def _rerun_unexpected(
    runs: dict[str, CellRun],
    slots_of: dict[str, list[Slot]],
    raw: dict[str, dict[str, Any]],
    origin: dict[str, str],
    envs: dict[str, Environment],
    cache: ResultCache | None,
    settings: Settings,
    cells: dict[str, Cell],
    cases: dict[str, Case],
    progress: Progress,
) -> None:
    """Every key of a result that is unexpected in some cell (every part of it) runs
    `settings.reruns` more times in fresh workers of the cell that computed it (see
    compat/execute/reruns.py)."""
    if settings.reruns <= 0:
        return
    suspects: dict[str, Job] = {}
    for cell_id, run in runs.items():
        for slot, result in zip(slots_of[cell_id], run.results, strict=True):
            if result.outcome.unexpected and result.outcome is not Outcome.FLAKY:
                for job in slot.jobs:
                    owner = origin[job.key] if origin[job.key] in envs else job.cell
                    suspects.setdefault(job.key, replace(job, cell=owner))
    by_cell: dict[str, list[Job]] = {}
    rounds_of: dict[str, int] = {}
    for job in suspects.values():
        by_cell.setdefault(job.cell, []).append(job)
    if by_cell:  # minutes, for a test suite: say so, never a silent wait
        failing = sum(1 for jobs in by_cell.values() for j in jobs if j.files.case.command)
        progress.note(
            f"running {len(suspects)} unexpected results again in fresh workers "
            f"(each {settings.reruns} more time{'s' * (settings.reruns != 1)}, a project's "
            f"command {COMMAND_RERUNS}), to tell nondeterminism from failure"
            if len(suspects) > failing else
            f"running {failing} failing command{'s' * (failing != 1)} once more, to tell "
            "a flaky suite from a failing one"
        )  # fmt: skip
    for cell, jobs in by_cell.items():
        env = envs[cell]
        # a project's command reruns once at most; checks of models `settings.reruns` times
        commands = [j for j in jobs if j.files.case.command]
        models = [j for j in jobs if not j.files.case.command]
        for mine, rounds in ((models, settings.reruns), (commands, COMMAND_RERUNS)):
            if not mine:
                continue
            label = f"rerunning {cell}: " + (
                ", ".join(sorted({j.files.case.id for j in mine}))[:60] if mine is commands else
                f"{len(mine)} unexpected"
            )  # fmt: skip
            progress.start(label)
            judged = rerun(
                env.python,
                env.code,
                [settings.task(j) for j in mine],
                [raw[j.key] for j in mine],
                min(rounds, settings.reruns),
                settings.work_dir / "reruns" / cell,
                settings.timeout,
                env.record.limits,
                settings.memory,
            )
            progress.done_unit(label)
            for job, record in zip(mine, judged, strict=True):
                raw[job.key], origin[job.key] = record, cell
                rounds_of[job.key] = min(rounds, settings.reruns)
            if cache:
                cache.put([(j.key, r) for j, r in zip(mine, judged, strict=True)])
    if not suspects:
        return
    for cell_id, run in list(runs.items()):
        slots = slots_of[cell_id]
        if any(j.key in suspects for slot in slots for j in slot.jobs):
            where = cells[cell_id]
            results = tuple(_result(where, slot, raw, origin, cases, settings) for slot in slots)
            reran = sum(rounds_of[j.key] for slot in slots for j in slot.jobs
                        if j.key in suspects and j.cell == origin[j.key])  # fmt: skip
            runs[cell_id] = replace(run, results=results, reran=reran)


@dataclass(frozen=True)
class Slot:
    """One result of a cell: a check of a case, computed by one job or by one per part."""

    check: str
    jobs: tuple[Job, ...]


def _slot(
    cell: Cell, env: Environment, files: CaseFiles, code: str, check: str, settings: Settings
) -> Slot:
    return Slot(
        check,
        tuple(
            Job(cell.id, files, task, result_key(env.record, files, task, settings.share, code))
            for task in tasks_of(check)
        ),
    )


def _result(
    cell: Cell,
    slot: Slot,
    raws: dict[str, dict[str, Any]],
    origins: dict[str, str],
    cases: dict[str, Case],
    settings: Settings,
) -> CheckResult:
    """A slot's raw records (its parts' combined) as a classified result, with where it
    was computed when not in this cell (tracebacks only when asked for)."""
    records = [raws[j.key] for j in slot.jobs]
    raw = records[0] if len(records) == 1 else combine(slot.check, records)
    here = [r for j, r in zip(slot.jobs, records, strict=True) if origins[j.key] == cell.id]
    # computed here when any part was, and then its time is the time spent here
    origin = "" if here else origins[slot.jobs[0].key]
    if here and len(records) > 1:
        raw = {**raw, "seconds": round(sum(float(r.get("seconds", 0)) for r in here), 4)}
    case = cases[slot.jobs[0].files.case.id]
    log = settings.log(slot.jobs[0]) if case.command else None  # (not a task: no model read)
    return classify(
        CheckResult(
            cell=cell.id,
            case=raw["case"],
            check=raw["check"],
            outcome=Outcome(raw["outcome"]),
            detail=raw["detail"],
            phase=raw["phase"],
            seconds=raw["seconds"],
            traceback=raw.get("traceback", "") if settings.tracebacks else "",
            origin=origin,
            log=_relative(log, settings) if log and log.is_file() else "",
            retry=any(r.get("retry") for r in records),
        ),
        case,
        cell,
    )


def _relative(log: Path, settings: Settings) -> str:
    """A log's path as reports link it: relative to the report directory."""
    assert settings.logs_dir is not None
    return log.relative_to(settings.logs_dir.parent).as_posix()


def forget_logs(tasks: list[Task]) -> None:
    """A command's log of an earlier run is never shown as this run's."""
    for task in tasks:
        if task.log:
            Path(task.log).unlink(missing_ok=True)


def summary(run: CellRun) -> str:
    if run.record.state is not CellState.READY:
        return run.record.state.value
    counts: dict[str, int] = {}
    for r in run.results:
        counts[r.outcome.value] = counts.get(r.outcome.value, 0) + 1
    return ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items()))
