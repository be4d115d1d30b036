"""Runs a plan: cases written once, environments and checks (compat/execute/engine.py), a
report assembled as cells finish, remembered by its inputs (compat/state/memo.py)."""

from __future__ import annotations

import platform
import shutil
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

from compat.cell.checks import BY_NAME
from compat.core.report import CaseInfo, Report
from compat.corpus.discover import CaseFiles, Corpus, write_case
from compat.execute import interrupt
from compat.execute.backends import REAL, Backends
from compat.execute.engine import execute
from compat.execute.progress import Progress
from compat.execute.settings import Settings
from compat.execute.slots import CellRun
from compat.plan.matrix import Cell, Plan
from compat.state.memo import inputs_digest, recall, remember

__all__ = ["CellRun", "Settings", "assemble", "case_info", "run_cell", "run_matrix"]

#: How often a running matrix rewrites the report so far (matrix.json).
PARTIAL_SECONDS = 10.0


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
                "phase": list(k.phase),
                "raises": list(k.raises),
                "match": k.match,
            }
            for k in case.known
        ),
        tags=case.tags,
    )


def run_cell(
    cell: Cell, cases: list[CaseFiles], settings: Settings, backends: Backends = REAL
) -> CellRun:
    """Builds (or reuses) one cell's environment and runs every case's checks in it."""
    progress = Progress(1, live=False)
    runs = execute([cell], cases, settings, progress, lambda runs: None, backends=backends)
    return runs[cell.id]


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
    backends: Backends = REAL,
) -> Report:
    """Writes the cases once, runs every cell, calls `on_cell` with the report so far.
    `backends`: what builds environments and runs workers (compat/execute/backends.py)."""
    started = datetime.now(UTC)
    clock = time.monotonic()
    # a folder of its own per run: runs sharing a state directory never share files
    settings.work_dir.mkdir(parents=True, exist_ok=True)
    run_dir = Path(tempfile.mkdtemp(prefix="run-", dir=settings.work_dir))
    try:
        return _run_matrix(
            plan,
            corpus,
            replace(settings, work_dir=run_dir),
            progress,
            on_cell,
            started,
            clock,
            extra_meta,
            backends,
        )
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
    backends: Backends,
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
    # a few at a time: a new build of the project is reinstalled into each existing one
    with ThreadPoolExecutor(max_workers=max(1, settings.jobs)) as pool:
        found = pool.map(
            lambda c: backends.existing(c, settings.envs_dir, settings.interpreter(c)), plan.cells
        )
        envs = {c.id: env for c, env in zip(plan.cells, found, strict=True)}
    phases["environments"] = round(time.monotonic() - mark, 2)
    ready = {k: v for k, v in envs.items() if v is not None}
    if len(ready) == len(envs):  # every environment exists: maybe nothing changed at all
        records = {k: v.record for k, v in ready.items()}
        digest = inputs_digest(plan, files, infos, corpus.families, records, settings)
        meta["digest"] = digest
        # a user's command (--run) depends on their files too: its results are served
        # from the result cache, by their content, never from a remembered run
        checks = {c for case in corpus.cases for c in case.checks if c in BY_NAME}
        project = any(BY_NAME[c].project for c in checks)
        remembered = None if settings.fresh or project else recall(_memo(settings, digest))
        if remembered is not None:  # nothing changed: no cell process starts
            progress.close()
            run = {**remembered.run, **meta, "seconds": round(time.monotonic() - clock, 2)}
            return replace(remembered, run={**run, "executed": 0, "remembered": True})
    mark = time.monotonic()
    with interrupt.handling():  # Ctrl-C or a CI cancel: the cells done, marked
        runs = execute(list(plan.cells), files, settings, progress, partial, ready, backends)
        stopped = interrupt.interrupted()
    phases["checks"] = round(time.monotonic() - mark, 2)
    progress.close()
    meta["seconds"] = round(time.monotonic() - clock, 2)
    meta["executed"] = sum(run.executed for run in runs.values())
    meta["reran"] = sum(run.reran for run in runs.values())
    if stopped is not None:  # the cells done, nothing remembered: a rerun does the rest
        meta["interrupted"] = {"signal": stopped - 128, "cells_done": len(runs)}
        return assemble(plan, infos, corpus.families, runs, meta)
    records = {cell_id: run.record for cell_id, run in runs.items()}
    meta["digest"] = digest = inputs_digest(plan, files, infos, corpus.families, records, settings)
    report = assemble(plan, infos, corpus.families, runs, meta)
    if not any(r.retry for r in report.results):  # a crash or a stop once: computed again
        remember(report, _memo(settings, digest))
    return report


def _memo(settings: Settings, digest: str) -> Path:
    return settings.envs_dir.parent / "runs" / f"{digest}.json"
