"""reports/junit.xml: one testcase per cell · case · check, for CI systems to show natively.

An unexpected `fail`, `xpass` or `flaky` is a <failure>, an `error`, `crash` or `timeout` an
<error>; `skip` and known failures (`xfail`) are <skipped> with their reason. A
cell that could not be built is one <error> testcase of its own.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from compat.outcomes import CellState, Outcome
from compat.report import Report

FAILURE = {Outcome.FAIL, Outcome.XPASS, Outcome.FLAKY}
ERROR = {Outcome.ERROR, Outcome.CRASH, Outcome.TIMEOUT}
SKIPPED = {Outcome.SKIP, Outcome.XFAIL}


def render_junit(report: Report) -> str:
    suites = ET.Element("testsuites", name="onnx-compat")
    for cell in report.cells:
        results = [r for r in report.results if r.cell == cell.id]
        suite = ET.SubElement(suites, "testsuite", name=cell.id)
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        if cell.state is not CellState.READY:
            case = ET.SubElement(suite, "testcase", classname=cell.id, name="environment")
            ET.SubElement(
                case, "error", message=f"{cell.state.value}: {cell.summary}"
            ).text = cell.detail
            counts["tests"], counts["errors"] = 1, 1
        for r in results:
            case = ET.SubElement(
                suite, "testcase", classname=r.case, name=f"{r.check}[{cell.id}]",
                time=f"{r.seconds:.3f}",
            )  # fmt: skip
            counts["tests"] += 1
            message = r.summary + (f" ({r.known})" if r.known else "")
            if r.outcome in FAILURE:
                ET.SubElement(case, "failure", message=message, type=r.outcome.value).text = (
                    r.traceback or r.detail
                )
                counts["failures"] += 1
            elif r.outcome in ERROR:
                ET.SubElement(case, "error", message=message, type=r.outcome.value).text = (
                    r.traceback or r.detail
                )
                counts["errors"] += 1
            elif r.outcome in SKIPPED:
                ET.SubElement(case, "skipped", message=message)
                counts["skipped"] += 1
        for key, value in counts.items():
            suite.set(key, str(value))
    ET.indent(suites)
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
    )
