"""The docs as pages: an index (compatibility.md) with the summary, and one page per
family (families/FAMILY.md) with a heading per check, every bug linked, skips said as
skips, kept in sync by `report --check` page by page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from compat.cli.main import main
from compat.core.case import CHECK_TITLES
from compat.core.outcomes import CellRecord, CellState, CheckResult, Outcome
from compat.core.report import CaseInfo, Report, write_json
from compat.render.docs import render_docs
from compat.render.docs_pages import MAX_COLUMNS, check_anchors, family_page, family_pages
from compat.render.grid import Row, build_tables, verdict
from compat.render.outputs import DOCS, Style, render_files
from tests.helpers import ONNX, ORT
from tests.test_report import check_golden, sample_report

CHECKS = {
    "checker": "onnx",
    "shape_inference": "onnx",
    "reference": "onnx",
    "annotations_builtin": "onnx",
    "annotations": "both",
    "ort_run": "onnxruntime",
    "ort_optimized": "onnxruntime",
}
ISSUE = "https://github.com/onnx/onnx/issues/{}"


def default_matrix(families: int = 21, cases: int = 6) -> Report:
    """The default matrix's shape: 10 onnx and 18 onnxruntime releases (one cell on both
    axes), families with known bugs fixed at different releases, a check that runs only
    on the newest onnx, one that never applies, and one release that did not install."""
    onnx_axis = [CellRecord(f"onnx{v}-ort1.24.4", v, "1.24.4", CellState.READY) for v in ONNX]
    ort_axis = [
        onnx_axis[-1]
        if v == "1.24.4"
        else CellRecord(
            f"onnx1.23.2-ort{v}",
            "1.23.2",
            v,
            CellState.INSTALL_ERROR if v == "1.16.3" else CellState.READY,
        )
        for v in ORT
    ]
    cells = [*onnx_axis, *(c for c in ort_axis if c not in onnx_axis)]
    infos, results = [], []
    for f in range(families):
        family = f"family_{f:02d}"
        for c in range(cases):
            case = f"{family}.variant_{c}.{'rare' if c % 2 else 'common'}"
            fixed = ONNX[f % 9 + 1]
            bug = {
                "package": "onnx",
                "versions": f"<{fixed}",
                "link": ISSUE.format(f),
                "checks": ["reference"],
                "reason": f"reason {f}",
            }
            infos.append(
                CaseInfo(case, family, f"the form number {c}", "0", CHECKS, (bug,) if c % 2 else ())
            )
            for cell in cells:
                if cell.state is not CellState.READY:
                    continue
                axes = {"onnx"} if cell in onnx_axis else set()
                axes |= {"onnxruntime"} if cell in ort_axis else set()
                for check, axis in CHECKS.items():
                    if axis not in axes and axis != "both":
                        continue
                    outcome, detail, known = Outcome.PASS, "", ""
                    if check == "reference" and c % 2 and ONNX.index(cell.onnx) < ONNX.index(fixed):
                        outcome, known = Outcome.XFAIL, ISSUE.format(f)
                    elif check == "annotations_builtin" and cell.onnx != "1.23.2":
                        outcome, detail = Outcome.SKIP, f"onnx {cell.onnx} has no checker"
                    elif check == "ort_optimized":
                        outcome, detail = Outcome.SKIP, "case declares no optimized structure"
                    results.append(CheckResult(cell.id, case, check, outcome, detail, known=known))
    return Report(
        tuple(cells),
        tuple(infos),
        tuple(results),
        {"onnx": tuple(c.id for c in onnx_axis), "onnxruntime": tuple(c.id for c in ort_axis)},
        {f"family_{f:02d}": f"What family {f} is." for f in range(families)},
    )


def without_links(text: str) -> str:
    """The text a reader sees outside Markdown links and images."""
    return re.sub(r"!?\[[^\]]*\]\([^)]*\)", "", text)


def test_a_family_page_matches_the_snapshot() -> None:
    check_golden("families-pads.md", family_page(sample_report(), "pads"))
    check_golden("families-pads-ascii.md", family_page(sample_report(), "pads", ascii_marks=True))


def test_the_index_of_the_default_matrix_is_small_and_links_every_family() -> None:
    report = default_matrix()
    index = render_docs(report)
    assert len(index.encode()) < 30_000
    assert "![" in index and "](summary.svg)" in index
    for family in report.families:
        assert f"[{family}](families/{family}.md)" in index
    since = index[index.index("## Since when it works") : index.index("## Families")]
    # family_03's reference fails (known) on 1.14.1–1.17.0 and works from 1.18.0
    line = next(x for x in since.splitlines() if "family_03.md#reference" in x)
    assert (
        "| onnx | ≥ 1.18.0 | 1.14.1–1.17.0 | [onnx #3](https://github.com/onnx/onnx/issues/3) |"
        in line
    )


def test_every_family_page_has_a_linkable_heading_per_check() -> None:
    report = default_matrix(families=3)
    pages = family_pages(report)
    assert set(pages) == {"family_00.md", "family_01.md", "family_02.md"}
    for name, page in pages.items():
        family = name.removesuffix(".md")
        tables = [t for t in build_tables(report) if t.family == family]
        anchors = check_anchors(tables)
        wanted = [(row.check, t.axis) for t in tables for row in t.rows]
        headings = re.findall(r'<a id="([^"]+)"></a>\n\n### (\S+) — (.+)', page)
        assert [(a, c) for a, c, _ in headings] == [
            (anchors[key], key[0]) for key in dict.fromkeys(wanted)
        ]
        assert len({a for a, _, _ in headings}) == len(headings)  # anchors are unique
        assert all(title == CHECK_TITLES[check] for _, check, title in headings)
        assert {"annotations-onnx", "annotations-onnxruntime"} <= {a for a, _, _ in headings}
        # a check that never applies still has its heading, and says why in one line
        assert "### ort_optimized" in page
        assert (
            "Skipped on every onnxruntime release: case declares no optimized structure; "
            "1.16.3 could not be installed or imported." in page
        )


def test_every_bug_reference_is_a_link() -> None:
    report = default_matrix(families=4)
    for text in [render_docs(report), *family_pages(report).values()]:
        assert "onnx #" in text
        seen = without_links(text)
        assert not re.search(r"#\d", seen), "a bug number outside a link"
        assert "http" not in seen, "an address outside a link"


def columns(page: str, heading: str) -> list[list[str]]:
    """The cells of the table under a heading, header first, the separator left out."""
    part = page[page.index(heading) :].split("\n\n")[1]
    lines = [line for line in part.splitlines() if not line.startswith("|-")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]


def test_tables_stay_narrow_verdict_first_then_merged_releases() -> None:
    report = default_matrix(families=3)
    for page in family_pages(report).values():
        for header in re.findall(r"^\| case +\| verdict .*$", page, flags=re.MULTILINE):
            assert len(header.strip("|").split("|")) - 2 <= MAX_COLUMNS
    table = columns(family_page(report, "family_02"), "### reference")
    assert table[0] == ["case", "verdict", "1.14.1–1.16.2", "1.17.0–1.23.2"]
    assert table[2] == [
        "`variant_1.rare`",
        "works on onnx ≥ 1.17.0; broken on 1.14.1–1.16.2 "
        "([onnx #2](https://github.com/onnx/onnx/issues/2))",
        "🐞",
        "✅",
    ]


def test_rows_changing_at_many_releases_read_their_marks_as_runs() -> None:
    """support_limits' shape: each row starts to run one release later than the last."""
    cells = tuple(CellRecord(f"onnx{v}-ort1.24.4", v, "1.24.4", CellState.READY) for v in ONNX)
    cases = tuple(
        CaseInfo(f"limits.ir{i}", "limits", f"IR {i}", "0", {"checker": "onnx"})
        for i in range(len(ONNX))
    )
    results = tuple(
        CheckResult(
            cell.id,
            case.id,
            "checker",
            Outcome.SKIP if k < i else Outcome.PASS,
            f"IR {i} > max of onnx {cell.onnx}" if k < i else "",
        )
        for i, case in enumerate(cases)
        for k, cell in enumerate(cells)
    )
    report = Report(cells, cases, results, {"onnx": tuple(c.id for c in cells)})
    table = columns(family_page(report, "limits"), "### checker")
    assert table[0] == ["case", "verdict", "releases"]
    assert table[4] == [
        "`ir3`",
        "works on onnx ≥ 1.17.0; skipped before: IR 3 > max of onnx 1.14.1–1.16.2",
        "⏭️ 1.14.1–1.16.2 · ✅ 1.17.0–1.23.2",
    ]
    assert (
        len(
            family_page(report, "limits", squash=False)
            .split("### checker")[1]
            .splitlines()[2]
            .split("|")
        )
        == len(ONNX) + 4
    )  # unmerged: a column each


@pytest.mark.parametrize(
    ("entries", "details", "said"),
    [
        (
            ("skip",) * 9 + ("pass",),
            "onnx {} has no annotation checker",
            "runs only on onnx 1.23.2, and works; skipped before: "
            "onnx 1.14.1–1.22.0 has no annotation checker",
        ),
        (
            ("skip",) * 4 + ("pass",) * 6,
            "IR version 11 > max 10 of onnx {}",
            "works on onnx ≥ 1.18.0; skipped before: IR version 11 > max 10 of onnx 1.14.1–1.17.0",
        ),
        (
            ("skip",) * 2 + ("xfail",) * 3 + ("pass",) * 5,
            "too new for {}",
            "works on onnx ≥ 1.19.1; broken on 1.16.2–1.18.0 (onnx #1); "
            "skipped before: too new for 1.14.1–1.15.0",
        ),
        (
            ("pass",) * 8 + ("skip",) * 2,
            "dropped in {}",
            "works on onnx ≤ 1.21.0; skipped after: dropped in 1.22.0–1.23.2",
        ),
        (("skip",) * 10, "not for {}", "skipped on every onnx release: not for 1.14.1–1.23.2"),
        (("pass",) * 10, "", "works on every tested onnx release (1.14.1–1.23.2)"),
    ],
)
def test_skips_are_said_as_skips(entries: tuple[str, ...], details: str, said: str) -> None:
    results = tuple(
        CheckResult(
            "c",
            "f.a",
            "checker",
            Outcome(e),
            details.format(label) if e == "skip" else "",
            known="https://github.com/onnx/onnx/issues/1" if e == "xfail" else "",
        )
        for label, e in zip(ONNX, entries, strict=True)
    )
    assert verdict("onnx", ONNX, Row("f.a", "checker", entries, results)) == said


def test_different_skip_reasons_give_the_one_next_to_the_releases_that_ran() -> None:
    entries = ("skip",) * 3 + ("pass",) * 7
    results = tuple(
        CheckResult("c", "f.a", "checker", Outcome(e), f"IR 11 > max {9 + i // 2} of onnx {v}")
        for i, (v, e) in enumerate(zip(ONNX, entries, strict=True))
    )
    assert verdict("onnx", ONNX, Row("f.a", "checker", entries, results)) == (
        "works on onnx ≥ 1.17.0; skipped before: IR 11 > max 10 of onnx 1.16.2"
    )


def test_report_check_covers_every_page_and_the_picture(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_json(sample_report(), tmp_path / "matrix.json")
    args = ["report", "--results", str(tmp_path / "matrix.json"), "--out", str(tmp_path)]
    assert main(args) == 0
    assert (tmp_path / "families" / "pads.md").exists() and (tmp_path / "summary.svg").exists()
    assert not (tmp_path / "scoreboard.svg").exists()  # no backend tests: nothing to draw
    assert main([*args, "--check"]) == 0

    page = tmp_path / "families" / "pads.md"
    page.write_text(page.read_text().replace("### checker", "### Checker"))
    capsys.readouterr()
    assert main([*args, "--check"]) == 1
    out = capsys.readouterr().out
    assert f"{page} (committed)" in out and "-### Checker" in out and "+### checker" in out

    assert main(args) == 0
    (tmp_path / "summary.svg").unlink()
    stale = tmp_path / "families" / "gone.md"
    stale.write_text("# a family no longer in the results\n")
    capsys.readouterr()
    assert main([*args, "--check"]) == 1
    out = capsys.readouterr().out
    assert f"{tmp_path / 'summary.svg'} (committed)" in out
    assert f"{stale} (committed)" in out and "-# a family no longer in the results" in out
    assert "2 file(s) drifted" in out

    assert main(args) == 0  # rendering writes the picture again and removes the stale page
    assert not stale.exists() and (tmp_path / "summary.svg").exists()
    assert main([*args, "--check"]) == 0


def test_the_docs_render_the_same_bytes_every_time(tmp_path: Path) -> None:
    report = default_matrix(families=2)
    first = render_files(report, tmp_path / "a", Style(), DOCS)
    second = render_files(report, tmp_path / "b", Style(), DOCS)
    assert [p.relative_to(tmp_path / "a") for p in first] == [
        p.relative_to(tmp_path / "b") for p in second
    ]
    assert all(a.read_bytes() == b.read_bytes() for a, b in zip(first, second, strict=True))
    assert {p.name for p in first} == {
        "compatibility.md",
        "family_00.md",
        "family_01.md",
        "summary.svg",
    }
