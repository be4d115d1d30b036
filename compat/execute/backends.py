"""What the engine does outside its own process, passed in: build or find a cell's
environment, run tasks in a worker, run them again in fresh workers.

The real ones (uv environments, worker processes) are the defaults; the engine's own
rules (distinct work, sharing, the cache, reruns) are tested with fakes that return
records at once (tests/test_engine.py), with no environment and no process.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from compat.cell.protocol import RawRecord
from compat.execute.envs import Environment, ensure_env, existing_env
from compat.execute.reruns import rerun
from compat.execute.worker import Task, run_worker
from compat.plan.matrix import Cell

#: Gets each batch of (task index, raw record) as a worker finishes them.
OnRecords = Callable[[list[tuple[int, RawRecord]]], object]


class Builder(Protocol):
    """A cell's environment, built when missing (`ensure_env`): never raises for a broken
    cell, its record's state says what went wrong."""

    def __call__(self, cell: Cell, envs_dir: Path, python: str, /) -> Environment: ...


class Finder(Protocol):
    """A cell's environment when it is built already, else None (`existing_env`)."""

    def __call__(self, cell: Cell, envs_dir: Path, python: str, /) -> Environment | None: ...


class Runner(Protocol):
    """One raw record per task, in task order, fewer when the run is stopped (`run_worker`:
    python, tasks, workdir, timeout, staged code, limits, label, on_records, memory)."""

    def __call__(
        self,
        python: Path,
        tasks: list[Task],
        workdir: Path,
        timeout: float,
        code: Path | None,
        limits: tuple[int, ...],
        stack: str,
        on_records: OnRecords | None,
        memory: int,
        /,
    ) -> list[RawRecord]: ...


class Rerunner(Protocol):
    """One judged record per task after `rounds` more runs (`reruns.rerun`: python, staged
    code, tasks, first records, rounds, workdir, timeout, limits, memory)."""

    def __call__(
        self,
        python: Path,
        code: Path,
        tasks: list[Task],
        first: list[RawRecord],
        rounds: int,
        workdir: Path,
        timeout: float,
        limits: tuple[int, ...],
        memory: int,
        /,
    ) -> list[RawRecord]: ...


@dataclass(frozen=True)
class Backends:
    """The four things the engine asks of the world outside its process."""

    build: Builder = ensure_env
    existing: Finder = existing_env
    run: Runner = run_worker
    rerun: Rerunner = rerun


#: The real ones: uv environments, worker processes.
REAL = Backends()
