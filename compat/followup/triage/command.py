"""`nox -s triage -- MODEL.onnx`: from a failing model to an upstream report.

The phases, each a function of the one before:
1. where (here): the model as a case across the matrix; every check whose outcome
   changes between neighbouring releases of an axis, or fails on all of them, is a
   finding (findings.py);
2. since when (boundary.py): each finding bisected over the releases on the index
   between those neighbours, to the exact boundary;
3. minimal model (minimal.py): the graph reduced while it still fails the same way on
   the failing release and passes on the passing one, every candidate evaluated by one
   long-lived worker per release (compat/execute/served.py);
4. workaround (workaround.py): every rewrite of the catalogue applied to the original
   and the minimal model, run on the axis; a failure hiding behind the worked-around
   one becomes a finding of its own;
5. report: compat/followup/triage/report.py writes what each finding came to
   (triaged.py): report.md, minimal.onnx/.npz, repro.py and triage.json.

Every phase runs on one Python: `--python 3.12`'s (the cells' ids then name it), the
config's when it names one, else the interpreter onnx-compat runs on.
"""

from __future__ import annotations

import fnmatch
import shutil
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from compat.cell.checks_ort import WITHIN
from compat.core.case import Case, KnownFailure
from compat.core.errors import UsageError
from compat.core.outcomes import CheckResult, Outcome
from compat.core.report import Report
from compat.corpus.discover import Corpus, discover_cases
from compat.corpus.dropin import (
    folder_known,
    load_model,
    model_case,
    model_runs,
    model_tolerance,
    slug,
)
from compat.corpus.rewrites import BY_NAME as REWRITES
from compat.execute.progress import Progress
from compat.execute.run import Settings, run_matrix
from compat.followup.cut import intermediates
from compat.followup.on_python import follow_up_python, name_python
from compat.followup.triage.boundary import since_when
from compat.followup.triage.common import FAMILY, clip, only_check, plural, say
from compat.followup.triage.findings import Finding, findings_of, same_way
from compat.followup.triage.minimal import Minimal, describe, minimal_model
from compat.followup.triage.report import write_triage
from compat.followup.triage.triaged import Triaged
from compat.followup.triage.workaround import known_like, spellings
from compat.plan.config import Config, load_config
from compat.plan.matrix import Plan
from compat.workflow.plan import follow_axes, resolve_plan
from compat.workflow.project import fixed_requirements, prepare_project, project_config
from compat.workflow.request import PlanRequest, Request, default_corpus
from compat.workflow.settings import settings_of


@dataclass(frozen=True)
class TriageRequest:
    """The model to triage (its inputs, one check of it), and the shared options: the
    plan, the setup and how the cells run. `common.run.out` None: reports/triage/MODEL/."""

    common: Request
    model: Path
    inputs: Path | None = None  # None: MODEL.npz beside it, else generated
    check: str | None = None  # None: every check

    def out(self) -> Path:
        return self.common.run.out or Path("reports") / "triage" / slug(self.model.stem)


#: the most findings one triage follows (failures hiding behind others included)
MOST_FINDINGS = 8


@dataclass
class Run:
    """What every phase of one triage reads: the plan, its settings, the corpus."""

    config: Config
    plan: Plan
    settings: Settings
    fixed: tuple[str, ...]
    work: Path
    corpus: Path
    declared: list[KnownFailure]  # known failures declared for this model
    loaded: list[Case] = field(default_factory=list)
    values: dict[str, dict[str, Any]] = field(default_factory=dict)  # case id -> intermediates

    def intermediates(self, case: Case) -> dict[str, Any]:
        if case.id not in self.values:
            self.values[case.id] = intermediates(case.model, case.inputs)
        return self.values[case.id]

    def corpus_cases(self) -> list[Case]:
        if not self.loaded:  # the corpus, read once, for the known bugs it records
            self.loaded.extend(discover_cases(self.corpus).cases)
        return self.loaded


def declared_known(path: Path, case_id: str, config: Config) -> list[KnownFailure]:
    """The known failures declared for this model: `[[known]]` in the compat.toml beside
    it (globs over file names), `[[tool.compat.known]]` (globs over case ids, or here the
    file name)."""
    entries = [e for e in folder_known(path.parent) if fnmatch.fnmatch(path.name, e.cases)]
    entries += [
        e for e in config.known if any(fnmatch.fnmatch(n, e.cases) for n in (case_id, path.name))
    ]
    return [e.failure for e in entries]


def load_case(request: TriageRequest, config: Config | None = None) -> Case:
    """The model and its inputs as a case, compared within the tolerance the compat.toml
    beside it and `[tool.compat]` set, `--check` applied; bad input in one line."""
    path = request.model
    check = request.check
    if not path.is_file():
        raise UsageError(f"{path}: no such model file; give the .onnx file to triage")
    model = load_model(path)
    runs = model_runs(path, model, request.inputs)
    tolerance = model_tolerance(path, config.tolerance if config else None)
    case = model_case(
        f"{FAMILY}.{slug(path.stem)}", f"{path.name}, triaged", model, runs, tolerance
    )
    if check:
        if check not in case.checks:
            raise UsageError(f"--check {check}: a model is checked by {', '.join(case.checks)}")
        case = only_check(case, check)
    return case


def check_plan_options(asked: PlanRequest) -> None:
    for flag, given in (("--cross", asked.cross), ("--shard", asked.shard)):
        if given:
            raise UsageError(f"{flag}: triage compares the releases of each axis; drop {flag}")
    for axis, other, flag in (("onnx", asked.ort, "--ort"), ("onnxruntime", asked.onnx, "--onnx")):
        if asked.axis == axis and other:
            raise UsageError(
                f"{flag} {other}: with --axis {axis} only the {axis} axis runs (paired with "
                f"the config's release of the other package); drop {flag} or --axis"
            )


def where(run: Run, case: Case) -> tuple[Report, list[Finding], list[CheckResult]]:
    """Phase 1: the case on every cell of the plan; its findings and flaky results."""
    plan = run.plan
    first = run_matrix(
        plan, Corpus([case], {FAMILY: "triage"}), run.settings, Progress(len(plan.cells))
    )
    for cell in first.broken_cells:
        say(f"  {cell.id}: {cell.state.value}, not observed: {clip(cell.summary, 150)}")
    if len(first.broken_cells) == len(first.cells):
        raise UsageError(
            f"no cell could be built ({', '.join(c.id for c in first.cells)}), so "
            "nothing was observed; check the releases given (--onnx, --ort)"
        )
    flaky = [r for r in first.results if r.outcome is Outcome.FLAKY]
    for result in flaky:  # identical runs disagreed: no finding, said as such
        say(f"  nondeterministic: {result.check} on {result.cell}: {clip(result.detail, 120)}")
    for result in within_tolerance(first)[:1]:  # a difference the user allows: said once
        seen = f"{result.check} on {result.cell}"
        say(f"  within your tolerance, no finding: {seen}: {clip(result.detail, 150)}")
    checks = {c: case.check_axis(c) for c in case.checks}
    findings = findings_of(plan, list(first.results), checks)
    if not findings:
        say("  no findings: every check behaves the same on every release tried")
    for finding in findings:
        say(f"  finding: {finding.observed()}: {clip(finding.result.summary, 150)}")
    return first, findings, flaky


def within_tolerance(report: Report) -> list[CheckResult]:
    """The passing results whose optimization levels differ, within the tolerance."""
    return [r for r in report.results if r.outcome is Outcome.PASS and WITHIN in r.detail]


def triage_one(
    run: Run, item: Triaged, case: Case, first: Report, number: int, earlier: list[Minimal]
) -> None:
    """Phases 2 to 4 of one finding: its boundary, its minimal model, its workarounds."""
    finding = item.finding
    say(f"2/5 since when [finding {number}] {finding.check} · {finding.package}")
    since_when(finding, case, run.config, run.fixed, run.settings)
    say(f"3/5 minimal model [finding {number}]")
    try:
        item.minimal = minimal_model(
            finding, case, run.intermediates(case), run.settings, run.work / str(number), earlier
        )
    except ValueError as exc:  # no intermediate values, or it fails differently alone
        item.minimal_note = str(exc)
        say(f"  no minimal model: {exc}")
    item.known = known_like(
        finding, item.minimal.model if item.minimal else None, run.corpus_cases(), run.declared
    )
    for reason, link in item.known:
        say(f"  a known bug like it: {reason} ({link})")
    say(f"4/5 workaround [finding {number}]")
    item.spellings, item.hidden = spellings(
        finding, item.minimal, case, run.plan, run.settings, first
    )
    shipped = [s.rewrite for s in item.spellings if s.model == "original" and s.fixes]
    say(f"  fixes: {', '.join(shipped) or 'no rewrite of the original'}")
    for rewrite, release, summary in item.hidden:
        say(
            f"  behind it: spelled {rewrite}, the model fails another way on "
            f"{finding.package} {release}: {clip(summary, 150)}"
        )


def prepare(request: TriageRequest) -> tuple[Run, Case]:
    """The plan, its settings and a work folder of its own, and the model as a case;
    every option that cannot work, said first."""
    common = request.common
    config, _ = follow_axes(common, load_config(common.config))
    case = load_case(request, config)
    check_plan_options(common.plan)
    python = follow_up_python(common, config, "triage")
    if python:  # the plan on that one Python, its cells' ids naming it
        common = replace(common, setup=replace(common.setup, python=python))
    _, plan = resolve_plan(common, config)
    plan = name_python(plan)
    if len({c.pins for c in plan.cells}) > 1:
        raise UsageError(
            "triage compares onnx and onnxruntime releases; an extra axis (--pkg, "
            "[tool.compat.axes]) multiplies them: pin the other package with --with PKG==V"
        )
    settings = settings_of(common, config)
    settings.work_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="triage-", dir=settings.work_dir))
    prepare_project(common, config)
    config = project_config(common, config)
    declared = declared_known(request.model, case.id, config)
    run = Run(
        config,
        plan,
        replace(settings, work_dir=work),
        fixed_requirements(common),
        work,
        default_corpus(common.config),
        declared,
    )
    return run, case


def follow_findings(run: Run, case: Case, first: Report, findings: list[Finding]) -> list[Triaged]:
    """Phases 2 to 4 of each finding, then of each failure hiding behind one (the model
    spelled with the rewrite that works around it), up to MOST_FINDINGS."""
    nodes = len(case.model.graph.node)
    pending: list[tuple[Case, Report, list[Finding], str, Triaged | None]] = [
        (case, first, findings, "", None)
    ]
    triaged: list[Triaged] = []
    while pending and len(triaged) < MOST_FINDINGS:
        source, report, found, behind, origin = pending.pop(0)
        for finding in found:
            if any(
                t.finding.check == finding.check
                and same_way(t.finding.signature, finding.signature)
                for t in triaged
            ):
                continue
            item = Triaged(finding, nodes, behind=behind)
            triaged.append(item)
            if origin is not None:
                origin.followed.append(len(triaged))
            earlier = [t.minimal for t in triaged if t.minimal]
            triage_one(run, item, source, report, len(triaged), earlier)
            for rewrite, _, _ in item.hidden[:1]:  # what this failure hides: triaged next
                applied = REWRITES[rewrite].function(source.model)
                if applied is None:
                    continue
                respelled = replace(source, id=f"{source.id}~{rewrite}", model=applied.model)
                spelled = only_check(respelled, finding.check)
                say(f"1/5 where, behind finding {len(triaged)}: the model spelled {rewrite}")
                report_s, found_s, _ = where(run, spelled)
                how = (
                    f"once finding {len(triaged)} is worked around (the model spelled `{rewrite}`)"
                )
                pending.append((spelled, report_s, found_s, how, item))
    return triaged


def say_findings(triaged: list[Triaged]) -> None:
    """One line per finding: what, since when, the minimal model, the workaround."""
    for number, item in enumerate(triaged, 1):
        minimal = item.minimal
        shape = (
            f"{describe(minimal.model)} ({', '.join(n.op_type for n in minimal.model.graph.node)})"
            if minimal
            else "no minimal model"
        )
        shipped = [s.rewrite for s in item.spellings if s.model == "original" and s.fixes]
        say(
            f"finding {number}: {item.finding.title()}; {item.finding.boundary()}; minimal: "
            f"{shape}; workaround: {', '.join(shipped) or 'none found'}"
        )


def triage(request: TriageRequest) -> int:
    """`onnx-compat triage MODEL`: the five phases, the report written to `request.out()`."""
    started = time.monotonic()
    run, case = prepare(request)
    path = request.model
    plan = run.plan
    try:
        nodes = len(case.model.graph.node)
        python = plan.cells[0].python if plan.cells else ""
        on = f" on CPython {python}" if python else ""
        say(
            f"1/5 where: {path} ({plural(nodes, 'node')}) on {plural(len(plan.cells), 'cell')}"
            f"{on}, checks {', '.join(case.checks)}"
        )
        first, findings, flaky = where(run, case)
        triaged = follow_findings(run, case, first, findings)
        say("5/5 report")
        written = write_triage(request.out(), path, case, first, triaged, flaky)
    finally:
        shutil.rmtree(run.work, ignore_errors=True)
    for line in written:
        say(f"  {line}")
    say_findings(triaged)
    say(
        f"triaged in {time.monotonic() - started:.1f} s: {plural(len(triaged), 'finding')}; "
        f"{request.out() / 'report.md'}"
    )
    return 0
