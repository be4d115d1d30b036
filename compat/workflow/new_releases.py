"""`matrix --new-releases`: only the cells of the releases the package index has and the
baseline lacks, set against that baseline.

The releases are those of the axes that follow the index (`versions = ">=1.15"`), and,
with `--new-releases weekly`, onnx's newest preview build (onnx-weekly) on the onnx
axis. A cell is new when its release of one of those axes is nowhere in the baseline;
every other cell ran there already and is left out. The comparison of such a run is
partial by design: what the baseline has and this run did not plan is not "gone".
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from compat.core.changes import Changes, Kind, Source, attach, changes_of, compare
from compat.core.errors import UsageError
from compat.core.files import replace_text
from compat.core.report import Report
from compat.plan.config import Config
from compat.plan.matrix import Cell, Plan, parse_shard, select_shard
from compat.workflow.request import Request

#: What `--new-releases` takes: the axes that follow the index, or those and onnx-weekly.
CHOICES = ("releases", "weekly")


def check_new_releases(flag: str, given: object, baseline: str | None) -> None:
    """`--new-releases` and `--issue-body` need a baseline to tell new from known: said
    before anything runs."""
    if given and not baseline:
        raise UsageError(
            f"{flag}: new since what? give --baseline (a reports folder, a "
            f"matrix.json(.gz) file or git:REV), or drop {flag}"
        )


def _ran(baseline: Report) -> dict[str, set[str]]:
    """Every release the baseline ran, by package: on any axis, as any cell's pair."""
    found: dict[str, set[str]] = {"onnx": set(), "onnxruntime": set()}
    for cell in baseline.cells:
        for package in found:
            found[package].add(cell.version(package))
    return found


def _is_new(cell: Cell, packages: tuple[str, ...], ran: dict[str, set[str]]) -> bool:
    return any(cell.version(p) not in ran.get(p, set()) for p in packages)


def merged(plan: Plan, more: Plan) -> Plan:
    """`plan` with the cells of `more` added to the axes of the same names."""
    names = dict.fromkeys([*plan.axes, *more.axes])
    axes = {
        name: tuple(dict.fromkeys([*plan.axes.get(name, ()), *more.axes.get(name, ())]))
        for name in names
    }
    return Plan(tuple(dict.fromkeys([*plan.cells, *more.cells])), axes, plan.cross, plan.pairs)


def narrowed(plan: Plan, baseline: Report, following: tuple[str, ...]) -> Plan:
    """The cells of `plan` whose release of a package in `following` (or whose onnx
    preview build) the baseline never ran, each axis narrowed alike."""
    ran = _ran(baseline)
    keep = {
        c
        for c in plan.cells
        if _is_new(c, following, ran) or (c.onnx_dist != "onnx" and _is_new(c, ("onnx",), ran))
    }
    return Plan(
        tuple(c for c in plan.cells if c in keep),
        {name: tuple(c for c in cells if c in keep) for name, cells in plan.axes.items()},
        plan.cross,
        plan.pairs,
    )


def weekly_plan(request: Request, config: Config) -> Plan | None:
    """The onnx axis of onnx's newest onnx-weekly build (paired as the config pairs the
    onnx axis); None, said in one line, when the index has none for this Python."""
    from compat.workflow.plan import resolve_plan

    asked = replace(request, plan=replace(request.plan, onnx="weekly", axis="onnx", shard=None))
    try:
        whole, _ = resolve_plan(asked, config)
    except UsageError as exc:
        print(f"onnx-compat: --new-releases weekly: {exc}; the other new releases run")
        return None
    return whole


def nothing_new(source: Source, followed: dict[str, object], weekly: bool) -> str:
    """The one line of a run with no new release: what was asked, against what."""
    ranges = [
        f"{package} {spec.get('range')}"
        for package, spec in followed.items()
        if isinstance(spec, dict)
    ]
    preview = " and onnx-weekly's newest build" if weekly else ""
    if not ranges and not weekly:
        return (
            f"no new release since {source.label}: no axis follows the package index (its "
            "versions are listed), so there is none to look for; give an axis a range, like "
            '[tool.compat.onnxruntime] versions = ">=1.20", or run --new-releases weekly'
        )
    what = f" ({', '.join(ranges)})" if ranges else ""
    return (
        f"no new release since {source.label}: the package index's releases{what}{preview} "
        "are all in the baseline; nothing to run"
    )


def new_release_plan(
    request: Request,
    config: Config,
    whole: Plan,
    which: str,
    baseline: Report,
    followed: dict[str, object],
) -> tuple[Plan, Plan]:
    """(the whole plan, this process's part) narrowed to the new releases: the cells of
    the axes in `followed` (and, with `weekly`, onnx-weekly's) the baseline never ran."""
    if which == "weekly":
        weekly = weekly_plan(request, config)
        whole = merged(whole, weekly) if weekly is not None else whole
    whole = narrowed(whole, baseline, tuple(followed))
    shard = request.plan.shard
    return whole, select_shard(whole, *parse_shard(shard)) if shard else whole


def partial_changes(changes: Changes) -> Changes:
    """The comparison of a run of new releases only: what it did not plan is not gone."""
    kept = tuple(c for c in changes.changes if c.kind is not Kind.GONE)
    return replace(changes, changes=kept, gone_releases=(), gone_results=0)


def with_new_releases(report: Report, baseline: tuple[Report, Source]) -> Report:
    """`report`, a run of new releases, carrying its comparison with the baseline."""
    return attach(report, partial_changes(compare(baseline[0], report, baseline[1])))


#: The lines around the issue's body that `--issue-body -` prints after the run's summary.
ISSUE_RULE = "---- the issue's body (--issue-body -) ----"
ISSUE_END = "---- end of the issue's body ----"


def write_issue_body(report: Report | None, path: Path | None) -> None:
    """`--issue-body FILE`: changes.md's text, written when something changed since the
    baseline (`-`: printed); FILE removed otherwise, so that "it exists" is the test a
    workflow makes before it opens or updates its issue."""
    if path is None:
        return
    from compat.render.changes_page import render_changes_page

    changes = changes_of(report) if report is not None else None
    body = render_changes_page(report) if report is not None and changes else None
    if not (body and changes and changes.changes):  # new releases alone are no change
        if str(path) != "-":
            path.unlink(missing_ok=True)
        where = "printed" if str(path) == "-" else "written"
        print(f"issue body: nothing changed, none {where}", file=sys.stderr)
        return
    if str(path) == "-":  # the dry run: what the workflow would post, set off from the run
        print(f"\n{ISSUE_RULE}\n{body.rstrip()}\n{ISSUE_END}")
        return
    replace_text(path, body)
    print(f"issue body: {path} ({changes.line()})", file=sys.stderr)
