"""The user's own command as a check (`--run 'pytest tests/test_export.py'`).

The command runs through the shell with the cell's environment and nothing else: its
`bin/` first on PATH, VIRTUAL_ENV set to it, and every other Python environment on
PATH (the host's venv, nox's, pyenv's shims, conda's) taken off, with no user
site-packages and a TMPDIR of its own. It runs in the folder the host gives (the
cell's own copy of the project's tree, compat/execute/tree.py), else the project root.
A program that is not in the cell — pytest not installed there — is an `error` that
says so and how to fix it, never a run of another environment's copy that could pass
for the cell.

Exit 0 is a pass, any other exit a fail, death by a signal a crash; the command has its
own timeout (`command-timeout`), after which it and everything it started is killed,
daemons included (compat/cell/contain.py), as they are when it ends, and when the
worker is stopped or its host dies. The detail is a summary of what it printed
(compat/cell/outputs.py: a test runner's counts and failing ids, read from the output's
head and tail), the record also names the runner and every failing test id; the output
streams to the log file the host asks for, up to a cap (compat/cell/attempt.py), each
attempt after the first (a rerun: `attempt`, with `only` the failing tests, for pytest)
appended to it.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import sys
import tempfile

from compat.cell import contain
from compat.cell.attempt import Log, observed, only_failing, size
from compat.cell.outputs import failing_ids, runner, summarize
from compat.cell.verdict import Verdict, fail

#: Exit status of a shell that could not find the program.
NOT_FOUND = 127
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
#: Words that run the next word as the command.
_PREFIXES = {"exec", "command", "env", "nice", "time", "nohup", "xvfb-run"}
#: What points a process at another Python environment than the cell's.
OTHER_ENVIRONMENT_VARIABLES = (
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONUSERBASE",
    "CONDA_PREFIX",
    "CONDA_DEFAULT_ENV",
    "PYENV_VERSION",
    "PYENV_VIRTUAL_ENV",
    "__PYVENV_LAUNCHER__",
    # nox's and uv's own: a `uv` the command runs must act on the cell, not on them
    "UV_PYTHON",
    "UV_PROJECT_ENVIRONMENT",
    "UV_SYSTEM_PYTHON",
    "NOX_CURRENT_SESSION",
)


def other_environment(directory):
    """Whether a PATH entry belongs to another Python environment (a venv, conda, pyenv)."""
    parent = os.path.dirname(os.path.abspath(directory))
    return (
        os.path.isfile(os.path.join(parent, "pyvenv.cfg"))
        or os.path.isdir(os.path.join(parent, "conda-meta"))
        or os.path.isfile(os.path.join(directory, "activate"))
        or "/.pyenv/" in directory.replace(os.sep, "/") + "/"
    )


def environment(base=None):
    """`base` (os.environ) with this cell's environment activated and others removed."""
    env = dict(os.environ if base is None else base)
    for name in OTHER_ENVIRONMENT_VARIABLES:
        env.pop(name, None)
    here = os.path.dirname(sys.executable)
    rest = [
        d
        for d in env.get("PATH", "").split(os.pathsep)
        if d and os.path.abspath(d) != here and not other_environment(d)
    ]
    env["VIRTUAL_ENV"] = sys.prefix
    env["PATH"] = os.pathsep.join([here, *rest])
    env["PYTHONNOUSERSITE"] = "1"  # ~/.local's packages are not the cell's
    # not a terminal: a wide one, so pytest's summary lines keep their messages whole
    env.setdefault("COLUMNS", "200")
    return env


def program(command):
    """The first program a shell command runs (`A=1 pytest -q` -> "pytest"), or None when
    it does not start with a plain word (a subshell, a loop)."""
    try:
        words = shlex.split(command, posix=True)
    except ValueError:
        return None
    for word in words:
        if _ASSIGNMENT.match(word) or word in _PREFIXES or word.startswith("-"):
            continue
        if re.search(r"[;&|()<>`$]", word):
            return None
        return word
    return None


def _fix(name):
    return 'add it to [tool.compat] requires = ["%s"] (or to a group there: groups = [...])' % (
        name
    )


def _python_script(path):
    """Whether `path` is a Python console script (its shebang names a python)."""
    try:
        with open(path, "rb") as f:
            first = f.readline(200)
    except OSError:
        return False
    return first.startswith(b"#!") and b"python" in first


def resolve(command, env, here=None):
    """Raises an `error` when the command's program is not the cell's own (`here`: the
    cell's bin/): missing, or a Python program of another environment."""
    name = program(command)
    if name is None or "/" in name:
        return
    here = here or os.path.dirname(sys.executable)
    found = _which(name, env["PATH"])
    if found is None:
        if _is_builtin(name):
            return
        raise Verdict(
            "error",
            "command",
            "%s is not installed in this cell; %s (looked in %s and on PATH)"
            % (name, _fix(name), here),
        )
    if os.path.dirname(found) != here and (
        _python_script(found) or re.match(r"^(python|pip)[0-9.]*$", name)
    ):
        raise Verdict(
            "error",
            "command",
            "%s is not installed in this cell; %s (it resolved to %s, another Python's, "
            "whose packages are not the cell's)" % (name, _fix(name), found),
        )


def _which(name, path):
    for directory in path.split(os.pathsep):
        candidate = os.path.join(directory, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


#: Words the shell runs itself: never looked up on PATH.
SHELL_WORDS = {
    "cd",
    "echo",
    "exit",
    "true",
    "false",
    "test",
    "[",
    "set",
    "export",
    "source",
    ".",
    "if",
    "for",
    "while",
    "case",
    "{",
    "!",
    "eval",
    "read",
    "printf",
    "kill",
    "wait",
    "sleep",
    "unset",
    "shift",
    "trap",
    "type",
}


def _is_builtin(name):
    return name in SHELL_WORDS


def _missing_module(command, output):
    """`python -m pytest` where pytest is not installed: the module's name, else None."""
    wanted = re.search(r"(?:^|\s)-m\s+([A-Za-z0-9_.]+)", command)
    if not wanted:
        return None
    module = wanted.group(1)
    said = re.search(r"No module named '?%s'?\s*$" % re.escape(module), output, re.M)
    return module if said else None


#: Longest list of failing test ids a record carries (a rerun of more runs everything).
FAILING_LIMIT = 1000


def check_command(case):
    """Runs the case's command; its exit status is the verdict. What a test runner said
    (its name, every failing test's id) goes to `case.extra`, for the record."""
    spec = case.spec["command"]
    task = getattr(case, "task", None) or {}
    timeout = task.get("command_timeout") or spec.get("timeout")
    cwd = task.get("cwd") or spec.get("cwd") or os.getcwd()
    log = Log(task.get("log", ""), spec["command"], cwd, spec.get("cwd", ""), task)
    env = environment()
    try:
        resolve(spec["command"], env)
    except Verdict as verdict:
        log.write("", verdict.detail)
        raise
    # a temp folder of its own, inside the worker's (which its starter removes)
    scratch = tempfile.mkdtemp(prefix="command-")
    extra = getattr(case, "extra", {})
    log.start()
    try:
        env["TMPDIR"] = scratch
        chosen = only_failing(env, log.only, scratch) if log.only else None
        code, seconds, timed_out, left = contain.run(spec["command"], cwd, env, timeout, log.add)
        ran = observed(chosen) if chosen else None
        if ran is not None:
            extra["observed"] = ran
    except contain.Stopped as stopped:  # the run was stopped: this worker dies of it
        log.end("stopped by %s; the command and all it started killed" % _name(stopped.signum))
        contain.die(stopped.signum)
        raise
    except Exception as exc:  # it could not start (its folder gone): the check's error
        log.end("not run: %s" % exc)
        raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if timed_out:
        status = "ran past the %g s command-timeout; killed" % float(timeout)
    else:
        status = "exit %d after %.1f s" % (code, seconds)
    if left and not timed_out:
        status += "; %d process%s it left running killed" % (left, "" if left == 1 else "es")
    log.end(status)
    output = log.text()
    failing = failing_ids(output)
    extra["runner"] = runner(output) or ""
    if len(failing) <= FAILING_LIMIT:
        extra["failing"] = failing
    cut = ""
    if log.cut():
        cut = " (the log cut %s of its %s of output)" % (size(log.cut()), size(log.total))
    return _verdict(spec["command"], code, output, status, timed_out, cut)


def _name(signum):
    try:
        return signal.Signals(signum).name
    except ValueError:
        return "signal %d" % signum


def _verdict(command, code, output, status, timed_out, cut=""):
    said = summarize(output) + cut
    if timed_out:
        raise Verdict("timeout", "command", "%s: %s" % (status, said))
    if code < 0:
        raise Verdict("crash", "command", "killed by signal %d: %s" % (-code, said))
    if code == NOT_FOUND and "not found" in output:
        raise Verdict("error", "command", "exit 127 (the shell found no such program): " + said)
    missing = _missing_module(command, output) if code else None
    if missing:
        raise Verdict(
            "error",
            "command",
            "%s is not installed in this cell; %s (No module named %s in %s)"
            % (missing, _fix(missing.split(".")[0]), missing, sys.prefix),
        )
    if code != 0:
        raise fail("command", "exit %d: %s" % (code, said))
    return "exit 0" + (": " + said if said else "")
