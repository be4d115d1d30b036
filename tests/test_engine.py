"""The engine on its own: distinct work, sharing, broken cells, progress, the result cache
and reruns, with fake backends (compat/execute/backends.py) that answer at once.

The cases are real folders (`write_case`), the result keys, the cache and the
classification are the real ones; only building an environment and running a worker
are fakes. The fake worker's record for a task depends on the case, the task and the
versions of the packages that task depends on (compat/cell/checks.py), and on nothing
else: the contract that lets a result computed in one cell serve another.
"""

from __future__ import annotations

import io
import threading
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.version import Version

from compat.cell.checks import BY_NAME, PARTS
from compat.core.case import KnownFailure
from compat.core.install import InstallRequest
from compat.core.outcomes import CellRecord, CellState, CheckResult, Outcome
from compat.corpus.discover import CaseFiles, write_case
from compat.execute.backends import Backends, OnRecords
from compat.execute.engine import execute
from compat.execute.envs import Environment
from compat.execute.progress import Progress
from compat.execute.reruns import judge_runs
from compat.execute.settings import Settings
from compat.execute.slots import CellRun
from compat.execute.worker import Task
from compat.plan.matrix import Cell
from tests.helpers import add_one_case

ONNX = ("1.16.0", "1.17.0", "1.18.0")
ORT = ("1.17.3", "1.20.1")
#: The fake worker's rules, by what a case's id contains: "bad" fails every task that
#: depends on onnx before BAD_BEFORE, "errs" errors in every one that depends on
#: onnxruntime before ERRS_BEFORE, "flip" fails the first run of each task in a cell.
BAD_BEFORE, ERRS_BEFORE = "1.18.0", "1.20.0"
KNOWN = KnownFailure("onnx", "<1.18", ("checker",), "a known bug", "https://example.org/1")


def depends(task: str) -> tuple[str, ...]:
    return PARTS[task].depends if task in PARTS else BY_NAME[task].depends


def packages(cell: Cell) -> dict[str, str]:
    return {
        "onnx": cell.onnx,
        "onnxruntime": cell.onnxruntime,
        "numpy": "2.2.6",
        "protobuf": "6.31.1",
    }


def older(version: str, than: str) -> bool:
    return Version(version) < Version(than)


@dataclass
class Fakes:
    """Environments and workers that answer at once, and a log of every task run."""

    prebuilt: frozenset[str] = frozenset()  # found built: `existing` returns them
    broken: frozenset[str] = frozenset()  # their build fails: install-error
    built: list[str] = field(default_factory=list)
    #: (cell id, case id, task) of every task a worker ran, reruns included
    ran: list[tuple[str, str, str]] = field(default_factory=list)
    #: ids of the cells on_progress had reported when each worker started
    seen_at_start: list[set[str]] = field(default_factory=list)
    reported: set[str] = field(default_factory=set)
    cells: dict[Path, Cell] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def backends(self) -> Backends:
        return Backends(self.build, self.existing, self.run, self.rerun)

    def environment(self, cell: Cell) -> Environment:
        state = CellState.INSTALL_ERROR if cell.id in self.broken else CellState.READY
        detail = "no such release" if cell.id in self.broken else ""
        record = CellRecord(
            cell.id, cell.onnx, cell.onnxruntime, state, packages(cell), "3.11.7", "Linux", detail
        )
        python = Path("/nowhere") / cell.id / "bin/python"
        with self.lock:
            self.cells[python] = cell
        return Environment(record, python, Path("/nowhere/code"))

    def build(self, cell: Cell, envs_dir: Path, python: str) -> Environment:
        with self.lock:
            self.built.append(cell.id)
        return self.environment(cell)

    def existing(self, cell: Cell, envs_dir: Path, python: str) -> Environment | None:
        return self.environment(cell) if cell.id in self.prebuilt else None

    def run(
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
    ) -> list[dict[str, Any]]:
        cell = self.cells[python]
        with self.lock:
            self.seen_at_start.append(set(self.reported))
            first = [(cell.id, t.case, t.check) not in self.ran for t in tasks]
            self.ran += [(cell.id, t.case, t.check) for t in tasks]
        records = [verdict(cell, t, once) for t, once in zip(tasks, first, strict=True)]
        if on_records:
            on_records(list(enumerate(records)))
        return records

    def rerun(
        self,
        python: Path,
        code: Path,
        tasks: list[Task],
        first: list[dict[str, Any]],
        rounds: int,
        workdir: Path,
        timeout: float,
        limits: tuple[int, ...],
        memory: int,
    ) -> list[dict[str, Any]]:
        """As compat/execute/reruns.py: `rounds` more runs, then judged."""
        history = [[record] for record in first]
        for _ in range(rounds):
            again = self.run(python, tasks, workdir, timeout, code, limits, "", None, memory)
            for runs, record in zip(history, again, strict=True):
                runs.append(record)
        return [judge_runs(runs) for runs in history]

    def progress(self, runs: dict[str, CellRun]) -> None:
        with self.lock:
            self.reported = set(runs)


def verdict(cell: Cell, task: Task, first: bool) -> dict[str, Any]:
    """The record of a task: a function of the case, the task and the versions of the
    packages the task depends on (and, for "flip", of whether it ran before)."""
    needs = depends(task.check)
    versions = packages(cell)
    outcome, phase = "pass", ""
    if "bad" in task.case and "onnx" in needs and older(cell.onnx, BAD_BEFORE):
        outcome, phase = "fail", "check"
    if "errs" in task.case and "onnxruntime" in needs and older(cell.onnxruntime, ERRS_BEFORE):
        outcome, phase = "error", "session"
    if "flip" in task.case and first:
        outcome, phase = "fail", "compare"
    detail = ", ".join(f"{name}=={versions[name]}" for name in needs)  # what it saw
    return {
        "case": task.case,
        "check": task.check,
        "outcome": outcome,
        "phase": phase,
        "detail": detail,
        "seconds": 0.01,
    }


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, CaseFiles]:
    """Cases by id, written once: real folders, no environment."""
    root = tmp_path_factory.mktemp("cases")
    cases = [
        add_one_case(id="tiny.good"),
        add_one_case(id="tiny.bad"),
        add_one_case(id="tiny.errs"),
        add_one_case(id="tiny.known_bad", known=(KNOWN,), builtin_checks=("checker", "ort_run")),
        add_one_case(id="tiny.flip", builtin_checks=("checker", "ort_run")),
    ]
    return {case.id: write_case(case, root) for case in cases}


def cells_of(*pairs: tuple[str, str]) -> list[Cell]:
    return [Cell(onnx, ort, InstallRequest()) for onnx, ort in pairs]


def run(
    tmp: Path,
    cells: list[Cell],
    files: list[CaseFiles],
    fakes: Fakes,
    **changes: Any,
) -> dict[str, CellRun]:
    options: dict[str, Any] = {"jobs": 2, "reruns": 0, **changes}
    settings_ = Settings(tmp / "envs", tmp / "work", 30.0, python="python3", **options)
    progress = Progress(len(cells), stream=io.StringIO(), live=False)
    return execute(cells, files, settings_, progress, fakes.progress, backends=fakes.backends())


def shown(runs: dict[str, CellRun]) -> dict[str, list[CheckResult]]:
    """Each cell's results as a report shows them, without where and how long."""
    return {
        cell: [replace(r, origin="", seconds=0.0) for r in run.results]
        for cell, run in runs.items()
    }


def distinct(cells: list[Cell], files: list[CaseFiles]) -> set[tuple[str, str, tuple[str, ...]]]:
    """What really has to run: each case's task once per set of versions it depends on."""
    return {
        (f.case.id, task, tuple(packages(cell)[n] for n in depends(task)))
        for cell in cells
        for f in files
        for check in f.case.checks
        for task in ([f"{check}:{p.name}" for p in BY_NAME[check].parts] or [check])
    }


PAIRS = st.lists(
    st.tuples(st.sampled_from(ONNX), st.sampled_from(ORT)), min_size=1, max_size=5, unique=True
)
CASES = st.lists(
    st.sampled_from(["tiny.good", "tiny.bad", "tiny.errs", "tiny.known_bad"]),
    min_size=1,
    max_size=4,
    unique=True,
)


@settings(max_examples=60, deadline=None)
@given(pairs=PAIRS, ids=CASES, jobs=st.integers(1, 3))
def test_shared_results_are_the_results_each_cell_computes_itself(
    corpus: dict[str, CaseFiles],
    tmp_path_factory: pytest.TempPathFactory,
    pairs: list[tuple[str, str]],
    ids: list[str],
    jobs: int,
) -> None:
    """share=True shows, in every cell, exactly what share=False computes there; and
    it runs each distinct task once, where share=False runs every task in every cell."""
    cells, files = cells_of(*pairs), [corpus[i] for i in ids]
    tmp = tmp_path_factory.mktemp("share")
    alone, together = Fakes(), Fakes()
    full = run(tmp / "alone", cells, files, alone, share=False, jobs=jobs)
    shared = run(tmp / "together", cells, files, together, share=True, jobs=jobs)

    assert shown(shared) == shown(full)
    assert list(shared) and sorted(shared) == sorted(c.id for c in cells)
    tasks = sum(len(run.results) for run in full.values())
    assert len(alone.ran) >= tasks  # every cell computed its own (parts count apart)
    assert len(together.ran) == len(distinct(cells, files)) <= len(alone.ran)
    assert sum(r.executed for r in shared.values()) == len(together.ran)
    if len(cells) > 1 and (
        len({c.onnx for c in cells}) < len(cells)
        or len({c.onnxruntime for c in cells}) < len(cells)
    ):
        assert len(together.ran) < len(alone.ran)  # two cells share a release: less work
    # a shared result says where it came from; a result of its own, nothing
    for cell, cell_run in shared.items():
        assert {r.origin for r in cell_run.results} <= {"", *(c.id for c in cells)} - {cell}


def test_a_cell_whose_build_fails_gets_no_work_and_says_why(
    corpus: dict[str, CaseFiles], tmp_path: Path
) -> None:
    cells = cells_of(("1.16.0", "1.17.3"), ("1.17.0", "1.17.3"), ("1.18.0", "1.20.1"))
    broken = cells[1].id
    fakes = Fakes(prebuilt=frozenset({cells[0].id}), broken=frozenset({broken}))
    runs = run(tmp_path, cells, [corpus["tiny.good"], corpus["tiny.bad"]], fakes)

    assert sorted(fakes.built) == sorted([cells[1].id, cells[2].id])  # the first was found
    assert runs[broken].record.state is CellState.INSTALL_ERROR
    assert runs[broken].record.detail == "no such release"
    assert runs[broken].results == () and runs[broken].executed == 0
    assert all(cell != broken for cell, _, _ in fakes.ran)
    # its neighbour with the same onnxruntime computes what it would have shared
    assert {r.origin for r in runs[cells[0].id].results} == {""}
    assert len(runs[cells[2].id].results) == len(runs[cells[0].id].results) == 16


def test_each_cell_is_reported_as_soon_as_its_results_are_complete(
    corpus: dict[str, CaseFiles], tmp_path: Path
) -> None:
    """One core, two cells with nothing in common: one worker each, one after the other,
    and the first cell is reported before the second worker starts."""
    cells = cells_of(("1.16.0", "1.17.3"), ("1.18.0", "1.20.1"))
    fakes = Fakes(prebuilt=frozenset(c.id for c in cells))
    runs = run(tmp_path, cells, [corpus["tiny.good"]], fakes, jobs=1)

    assert len(fakes.seen_at_start) == 2
    first, second = fakes.seen_at_start
    assert first == set() and len(second) == 1
    assert fakes.reported == {c.id for c in cells} == set(runs)


def test_the_result_cache_serves_a_second_run_and_fresh_computes_again(
    corpus: dict[str, CaseFiles], tmp_path: Path
) -> None:
    cells = cells_of(("1.16.0", "1.17.3"), ("1.18.0", "1.17.3"))
    files = [corpus["tiny.good"], corpus["tiny.known_bad"]]
    cache = {"cache_dir": tmp_path / "cache"}
    first = Fakes()
    computed = run(tmp_path, cells, files, first, **cache)
    assert first.ran and sum(r.executed for r in computed.values()) == len(first.ran)

    again = Fakes()
    served = run(tmp_path, cells, files, again, **cache)
    assert again.ran == [] and again.seen_at_start == []  # no worker at all
    assert sum(r.executed for r in served.values()) == 0
    assert {r.origin for run in served.values() for r in run.results} == {"cache"}
    assert shown(served) == shown(computed)
    # the known failure is served: a known failure is an expected outcome
    assert {r.outcome for r in served[cells[0].id].results} == {Outcome.PASS, Outcome.XFAIL}

    fresh = Fakes()
    recomputed = run(tmp_path, cells, files, fresh, fresh=True, **cache)
    assert sorted(fresh.ran) == sorted(first.ran)
    assert shown(recomputed) == shown(computed)


def test_an_unexpected_result_in_the_cache_is_computed_again(
    corpus: dict[str, CaseFiles], tmp_path: Path
) -> None:
    """A cached failure nobody expects may have been the machine's: it runs again, the
    passes around it are served."""
    cells = cells_of(("1.16.0", "1.17.3"))
    files = [corpus["tiny.good"], corpus["tiny.bad"]]
    run(tmp_path, cells, files, Fakes(), cache_dir=tmp_path / "cache")

    again = Fakes()
    runs = run(tmp_path, cells, files, again, cache_dir=tmp_path / "cache")
    failed = [r for r in runs[cells[0].id].results if r.outcome is Outcome.FAIL]
    assert failed and {r.case for r in failed} == {"tiny.bad"}
    assert {case for _, case, _ in again.ran} == {"tiny.bad"}
    assert {(r.case, r.check) for r in failed} == {(c, t.split(":")[0]) for _, c, t in again.ran}


def test_an_unexpected_result_runs_again_and_a_flip_is_flaky(
    corpus: dict[str, CaseFiles], tmp_path: Path
) -> None:
    """`flip` fails its first run only: judged flaky after the reruns; `bad` fails every
    run: a failure, rerun as many times; a known failure is not run again."""
    cells = cells_of(("1.16.0", "1.17.3"), ("1.16.0", "1.20.1"))
    files = [corpus["tiny.flip"], corpus["tiny.bad"], corpus["tiny.known_bad"]]
    fakes = Fakes(prebuilt=frozenset(c.id for c in cells))
    runs = run(tmp_path, cells, files, fakes, reruns=2)

    for cell in cells:
        results = {(r.case, r.check): r for r in runs[cell.id].results}
        assert results["tiny.flip", "checker"].outcome is Outcome.FLAKY
        assert results["tiny.flip", "checker"].detail.startswith("failed 1 of 3 runs, passed 2")
        assert results["tiny.bad", "checker"].outcome is Outcome.FAIL
        assert results["tiny.known_bad", "checker"].outcome is Outcome.XFAIL
    once = [t for t in fakes.ran if t[1] == "tiny.known_bad"]
    assert len(once) == len(set(once))  # computed once, never again
    # a shared result runs again in the one cell that computed it, and both show it
    checker = [t for t in fakes.ran if t[1:] == ("tiny.flip", "checker")]
    assert len(checker) == 3 and len({cell for cell, _, _ in checker}) == 1
    # every part of an unexpected result ran twice more, nothing else did
    counts = Counter(fakes.ran)
    again = {(case, task.split(":")[0]) for (_, case, task), n in counts.items() if n > 1}
    unexpected = {
        (r.case, r.check) for run in runs.values() for r in run.results if r.outcome.unexpected
    }
    assert again == unexpected and set(counts.values()) == {1, 3}
    assert sum(r.reran for r in runs.values()) == len(fakes.ran) - len(counts)


def test_a_command_s_cached_failure_is_a_verdict_once_its_attempts_were_judged() -> None:
    """A failing suite's record is served from the cache once its rerun judged it (or no
    rerun was asked for); its first attempt alone, or a `flaky` judgement, runs again."""
    from compat.execute.engine import judged

    fail = {
        "case": "command.tests",
        "check": "command",
        "outcome": "fail",
        "phase": "command",
        "detail": "exit 1",
        "seconds": 3.0,
    }
    assert judged({**fail, "runs": ["fail", "fail"]}, reruns=3)
    assert not judged(fail, reruns=3)  # a host stopped before the rerun: not judged yet
    assert judged(fail, reruns=0)
    assert not judged({**fail, "outcome": "flaky", "runs": ["fail", "pass"]}, reruns=3)
