"""Test-only case checks that segfault, hang, exit, raise or fail on purpose.

Runs inside the worker: standard library only.
"""

import ctypes
import os
import time
from pathlib import Path


def ok(case):
    return "fine"


def segfault(case):
    ctypes.string_at(0)


def hang(case):
    time.sleep(600)


def exit_early(case):
    os._exit(3)


def explode(case):
    raise RuntimeError("boom")


def wrong(case):
    raise AssertionError("got 3, expected 4")


def flip(case):
    """Fails on its first run in a case directory and passes on every later one: what a
    nondeterministic bug looks like from the outside (a counter file keeps the count)."""
    path = Path(case.case_dir) / "flip.count"
    count = int(path.read_text()) if path.exists() else 0
    path.write_text(str(count + 1))
    assert count > 0, "first run: got nan, expected 0.0"
    return "a later run"


def _first_time(case, name):
    """True on the first run in this case directory (a marker file remembers it)."""
    path = Path(case.case_dir) / (name + ".seen")
    if path.exists():
        return False
    path.write_text("seen")
    return True


def crash_once(case):
    """Killed on its first run (as the OOM killer kills), fine afterwards."""
    if _first_time(case, "crash_once"):
        os.kill(os.getpid(), 9)
    return "fine after one crash"


def stall_once(case):
    """Stalls past any test timeout on its first run, fine afterwards."""
    if _first_time(case, "stall_once"):
        time.sleep(120)
    return "fine after one stall"


def wait(case):
    """As `hang`; named to run after `ok` (a case's checks run in name order)."""
    time.sleep(600)


def litter(case):
    """Leaves a temp folder behind, and says where (a check that forgets to clean up)."""
    import tempfile

    folder = tempfile.mkdtemp(prefix="compat-litter-")
    Path(folder, "left.bin").write_bytes(b"x" * 1024)
    return folder


def litter_and_die(case):
    """Leaves a temp folder behind and is killed before it could remove it."""
    litter(case)
    os.kill(os.getpid(), 9)
