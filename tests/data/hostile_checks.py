"""Test-only case checks that segfault, hang, exit, raise or fail on purpose.

Runs inside the worker: standard library only.
"""

import ctypes
import os
import time


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
