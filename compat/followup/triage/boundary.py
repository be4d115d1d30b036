"""Phase 2 of triage, since when: a finding's boundary narrowed to the exact releases,
bisecting every release on the package index between the matrix's neighbours."""

from __future__ import annotations

from collections.abc import Callable

from compat.core.case import Case
from compat.core.errors import CompatError, UsageError
from compat.core.outcomes import CellState, CheckResult
from compat.core.versions import version_key
from compat.corpus.discover import write_case
from compat.execute.run import Settings, run_cell
from compat.followup.bisection import bisect
from compat.followup.triage.common import only_check, plural, say
from compat.followup.triage.findings import Finding, same_way, signature_of, state
from compat.plan.config import Config
from compat.plan.index import releases
from compat.plan.matrix import Cell, make_cell


def _on(cells: list[Cell], case: Case, settings: Settings, check: str) -> dict[str, CheckResult]:
    """One check of one case in each cell (cells built when missing): cell id -> result."""
    files = write_case(case, settings.work_dir / "cases", keyed=True)
    found = {}
    for cell in cells:
        run = run_cell(cell, [files], settings)
        if run.record.state is CellState.READY:
            found[cell.id] = next(r for r in run.results if r.check == check)
    return found


def since_when(
    finding: Finding, case: Case, config: Config, fixed: tuple[str, ...], settings: Settings
) -> None:
    """Narrows a finding to the exact releases around its boundary: every release on
    the index between the two matrix neighbours, bisected. A check that fails on every
    release of the axis is first tried on the newest and the oldest release on the
    index beyond the axis: one that passes there was fixed later, or broken earlier."""
    package = finding.package
    bad = finding.bad_cell
    try:
        available = releases(package, python=bad.python)  # with a wheel for its Python
    except CompatError as exc:
        say(f"  cannot list {package} releases ({exc}): the boundary stays as the matrix saw it")
        return
    single = only_check(case, finding.check)
    cells: dict[str, Cell] = {}

    def cell_of(version: str) -> Cell:
        onnx_v, ort_v = (version, bad.onnxruntime) if package == "onnx" else (bad.onnx, version)
        return make_cell(
            config, onnx_v, ort_v, bad.pins, fixed, python=bad.python, show_python=bad.show_python
        )

    def probe(version: str) -> str | None:
        cell = cells[version] = cell_of(version)
        seen_before = finding.states.get(version) or finding.tested.get(version, "")
        if seen_before.split(" ")[0] in ("bad", "good"):  # the matrix, or a probe, ran it
            return {"bad": "fail", "good": "pass"}[seen_before.split(" ")[0]]
        got = _on([cell], single, settings, finding.check).get(cell.id)
        if got is None:
            say(f"    {package} {version}: cannot be installed here, skipped")
            return None
        seen = state(got.outcome)
        same = seen == "bad" and same_way(signature_of(got), finding.signature)
        how = "fails the same way" if same else "fails another way" if seen == "bad" else seen
        say(f"    {package} {version}: {got.outcome.value}, {how or 'nothing observed'}")
        finding.tested[version] = (seen or "-") + (
            "" if same or seen != "bad" else " (another way)"
        )
        return None if seen is None else {"bad": "fail", "good": "pass"}[seen]

    if finding.kind == "always" and not _beyond_the_axis(finding, available, probe, cell_of):
        say(f"  no release of {package} tried passes: {finding.boundary()}")
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
    last = cells[found.last]
    first = cells[found.first]
    if finding.kind == "fixed":
        finding.last_bad = found.last
        finding.first_good = found.first
        finding.bad_cell = last
        finding.good_cell = first
    else:
        finding.last_good = found.last
        finding.first_bad = found.first
        finding.good_cell = last
        finding.bad_cell = first
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
    newest = available[-1] if available else ""
    oldest = available[0] if available else ""
    if newest and version_key(newest) > version_key(seen[-1]):
        say(f"  fails on every release of the run: trying the newest on the index, {newest}")
        if probe(newest) == "pass":
            finding.kind = "fixed"
            finding.good_cell = cell_of(newest)
            finding.last_bad = seen[-1]
            finding.first_good = newest
            return True
    if oldest and version_key(oldest) < version_key(seen[0]):
        say(f"  trying the oldest on the index, {oldest}")
        if probe(oldest) == "pass":
            finding.kind = "regression"
            finding.bad_cell = cell_of(seen[0])
            finding.good_cell = cell_of(oldest)
            finding.last_good = oldest
            finding.first_bad = seen[0]
            return True
    return False
