"""changes.md: what a run gained and lost since its baseline (compat/core/changes.py),
as a page for the docs and as the body of the weekly watch's issue (`matrix
--issue-body FILE` writes this same text).

First the line and the baseline; then one table row per family, and per command for
your own commands (`command.NAME`), of what was lost (new failures, and unexpected
results where the baseline has none), gained (fixed) and changed; then each new
release with its unexpected results, and each kind of change grouped by family. Every
lost or changed result has its repro command; a case's known upstream bug for the check
(the corpus's KnownFailure entries) is linked. None without a baseline.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compat.core.changes import HEADINGS, Change, Changes, Kind, changes_of
from compat.core.outcomes import CellRecord
from compat.core.printed import repro_command
from compat.core.report import CaseInfo, Report
from compat.render.release_diff import Moved, ReleaseDiff, release_diff
from compat.render.text import md_code, md_link, md_text, one_line

#: A message on the page is cut to this many characters.
MESSAGE = 300
#: What a kind counts as in the families table.
LOST = (Kind.NEW_FAILURE, Kind.NEW)
GAINED = (Kind.FIXED,)
#: Where a change of no case (a broken cell) is counted.
ENVIRONMENT = "environment"


def _cut(text: str) -> str:
    text = one_line(text)
    return text if len(text) <= MESSAGE else text[: MESSAGE - 1] + "…"


def group_of(change: Change, cases: Mapping[str, CaseInfo]) -> str:
    """The row a change counts in: its family, each of your commands its own row."""
    if not change.case:
        return ENVIRONMENT
    if change.case.startswith("command."):
        return change.case
    info = cases.get(change.case)
    return info.family if info is not None else change.case.split(".", 1)[0]


def upstream(change: Change, cases: Mapping[str, CaseInfo]) -> list[tuple[str, str]]:
    """(range, link) of each known upstream bug of the change's case and check."""
    info = cases.get(change.case)
    found: dict[str, str] = {}
    for bug in info.known if info is not None else ():
        checks = bug.get("checks") or ()
        if (not checks or change.check in checks) and bug.get("link"):
            package = bug.get("package", "")
            versions = bug.get("versions", "")
            found.setdefault(str(bug["link"]), f"{package} {versions}".strip())
    return [(said, link) for link, said in found.items()]


def _said(change: Change) -> str:
    if change.kind is Kind.CHANGED:
        return f"was {md_text(_cut(change.before))}; now {md_text(_cut(change.after))}"
    if change.kind in (Kind.FIXED, Kind.GONE):
        return f"was {md_text(_cut(change.before))}"
    return md_text(_cut(change.after))


def _item(
    change: Change,
    cases: Mapping[str, CaseInfo],
    cells: Mapping[str, CellRecord],
    options: Mapping[str, Any],
) -> list[str]:
    what = md_code(change.case or ENVIRONMENT) + (
        f" · {md_text(change.check)}" * bool(change.check)
    )
    more = len(change.cells) - 1
    also = f" and {more} more cell{'s' * (more != 1)}" if more else ""
    lines = [f"- {what} on {md_code(change.cell)}{also}: {_said(change)}"]
    for said, link in upstream(change, cases):
        label = f"known upstream bug ({said})" if said else "known upstream bug"
        lines.append(f"    - {md_link(label, link)}")
    cell = cells.get(change.cell)
    if cell is not None and change.kind not in (Kind.FIXED, Kind.GONE):
        command = repro_command(cell, [change.case] * bool(change.case), options)
        lines.append(f"    - repro: {md_code(command)}")
    return lines


def _table(changes: Changes, cases: Mapping[str, CaseInfo]) -> list[str]:
    counted: dict[str, list[int]] = {}
    for change in changes.changes:
        if change.kind is Kind.GONE:
            continue
        row = counted.setdefault(group_of(change, cases), [0, 0, 0])
        row[0 if change.kind in LOST else 1 if change.kind in GAINED else 2] += 1
    if not counted:
        return []
    out = ["| family or command | lost | gained | changed |", "|---|---:|---:|---:|"]
    for name in sorted(counted):
        lost, gained, changed = counted[name]
        out.append(f"| {md_code(name, in_table=True)} | {lost} | {gained} | {changed} |")
    return [*out, ""]


def _moved(moved: Moved, cases: Mapping[str, CaseInfo], lost: bool) -> list[str]:
    result = moved.after if lost else moved.before
    what = f"{md_code(moved.case)} · {md_text(moved.check)}"
    said = md_text(_cut(result.summary))
    text = said if lost else f"now {moved.after.outcome.value}, was {said}"
    lines = [f"- {what}: {text}"]
    known = dict.fromkeys([result.known] if result.known else [])
    probe = Change(Kind.NEW, moved.case, moved.check, (), ())
    known.update(dict.fromkeys(link for _, link in upstream(probe, cases)))
    lines += [f"    - {md_link('known upstream bug', link)}" for link in known]
    return lines


def _range(diff: ReleaseDiff, cases: Mapping[str, CaseInfo]) -> list[str]:
    """What the release lost and gained against the release before it, per family."""
    head = (
        f"Against {md_text(diff.previous)} ({md_code(diff.previous_cell)}), of "
        f"{diff.compared} results both have: {len(diff.lost)} lost (worked there, broken "
        f"here, a known upstream bug's failure included), {len(diff.gained)} gained."
    )
    out = [head, ""]
    for moved_list, word in ((diff.lost, "Lost"), (diff.gained, "Gained")):
        groups = sorted({_group(m.case, cases) for m in moved_list})
        for group in groups:
            out += [f"#### {word} in {md_code(group)}", ""]
            for moved in (m for m in moved_list if _group(m.case, cases) == group):
                out += _moved(moved, cases, word == "Lost")
            out.append("")
    return out


def _group(case: str, cases: Mapping[str, CaseInfo]) -> str:
    return group_of(Change(Kind.NEW, case, "", (), ()), cases)


def _baseline(changes: Changes) -> str:
    source = changes.source
    said = md_code(source.given) + (f" ({md_text(source.identity)})" if source.identity else "")
    said += f", run {md_text(source.started)}" if source.started else ""
    return said + (f" of commit {md_code(source.commit)}" if source.commit else "")


def render_changes_page(report: Report) -> str | None:
    """changes.md's text; None for a report without a baseline."""
    changes = changes_of(report)
    if changes is None:
        return None
    cases = {c.id: c for c in report.cases}
    cells = {c.id: c for c in report.cells}
    options: Mapping[str, Any] = report.run.get("options") or {}
    out = [
        f"# What changed since {md_text(changes.source.label)}",
        "",
        md_text(changes.line()) + ".",
        "",
        f"Baseline: {_baseline(changes)}.",
        "",
        *_table(changes, cases),
    ]

    def listed(heading: str, items: list[Change]) -> list[str]:
        lines = [f"## {heading}", ""]
        for group in sorted({group_of(c, cases) for c in items}):
            lines += [f"### {md_code(group)}", ""] if len(items) > 1 else []
            for change in (c for c in items if group_of(c, cases) == group):
                lines += _item(change, cases, cells, options)
            lines.append("")
        return lines

    for release in changes.new_releases:
        failing = [c for c in changes.of(Kind.NEW) if c.release == release]
        said = f"{len(failing)} unexpected" if failing else "nothing unexpected"
        out += listed(f"New release {md_text(release)}: {said}", failing)
        diff = release_diff(report, release, changes.new_releases)
        out += _range(diff, cases) if diff is not None else []
    for kind, heading in HEADINGS.items():
        items = [c for c in changes.of(kind) if kind is not Kind.NEW or not c.release]
        if items:
            out += listed(f"{heading.capitalize()} ({len(items)})", items)
    for release in changes.gone_releases:
        out += [
            f"## Gone release {md_text(release)}",
            "",
            "The baseline ran it; this run does not.",
            "",
        ]
    if not changes.changes and not changes.new_releases and not changes.gone_releases:
        out += ["No result changed.", ""]
    return "\n".join(out).rstrip("\n") + "\n"
