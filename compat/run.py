"""Runs the cells of a plan, in parallel, and assembles the report as cells finish."""

from __future__ import annotations

import platform
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import onnx

from compat.cache import ResultCache, result_key
from compat.case import Case
from compat.corpus import CaseFiles, Corpus, write_case
from compat.envs import ensure_env
from compat.known import classify
from compat.matrix import Cell, Plan
from compat.outcomes import CellRecord, CellState, CheckResult, Outcome
from compat.progress import Progress
from compat.report import CaseInfo, Report
from compat.reruns import rerun
from compat.runner import Task, run_worker


@dataclass(frozen=True)
class Settings:
    envs_dir: Path
    work_dir: Path
    timeout: float
    jobs: int
    python: str
    cache_dir: Path | None = None  # None: run every check (--fresh)
    reruns: int = 3  # more runs of an unexpected outcome, each in a fresh worker
    tracebacks: bool = False  # keep the worker's tracebacks in the results


@dataclass(frozen=True)
class CellRun:
    record: CellRecord
    results: tuple[CheckResult, ...]
    executed: int = 0  # checks really run now, the rest came from the result cache


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
    """Builds (or reuses) the cell's environment and runs every case's checks in it."""
    env = ensure_env(cell, settings.envs_dir, settings.python)
    if env.record.state is not CellState.READY:
        return CellRun(env.record, ())
    jobs = [(f, check) for f in cases for check in f.case.checks]
    cache = ResultCache(settings.cache_dir, cell.id) if settings.cache_dir else None
    keys = [result_key(env.record, f, check) for f, check in jobs]
    cached = [cache.get(k) if cache else None for k in keys]
    todo = [i for i, hit in enumerate(cached) if hit is None]
    tasks = [Task(jobs[i][0].case.id, jobs[i][1], str(jobs[i][0].directory)) for i in todo]
    workdir = settings.work_dir / "cells" / cell.id
    fresh = run_worker(env.python, tasks, workdir, settings.timeout, env.code)
    for i, record in zip(todo, fresh, strict=True):
        cached[i] = record
    raw = [r for r in cached if r is not None]
    by_id: dict[str, Case] = {f.case.id: f.case for f in cases}
    results = [_result(cell, r, by_id[r["case"]], settings) for r in raw]
    suspects = [
        i for i, r in enumerate(results) if r.outcome.unexpected and r.outcome is not Outcome.FLAKY
    ]
    if suspects and settings.reruns > 0:
        again = rerun(
            env.python,
            env.code,
            [
                Task(raw[i]["case"], raw[i]["check"], jobs[i][0].directory.as_posix())
                for i in suspects
            ],
            [raw[i] for i in suspects],
            settings.reruns,
            workdir,
            settings.timeout,
        )
        for i, record in zip(suspects, again, strict=True):
            raw[i] = record
            results[i] = _result(cell, record, by_id[record["case"]], settings)
    if cache:
        ran = set(todo) | set(suspects)
        cache.put([(keys[i], raw[i]) for i in sorted(ran)])
    executed = len(tasks) + len(suspects) * settings.reruns
    return CellRun(env.record, tuple(results), executed=executed)


def _result(cell: Cell, raw: dict[str, Any], case: Case, settings: Settings) -> CheckResult:
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
    files = [write_case(c, settings.work_dir / "cases") for c in corpus.cases]
    infos = [case_info(f) for f in files]
    meta: dict[str, object] = {
        "started": started.isoformat(timespec="seconds"),
        "host": platform.node(),
        "host_python": platform.python_version(),
        "generator_onnx": onnx.__version__,
        "jobs": settings.jobs,
        "timeout": settings.timeout,
        **(extra_meta or {}),
    }
    runs: dict[str, CellRun] = {}
    lock = threading.Lock()

    def one(cell: Cell) -> None:
        progress.start(cell.id)
        run = run_cell(cell, files, settings)
        progress.finish(cell.id, _summary(run))
        with lock:  # results are written as they are produced, one writer at a time
            runs[cell.id] = run
            on_cell(assemble(plan, infos, corpus.families, runs, meta))

    with ThreadPoolExecutor(max_workers=max(1, settings.jobs)) as pool:
        for future in [pool.submit(one, cell) for cell in plan.cells]:
            future.result()
    progress.close()
    meta["seconds"] = round(time.monotonic() - clock, 2)
    meta["executed"] = sum(run.executed for run in runs.values())
    return assemble(plan, infos, corpus.families, runs, meta)
