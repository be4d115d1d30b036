"""The one Python a follow-up runs on (repro, bisect, triage): `--python 3.12`, else the
config's `[tool.compat.python]` when it names one, else the interpreter onnx-compat runs
on (or `--python PATH`'s), as before the Python axis existed.

A follow-up rebuilds cells one release at a time and compares them, so it runs on one
Python, never a comparison across interpreters that would look like a change of release.
Several on the command line (`--python 3.10,3.12`) are one line asking which; a config's
axis of several (what `init` writes) chooses one itself and says which: the one the
matrix runs every release on (compat/plan/pairs.py main_python: the one with wheels for
the most releases; of equals, the Python onnx-compat runs on, else the newest).
"""

from __future__ import annotations

import sys
from dataclasses import replace

from compat.core.errors import UsageError
from compat.plan.config import Config
from compat.plan.matrix import Cell, Plan
from compat.plan.pairs import main_python
from compat.workflow.plan import plan_pythons
from compat.workflow.request import Request


def follow_up_python(request: Request, config: Config, command: str) -> str:
    """`3.12`, or "" for the run's own interpreter. Its interpreter is found now (a
    missing one is one line, compat/plan/pythons.py); `command` names the follow-up in
    the error for several."""
    given = request.setup.python
    pythons = plan_pythons(request, config)  # () for `--python PATH`: that interpreter
    if len(pythons) > 1 and given:
        raise UsageError(
            f"--python {given}: {command} runs on one Python ({', '.join(pythons)} given); "
            f"choose one, like --python {pythons[-1]}"
        )
    if len(pythons) > 1:
        running = f"{sys.version_info.major}.{sys.version_info.minor}"
        chosen = main_python(
            config, pythons, config.onnx.versions, config.onnxruntime.versions, running
        )
        axis = ", ".join(pythons)
        print(
            f"{command}: on Python {chosen}, the one of [tool.compat.python]'s {axis} that "
            "runs every release",
            end="",
        )
        print(" (--python X.Y for another)")
        return chosen
    return pythons[0] if pythons else ""


def given_python(request: Request) -> bool:
    """Whether `--python` names versions on this command line (a repro's cell id then
    names its Python, as the cell it reproduces did)."""
    return bool(request.setup.python)


def name_python(plan: Plan) -> Plan:
    """The plan with every cell's id naming its Python (`py3.12-onnx…`): a triage's
    cells, report and repro folders then say which interpreter they ran on. A plan on
    the run's own interpreter is returned as it is."""
    if not any(c.python for c in plan.cells):
        return plan

    def named(cell: Cell) -> Cell:
        return replace(cell, show_python=bool(cell.python))

    axes = {name: tuple(named(c) for c in cells) for name, cells in plan.axes.items()}
    return Plan(tuple(named(c) for c in plan.cells), axes, plan.cross, plan.pairs)
