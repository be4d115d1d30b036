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
