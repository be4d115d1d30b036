"""What each release loads, as a stored run measured it.

The support_limits family stamps one Add(x, x) per IR version and per opset; on each
release of an axis, the largest IR version (opset) whose case passed the release's load
check (onnx: the checker, onnxruntime: ort_run) is what it reads. The support_limits
page shows it, and `nox -s report` writes it where `[tool.compat.docs] load-limits`
says (compat/resources/load_limits.json), which `compat.scan` reads to name the
releases of a target range that cannot load a model.
"""

from __future__ import annotations

import json

from compat import resources
from compat.core.axis_names import split_axis
from compat.core.outcomes import Outcome
from compat.core.report import Report

FAMILY = "support_limits"
#: the file's name (the renderer's, in compat/render/outputs.py)
LOAD_LIMITS = resources.LOAD_LIMITS.name
#: the check whose pass says "this release read the model", per package
LOAD_CHECKS = {"onnx": "checker", "onnxruntime": "ort_run"}
KINDS = ("ir", "opset")

#: a release, and the largest IR version and opset it read (None: no case passed)
Limit = tuple[str, int | None, int | None]


def measured(report: Report, axis: str) -> list[Limit]:
    """Each release of `axis` (`onnx`, `onnxruntime@3.12`...) with what it read, in the
    axis's order."""
    check = LOAD_CHECKS[split_axis(axis)[0]]
    passed = {
        (r.cell, r.case)
        for r in report.results
        if r.check == check and r.outcome is Outcome.PASS and r.case.startswith(f"{FAMILY}.")
    }
    cells = {c.id: c for c in report.cells}
    limits: list[Limit] = []
    for cell_id in report.axes.get(axis, ()):
        best: dict[str, int | None] = {}
        for kind in KINDS:
            prefix = f"{FAMILY}.{kind}"
            numbers = [
                int(case[len(prefix) :])
                for cell, case in passed
                if cell == cell_id and case.startswith(prefix) and case[len(prefix) :].isdigit()
            ]
            best[kind] = max(numbers) if numbers else None
        limits.append((cells[cell_id].version(axis), best["ir"], best["opset"]))
    return limits


def render_load_limits(report: Report) -> str | None:
    """The measured limits of the run's onnx and onnxruntime axes as JSON (the shape
    compat/corpus/load_limits.py reads), or None when the run has no support_limits
    case."""
    if not any(c.family == FAMILY for c in report.cases):
        return None
    about = (
        "what each release reads, measured by the support_limits family of a stored run; "
        "written by `nox -s report`, do not edit"
    )
    document = {"about": about, "run": report.run.get("started", "")}
    text = json.dumps(document, indent=1)[:-2] + ","  # its last "}" follows the axes
    axes = []
    for package in LOAD_CHECKS:  # a release to a line: a diff shows what moved
        rows = ",\n".join(
            "  " + json.dumps({"release": release, "ir": ir, "opset": opset})
            for release, ir, opset in measured(report, package)
            if ir is not None and opset is not None
        )
        axes.append(f' "{package}": [\n{rows}\n ]')
    return text + "\n" + ",\n".join(axes) + "\n}\n"
