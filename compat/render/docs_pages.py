"""docs/families/FAMILY.md: one page per family, and the words every docs page shares.

A page says what the construct is, which upstream bugs it is known to hit (linked),
which cases it holds, then per axis (onnx releases, onnxruntime releases) one heading
per check with a table: the case, its verdict first, then the marks, neighbouring
releases with identical outcomes merged into one column.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from compat.core.axis_names import axis_row, split_axis
from compat.core.case import CHECK_TITLES
from compat.core.outcomes import Outcome
from compat.core.report import Report
from compat.core.vocabulary import BROKEN, ENTRIES, NOT_APPLICABLE, NOT_RUN
from compat.render.grid import Row, Table, build_tables, collapse, link_label, text_table, variant
from compat.render.grid import verdict as row_verdict
from compat.render.load_limits import FAMILY as LIMITS
from compat.render.load_limits import LOAD_CHECKS, measured
from compat.render.text import md_anchor, md_code, md_link, md_text

#: The index page, and the folder of family pages beside it.
INDEX = "compatibility.md"
FOLDER = "families"

#: What a check that never ran shows: said in one line instead of a table.
IDLE = frozenset(
    {Outcome.SKIP.value, NOT_RUN, *(state.value for state in (*BROKEN, *NOT_APPLICABLE))}
)


def marks(ascii_marks: bool) -> dict[str, str]:
    """Every entry's mark on a docs page: its emoji, or its plain-text spelling."""
    return {key: row.ascii if ascii_marks else row.mark for key, row in ENTRIES.items()}


def shown(mark: str, ascii_marks: bool) -> str:
    """A mark inside a sentence or a legend: a plain-text one as code, so it stands out."""
    return f"`{mark}`" if ascii_marks else mark


def page_path(family: str) -> str:
    """A family page's path, relative to the index."""
    return f"{FOLDER}/{family}.md"


def escape(text: str) -> str:
    """Text safe inside a Markdown table cell, its runs of white space one space."""
    return md_text(" ".join(text.split()))


def bug_label(url: str) -> str:
    """`onnx #6697` for an issue or pull request, `onnx convert.h` for a source file,
    the address without its scheme otherwise."""
    label = link_label(url)
    if label != url:
        return label
    match = re.match(r"https?://github\.com/[^/]+/([^/]+)/blob/[^/]+/(?:.*/)?([^/]+)$", url)
    if match:
        return f"{match.group(1)} {match.group(2)}"
    return re.sub(r"^https?://(www\.)?", "", url).rstrip("/")


def bug_link(url: str) -> str:
    """A known bug as a Markdown link (an address that is not http(s) is no link)."""
    return md_link(bug_label(url), url)


def check_anchors(tables: Iterable[Table]) -> dict[tuple[str, str], str]:
    """(check, axis) -> its heading's anchor on the family page: the check's name, or
    `check-axis` for a check shown on both axes."""
    keys = list(dict.fromkeys((row.check, table.axis) for table in tables for row in table.rows))
    seen = [check for check, _ in keys]
    return {(c, a): md_anchor(c if seen.count(c) == 1 else f"{c}-{a}") for c, a in keys}


def _by_check(table: Table) -> dict[str, Table]:
    checks = list(dict.fromkeys(r.check for r in table.rows))
    return {
        check: Table(
            table.family,
            table.axis,
            table.labels,
            table.cells,
            tuple(r for r in table.rows if r.check == check),
        )
        for check in checks
    }


#: More merged columns than this and a table reads its marks as runs in one column.
MAX_COLUMNS = 5


def runs(labels: tuple[str, ...], entries: tuple[str, ...], marks: dict[str, str]) -> str:
    """A row as runs of marks: '⏭️ 1.14.1–1.15.0 · ✅ 1.16.2–1.23.2'."""
    found: list[tuple[str, list[str]]] = []
    for label, entry in zip(labels, entries, strict=True):
        if found and found[-1][0] == entry:
            found[-1][1].append(label)
        else:
            found.append((entry, [label]))
    return " · ".join(
        f"{marks[e]} {md_text(group[0] if len(group) == 1 else f'{group[0]}–{group[-1]}')}"
        for e, group in found
    )


def _check_table(part: Table, marks: dict[str, str], squash: bool) -> str:
    """The case, its verdict, then one mark per release (or per range of releases); with
    too many ranges for a page's width, the marks as runs in one column."""
    shown = collapse(part) if squash else part
    wide = squash and len(shown.labels) > MAX_COLUMNS
    rows = []
    for row, compact in zip(part.rows, shown.rows, strict=True):
        said = _verdict(part.axis, part.labels, row)
        name = md_code(variant(row.case, part.family), in_table=True)
        if wide:
            rows.append([name, said, runs(part.labels, row.entries, marks)])
        else:
            rows.append([name, said, *(marks[e] for e in compact.entries)])
    labels = ["releases"] if wide else [md_text(label) for label in shown.labels]
    return text_table(rows, ["case", "verdict", *labels])


def _verdict(axis: str, labels: tuple[str, ...], row: Row) -> str:
    """The row's verdict as Markdown: its words escaped, its bug links links. While the
    words are escaped the links are placeholders that sort as the links do."""
    urls = sorted({r.known for r in row.results if r and r.known}, key=bug_link)
    links = [bug_link(url) for url in urls]
    rank = {url: i for i, url in enumerate(urls)}

    def fill(match: re.Match[str]) -> str:
        number = int(match.group(1))
        return links[number] if number < len(links) else match.group()

    def cite(url: str) -> str:
        return f"{HOLE}{rank[url]:06d}{HOLE}"

    said = escape(row_verdict(axis, labels, row, cite=cite))
    return re.sub(f"{HOLE}(\\d+){HOLE}", fill, said)


#: Marks a link's place in a verdict while its words are escaped (a private-use
#: character: Markdown escaping leaves it alone).
HOLE = "\ue000"


def _limits(report: Report, axis: str) -> str:
    """Max IR version / opset each release really ran, from the support_limits rows."""
    rows = [
        [md_text(release), "—" if ir is None else str(ir), "—" if opset is None else str(opset)]
        for release, ir, opset in measured(report, axis)
    ]
    return text_table(rows, [split_axis(axis)[0], "max IR version", "max opset (ai.onnx)"])


def _versions(package: str, versions: str) -> str:
    if not versions:
        return f"every {package} release"
    spelled = versions.replace(">=", "≥ ").replace("<=", "≤ ").replace("<", "< ").replace(",", ", ")
    return f"{md_text(package)} {md_text(spelled)}"


def _known(report: Report, family: str) -> list[str]:
    """The family's known upstream bugs, one line each: link, where, which checks, why."""
    cases = [c for c in report.cases if c.family == family]
    found: dict[tuple[str, str, str, tuple[str, ...], str], list[str]] = {}
    for case in cases:
        for bug in case.known:
            key = (
                bug.get("link", ""),
                bug.get("package", ""),
                bug.get("versions", ""),
                tuple(bug.get("checks", ())),
                bug.get("reason", ""),
            )
            found.setdefault(key, []).append(variant(case.id, family))
    lines = []
    for (link, package, versions, checks, reason), names in found.items():
        where = _versions(package, versions)
        which = ", ".join(md_code(c) for c in checks)
        who = "every case" if len(names) == len(cases) else ", ".join(md_code(n) for n in names)
        head = bug_link(link) if link else "no public report"
        lines.append(f"- {head}: {escape(reason)} — {where}; {which}; {who}")
    return lines


def _held(table: Table) -> str:
    """'onnxruntime held at 1.24.4': what the other package is on this axis."""
    other = axis_row(table.axis).other
    if not other:
        return ""
    versions = sorted({getattr(c, other) for c in table.cells if getattr(c, other)})
    if not versions:
        return ""
    return f"{other} held at {md_text(', '.join(versions))}"


def _marks_line(used: set[str], ascii_marks: bool) -> str:
    mark = marks(ascii_marks)
    said = [
        f"{shown(mark[key], ascii_marks)} {row.meaning.split(':')[0]}"
        for key, row in ENTRIES.items()
        if key in used
    ]
    return " · ".join(said) + f" ([legend](../{INDEX}#legend))"


def family_page(report: Report, family: str, ascii_marks: bool = False, squash: bool = True) -> str:
    """One family's page: what it is, its known bugs and cases, a heading per check."""
    tables = [t for t in build_tables(report) if t.family == family]
    anchors = check_anchors(tables)
    cases = [c for c in report.cases if c.family == family]
    out = [
        f"# {md_text(family)}",
        "",
        f"[All families](../{INDEX}) · [environments](../{INDEX}#environments) · "
        "generated by onnx-compat from the stored results; do not edit.",
        "",
        md_text(report.families.get(family, "")),
        "",
    ]
    known = _known(report, family)
    if known:
        out += ["**Known upstream bugs** (link: what fails — where; checks; cases)", "", *known, ""]
    out += ["**Cases**", ""]
    out += [
        text_table(
            [[md_code(variant(c.id, family), in_table=True), escape(c.description)] for c in cases],
            ["case", "what it is"],
        ),
        "",
    ]
    used: set[str] = set()
    for table in tables:
        held = _held(table)
        package, python = split_axis(table.axis)  # `onnx@3.12`: onnx on Python 3.12
        releases = f"{package} release" + (f" on Python {python}" if python else "")
        out += [f"## {axis_row(table.axis).heading}", ""]
        out += [
            f"Each check against every {releases} of the matrix" + (f", {held}." if held else "."),
            "",
        ]
        if family == LIMITS and package in LOAD_CHECKS:
            out += [f"**What each {releases} really runs** (from the tables below)", ""]
            out += [_limits(report, table.axis), ""]
        for check, part in _by_check(table).items():
            title = CHECK_TITLES.get(check, "a check the case defines")
            out += [
                f'<a id="{anchors[(check, table.axis)]}"></a>',
                "",
                f"### {md_text(check)} — {md_text(title)}",
                "",
            ]
            entries = {e for r in part.rows for e in r.entries}
            if "skip" in entries and entries <= IDLE:  # a table of skips: one line says it
                said = {row_verdict(table.axis, table.labels, r) for r in part.rows}
                reason = said.pop() if len(said) == 1 else f"skipped on every {releases}"
                out += [f"{escape(reason[0].upper() + reason[1:])}.", ""]
                continue
            used.update(e for r in part.rows for e in r.entries)
            out += [_check_table(part, marks(ascii_marks), squash), ""]
    out += ["---", "", _marks_line(used, ascii_marks), ""]
    return "\n".join(out)


def family_pages(report: Report, ascii_marks: bool = False, squash: bool = True) -> dict[str, str]:
    """Every family's page, by file name inside the families folder."""
    families = dict.fromkeys(c.family for c in report.cases)
    return {f"{family}.md": family_page(report, family, ascii_marks, squash) for family in families}
