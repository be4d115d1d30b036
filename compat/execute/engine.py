"""The engine: distinct work in every cell of a plan, environments built while checks run,
reruns of what came out unexpected; one `CellRun` per cell.

What happens outside this process (building an environment, running a worker) is passed
in as `Backends`, the real ones by default."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from pathlib import Path

from compat.cell.parts import SEPARATOR
from compat.cell.protocol import RawRecord
from compat.core.outcomes import CellState, CheckResult, Outcome
from compat.corpus.discover import CaseFiles
from compat.corpus.known import classify
from compat.corpus.usercommand import cached, project_root
from compat.execute import interrupt
from compat.execute.backends import REAL, Backends
from compat.execute.envs import Environment
from compat.execute.progress import Progress
from compat.execute.schedule import Job, Unit, assign, units
from compat.execute.settings import Settings
from compat.execute.slots import CellRun, Ledger, slot, summary
from compat.execute.tree import checked_out, context
from compat.execute.unexpected import rerun_unexpected
from compat.execute.worker import Task
from compat.plan.matrix import Cell
from compat.state.cache import ResultCache, code_hash


def execute(
    cells: list[Cell],
    files: list[CaseFiles],
    settings: Settings,
    progress: Progress,
    on_progress: Callable[[dict[str, CellRun]], object],
    envs: dict[str, Environment] | None = None,
    backends: Backends = REAL,
) -> dict[str, CellRun]:
    """Distinct work only (compat/execute/schedule.py) in every cell, then reruns of what came
    out unexpected; `on_progress` sees every cell whose results are complete. Checks
    start in the environments that exist (`envs`, or those found built) while the
    others are built, a few at a time: each new environment's keys that no cell has
    claimed yet become its work."""
    envs = dict(envs or {})
    for cell in cells:
        if cell.id not in envs:
            found = backends.existing(cell, settings.envs_dir, settings.interpreter(cell))
            if found is not None:
                envs[cell.id] = found
    work = _Work(cells, files, settings, progress, on_progress, envs, backends)
    with work.pool:
        with work.lock:
            work.schedule([c for c in cells if c.id in envs])
        work.build([c for c in cells if c.id not in envs])
        while work.futures:  # units may be added while earlier ones run
            work.futures.pop(0).result()
    if not interrupt.STOP.is_set():
        rerun_unexpected(work.ledger, envs, work.cache, progress, backends.rerun)
    return work.ledger.runs


class _Work:
    """One `execute`: what is known (the ledger, the cache), the keys claimed by a unit,
    and the pool that runs the units. `lock` guards the ledger: units finish on the
    pool's threads, environments on the builders'."""

    def __init__(
        self,
        cells: list[Cell],
        files: list[CaseFiles],
        settings: Settings,
        progress: Progress,
        on_progress: Callable[[dict[str, CellRun]], object],
        envs: dict[str, Environment],
        backends: Backends,
    ) -> None:
        self.cells = cells
        self.files = files
        self.settings = settings
        self.envs = envs
        self.progress = progress
        self.on_progress = on_progress
        self.backends = backends
        # --fresh reads nothing back: only writes what it computes
        where = settings.cache_dir
        self.cache = ResultCache(where, read=not settings.fresh) if where else None
        entries = self.cache.entries if self.cache else {}
        # what earlier runs left, as it was when this run started (units add to the cache)
        self.known = {} if settings.fresh else dict(entries)
        self.seconds = {k: float(r.get("seconds", 0)) for k, r in entries.items()}
        self.codes = {f.directory: code_hash(f) for f in files}  # the in-cell code, read once
        self.contexts = contexts(files, settings)  # each command's tree and environment
        self.ledger = Ledger(settings, {c.id: c for c in cells}, {f.case.id: f.case for f in files})
        self.claimed: set[str] = set()
        self.executed: dict[str, int] = {c.id: 0 for c in cells}
        self.lock = threading.Lock()
        self.pool = ThreadPoolExecutor(max_workers=max(1, settings.jobs))
        self.futures: list[Future[None]] = []

    def build(self, missing: list[Cell]) -> None:
        """Builds the missing environments, a few at a time, scheduling each as it is done."""
        settings = self.settings
        with ThreadPoolExecutor(max_workers=max(2, settings.jobs)) as builders:
            building = {
                builders.submit(
                    self.backends.build, c, settings.envs_dir, settings.interpreter(c)
                ): c
                for c in missing
            }
            for done in as_completed(building):
                if interrupt.STOP.is_set():  # stopped: no environment is started anew
                    for future in building:
                        future.cancel()
                    break
                cell = building[done]
                with self.lock:
                    self.envs[cell.id] = done.result()
                    self.schedule([cell])

    def schedule(self, ready: list[Cell]) -> None:
        """The jobs of newly ready cells; keys nobody has yet become their units."""
        if interrupt.STOP.is_set():
            return
        new: list[Job] = []
        for cell in ready:
            env = self.envs[cell.id]
            mine = []
            if env.record.state is CellState.READY:
                mine = [
                    slot(
                        cell,
                        env,
                        f,
                        self.codes[f.directory],
                        check,
                        self.settings.share,
                        self.contexts.get(f.directory, ""),
                    )
                    for f in self.files
                    for check in f.case.checks
                ]
            self.ledger.slots[cell.id] = mine
            new += [j for s in mine for j in s.jobs]
        for job in new:
            if job.key not in self.ledger.raw and self._served(job):
                self.ledger.put(job.key, self.known[job.key], "cache")
        todo = [j for j in new if j.key not in self.ledger.raw and j.key not in self.claimed]
        self.claimed.update(j.key for j in todo)
        for unit in units(assign(todo, self.seconds), self.seconds, self.settings.jobs):
            self.executed[unit.cell] += len(unit.jobs)
            self.futures.append(self.pool.submit(self._run, len(self.futures), unit))
        self.complete()

    def complete(self) -> None:
        """Cells whose every key is known get their results; results are written as
        they are produced (the caller's `on_progress`), one writer at a time."""
        runs = self.ledger.runs
        for cell in self.cells:
            if cell.id not in runs and self.ledger.complete(cell.id):
                results = self.ledger.results(cell.id)
                runs[cell.id] = CellRun(self.envs[cell.id].record, results, self.executed[cell.id])
                self.progress.finish(cell.id, summary(runs[cell.id]))
        self.on_progress(dict(runs))

    def _served(self, job: Job) -> bool:
        """An earlier run's record is served only when it is expected here: an unexpected
        one is computed again first (a known failure, a pass or a skip is served)."""
        record = self.known.get(job.key)
        if record is None or not cached(job.files.case):
            return False
        if record["outcome"] in ("pass", "skip"):
            return True
        if job.files.case.command and judged(record, self.settings.reruns):
            return True  # a command's failure, once its rerun agreed: its verdict
        case = self.ledger.cases[job.files.case.id]
        check = job.check.split(SEPARATOR, 1)[0]
        result = CheckResult(
            job.cell,
            case.id,
            check,
            Outcome(record["outcome"]),
            record.get("detail", ""),
            record.get("phase", ""),
        )
        return not classify(result, case, self.ledger.cells[job.cell]).outcome.unexpected

    def _run(self, index: int, unit: Unit) -> None:
        """One unit in one worker; its records go to the cache as they come, and to the
        ledger when the worker is done."""
        if interrupt.STOP.is_set():
            return
        settings = self.settings
        self.progress.start(unit.label)
        env = self.envs[unit.cell]
        tasks = [settings.task(j) for j in unit.jobs]
        forget_logs(tasks)
        workdir = settings.work_dir / "units" / f"{index:03d}-{unit.cell}"

        def keep(batch: list[tuple[int, RawRecord]]) -> None:
            if self.cache:  # as they finish: a host killed mid-unit loses no finished result
                kept = [(unit.jobs[i].key, r) for i, r in batch if cached(unit.jobs[i].files.case)]
                self.cache.put(kept)

        with checked_out(settings.copies(unit.jobs), settings.outputs):  # commands' folders
            records = self.backends.run(
                env.python,
                tasks,
                workdir,
                settings.timeout,
                env.code,
                env.record.limits,
                f"onnx {env.record.onnx}",
                keep,
                settings.memory,
            )
        with self.lock:
            self.progress.done_unit(unit.label)
            for job, record in zip(unit.jobs, records, strict=False):  # fewer when stopped
                self.ledger.put(job.key, record, job.cell)
            self.complete()


def contexts(files: list[CaseFiles], settings: Settings) -> dict[Path, str]:
    """Each command case's context (compat/execute/tree.py): its project's tree and the
    environment, read once per project."""
    roots = {f.directory: root for f in files if (root := project_root(f.case)) is not None}
    read = {root: context(root, settings.outputs) for root in set(roots.values())}
    return {directory: read[root] for directory, root in roots.items()}


def judged(record: RawRecord, reruns: int) -> bool:
    """Whether a command's cached record is a verdict to serve: its attempts agreed (a
    rerun's judgement that is not `flaky`), or it is the only run asked for."""
    return record["outcome"] != "flaky" and (len(record.get("runs", ())) > 1 or reruns == 0)


def forget_logs(tasks: list[Task]) -> None:
    """A command's log of an earlier run is never shown as this run's."""
    for task in tasks:
        if task.log:
            Path(task.log).unlink(missing_ok=True)
