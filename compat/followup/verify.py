"""`onnx-compat scan --verify`: every prediction of a scan confirmed by a run.

The model runs as a drop-in case (compat/corpus/dropin.py: the checks that need no
oracle) on the releases the scan names, plus the release of the project's axis just
outside each affected range on either side, through the matrix machinery
(compat/execute/run.py); then each (cell, check) is judged: a predicted failure that
fails, or an unpredicted one that passes, `agree`; a failure nobody predicted is
`missed`; a predicted failure that passes, a `false alarm`.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from compat.core.case import KnownFailure
from compat.core.errors import UsageError
from compat.core.outcomes import CheckResult, Outcome
from compat.core.versions import holds, in_range, version_key
from compat.corpus.discover import Corpus
from compat.corpus.dropin import load_model, model_case, model_runs, model_tolerance, slug
from compat.corpus.findings import Finding
from compat.corpus.knowledge import detectors
from compat.corpus.known import unlike
from compat.corpus.project_axes import config_file
from compat.corpus.scan import Scan
from compat.execute.progress import Progress
from compat.execute.run import run_matrix
from compat.plan.config import load_config
from compat.plan.matrix import Cell, Plan, select_axis
from compat.workflow.plan import follow_axes, resolve_plan
from compat.workflow.request import PlanRequest, Request, RunRequest, SetupRequest
from compat.workflow.settings import settings_of

FAMILY = "scan"
#: the outcomes that are a failure the scan could have predicted
FAILED = frozenset(
    {Outcome.FAIL, Outcome.ERROR, Outcome.CRASH, Outcome.TIMEOUT, Outcome.UNSUPPORTED}
)
Verdict = Literal["agree", "missed", "false alarm", "not observed"]


@dataclass(frozen=True)
class Judged:
    """One check of the model in one cell: what the scan predicted, what the run shows."""

    cell: str
    check: str
    predicted: tuple[str, ...]  # the detectors predicting a failure here
    outcome: str
    verdict: Verdict
    detail: str = ""


def neighbours(releases: tuple[str, ...], affected: str) -> list[str]:
    """The releases of the axis in the `affected` range, and the nearest one outside it on
    each side (when the axis has one)."""
    ordered = sorted(releases, key=version_key)
    inside = [i for i, v in enumerate(ordered) if in_range(v, affected)]
    if not inside:
        return []
    low = inside[0] - 1
    high = inside[-1] + 1
    around = ([ordered[low]] if low >= 0 else []) + ([ordered[high]] if high < len(ordered) else [])
    return [ordered[i] for i in inside] + around


def releases_to_run(scan: Scan, axes: dict[str, tuple[str, ...]]) -> dict[str, list[str]]:
    """Per package, the releases that confirm or refute the scan; with no finding, the
    newest release of each axis in the target range (what a clean scan claims)."""
    chosen: dict[str, set[str]] = {p: set() for p in axes}
    for finding in scan.findings:
        chosen[finding.package].update(neighbours(axes[finding.package], finding.affected))
    if not scan.findings:
        for package, releases in axes.items():
            inside = [v for v in releases if in_range(v, scan.target.get(package, ""))]
            chosen[package].update(sorted(inside, key=version_key)[-1:])
    return {p: sorted(v, key=version_key) for p, v in chosen.items()}


def predicted(
    findings: tuple[Finding, ...], cell: Cell, check: str, installed: Mapping[str, str]
) -> tuple[str, ...]:
    """The detectors whose bug covers `check` in this cell (by the bug's own range: the
    cells just outside the target are judged too), where the cell has what the bug
    also requires (`installed`: the cell's distributions)."""
    return tuple(
        f.detector
        for f in findings
        if check in f.checks
        and in_range(cell.version(f.package), f.known)
        and holds(f.requires, installed)
    )


def unlike_any(by: tuple[str, ...], result: CheckResult, looks: dict[str, KnownFailure]) -> str:
    """ "" when the failure looks like one the predicting detectors' bugs declare (a limit:
    `unsupported`), else how it differs from each."""
    differences = []
    for detector in by:
        known = looks.get(detector)
        if known is None:  # a limit: the release cannot load the model
            if result.outcome is Outcome.UNSUPPORTED:
                return ""
            differences.append(f"{detector}: {result.outcome.value}, not unsupported")
        elif result.outcome.value not in known.outcomes:
            shows = ", ".join(known.outcomes)
            differences.append(f"{detector}: {result.outcome.value}, the bug shows {shows}")
        elif not (differs := unlike(known, result, message=False)):
            return ""
        else:
            differences.append(f"{detector}: {differs}")
    return "; ".join(differences)


def judge(
    plan: Plan,
    scan: Scan,
    results: Sequence[CheckResult],
    looks: dict[str, KnownFailure],
    installed: Mapping[str, Mapping[str, str]],
) -> list[Judged]:
    """Each result of the run against the scan's predictions: a failure is the predicted
    one only when it looks like it (`looks`: each detector's bug, with its phase,
    exception and message); one that fails otherwise is `missed`, and says how."""
    cells = {c.id: c for c in plan.cells}
    found = (*scan.findings, *scan.outside)
    judged = []
    for result in results:
        by = predicted(found, cells[result.cell], result.check, installed.get(result.cell, {}))
        detail = " ".join(result.detail.split())[:160]
        if result.outcome in FAILED:
            other = unlike_any(by, result, looks) if by else ""
            verdict: Verdict = "missed" if not by or other else "agree"
            detail = f"not as predicted ({other}): {detail}" if other else detail
        elif result.outcome is Outcome.PASS:
            verdict = "false alarm" if by else "agree"
        else:  # skipped, or flaky: the run says neither
            verdict = "not observed"
        judged.append(Judged(result.cell, result.check, by, result.outcome.value, verdict, detail))
    return judged


def plan_of(
    scan: Scan, config: Path | None, state_dir: Path | None, jobs: int
) -> tuple[Request, Plan]:
    """The request and plan that run the releases `releases_to_run` names, on this
    interpreter, installing nothing but each cell's axes and the config's requirements."""
    path = config_file(config)
    if path is None:
        raise UsageError(
            "--verify runs the model on the project's releases, and no [tool.compat] names "
            "them here; pass --config FILE, or run `onnx-compat init` first"
        )
    python = sys.executable
    request = Request(
        config=path,
        setup=SetupRequest(install="none", python=""),  # this interpreter: no Python axis
        run=RunRequest(jobs=jobs, out=None, state_dir=state_dir, python=python, reruns=1),
    )
    loaded, _ = follow_axes(request, load_config(path))  # a range axis: resolved once, here
    axes = {a.package: a.versions for a in (loaded.onnx, loaded.onnxruntime)}
    chosen = releases_to_run(scan, axes)
    if not any(chosen.values()):
        raise UsageError(f"--verify: no release of {path}'s axes is in the range the scan names")
    asked = PlanRequest(
        onnx=",".join(chosen["onnx"]) or None,
        ort=",".join(chosen["onnxruntime"]) or None,
        offline=True,  # releases of the config's axes: known to exist
    )
    request = replace(request, plan=asked)
    _, plan = resolve_plan(request, loaded)
    for package, other in (("onnx", "onnxruntime"), ("onnxruntime", "onnx")):
        if not chosen[package]:
            plan = select_axis(plan, other)
    return request, plan


def verify(
    model: Path,
    scan: Scan,
    config: Path | None,
    state_dir: Path | None,
    jobs: int,
    corpus: Path | None = None,
    inputs: Path | None = None,
) -> list[Judged]:
    """The model run on the releases that test the scan's predictions, each result judged."""
    request, plan = plan_of(scan, config, state_dir, jobs)
    loaded = load_model(model)
    loaded_config = load_config(request.config)
    tolerance = model_tolerance(model, loaded_config.tolerance)  # compat.toml beside it too
    runs = model_runs(model, loaded, inputs)
    case = model_case(
        f"{FAMILY}.{slug(model.stem)}", f"{model.name}, scanned", loaded, runs, tolerance
    )
    settings = settings_of(request, loaded_config)
    cells = ", ".join(c.id for c in plan.cells)
    print(
        f"verify: {model.name} on {len(plan.cells)} cells ({cells}), checks "
        f"{', '.join(case.checks)}",
        file=sys.stderr,
    )
    report = run_matrix(
        plan, Corpus([case], {FAMILY: "scan --verify"}), settings, Progress(len(plan.cells))
    )
    for cell in report.broken_cells:
        print(
            f"  {cell.id}: {cell.state.value}, not observed: {cell.detail[:150]}", file=sys.stderr
        )
    unchecked = sorted({c for f in scan.findings for c in f.checks} - set(case.checks))
    if unchecked:
        print(
            f"  a drop-in model is not checked by {', '.join(unchecked)}: predictions there "
            "stay unconfirmed",
            file=sys.stderr,
        )
    looks = {d.id: d.known for d in detectors(corpus)}  # the scan's own detectors
    installed = {c.id: c.installed for c in report.cells}
    return judge(plan, scan, report.results, looks, installed)
