"""Phase 3 of triage, the minimal model: the reduction (compat/followup/reduce.py) of
the model while it fails like the finding on the failing release and passes on the
passing one, every candidate run by one long-lived worker per release."""

from __future__ import annotations

import itertools
from contextlib import nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import onnx

from compat.cell.checks_ort import UNSEARCHED
from compat.cell.protocol import RawRecord
from compat.core.case import Case
from compat.core.errors import CompatError
from compat.core.outcomes import CellRecord, CheckResult
from compat.corpus.discover import CaseFiles, write_case
from compat.execute.envs import Environment, existing_env
from compat.execute.run import Settings
from compat.execute.served import ServedWorker
from compat.followup.cut import node_count, nodes_in_bodies
from compat.followup.reduce import Progress, Reduced, reduce
from compat.followup.triage.common import only_check, plural, say
from compat.followup.triage.findings import (
    PARTIAL,
    Finding,
    head_signature,
    same_way,
    signature_of,
    state,
)
from compat.plan.matrix import Cell


@dataclass
class Minimal:
    model: onnx.ModelProto
    feeds: dict[str, np.ndarray]
    tried: int
    bad: CheckResult  # the minimal model's result on the failing release
    good: CheckResult | None  # and on the passing one
    bad_record: CellRecord  # the failing cell's
    good_record: CellRecord | None  # the passing cell's
    files: CaseFiles
    note: str = ""  # said when it could not be made smaller


def _env(cell: Cell, settings: Settings) -> Environment:
    env = existing_env(cell, settings.envs_dir, settings.interpreter(cell))
    if env is None:  # built by the matrix or the bisection; never missing in practice
        raise CompatError(f"{cell.id}: its environment is gone; run triage again")
    return env


def minimal_model(
    finding: Finding,
    case: Case,
    values: dict[str, Any],
    settings: Settings,
    work: Path,
    earlier: list[Minimal],
) -> Minimal:
    """The smallest model that fails like the finding on its failing release and, when
    a release passes, passes there: candidates run in one served worker per release.
    An earlier finding's minimal model that shows this one too is where it starts."""
    good_cell = finding.good_cell
    bad_env = _env(finding.bad_cell, settings)
    good_env = _env(good_cell, settings) if good_cell else None
    with (
        ServedWorker(bad_env, work / "bad", settings.timeout) as bad,
        # no passing release ("always"): candidates are judged on the failing one alone
        ServedWorker(good_env, work / "good", settings.timeout)
        if good_env
        else nullcontext() as good,
    ):
        fails = SameFailure(finding, case, work / "candidates", bad.run, good.run if good else None)
        last = fails.last

        say(
            f"  reducing {describe(case.model)} on {finding.bad_cell.id}"
            + (f", keeping it passing on {good_cell.id}" if good_cell else "")
        )
        progress = _progress(case.model)
        start = next((m for m in earlier if fails(m.model, m.feeds)), None)
        if start is not None:
            say(
                f"    the minimal model of an earlier finding shows this one too: "
                f"{describe(start.model)}"
            )
            reduced = reduce(start.model, start.feeds, fails, progress)
        else:
            reduced = reduce(case.model, case.inputs, fails, progress, values)
        if not last:  # the original itself was the smallest: evaluate it for the record
            fails(reduced.model, reduced.feeds)
    bad_result = CheckResult.from_dict({**last["bad"], "cell": finding.bad_cell.id})
    good_result = (
        CheckResult.from_dict({**last["good"], "cell": good_cell.id})
        if good_cell and last["good"]
        else None
    )
    workers = bad.started + (good.started if good else 0)
    searched = f" ({fails.searched} with the optimizer search)" if fails.searched else ""
    say(
        f"  minimal: {describe(reduced.model)} "
        f"({', '.join(n.op_type for n in reduced.model.graph.node)}), "
        f"{plural(reduced.tried, 'candidate')}{searched}, {plural(workers, 'worker')}"
    )
    note = _not_smaller(reduced, case) if start is None else ""
    return Minimal(
        reduced.model,
        reduced.feeds,
        reduced.tried,
        bad_result,
        good_result,
        bad_env.record,
        good_env.record if good_env else None,
        last["files"],
        note,
    )


def _progress(model: onnx.ModelProto) -> Progress:
    """The reduction's progress, said as it goes: each candidate kept that is a quarter
    smaller than the last one said (or has 3 nodes or fewer), or that replaced an If by
    the branch it takes."""
    shown = [node_count(model)]
    tops = [len(model.graph.node)]

    def progress(model: onnx.ModelProto, tried: int) -> None:
        inlined = len(model.graph.node) > tops[-1]  # more at the top: an If's branch
        tops.append(len(model.graph.node))
        if inlined or node_count(model) <= shown[-1] * 3 // 4 or node_count(model) <= 3:
            shown.append(node_count(model))
            how = ", an If replaced by the branch it takes" if inlined else ""
            say(f"    {describe(model)} ({plural(tried, 'candidate')}{how})")

    return progress


def _not_smaller(reduced: Reduced, case: Case) -> str:
    """Why the reduction from the original kept every node, said and returned; "" when
    it did make it smaller."""
    if node_count(reduced.model) != node_count(case.model):
        return ""
    note = (
        f"no smaller graph fails the same way ({reduced.tried} candidates): the "
        "failure needs every node, or lies in what the graph declares rather than "
        "in its nodes"
    )
    say(f"  {note}")
    return note


class Evaluate(Protocol):
    """One check of a written case in a worker: its result record; `blame` False asks
    `ort_run` to search for no optimizer responsible."""

    def __call__(
        self, case: str, check: str, case_dir: Path, *, blame: bool = ...
    ) -> RawRecord: ...


def describe(model: onnx.ModelProto) -> str:
    inner = nodes_in_bodies(model.graph)
    top = len(model.graph.node)
    return plural(top, "node") + (f" (+{inner} in subgraph bodies)" if inner else "")


class SameFailure:
    """The reduction's predicate: a candidate fails like the finding (same signature) on
    the failing release and, when there is one, passes on the passing release. `bad` and
    `good` run one check of a written case there and return its result record.

    `ort_run` runs first without its search for the optimizers responsible, which takes
    most of its time on a large model: a candidate whose failure differs before that
    search cannot fail the same way, and only one that does not is run with it. The
    passing release never searches: only a pass lets a candidate through."""

    def __init__(
        self, finding: Finding, case: Case, work: Path, bad: Evaluate, good: Evaluate | None
    ) -> None:
        self.finding = finding
        self.case = case
        self.work = work
        self.bad = bad
        self.good = good
        self.counter = itertools.count()
        self.last: dict[str, Any] = {}  # the last candidate that failed the same way
        self.head: list[str | None] = []  # the finding's head signature, once known
        self.searched = 0  # candidates run with the search

    def __call__(self, model: onnx.ModelProto, feeds: dict[str, Any]) -> bool:
        check = self.finding.check
        candidate = only_check(replace(self.case, model=model, inputs=feeds, extra_runs=()), check)
        files = write_case(candidate, self.work / str(next(self.counter)))
        got = self._on_bad(candidate.id, files.directory)
        if (
            got is None
            or state(got["outcome"]) != "bad"
            or not same_way(signature_of(got), self.finding.signature)
        ):
            return False
        passed = self.good(candidate.id, check, files.directory, blame=False) if self.good else None
        if passed is not None and state(passed["outcome"]) != "good":
            return False
        self.last.update(bad=got, good=passed, files=files)
        return True

    def _on_bad(self, case_id: str, folder: Path) -> RawRecord | None:
        """The candidate's result on the failing release; None when its failure differs
        from the finding's before the search, which then does not run."""
        check = self.finding.check
        quick = self.bad(case_id, check, folder, blame=False)
        head = _head(quick)
        if head is None:  # nothing left out: the result as a search would leave it
            return quick
        wanted = self._finding_head()
        seen = head_signature(check, quick["outcome"], quick["phase"], head)
        if wanted is not None and seen is not None and not same_way(seen, wanted):
            return None
        self.searched += 1
        return self.bad(case_id, check, folder)

    def _finding_head(self) -> str | None:
        """The head signature of the model as given on the failing release (run once
        without the search), when it is the start of the finding's signature; else None,
        and every candidate is run with the search."""
        if not self.head:
            check = self.finding.check
            original = only_check(self.case, check)
            files = write_case(original, self.work / "finding")
            quick = self.bad(original.id, check, files.directory, blame=False)
            head = _head(quick)
            wanted = head_signature(check, quick["outcome"], quick["phase"], head or "")
            start = wanted.removesuffix(PARTIAL) if head is not None and wanted else None
            alike = start is not None and self.finding.signature.startswith(start)
            self.head.append(wanted if alike else None)
        return self.head[0]


def _head(record: RawRecord) -> str | None:
    """A result's detail before the search it left out (checks_ort.UNSEARCHED), or None
    when it left none out."""
    cut = record["detail"].find("; " + UNSEARCHED)
    return None if cut < 0 else record["detail"][:cut]
