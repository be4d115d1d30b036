"""The environment a command's cached result is keyed by (compat/state/cache.py).

All the variables the command sees, except those that change from one shell, terminal,
login or CI job to the next and configure no program (VOLATILE_VARIABLES, and every
name starting with one of VOLATILE_PREFIXES), and except what the cell sets or takes off
itself (compat/cell/command.py: TMPDIR, VIRTUAL_ENV, PYTHONPATH, another environment's
folders on PATH, ...). A variable left out never changes a key; any other change
(a new `PYTEST_ADDOPTS`, `ONNX_COMPAT_*`, `OMP_NUM_THREADS`, a PATH entry) runs the
command again.
"""

from __future__ import annotations

import os
from typing import Dict, Mapping

from compat.cell.command import OTHER_ENVIRONMENT_VARIABLES, other_environment

VOLATILE_VARIABLES = frozenset(
    [
        "PWD",
        "OLDPWD",
        "SHLVL",
        "_",
        "COLUMNS",
        "LINES",
        "TERM",
        "COLORTERM",
        "DISPLAY",
        "WINDOWID",
        "STY",
        "GPG_TTY",
        "INVOCATION_ID",
        "JOURNAL_STREAM",
        "MANAGERPID",
        "SECURITYSESSIONID",
        "PYTEST_CURRENT_TEST",
        "RUNNER_TRACKING_ID",
        "GITHUB_JOB",
        "GITHUB_ACTION",
    ]
)
VOLATILE_PREFIXES = (
    "SSH_",
    "XDG_SESSION_",
    "TERM_",
    "TMUX",
    "KITTY_",
    "VSCODE_",
    "ITERM_",
    "WT_",
    "DBUS_",
    "GPG_AGENT",
    "PYTEST_XDIST_",
    "GITHUB_RUN_",
)
#: What the cell sets for the command itself, whatever the host had.
CELL_SETS = ("TMPDIR", "VIRTUAL_ENV", "PYTHONNOUSERSITE", "PYTHONDONTWRITEBYTECODE")


def keyed_environment(base: Mapping[str, str]) -> Dict[str, str]:
    """The environment a command sees, as its cached result is keyed by: `base` (the
    host's) without the volatile variables, without what the cell sets or takes off
    itself, and PATH without the folders of other Python environments."""
    left_out = VOLATILE_VARIABLES.union(OTHER_ENVIRONMENT_VARIABLES, CELL_SETS)
    env = {
        name: value
        for name, value in base.items()
        if name not in left_out and not name.startswith(VOLATILE_PREFIXES)
    }
    path = [d for d in env.get("PATH", "").split(os.pathsep) if d and not other_environment(d)]
    env["PATH"] = os.pathsep.join(path)
    return env
