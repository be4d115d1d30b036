"""A cell's results as slots, and the ledger of what a run knows so far.

Each check of each case is one slot of a cell: computed by one job, or by one per part
(compat/cell/parts.py), and shown as one classified result. The ledger holds the raw
record of every key computed or served so far and where it came from; a cell's results
are read from it once every key of its slots is there.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from compat.cell.checks import tasks_of
from compat.cell.parts import combine
from compat.cell.protocol import RawRecord
from compat.core.case import Case
from compat.core.outcomes import CellRecord, CellState, CheckResult, Outcome
from compat.corpus.discover import CaseFiles
from compat.corpus.known import classify
from compat.corpus.unreadable import read_limit
from compat.execute.envs import Environment
from compat.execute.schedule import Job
from compat.execute.settings import Settings
from compat.plan.matrix import Cell
from compat.state.cache import result_key


@dataclass(frozen=True)
class CellRun:
    record: CellRecord
    results: tuple[CheckResult, ...]
    executed: int = 0  # checks really run now, the rest came from the result cache
    reran: int = 0  # extra runs of unexpected results, in fresh workers


def summary(run: CellRun) -> str:
    if run.record.state is not CellState.READY:
        return run.record.state.value
    counts: dict[str, int] = {}
    for r in run.results:
        counts[r.outcome.value] = counts.get(r.outcome.value, 0) + 1
    return ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items()))


@dataclass(frozen=True)
class Slot:
    """One result of a cell: a check of a case, computed by one job or by one per part."""

    check: str
    jobs: tuple[Job, ...]


def slot(
    cell: Cell,
    env: Environment,
    files: CaseFiles,
    code: str,
    check: str,
    share: bool,
    project: str = "",
) -> Slot:
    """The slot of a check of a case in a cell: one job per task, each with its key
    (`project`: a command's context, compat/execute/tree.py)."""
    return Slot(
        check,
        tuple(
            Job(cell.id, files, task, result_key(env.record, files, task, share, code, project))
            for task in tasks_of(check)
        ),
    )


@dataclass
class Ledger:
    """What a run knows: raw records by key, where each was computed (a cell's id, or
    "cache"), every scheduled cell's slots, and the runs of the cells that are complete."""

    settings: Settings
    cells: dict[str, Cell]
    cases: dict[str, Case]
    raw: dict[str, RawRecord] = field(default_factory=dict)
    origin: dict[str, str] = field(default_factory=dict)
    slots: dict[str, list[Slot]] = field(default_factory=dict)
    runs: dict[str, CellRun] = field(default_factory=dict)

    def put(self, key: str, record: RawRecord, origin: str) -> None:
        self.raw[key] = record
        self.origin[key] = origin

    def complete(self, cell: str) -> bool:
        """True when the cell is scheduled and every key of its slots is known."""
        mine = self.slots.get(cell)
        return mine is not None and all(j.key in self.raw for s in mine for j in s.jobs)

    def results(self, cell: str) -> tuple[CheckResult, ...]:
        return tuple(self.result(self.cells[cell], s) for s in self.slots[cell])

    def result(self, cell: Cell, slot: Slot) -> CheckResult:
        """A slot's raw records (its parts' combined) as a classified result, with where
        it was computed when not in this cell (tracebacks only when asked for)."""
        records = [self.raw[j.key] for j in slot.jobs]
        raw = records[0] if len(records) == 1 else combine(slot.check, records)
        here = [r for j, r in zip(slot.jobs, records, strict=True) if self.origin[j.key] == cell.id]
        # computed here when any part was, and then its time is the time spent here
        origin = "" if here else self.origin[slot.jobs[0].key]
        if here and len(records) > 1:
            raw = {**raw, "seconds": round(sum(float(r.get("seconds", 0)) for r in here), 4)}
        case = self.cases[slot.jobs[0].files.case.id]
        # a command's log is the one of the cell that ran it (shared: another cell's)
        ran_in = origin if origin and origin != "cache" else cell.id
        log = self.settings.log(replace(slot.jobs[0], cell=ran_in)) if case.command else None
        return classify(
            read_limit(
                CheckResult(
                    cell=cell.id,
                    case=raw["case"],
                    check=raw["check"],
                    outcome=Outcome(raw["outcome"]),
                    detail=raw["detail"],
                    phase=raw["phase"],
                    seconds=raw["seconds"],
                    traceback=raw.get("traceback", "") if self.settings.tracebacks else "",
                    origin=origin,
                    log=self._relative(log) if log and log.is_file() else "",
                    failing=tuple(raw.get("failing") or ()),
                    retry=any(r.get("retry") for r in records),
                ),
                case,
            ),
            case,
            cell,
        )

    def _relative(self, log: Path) -> str:
        """A log's path as reports link it: relative to the report directory."""
        assert self.settings.logs_dir is not None
        return log.relative_to(self.settings.logs_dir.parent).as_posix()
