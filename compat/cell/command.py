"""The user's own command as a check (`--run 'pytest tests/test_export.py'`).

The command runs through the shell with the cell's environment active (its `bin/`
first on PATH, VIRTUAL_ENV set, no PYTHONPATH of ours) and the project root as the
working directory: exit 0 is a pass, any other exit a fail, death by a signal a crash;
the host's timeout applies (the worker and the command die together). The tail of
what it printed is the detail.
"""

from __future__ import annotations

import os
import subprocess
import sys

from compat.cell.verdict import Verdict, bounded, fail

#: Lines of the command's output a result keeps.
TAIL_LINES = 15


def environment():
    """os.environ with this cell's environment activated."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # the staged onnx-compat code is ours, not the project's
    env.pop("PYTHONHOME", None)
    env["VIRTUAL_ENV"] = sys.prefix
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return env


def tail(output):
    lines = [line.rstrip() for line in output.splitlines() if line.strip()]
    return bounded(" | ".join(lines[-TAIL_LINES:]), 1500)


def check_command(case):
    """Runs the case's command; its exit status is the verdict."""
    spec = case.spec["command"]
    done = subprocess.run(
        spec["command"],
        shell=True,
        cwd=spec["cwd"],
        env=environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        check=False,
    )
    output = tail(done.stdout.decode("utf-8", "replace"))
    if done.returncode < 0:
        raise Verdict("crash", "command", "killed by signal %d: %s" % (-done.returncode, output))
    if done.returncode != 0:
        raise fail("command", "exit %d: %s" % (done.returncode, output))
    return "exit 0" + (": " + output if output else "")
