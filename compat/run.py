"""Runs the cells of a plan, in parallel, and assembles the report as cells finish."""

from __future__ import annotations

import platform
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from compat.cache import ResultCache, result_key
from compat.case import Case
from compat.corpus import CaseFiles, Corpus, write_case
from compat.envs import Environment, ensure_env, existing_env
from compat.known import classify
from compat.matrix import Cell, Plan
from compat.memo import inputs_digest, recall, remember
from compat.outcomes import CellRecord, CellState, CheckResult, Outcome
from compat.progress import Progress
from compat.report import CaseInfo, Report
from compat.reruns import rerun
from compat.runner import Task, run_worker
from compat.schedule import Job, Unit, assign, units

#: How often a running matrix rewrites the report so far (matrix.json).
PARTIAL_SECONDS = 10.0


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


@dataclass(frozen=True)
class CellRun:
    record: CellRecord
    results: tuple[CheckResult, ...]
    executed: int = 0  # checks really run now, the rest came from the result cache
    reran: int = 0  # extra runs of unexpected results, in fresh workers


def case_info(files: CaseFiles) -> CaseInfo:
    case = files.case
    return CaseInfo(
        id=case.id,
        family=case.family,
        description=case.description,
        sha256=files.sha256,
        checks={check: case.check_axis(check) for check in case.checks},
        known=tuple(
            {
                "package": k.package,
                "versions": k.versions,
                "checks": list(k.checks),
                "reason": k.reason,
                "link": k.link,
                "outcomes": list(k.outcomes),
            }
            for k in case.known
        ),
        tags=case.tags,
    )


def run_cell(cell: Cell, cases: list[CaseFiles], settings: Settings) -> CellRun:
    """Builds (or reuses) one cell's environment and runs every case's checks in it."""
    runs = execute([cell], cases, settings, Progress(1, live=False), lambda runs: None)
    return runs[cell.id]


def execute(
    cells: list[Cell],
    files: list[CaseFiles],
    settings: Settings,
    progress: Progress,
    on_progress: Callable[[dict[str, CellRun]], object],
    envs: dict[str, Environment] | None = None,
) -> dict[str, CellRun]:
    """Distinct work only (compat/schedule.py) in every cell, then reruns of what came
    out unexpected; `on_progress` sees every cell whose results are complete. Checks
    start in the environments that exist (`envs`, or those found built) while the
    others are built, a few at a time: each new environment's keys that no cell has
    claimed yet become its work."""
    envs = dict(envs or {})
    for cell in cells:
        if cell.id not in envs and (found := _existing(cell, settings)[1]) is not None:
            envs[cell.id] = found
    cache = ResultCache(settings.cache_dir) if settings.cache_dir else None
    by_id = {cell.id: cell for cell in cells}
    cases = {f.case.id: f.case for f in files}
    known = {} if cache is None or settings.fresh else cache.entries
    seconds = {k: float(r.get("seconds", 0)) for k, r in (cache.entries if cache else {}).items()}
    raw: dict[str, dict[str, Any]] = {}
    origin: dict[str, str] = {}
    jobs_of: dict[str, list[Job]] = {}
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
            if cell.id in runs or cell.id not in jobs_of:
                continue
            mine = jobs_of[cell.id]
            if all(j.key in raw for j in mine):
                results = tuple(
                    _result(cell, raw[j.key], cases[j.files.case.id], settings,
                            "" if origin[j.key] == cell.id else origin[j.key])
                    for j in mine
                )  # fmt: skip
                runs[cell.id] = CellRun(envs[cell.id].record, results, executed[cell.id])
                progress.finish(cell.id, _summary(runs[cell.id]))
        on_progress(dict(runs))

    def schedule(ready: list[Cell]) -> None:
        """The jobs of newly ready cells; keys nobody has yet become their units."""
        new: list[Job] = []
        for cell in ready:
            env = envs[cell.id]
            mine = []
            if env.record.state is CellState.READY:
                mine = [Job(cell.id, f, check, result_key(env.record, f, check, settings.share))
                        for f in files for check in f.case.checks]  # fmt: skip
            jobs_of[cell.id] = mine
            new += mine
        for job in new:
            if job.key not in raw and job.key in known:
                raw[job.key], origin[job.key] = known[job.key], "cache"
        todo = [j for j in new if j.key not in raw and j.key not in claimed]
        claimed.update(j.key for j in todo)
        for unit in units(assign(todo, seconds), seconds, settings.jobs):
            executed[unit.cell] += len(unit.jobs)
            futures.append(pool.submit(one, len(futures), unit))
        complete()

    def one(index: int, unit: Unit) -> None:
        progress.start(unit.label)
        env = envs[unit.cell]
        tasks = [Task(j.files.case.id, j.check, str(j.files.directory)) for j in unit.jobs]
        workdir = settings.work_dir / "units" / f"{index:03d}-{unit.cell}"
        records = run_worker(
            env.python, tasks, workdir, settings.timeout, env.code, env.record.limits
        )
        if cache:
            cache.put([(j.key, r) for j, r in zip(unit.jobs, records, strict=True)])
        with lock:
            progress.done_unit(unit.label)
            for job, record in zip(unit.jobs, records, strict=True):
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
                cell = building[done]
                with lock:
                    envs[cell.id] = done.result()
                    schedule([cell])
        while futures:  # units may be added while earlier ones run
            futures.pop(0).result()
    _rerun_unexpected(runs, jobs_of, raw, origin, envs, cache, settings, by_id, cases)
    return runs


def _existing(cell: Cell, settings: Settings) -> tuple[str, Environment | None]:
    return cell.id, existing_env(cell, settings.envs_dir, settings.python)


def _rerun_unexpected(
    runs: dict[str, CellRun],
    jobs_of: dict[str, list[Job]],
    raw: dict[str, dict[str, Any]],
    origin: dict[str, str],
    envs: dict[str, Environment],
    cache: ResultCache | None,
    settings: Settings,
    cells: dict[str, Cell],
    cases: dict[str, Case],
) -> None:
    """Every key whose result is unexpected in some cell runs `settings.reruns` more times
    in fresh workers of the cell that computed it (see compat/reruns.py)."""
    if settings.reruns <= 0:
        return
    suspects: dict[str, Job] = {}
    for cell_id, run in runs.items():
        for job, result in zip(jobs_of[cell_id], run.results, strict=True):
            if result.outcome.unexpected and result.outcome is not Outcome.FLAKY:
                owner = origin[job.key] if origin[job.key] in envs else job.cell
                suspects.setdefault(job.key, replace(job, cell=owner))
    by_cell: dict[str, list[Job]] = {}
    for job in suspects.values():
        by_cell.setdefault(job.cell, []).append(job)
    for cell, mine in by_cell.items():
        tasks = [Task(j.files.case.id, j.check, str(j.files.directory)) for j in mine]
        env = envs[cell]
        workdir = settings.work_dir / "reruns" / cell
        first = [raw[j.key] for j in mine]
        judged = rerun(
            env.python,
            env.code,
            tasks,
            first,
            settings.reruns,
            workdir,
            settings.timeout,
            env.record.limits,
        )
        for job, record in zip(mine, judged, strict=True):
            raw[job.key], origin[job.key] = record, cell
        if cache:
            cache.put([(j.key, r) for j, r in zip(mine, judged, strict=True)])
    if not suspects:
        return
    for cell_id, run in list(runs.items()):
        mine = jobs_of[cell_id]
        if any(j.key in suspects for j in mine):
            results = tuple(
                _result(cells[cell_id], raw[j.key], cases[j.files.case.id], settings,
                        "" if origin[j.key] == cell_id else origin[j.key])
                for j in mine
            )  # fmt: skip
            reran = sum(1 for j in mine if j.key in suspects and j.cell == origin[j.key])
            runs[cell_id] = replace(run, results=results, reran=reran * settings.reruns)


def _result(
    cell: Cell, raw: dict[str, Any], case: Case, settings: Settings, origin: str = ""
) -> CheckResult:
    """A worker's raw record as a classified result (tracebacks only when asked for)."""
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
        ),
        case,
        cell,
    )


def _summary(run: CellRun) -> str:
    if run.record.state is not CellState.READY:
        return run.record.state.value
    counts: dict[str, int] = {}
    for r in run.results:
        counts[r.outcome.value] = counts.get(r.outcome.value, 0) + 1
    return ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items()))


def assemble(
    plan: Plan,
    infos: list[CaseInfo],
    families: dict[str, str],
    runs: dict[str, CellRun],
    meta: dict[str, object],
) -> Report:
    """A report in plan order, whatever order the cells finished in."""
    done = [c for c in plan.cells if c.id in runs]
    return Report(
        cells=tuple(runs[c.id].record for c in done),
        cases=tuple(infos),
        results=tuple(r for c in done for r in runs[c.id].results),
        axes={
            name: tuple(c.id for c in cells if c.id in runs) for name, cells in plan.axes.items()
        },
        families={f: d for f, d in families.items() if any(i.family == f for i in infos)},
        run=dict(meta),
    )


def run_matrix(
    plan: Plan,
    corpus: Corpus,
    settings: Settings,
    progress: Progress,
    on_cell: Callable[[Report], object] = lambda report: None,
    extra_meta: dict[str, object] | None = None,
) -> Report:
    """Writes the cases once, runs every cell, calls `on_cell` with the report so far."""
    started = datetime.now(UTC)
    clock = time.monotonic()
    # a folder of its own per run: runs sharing a state directory never share files
    settings.work_dir.mkdir(parents=True, exist_ok=True)
    run_dir = Path(tempfile.mkdtemp(prefix="run-", dir=settings.work_dir))
    try:
        return _run_matrix(plan, corpus, replace(settings, work_dir=run_dir), progress, on_cell,
                           started, clock, extra_meta)  # fmt: skip
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def _run_matrix(
    plan: Plan,
    corpus: Corpus,
    settings: Settings,
    progress: Progress,
    on_cell: Callable[[Report], object],
    started: datetime,
    clock: float,
    extra_meta: dict[str, object] | None,
) -> Report:
    # content-addressed under the state directory: written once, shared by later runs
    files = [write_case(c, settings.envs_dir.parent / "cases", keyed=True) for c in corpus.cases]
    infos = [case_info(f) for f in files]
    meta: dict[str, object] = {
        "started": started.isoformat(timespec="seconds"),
        "host": platform.node(),
        "host_python": platform.python_version(),
        "generator_onnx": version("onnx"),
        "jobs": settings.jobs,
        "timeout": settings.timeout,
        **(extra_meta or {}),
    }

    last = [0.0]

    def partial(runs: dict[str, CellRun]) -> None:
        """The report so far, at most every PARTIAL_SECONDS: every raw result is already
        on disk in the cache as it is produced, and a rerun picks it up from there."""
        if runs and time.monotonic() - last[0] >= PARTIAL_SECONDS:
            on_cell(assemble(plan, infos, corpus.families, runs, meta))
            last[0] = time.monotonic()

    phases: dict[str, float] = {"cases": round(time.monotonic() - clock, 2)}
    meta["phases"] = phases
    mark = time.monotonic()
    envs = dict(_existing(c, settings) for c in plan.cells)
    phases["environments"] = round(time.monotonic() - mark, 2)
    ready = {k: v for k, v in envs.items() if v is not None}
    if len(ready) == len(envs):  # every environment exists: maybe nothing changed at all
        records = {k: v.record for k, v in ready.items()}
        digest = inputs_digest(plan, files, infos, corpus.families, records, settings)
        meta["digest"] = digest
        remembered = None if settings.fresh else recall(_memo(settings, digest))
        if remembered is not None:  # nothing changed: no cell process starts
            progress.close()
            run = {**remembered.run, **meta, "seconds": round(time.monotonic() - clock, 2)}
            return replace(remembered, run={**run, "executed": 0, "remembered": True})
    mark = time.monotonic()
    runs = execute(list(plan.cells), files, settings, progress, partial, ready)
    phases["checks"] = round(time.monotonic() - mark, 2)
    records = {cell_id: run.record for cell_id, run in runs.items()}
    meta["digest"] = digest = inputs_digest(plan, files, infos, corpus.families, records, settings)
    progress.close()
    meta["seconds"] = round(time.monotonic() - clock, 2)
    meta["executed"] = sum(run.executed for run in runs.values())
    meta["reran"] = sum(run.reran for run in runs.values())
    report = assemble(plan, infos, corpus.families, runs, meta)
    remember(report, _memo(settings, digest))
    return report


def _memo(settings: Settings, digest: str) -> Path:
    return settings.envs_dir.parent / "runs" / f"{digest}.json"
