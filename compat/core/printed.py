"""The commands the reports print: `nox -s repro -- …` rebuilds a cell under its pins.

Written by the terminal, the HTML page, JUnit and the repro folders alike, so one
function spells it. A cell whose id names its Python (`py3.12-onnx…`: a plan of several
Pythons, a follow-up's `--python`) is rebuilt on that Python: the command says
`--python 3.12`, and the repro folder names the interpreter to make its venv with.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

from compat.core.axis_names import axis_row
from compat.core.outcomes import CellRecord
from compat.core.versions import exact_pin


def axis_python(cell: CellRecord) -> str:
    """`3.12` when the cell's id names its Python (`py3.12-onnx…`), else "": a cell of a
    run on one interpreter is rebuilt on the interpreter the command runs on, as ever."""
    python = cell.version("python")
    named = python and cell.id.startswith(axis_row("python").label(python) + "-")
    return python if named else ""


def repro_command(
    cell: CellRecord, cases: list[str], options: Mapping[str, Any] | None = None
) -> str:
    """`nox -s repro -- [--python 3.12] onnx==… onnxruntime==… [--cases …]`, plus the
    options the run loaded its cases with (`report.run["options"]`, see
    `compat.workflow.corpus.run_options`): the command works as printed, drop-in models
    included, on the cell's Python when its id names one."""
    pinned = [(r, exact_pin(r)) for r in cell.requirements.pins]
    weekly = [r for r, pin in pinned if pin and pin[0] == "onnx-weekly"]
    options = options or {}
    # the cell's Python when its id names it, else the one Python the run was asked for
    python = axis_python(cell) or str(options.get("python") or "")
    args = ["--python", python] if python else []
    args += [weekly[0] if weekly else f"onnx=={cell.onnx}", f"onnxruntime=={cell.onnxruntime}"]
    args += [  # the cell's other exact pins: extra axes (--pkg), fixed pins (--with)
        r for r, pin in pinned if pin and pin[0] not in ("onnx", "onnxruntime", "onnx-weekly")
    ]
    if cases:
        args += ["--cases", ",".join(cases)]
    for key in ("config", "corpus"):
        if options.get(key):
            args += [f"--{key}", str(options[key])]
    families = {case.split(".", 1)[0] for case in cases}
    for family, directory in sorted(dict(options.get("cases_dirs") or {}).items()):
        if not cases or family in families:  # only the folders the cases come from
            args += ["--cases-dir", str(directory)]
    if options.get("suite"):
        args += ["--suite", str(options["suite"])]
    if not cases or any(case.startswith("command.") for case in cases):
        for command in options.get("run") or []:
            args += ["--run", str(command)]
    if options.get("timeout") is not None:
        args += ["--timeout", f"{float(options['timeout']):g}"]
    for requirement in options.get("with") or []:  # ranges: exact pins are in the cell
        if f"{requirement}".lower() not in args:
            args += ["--with", str(requirement)]
    if options.get("install"):
        args += ["--install", str(options["install"])]
    return "nox -s repro -- " + shlex.join(args)
