"""What a run is asked for (`Settings`), and the time each task gets."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from compat.corpus.usercommand import project_root
from compat.execute.schedule import Job
from compat.execute.tree import home
from compat.execute.worker import Task
from compat.plan.matrix import Cell
from compat.plan.pythons import find_python

#: Seconds a check of a model gets per megabyte of model, beyond `--timeout`: a 12 MB
#: detector is not judged by the budget of a three-node case.
SECONDS_PER_MB = 10.0


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
    #: where each cell's copy of the project's tree is kept, `TREES/PROJECT/CELL/CASE`,
    #: the folder a command runs in (None: the project's own folder)
    trees_dir: Path | None = None
    #: the files of the project's tree onnx-compat itself writes there: the committed
    #: results a baseline reads, left out of the tree like the report directory
    written: tuple[Path, ...] = ()

    def task(self, job: Job) -> Task:
        """The worker's task for a job, with its time: a model's grows with its size (see
        `budget`); a command carries its own timeout and its log file."""
        case = job.files.case
        task = Task(case.id, job.check, str(job.files.directory))
        if not case.command:
            return replace(task, timeout=budget(self.timeout, job.files.directory))
        log = str(self.log(job) or "")
        tree = str(self.tree(job) or "")
        timeout = self.command_timeout + self.timeout
        task = replace(task, log=log, cwd=tree, timeout=timeout)
        return replace(task, command_timeout=self.command_timeout)

    def tree(self, job: Job) -> Path | None:
        """The folder a command runs in: its cell's copy of the project's tree (None: the
        project's own folder, or not a command)."""
        root = project_root(job.files.case)
        if root is None or self.trees_dir is None:
            return None
        return home(self.trees_dir, root) / job.cell / job.files.case.id

    def copies(self, jobs: list[Job] | tuple[Job, ...]) -> list[tuple[Path, Path]]:
        """(project root, the cell's copy) of each command among `jobs`."""
        pairs = []
        for job in jobs:
            root = project_root(job.files.case)
            tree = self.tree(job)
            if root is not None and tree is not None:
                pairs.append((root, tree))
        return pairs

    @property
    def outputs(self) -> tuple[Path, ...]:
        """What a run writes, left out of the project's tree when it is inside it: the
        state directory, the report directory and the committed results."""
        logs = (self.logs_dir.parent,) if self.logs_dir else ()
        return (self.envs_dir.parent, *logs, *self.written)

    def interpreter(self, cell: Cell) -> str:
        """The interpreter a cell's environment is made from: its Python's (found by
        version, compat/plan/pythons.py), or the run's."""
        return find_python(cell.python) if cell.python else self.python

    def log(self, job: Job) -> Path | None:
        """Where a command's whole output goes (None: nowhere)."""
        return self.logs_dir / job.cell / f"{job.files.case.id}.log" if self.logs_dir else None


def budget(timeout: float, case_dir: Path) -> float:
    """`timeout` plus SECONDS_PER_MB for every megabyte of the case's model."""
    try:
        size = (case_dir / "model.onnx").stat().st_size
    except OSError:
        return timeout
    return round(timeout + SECONDS_PER_MB * size / 1e6, 1)
