"""`nox -s triage -- MODEL.onnx`: from a failing model to an upstream report.

The phases, each a function of the one before:
1. where: the model as a case across the matrix; every check whose outcome changes
   between neighbouring releases of an axis, or fails on all of them, is a finding
   (compat/followup/findings.py);
2. since when: each changing finding bisected over the releases on the index between
   those neighbours, to the exact boundary;
3. minimal model: the graph reduced (compat/followup/reduce.py) while it still fails
   the same way on the failing release and passes on the passing one, every candidate
   evaluated by one long-lived worker per release (compat/served.py);
4. workaround: every rewrite of the catalogue (compat/rewrites.py) applied to the
   original and the minimal model, run on the axis: the spellings under which the
   failing releases pass and no passing release fails, and those that break one;
5. report: compat/render/triage.py writes report.md, minimal.onnx/.npz, repro.py and
   triage.json.
"""

from __future__ import annotations

import argparse
import itertools
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from compat.case import Case
from compat.config import Config, load_config
from compat.corpus import CaseFiles, Corpus, discover_cases, write_case
from compat.dropin import load_model, model_case, model_runs, slug
from compat.envs import Environment, existing_env
from compat.errors import CompatError, UsageError
from compat.followup.bisection import bisect
from compat.followup.findings import Finding, findings_of, same_way, signature_of, state
from compat.followup.reduce import intermediates, nodes_in_bodies, reduce
from compat.index import releases
from compat.matrix import Cell, Plan, make_cell
from compat.outcomes import CellRecord, CellState, CheckResult, Outcome
from compat.progress import Progress
from compat.render.triage import clip, write_triage
from compat.report import Report
from compat.rewrites import BY_NAME as REWRITES
from compat.rewrites import CATALOGUE, mutated
from compat.run import Settings, run_cell, run_matrix
from compat.served import ServedWorker
from compat.steps import default_corpus, fixed_requirements, follow_axes, resolve_plan, settings_of
from compat.versions import in_range, version_key

FAMILY = "triage"


@dataclass
class Spelling:
    """One rewrite of the original or the minimal model, run on the finding's axis."""

    rewrite: str
    description: str
    model: str  # "original" | "minimal"
    states: dict[str, str]  # release -> bad/good/-
    fixes: bool  # every failing release passes, no passing release fails
    breaks: list[str]  # releases that passed and fail under it
    new_failures: list[str] = field(default_factory=list)  # other checks it breaks (check@cell)

    @property
    def passes_everywhere(self) -> bool:
        return all(s == "good" for s in self.states.values()) and not self.new_failures


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


@dataclass
class Triaged:
    """Everything the report says about one finding."""

    finding: Finding
    original_nodes: int
    minimal: Minimal | None = None
    minimal_note: str = ""  # why there is no minimal model
    spellings: list[Spelling] = field(default_factory=list)
    #: (rewrite, release, result): the original, with a rewrite that fixes the minimal
    #: model, fails another way there: a second failure hidden behind this one
    hidden: list[tuple[str, str, str]] = field(default_factory=list)
    #: known bugs of the corpus like this one: (reason, link)
    known: list[tuple[str, str]] = field(default_factory=list)
    #: how it came to light when not in the model as given ("once finding 1 is …")
    behind: str = ""


def say(text: str) -> None:
    print(text, flush=True)


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'es' if word.endswith('x') else 's'}" if count != 1 else f"1 {word}"


def known_like(
    finding: Finding, minimal: onnx.ModelProto | None, cases: list[Case]
) -> list[tuple[str, str]]:
    """Known bugs the corpus records that look like this finding: the same package and
    check, a release range holding the failing release and not the passing one, on a
    case whose operators the minimal model all has; those whose reason shares most
    words with the failure's message first."""
    if minimal is None:
        return []
    ops = {n.op_type for n in minimal.graph.node}
    bad = finding.bad_cell.version(finding.package)
    good = finding.good_cell.version(finding.package) if finding.good_cell else None
    found: dict[str, str] = {}
    for case in cases:
        if not {n.op_type for n in case.model.graph.node} <= ops:
            continue
        for known in case.known:
            if (known.package == finding.package and finding.check in known.checks
                    and in_range(bad, known.versions)
                    and (good is None or not in_range(good, known.versions))):  # fmt: skip
                found.setdefault(known.link, known.reason)
    words = set(re.findall(r"[a-z]+", finding.result.detail.lower()))
    shared = {link: len(words & set(re.findall(r"[a-z]+", r.lower()))) for link, r in found.items()}
    best_first = sorted(found, key=lambda link: -shared[link])  # the likeliest first
    return [(found[link], link) for link in best_first]


def only_check(case: Case, check: str, case_id: str | None = None) -> Case:
    return replace(case, id=case_id or case.id, builtin_checks=(check,), custom_checks=())


def _on(cells: list[Cell], case: Case, settings: Settings, check: str) -> dict[str, CheckResult]:
    """One check of one case in each cell (cells built when missing): cell id -> result."""
    files = write_case(case, settings.work_dir / "cases", keyed=True)
    found = {}
    for cell in cells:
        run = run_cell(cell, [files], settings)
        if run.record.state is CellState.READY:
            found[cell.id] = next(r for r in run.results if r.check == check)
    return found


# -- 2. since when --------------------------------------------------------------------------


def since_when(
    finding: Finding, case: Case, config: Config, fixed: tuple[str, ...], settings: Settings
) -> None:
    """Narrows a finding to the exact releases around its boundary: every release on
    the index between the two matrix neighbours, bisected. A check that fails on every
    release of the axis is first tried on the newest and the oldest release on the
    index beyond the axis: one that passes there was fixed later, or broken earlier."""
    package, bad = finding.package, finding.bad_cell
    try:
        available = releases(package)
    except CompatError as exc:
        say(f"  cannot list {package} releases ({exc}): the boundary stays as the matrix saw it")
        return
    single = only_check(case, finding.check)
    cells: dict[str, Cell] = {}

    def cell_of(version: str) -> Cell:
        onnx_v, ort_v = (version, bad.onnxruntime) if package == "onnx" else (bad.onnx, version)
        return make_cell(config, onnx_v, ort_v, bad.pins, fixed)

    def probe(version: str) -> str | None:
        cell = cells[version] = cell_of(version)
        seen_before = finding.states.get(version)
        if seen_before in ("bad", "good"):  # the matrix ran it already
            return {"bad": "fail", "good": "pass"}[seen_before]
        got = _on([cell], single, settings, finding.check).get(cell.id)
        if got is None:
            say(f"    {package} {version}: cannot be installed here, skipped")
            return None
        seen = state(got.outcome)
        same = seen == "bad" and same_way(signature_of(got), finding.signature)
        how = "fails the same way" if same else "fails another way" if seen == "bad" else seen
        say(f"    {package} {version}: {got.outcome.value}, {how or 'nothing observed'}")
        finding.tested[version] = seen or "-"
        return None if seen is None else {"bad": "fail", "good": "pass"}[seen]

    if finding.kind == "always" and not _beyond_the_axis(finding, available, probe, cell_of):
        say(f"  no release of {package} tried passes: no boundary to find")
        return
    good = finding.good_cell
    assert good is not None
    lo, hi = sorted((bad.version(package), good.version(package)), key=version_key)
    between = [v for v in available if version_key(lo) <= version_key(v) <= version_key(hi)]
    if len(between) <= 2:
        say(f"  {lo} and {hi} are neighbours on the index: nothing to bisect")
        return
    say(f"  bisecting {len(between) - 2} {package} releases between {lo} and {hi}")
    try:
        found = bisect(between, probe)
    except UsageError as exc:  # both ends the same now: the matrix run was nondeterministic
        say(f"    {exc}; the boundary stays between the matrix releases")
        return
    last, first = cells[found.last], cells[found.first]
    if finding.kind == "fixed":
        finding.last_bad, finding.first_good = found.last, found.first
        finding.bad_cell, finding.good_cell = last, first
    else:
        finding.last_good, finding.first_bad = found.last, found.first
        finding.good_cell, finding.bad_cell = last, first
    say(f"  {finding.boundary()} ({plural(len(finding.tested), 'release')} more tested)")


def _beyond_the_axis(
    finding: Finding,
    available: list[str],
    probe: Callable[[str], str | None],
    cell_of: Callable[[str], Cell],
) -> bool:
    """For a check that fails on every release of the axis: does the newest release on
    the index pass (fixed since), or the oldest (broken since)? Turns the finding into
    that kind, its boundary to bisect; False when neither passes (it stays "always")."""
    seen = sorted(finding.states, key=version_key)
    newest, oldest = available[-1] if available else "", available[0] if available else ""
    if newest and version_key(newest) > version_key(seen[-1]):
        say(f"  fails on every release of the axis; the newest on the index, {newest}:")
        if probe(newest) == "pass":
            finding.kind, finding.good_cell = "fixed", cell_of(newest)
            finding.last_bad, finding.first_good = seen[-1], newest
            return True
    if oldest and version_key(oldest) < version_key(seen[0]):
        say(f"  and the oldest on the index, {oldest}:")
        if probe(oldest) == "pass":
            finding.kind = "regression"
            finding.bad_cell, finding.good_cell = cell_of(seen[0]), cell_of(oldest)
            finding.last_good, finding.first_bad = oldest, seen[0]
            return True
    return False


# -- 3. minimal model -----------------------------------------------------------------------


def _env(cell: Cell, settings: Settings) -> Environment:
    env = existing_env(cell, settings.envs_dir, settings.python)
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
        ServedWorker(good_env, work / "good", settings.timeout) if good_env else _Nothing() as good,
    ):
        fails = SameFailure(finding, case, work / "candidates", bad.run, good.run if good else None)
        last = fails.last

        shown = [size(case.model)]
        say(
            f"  reducing {describe(case.model)} on {finding.bad_cell.id}"
            + (f", keeping it passing on {good_cell.id}" if good_cell else "")
        )

        tops = [len(case.model.graph.node)]

        def progress(model: onnx.ModelProto, tried: int) -> None:
            inlined = len(model.graph.node) > tops[-1]  # more at the top: an If's branch
            tops.append(len(model.graph.node))
            if inlined or size(model) <= shown[-1] * 3 // 4 or size(model) <= 3:
                shown.append(size(model))
                how = ", an If replaced by the branch it takes" if inlined else ""
                say(f"    {describe(model)} ({plural(tried, 'candidate')}{how})")

        start = next((m for m in earlier if fails(m.model, m.feeds)), None)
        if start is not None:
            say(
                f"    the minimal model of an earlier finding shows this one too: "
                f"{len(start.model.graph.node)} nodes"
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
    say(
        f"  minimal: {describe(reduced.model)} "
        f"({', '.join(n.op_type for n in reduced.model.graph.node)}), "
        f"{plural(reduced.tried, 'candidate')}, {plural(workers, 'worker')}"
    )
    note = ""
    if start is None and size(reduced.model) == size(case.model):
        note = (
            f"no smaller graph fails the same way ({reduced.tried} candidates): the "
            "failure needs every node, or lies in what the graph declares rather than "
            "in its nodes"
        )
        say(f"  {note}")
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


Evaluate = Callable[[str, str, Path], dict[str, Any]]


def size(model: onnx.ModelProto) -> int:
    """Nodes at every depth: the top level and the subgraph bodies."""
    return len(model.graph.node) + nodes_in_bodies(model.graph)


def describe(model: onnx.ModelProto) -> str:
    inner, top = nodes_in_bodies(model.graph), len(model.graph.node)
    return f"{top} node{'s' * (top != 1)}" + (f" (+{inner} in subgraph bodies)" if inner else "")


class SameFailure:
    """The reduction's predicate: a candidate fails like the finding (same signature) on
    the failing release and, when there is one, passes on the passing release. `bad` and
    `good` run one check of a written case there and return its result record."""

    def __init__(
        self, finding: Finding, case: Case, work: Path, bad: Evaluate, good: Evaluate | None
    ) -> None:
        self.finding, self.case, self.work = finding, case, work
        self.bad, self.good = bad, good
        self.counter = itertools.count()
        self.last: dict[str, Any] = {}  # the last candidate that failed the same way

    def __call__(self, model: onnx.ModelProto, feeds: dict[str, Any]) -> bool:
        check = self.finding.check
        candidate = only_check(replace(self.case, model=model, inputs=feeds, extra_runs=()), check)
        files = write_case(candidate, self.work / str(next(self.counter)))
        got = self.bad(candidate.id, check, files.directory)
        if state(got["outcome"]) != "bad" or not same_way(
            signature_of(got), self.finding.signature
        ):
            return False
        passed = self.good(candidate.id, check, files.directory) if self.good else None
        if passed is not None and state(passed["outcome"]) != "good":
            return False
        self.last.update(bad=got, good=passed, files=files)
        return True


class _Nothing:
    """No worker: a finding with no passing release reduces against the failing one."""

    started = 0

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


# -- 4. workaround --------------------------------------------------------------------------


def spellings(
    triaged: Triaged, case: Case, plan: Plan, settings: Settings, first: Report
) -> list[Spelling]:
    """Every rewrite of the original and the minimal model, the finding's check run on
    its axis (the matrix's releases and the bisected boundary): which fix it, which
    break a passing release. A fix of the original also runs every other check on the
    whole plan: a workaround should not trade one failure for another."""
    finding = triaged.finding
    check, package = finding.check, finding.package
    cells = list(
        dict.fromkeys(
            [
                *plan.axes.get(package, ()),
                finding.bad_cell,
                *([finding.good_cell] if finding.good_cell else []),
            ]
        )
    )
    cells.sort(key=lambda c: version_key(c.version(package)))
    bases = {"original": only_check(case, check, f"{FAMILY}.original")}
    if triaged.minimal is not None:
        minimal = triaged.minimal
        bases["minimal"] = only_check(
            replace(case, model=minimal.model, inputs=minimal.feeds, extra_runs=()),
            check,
            f"{FAMILY}.minimal",
        )
    cases = [*bases.values(), *(v for base in bases.values() for v in mutated(base, CATALOGUE))]
    say(f"  {len(cases) - len(bases)} spellings × {len(cells)} releases of {package}")
    axis_plan = Plan(tuple(cells), {package: tuple(cells)}, cross=False)
    report = run_matrix(
        axis_plan, Corpus(cases, {FAMILY: "triage"}), settings, Progress(len(cells), live=False)
    )
    by_case: dict[str, dict[str, str]] = {}
    versions = {c.id: c.version(package) for c in cells}
    for result in report.results:
        by_case.setdefault(result.case, {})[versions[result.cell]] = state(result.outcome) or "-"
    found = []
    for name, base in bases.items():
        before = by_case.get(base.id, {})
        for variant in (c for c in cases if c.id.startswith(base.id + "~")):
            after = by_case.get(variant.id, {})
            failing = [v for v, s in before.items() if s == "bad"]
            breaks = [v for v, s in before.items() if s == "good" and after.get(v) == "bad"]
            fixes = bool(failing) and all(after.get(v) == "good" for v in failing) and not breaks
            rewrite = variant.id.split("~", 1)[1]
            described = REWRITES[rewrite].description
            found.append(Spelling(rewrite, described, name, after, fixes, breaks))
    shipped = [s for s in found if s.model == "original" and s.fixes]
    if shipped:
        _other_checks(shipped, case, plan, settings, first)
    originals = {s.rewrite: s for s in found if s.model == "original"}
    results = {(r.case, r.cell): r for r in report.results}
    for spelling in found:
        same = originals.get(spelling.rewrite)
        if spelling.model != "minimal" or not spelling.fixes or same is None or same.fixes:
            continue
        for cell in cells:
            got = results.get((f"{bases['original'].id}~{spelling.rewrite}", cell.id))
            if (
                got is not None
                and state(got.outcome) == "bad"
                and not same_way(signature_of(got), finding.signature)
            ):
                triaged.hidden.append((spelling.rewrite, cell.version(package), got.summary))
                break
    return found


def _other_checks(
    fixes: list[Spelling], case: Case, plan: Plan, settings: Settings, first: Report
) -> None:
    """Every check of each fixing spelling of the original on the whole plan, against
    the original's results there: what it newly breaks."""
    variants = {v.id.split("~", 1)[1]: v for v in mutated(case, CATALOGUE)}
    chosen = [variants[s.rewrite] for s in fixes if s.rewrite in variants]
    say(f"  {plural(len(chosen), 'fix')} of the original: every check on {len(plan.cells)} cells")
    report = run_matrix(
        plan, Corpus(chosen, {FAMILY: "triage"}), settings, Progress(len(plan.cells), live=False)
    )
    before = {(r.cell, r.check): state(r.outcome) for r in first.results}
    for spelling in fixes:
        variant_id = f"{case.id}~{spelling.rewrite}"
        spelling.new_failures = sorted(
            f"{r.check}@{r.cell}"
            for r in report.results
            if r.case == variant_id
            and state(r.outcome) == "bad"
            and before.get((r.cell, r.check)) == "good"
        )


# -- the command ----------------------------------------------------------------------------


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


def load_case(args: argparse.Namespace) -> Case:
    """The model and its inputs as a case, `--check` applied; bad input in one line."""
    path: Path = args.model
    if not path.is_file():
        raise UsageError(f"{path}: no such model file; give the .onnx file to triage")
    model = load_model(path)
    runs = model_runs(path, model, args.inputs)
    case = model_case(f"{FAMILY}.{slug(path.stem)}", f"{path.name}, triaged", model, runs)
    if args.check:
        if args.check not in case.checks:
            raise UsageError(
                f"--check {args.check}: a model is checked by {', '.join(case.checks)}"
            )
        case = only_check(case, args.check)
    return case


def check_plan_options(args: argparse.Namespace) -> None:
    for flag, given in (("--cross", args.cross), ("--shard", args.shard)):
        if given:
            raise UsageError(f"{flag}: triage compares the releases of each axis; drop {flag}")
    for axis, other, flag in (("onnx", args.ort, "--ort"), ("onnxruntime", args.onnx, "--onnx")):
        if args.axis == axis and other:
            raise UsageError(
                f"{flag} {other}: with --axis {axis} only the {axis} axis runs (paired with "
                f"the config's release of the other package); drop {flag} or --axis"
            )


def where(run: Run, case: Case) -> tuple[Report, list[Finding], list[CheckResult]]:
    """Phase 1: the case on every cell of the plan; its findings and flaky results."""
    plan = run.plan
    first = run_matrix(plan, Corpus([case], {FAMILY: "triage"}), run.settings,
                       Progress(len(plan.cells)))  # fmt: skip
    for cell in first.broken_cells:
        reason = cell.detail.strip().splitlines()[0] if cell.detail.strip() else ""
        say(f"  {cell.id}: {cell.state.value}, not observed: {clip(reason, 150)}")
    if len(first.broken_cells) == len(first.cells):
        raise UsageError(
            f"no cell could be built ({', '.join(c.id for c in first.cells)}), so "
            "nothing was observed; check the releases given (--onnx, --ort)"
        )
    flaky = [r for r in first.results if r.outcome is Outcome.FLAKY]
    for result in flaky:  # identical runs disagreed: no finding, said as such
        say(f"  nondeterministic: {result.check} on {result.cell}: {clip(result.detail, 120)}")
    checks = {c: case.check_axis(c) for c in case.checks}
    findings = findings_of(plan, list(first.results), checks)
    if not findings:
        say("  no findings: every check behaves the same on every release tried")
    for finding in findings:
        say(f"  finding: {finding.observed()}: {clip(finding.result.summary, 150)}")
    return first, findings, flaky


def triage_one(
    run: Run, item: Triaged, case: Case, first: Report, number: int, earlier: list[Minimal]
) -> None:
    """Phases 2 to 4 of one finding: its boundary, its minimal model, its workarounds."""
    finding = item.finding
    say(f"2/5 since when [finding {number}] {finding.check} · {finding.package}")
    since_when(finding, case, run.config, run.fixed, run.settings)
    say(f"3/5 minimal model [finding {number}]")
    try:
        item.minimal = minimal_model(finding, case, run.intermediates(case), run.settings,
                                     run.work / str(number), earlier)  # fmt: skip
    except ValueError as exc:  # no intermediate values, or it fails differently alone
        item.minimal_note = str(exc)
        say(f"  no minimal model: {exc}")
    item.known = known_like(finding, item.minimal.model if item.minimal else None,
                            run.corpus_cases())  # fmt: skip
    for reason, link in item.known:
        say(f"  known in the corpus: {reason} ({link})")
    say(f"4/5 workaround [finding {number}]")
    item.spellings = spellings(item, case, run.plan, run.settings, first)
    shipped = [s.rewrite for s in item.spellings if s.model == "original" and s.fixes]
    say(f"  fixes: {', '.join(shipped) or 'no rewrite of the original'}")
    for rewrite, release, summary in item.hidden:
        say(f"  behind it: spelled {rewrite}, the model fails another way on "
            f"{finding.package} {release}: {clip(summary, 150)}")  # fmt: skip


def cmd_triage(args: argparse.Namespace) -> int:
    started = time.monotonic()
    config, _ = follow_axes(args, load_config(args.config))
    case = load_case(args)
    path: Path = args.model
    check_plan_options(args)
    out: Path = args.out or Path("reports") / "triage" / slug(path.stem)
    _, plan = resolve_plan(args, config)
    if len({c.pins for c in plan.cells}) > 1:
        raise UsageError(
            "triage compares onnx and onnxruntime releases; an extra axis (--pkg, "
            "[tool.compat.axes]) multiplies them: pin the other package with --with PKG==V"
        )
    settings = settings_of(args, config)
    settings.work_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="triage-", dir=settings.work_dir))
    run = Run(config, plan, replace(settings, work_dir=work), fixed_requirements(args, config),
              work, default_corpus(args.config))  # fmt: skip
    try:
        nodes = len(case.model.graph.node)
        say(f"1/5 where: {path} ({plural(nodes, 'node')}) on {plural(len(plan.cells), 'cell')}, "
            f"checks {', '.join(case.checks)}")  # fmt: skip
        first, findings, flaky = where(run, case)
        pending = [(case, first, findings, "")]
        triaged: list[Triaged] = []
        while pending and len(triaged) < MOST_FINDINGS:
            source, report, found, behind = pending.pop(0)
            for finding in found:
                if any(
                    t.finding.check == finding.check
                    and same_way(t.finding.signature, finding.signature)
                    for t in triaged
                ):
                    continue  # fmt: skip
                item = Triaged(finding, nodes, behind=behind)
                triaged.append(item)
                earlier = [t.minimal for t in triaged if t.minimal]
                triage_one(run, item, source, report, len(triaged), earlier)
                for rewrite, _, _ in item.hidden[:1]:  # what this failure hides: triaged next
                    spelled = only_check(
                        replace(source, id=f"{source.id}~{rewrite}",
                                model=REWRITES[rewrite].function(source.model).model),  # type: ignore[union-attr]
                        finding.check,
                    )  # fmt: skip
                    say(f"1/5 where, behind finding {len(triaged)}: the model spelled {rewrite}")
                    report_s, found_s, _ = where(run, spelled)
                    how = (f"once finding {len(triaged)} is worked around (the model spelled "
                           f"`{rewrite}`)")  # fmt: skip
                    pending.append((spelled, report_s, found_s, how))
        say("5/5 report")
        written = write_triage(out, path, case, first, triaged, flaky)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for line in written:
        say(f"  {line}")
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
    say(
        f"triaged in {time.monotonic() - started:.1f} s: {plural(len(triaged), 'finding')}; "
        f"{out / 'report.md'}"
    )
    return 0
