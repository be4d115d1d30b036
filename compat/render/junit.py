"""reports/junit.xml: one testcase per cell · case · check, for CI systems to show natively.

An unexpected `fail`, `xpass` or `flaky` is a <failure>, an `error`, `crash` or
`timeout` an <error>, each with the installed versions and the repro command; a
`skip` is <skipped type="skip">, a known failure <skipped type="pytest.xfail"> with
its bug link (as pytest writes xfail), so the two can be told apart. Each suite (a
cell) carries <properties> with its installed versions, and times. A cell that could
not be built is one <error> testcase of its own; one the index has no wheel of a
release for on its Python, one <skipped type="no-wheel"> testcase saying which.
`--junit-scope unexpected` writes only the testcases that need a look (CI UIs with
size limits). With a baseline, a testcase whose result changed since it says how in
its <properties> (`change`: new-failure, fixed, changed or new; `baseline`: what the
baseline's result said).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from compat.core.changes import Change
from compat.core.outcomes import CellRecord, CheckResult, Outcome
from compat.core.printed import repro_command
from compat.core.report import Report
from compat.core.vocabulary import BROKEN, NOT_APPLICABLE, OUTCOMES
from compat.render.changes import testcase_changes
from compat.render.text import printable


def render_junit(report: Report) -> str:
    scope = report.run.get("junit_scope", "all")
    options = report.run.get("options")
    suites = ET.Element("testsuites", name="onnx-compat")
    by_cell: dict[str, list[CheckResult]] = {}
    for r in report.results:
        by_cell.setdefault(r.cell, []).append(r)
    totals = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
    seconds = 0.0
    changed = testcase_changes(report)
    for cell in report.cells:
        results = by_cell.get(cell.id, [])
        suite = ET.SubElement(suites, "testsuite", name=cell.id)
        _properties(suite, cell)
        counts = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
        if cell.state in BROKEN:
            case = ET.SubElement(suite, "testcase", classname=cell.id, name="environment")
            _changed(case, changed.get((cell.id, "", "")))
            ET.SubElement(
                case, "error", message=f"{cell.state.value}: {cell.summary}"
            ).text = f"{cell.detail}\n\nreproduce: {repro_command(cell, [], options)}"
            counts["tests"] = 1
            counts["errors"] = 1
        elif cell.state in NOT_APPLICABLE and scope != "unexpected":  # skipped, with why
            case = ET.SubElement(suite, "testcase", classname=cell.id, name="environment")
            reason = f"{cell.state.value}: {cell.summary}"
            ET.SubElement(case, "skipped", type=cell.state.value, message=reason)
            counts["tests"] = 1
            counts["skipped"] = 1
        for r in results:
            if scope == "unexpected" and not r.outcome.unexpected:
                continue
            case = ET.SubElement(
                suite,
                "testcase",
                classname=r.case,
                name=f"{r.check}[{cell.id}]",
                time=f"{r.seconds:.3f}",
            )
            _changed(case, changed.get((cell.id, r.case, r.check)))
            counts["tests"] += 1
            message = r.summary + (f" ({r.known})" if r.known else "")
            kind = OUTCOMES[r.outcome].junit
            if kind in ("failure", "error"):
                ET.SubElement(case, kind, message=message, type=r.outcome.value).text = _explained(
                    r, cell, repro_command(cell, [r.case], options)
                )
                counts["failures" if kind == "failure" else "errors"] += 1
            elif kind == "skipped":  # a known failure as pytest writes an xfail
                said = "pytest.xfail" if r.outcome is Outcome.XFAIL else "skip"
                ET.SubElement(case, kind, type=said, message=message)
                counts["skipped"] += 1
        cell_seconds = sum(r.seconds for r in results)
        seconds += cell_seconds
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
        suite.set("time", f"{cell_seconds:.3f}")
    for key, value in totals.items():
        suites.set(key, str(value))
    suites.set("time", f"{seconds:.3f}")
    _printable(suites)
    ET.indent(suites)
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
    )


def _changed(case: ET.Element, change: Change | None) -> None:
    """A testcase's change since the baseline, as properties (as pytest writes a
    testcase's recorded properties)."""
    if change is not None:
        properties = ET.SubElement(case, "properties")
        ET.SubElement(properties, "property", name="change", value=change.kind.value)
        if change.before:
            ET.SubElement(properties, "property", name="baseline", value=change.before)


def _printable(root: ET.Element) -> None:
    """Every name, message and output as text XML can hold: a command that printed
    binary or terminal escapes leaves the file well-formed."""
    for element in root.iter():
        if element.text:
            element.text = printable(element.text)
        for key, value in element.attrib.items():
            element.set(key, printable(value))


def _properties(suite: ET.Element, cell: CellRecord) -> None:
    properties = ET.SubElement(suite, "properties")
    for name, version in sorted(cell.packages.items()):
        ET.SubElement(properties, "property", name=name, value=version)
    for name, value in (("python", cell.python), ("platform", cell.platform)):
        if value:
            ET.SubElement(properties, "property", name=name, value=value)
    ET.SubElement(properties, "property", name="requirements", value=cell.requirements.shown())


def _explained(result: CheckResult, cell: CellRecord, command: str) -> str:
    installed = ", ".join(f"{n} {v}" for n, v in sorted(cell.packages.items()))
    lines = [result.detail, "", f"installed: {installed}", f"reproduce: {command}"]
    if result.log:  # a command's whole output, beside junit.xml
        lines.insert(1, f"whole output: {result.log}")
    if result.traceback:
        lines += ["", result.traceback]
    return "\n".join(lines)
