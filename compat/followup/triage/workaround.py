"""Phase 4 of triage, the workaround: every rewrite of the catalogue (compat/corpus/rewrites.py)
on the original and the minimal model, run on the finding's axis; and the known bugs
of the corpus that look like the finding."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import onnx

from compat.core.case import Case, KnownFailure
from compat.core.outcomes import CheckResult
from compat.core.report import Report
from compat.core.versions import in_range, version_key
from compat.corpus.discover import Corpus
from compat.corpus.known import unlike
from compat.corpus.rewrites import BY_NAME as REWRITES
from compat.corpus.rewrites import CATALOGUE, mutated
from compat.execute.progress import Progress
from compat.execute.run import Settings, run_matrix
from compat.followup.triage.common import FAMILY, only_check, plural, say
from compat.followup.triage.findings import Finding, same_way, signature_of, state
from compat.followup.triage.minimal import Minimal
from compat.plan.matrix import Cell, Plan


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
    #: checks that still fail under it, as they fail on the model as written (check@cell)
    still_failing: list[str] = field(default_factory=list)

    @property
    def passes_everywhere(self) -> bool:
        return (
            all(s == "good" for s in self.states.values())
            and not self.new_failures
            and not self.still_failing
        )


def _fixes(before: dict[str, str], after: dict[str, str]) -> bool:
    """Every release that failed passes, and no release that passed fails."""
    failing = [v for v, s in before.items() if s == "bad"]
    breaks = [v for v, s in before.items() if s == "good" and after.get(v) == "bad"]
    return bool(failing) and all(after.get(v) == "good" for v in failing) and not breaks


def spellings(
    finding: Finding,
    minimal: Minimal | None,
    case: Case,
    plan: Plan,
    settings: Settings,
    first: Report,
) -> tuple[list[Spelling], list[tuple[str, str, str]]]:
    """Every rewrite of the original and the minimal model, the finding's check run on
    its axis (the matrix's releases and the bisected boundary): which fix it, which
    break a passing release. A fix of the original also runs every other check on the
    whole plan: a workaround should not trade one failure for another. Also returns
    (rewrite, release, result) where a rewrite that fixes the minimal model leaves the
    original failing another way: a second failure hiding behind this one."""
    check = finding.check
    package = finding.package
    cells = _axis_cells(finding, plan)
    bases = {"original": only_check(case, check, f"{FAMILY}.original")}
    if minimal is not None:
        bases["minimal"] = only_check(
            replace(case, model=minimal.model, inputs=minimal.feeds, extra_runs=()),
            check,
            f"{FAMILY}.minimal",
        )
    axis_plan = Plan(tuple(cells), {package: tuple(cells)}, cross=False)
    versions = {c.id: c.version(package) for c in cells}
    by_case: dict[str, dict[str, str]] = {}
    results_of: list[CheckResult] = []

    def run(chosen: list[Case]) -> None:
        corpus = Corpus(chosen, {FAMILY: "triage"})
        report = run_matrix(axis_plan, corpus, settings, Progress(len(cells), live=False))
        results_of.extend(report.results)
        for result in report.results:
            by_case.setdefault(result.case, {})[versions[result.cell]] = (
                state(result.outcome) or "-"
            )

    # The minimal model first: a few nodes, every spelling. The original (hundreds of
    # nodes, minutes of a slow check) then tries only the spellings that fixed it.
    original = [bases["original"], *mutated(bases["original"], CATALOGUE)]
    if "minimal" in bases:
        small = [bases["minimal"], *mutated(bases["minimal"], CATALOGUE)]
        say(
            f"  {len(small) - 1} spellings of the minimal model × {len(cells)} releases of "
            f"{package}"
        )
        run(small)
        fixed = {
            c.id.split("~", 1)[1]
            for c in small[1:]
            if _fixes(by_case.get(bases["minimal"].id, {}), by_case.get(c.id, {}))
        }
        original = [original[0], *(c for c in original[1:] if c.id.split("~", 1)[1] in fixed)]
    say(f"  {len(original) - 1} spellings of the original × {len(cells)} releases of {package}")
    if len(original) > 1:  # else nothing to compare the original with: not run again
        run(original)
    found = _compared(bases, by_case)
    shipped = [s for s in found if s.model == "original" and s.fixes]
    if shipped:
        _other_checks(shipped, case, plan, settings, first)
    return found, _hidden(found, bases["original"], cells, results_of, finding)


def _axis_cells(finding: Finding, plan: Plan) -> list[Cell]:
    """The finding's axis: the plan's releases of its package and the bisected boundary
    (the failing and the passing cell), oldest first."""
    package = finding.package
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
    return cells


def _compared(bases: dict[str, Case], by_case: dict[str, dict[str, str]]) -> list[Spelling]:
    """Each spelling that ran, compared with the model it rewrites (`bases`: "original",
    "minimal"), release by release (`by_case`: case id -> release -> bad/good/-)."""
    found = []
    for name, base in bases.items():
        before = by_case.get(base.id, {})
        for variant in (c for c in by_case if c.startswith(base.id + "~")):
            after = by_case[variant]
            breaks = [v for v, s in before.items() if s == "good" and after.get(v) == "bad"]
            fixes = _fixes(before, after)
            rewrite = variant.split("~", 1)[1]
            described = REWRITES[rewrite].description
            found.append(Spelling(rewrite, described, name, after, fixes, breaks))
    return found


def _hidden(
    found: list[Spelling],
    original: Case,
    cells: list[Cell],
    results_of: list[CheckResult],
    finding: Finding,
) -> list[tuple[str, str, str]]:
    """(rewrite, release, result) where a rewrite fixes the minimal model but leaves the
    original failing another way: a second failure hiding behind this one."""
    package = finding.package
    originals = {s.rewrite: s for s in found if s.model == "original"}
    hidden: list[tuple[str, str, str]] = []
    results = {(r.case, r.cell): r for r in results_of}
    for spelling in found:
        same = originals.get(spelling.rewrite)
        if spelling.model != "minimal" or not spelling.fixes or same is None or same.fixes:
            continue
        for cell in cells:
            got = results.get((f"{original.id}~{spelling.rewrite}", cell.id))
            if (
                got is not None
                and state(got.outcome) == "bad"
                and not same_way(signature_of(got), finding.signature)
            ):
                hidden.append((spelling.rewrite, cell.version(package), got.summary))
                break
    return hidden


def _other_checks(
    fixes: list[Spelling], case: Case, plan: Plan, settings: Settings, first: Report
) -> None:
    """Every check of each fixing spelling of the original on the whole plan, against
    the original's results there: what it newly breaks, and what still fails."""
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
        spelling.still_failing = sorted(
            f"{r.check}@{r.cell}"
            for r in report.results
            if r.case == variant_id
            and state(r.outcome) == "bad"
            and before.get((r.cell, r.check)) != "good"
        )


def known_like(
    finding: Finding,
    minimal: onnx.ModelProto | None,
    cases: list[Case],
    declared: Sequence[KnownFailure] = (),
) -> list[tuple[str, str]]:
    """Known bugs that look like this finding: the same package and check, a release
    range holding the failing release and not the passing one, and the failure the bug
    declares (`unlike`): declared for this model (`declared`: a drop-in folder's
    compat.toml, [[tool.compat.known]]) with its phase, exception and message, or recorded
    by a corpus case whose operators the minimal model all has, with its phase and
    exception (its message names the case's own tensors). Those whose reason shares most
    words with the failure's message first."""
    bad = finding.bad_cell.version(finding.package)
    good = finding.good_cell.version(finding.package) if finding.good_cell else None

    def like(known: KnownFailure, message: bool) -> bool:
        return (
            known.package == finding.package
            and finding.check in known.checks
            and in_range(bad, known.versions)
            and (good is None or not in_range(good, known.versions))
            and not unlike(known, finding.result, message)
        )

    found = {k.link: k.reason for k in declared if like(k, message=True)}
    ops = {n.op_type for n in minimal.graph.node} if minimal is not None else set()
    for case in cases if minimal is not None else []:
        if {n.op_type for n in case.model.graph.node} <= ops:  # its message is the case's
            for known in (k for k in case.known if like(k, message=False)):
                found.setdefault(known.link, known.reason)
    words = set(re.findall(r"[a-z]+", finding.result.detail.lower()))
    shared = {link: len(words & set(re.findall(r"[a-z]+", r.lower()))) for link, r in found.items()}
    best_first = sorted(found, key=lambda link: -shared[link])  # the likeliest first
    return [(found[link], link) for link in best_first]
