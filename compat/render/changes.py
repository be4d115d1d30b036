"""What changed since the baseline (compat/core/changes.py), as every renderer shows it
first: a block of text for the terminal, a section for matrix.md, the page's data and
JUnit's per-testcase mark. Nothing is shown for a report without a baseline."""

from __future__ import annotations

from typing import Any

from compat.core.changes import HEADINGS, Change, Changes, Kind, changes_of
from compat.core.report import Report
from compat.render.text import md_code, md_text, one_line, printable

#: Changes of one kind listed on the terminal before "… and N more".
MAX_LISTED = 10
#: A message is cut to this many characters on the terminal.
MESSAGE = 100


def _where(change: Change) -> str:
    what = " · ".join(p for p in (change.case, change.check) if p) or "environment"
    more = len(change.cells) - 1
    return f"{what} on {change.cell}" + (
        f" and {more} more cell{'s' * (more != 1)}" if more else ""
    )


def _baseline(changes: Changes) -> str:
    source = changes.source
    said = f"{source.given} ({source.identity})" if source.identity else source.given
    return said + (f", run {source.started}" if source.started else "")


def _cut(text: str) -> str:
    text = one_line(printable(text))
    return text if len(text) <= MESSAGE else text[: MESSAGE - 1] + "…"


def _from_difference(before: str, after: str) -> tuple[str, str]:
    """Both messages from a little before where they first differ: the part a cut
    message would otherwise hide."""
    before = one_line(printable(before))
    after = one_line(printable(after))
    same = next((i for i, (b, a) in enumerate(zip(before, after, strict=False)) if b != a), 0)
    start = max(0, same - MESSAGE // 3) if max(len(before), len(after)) > MESSAGE else 0
    lead = "…" if start else ""
    return lead + before[start:], lead + after[start:]


def _terminal_lines(change: Change) -> list[str]:
    if change.kind is Kind.CHANGED:
        was, now = _from_difference(change.before, change.after)
        return [f"  {_where(change)}", f"      was: {_cut(was)}", f"      now: {_cut(now)}"]
    fixed = change.kind in (Kind.FIXED, Kind.GONE)
    said = f"was {change.before}" if fixed else change.after
    return [f"  {_where(change)}: {_cut(said)}"]


def render_changes(report: Report) -> str:
    """The terminal's block: each kind with its changes (the first MAX_LISTED), the new
    and gone releases; "" without a baseline."""
    changes = changes_of(report)
    if changes is None:
        return ""
    lines = [f"what changed since {_baseline(changes)}:"]
    for kind, heading in HEADINGS.items():
        listed = changes.of(kind)
        if kind is Kind.NEW:
            listed = [c for c in listed if not c.release]  # under their release below
        if not listed:
            continue
        lines.append(f"{heading} ({len(listed)}):")
        for change in listed[:MAX_LISTED]:
            lines += _terminal_lines(change)
        if len(listed) > MAX_LISTED:
            lines.append(f"  … and {len(listed) - MAX_LISTED} more (matrix.md lists them)")
    for release in changes.new_releases:
        failing = [c for c in changes.of(Kind.NEW) if c.release == release]
        lines.append(f"new release {release}: {len(failing)} unexpected")
        for change in failing[:MAX_LISTED]:
            lines += _terminal_lines(change)
        if len(failing) > MAX_LISTED:
            lines.append(f"  … and {len(failing) - MAX_LISTED} more (matrix.md lists them)")
    for release in changes.gone_releases:
        lines.append(f"gone release {release}: the baseline ran it, this run does not")
    if len(lines) == 1:
        lines.append("no result changed")
    return "\n".join(lines)


def closing_changes(report: Report) -> str:
    """`since v1.4.0: 3 new failures, 12 fixed, 1 changed, 2 new releases`; "" without."""
    changes = changes_of(report)
    return changes.line() if changes is not None else ""


def _md_change(change: Change) -> str:
    what = md_code(change.case or "environment") + (
        f" · {md_text(change.check)}" * bool(change.check)
    )
    where = f"{what} on " + ", ".join(md_code(cell) for cell in change.cells)
    if change.kind is Kind.CHANGED:
        return f"- {where}: was {md_text(change.before)}; now {md_text(change.after)}"
    if change.kind in (Kind.FIXED, Kind.GONE):
        return f"- {where}: was {md_text(change.before)}"
    return f"- {where}: {md_text(change.after)}"


def markdown_changes(report: Report) -> list[str]:
    """matrix.md's first section, every change listed; [] without a baseline."""
    changes = changes_of(report)
    if changes is None:
        return []
    out = [f"## What changed since {md_text(changes.source.label)}", ""]
    out += [md_text(changes.line()) + f" (baseline: {md_text(_baseline(changes))})", ""]
    for kind, heading in HEADINGS.items():
        listed = [c for c in changes.of(kind) if kind is not Kind.NEW or not c.release]
        if listed:
            out += [f"### {heading.capitalize()} ({len(listed)})", "", *map(_md_change, listed), ""]
    for release in changes.new_releases:
        failing = [c for c in changes.of(Kind.NEW) if c.release == release]
        out += [f"### New release {md_text(release)}: {len(failing)} unexpected", ""]
        out += [*map(_md_change, failing), ""] if failing else []
    for release in changes.gone_releases:
        out += [f"### Gone release {md_text(release)}", ""]
    return out


def page_changes(report: Report) -> dict[str, Any]:
    """The page's `changes`: the line, the baseline, each change (kind, cell, case,
    check, before, after, release), the new and gone releases; {} without."""
    changes = changes_of(report)
    if changes is None:
        return {}
    return {
        "line": changes.line(),
        "baseline": _baseline(changes),
        "items": [
            {
                "kind": c.kind.value,
                "cell": c.cell,
                "cells": list(c.cells),
                "case": c.case,
                "check": c.check,
                "before": c.before,
                "after": c.after,
                "release": c.release,
            }
            for c in changes.changes
        ],
        "headings": {kind.value: heading for kind, heading in HEADINGS.items()},
        "new_releases": list(changes.new_releases),
        "gone_releases": list(changes.gone_releases),
    }


def testcase_changes(report: Report) -> dict[tuple[str, str, str], Change]:
    """(cell, case, check) -> its change, for JUnit's testcase properties; {} without."""
    changes = changes_of(report)
    if changes is None:
        return {}
    return {
        (cell, c.case, c.check): c
        for c in changes.changes
        if c.kind is not Kind.GONE
        for cell in c.cells
    }
