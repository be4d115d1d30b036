"""One attempt of a project's command: its log, and for a rerun, only the failing tests.

The first attempt writes the command's log anew; each rerun appends to it under a line
that says which attempt it is and what it ran, so the log a report names holds every
attempt. A pytest rerun runs only the tests the first attempt reported failing
(compat/cell/pytest_only.py, loaded by every pytest the command starts).
"""

from __future__ import annotations

import os
import shutil
import sys

#: The pytest plugin a rerun loads to run only the failing tests, by its module name.
ONLY_PLUGIN = "onnx_compat_only_failing"


class Log:
    """A command's whole output, every attempt in the one file: the first writes it anew,
    each rerun appends under a line that says which attempt it is and what it ran."""

    def __init__(self, path, command, cwd, source, task):
        self.path, self.command, self.cwd, self.source = path, command, cwd, source
        self.attempt = task.get("attempt") or 1
        self.only = task.get("only") or []

    def write(self, output, status):
        if not self.path:
            return
        where = self.cwd
        if self.source and os.path.abspath(self.source) != os.path.abspath(self.cwd):
            where += " (this cell's copy of %s's tree)" % self.source
        head = "$ %s\n# in %s, with %s\n# %s\n\n" % (self.command, where, sys.prefix, status)
        if self.attempt > 1:
            ran = "the whole command again"
            if self.only:
                tests = (
                    "%d failing tests" % len(self.only) if len(self.only) > 1 else "failing test"
                )
                ran = "only the %s attempt 1 reported" % tests
            head = "\n\n# ---- attempt %d: %s ----\n%s" % (self.attempt, ran, head)
        try:
            folder = os.path.dirname(self.path)
            if folder:
                os.makedirs(folder, exist_ok=True)
            with open(self.path, "a" if self.attempt > 1 else "w", encoding="utf-8") as f:
                f.write(head)
                f.write(output)
        except OSError:
            pass


def only_failing(env, ids, scratch):
    """Makes pytest run only the tests `ids` (a rerun's): the plugin compat/cell/
    pytest_only.py, copied into the command's own temp folder, named in PYTEST_ADDOPTS,
    with the ids in a file beside it; any pytest the command starts loads it. Returns
    the file where the plugin says which of the ids it ran (`observed`)."""
    folder = os.path.join(scratch, "onnx-compat-plugin")
    os.makedirs(folder)
    here = os.path.dirname(os.path.abspath(__file__))
    shutil.copyfile(os.path.join(here, "pytest_only.py"), os.path.join(folder, ONLY_PLUGIN + ".py"))
    listed = os.path.join(folder, "ids.txt")
    with open(listed, "w", encoding="utf-8") as f:
        f.write("".join(nodeid + "\n" for nodeid in ids))
    env["ONNX_COMPAT_ONLY"] = listed
    env["ONNX_COMPAT_CHOSEN"] = os.path.join(folder, "chosen.txt")
    env["PYTHONPATH"] = folder
    given = env.get("PYTEST_ADDOPTS", "")
    env["PYTEST_ADDOPTS"] = (given + " " if given else "") + "-p " + ONLY_PLUGIN
    return env["ONNX_COMPAT_CHOSEN"]


def observed(chosen):
    """The ids the plugin ran (`only_failing`'s file), or None when no pytest loaded it
    (the command ran no pytest, or kept PYTHONPATH from it: then it ran everything)."""
    try:
        with open(chosen, encoding="utf-8") as f:
            return sorted({line.rstrip("\n") for line in f if line.strip()})
    except OSError:
        return None
