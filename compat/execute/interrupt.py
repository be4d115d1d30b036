"""Ctrl-C and CI cancels stop a run cleanly.

The first SIGINT or SIGTERM sets `STOP` and kills every live worker (each leads its own
process group, so the terminal's Ctrl-C never reaches it by itself): nothing new is
scheduled, every result already finished is in the cache (workers' results reach it as
they finish), and the command writes the report of the cells that completed, marked
interrupted, and exits 130 (SIGINT) or 143 (SIGTERM). A second signal stops at once.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from types import FrameType

#: Set by the first signal: workers stop, nothing new starts.
STOP = threading.Event()
_received: list[int] = []
_live: set[subprocess.Popen[bytes]] = set()
_lock = threading.Lock()


def register(process: subprocess.Popen[bytes]) -> None:
    """A worker started: it is killed if the run is stopped (at once, if it already is)."""
    with _lock:
        _live.add(process)
    if STOP.is_set():
        kill(process)


def unregister(process: subprocess.Popen[bytes]) -> None:
    with _lock:
        _live.discard(process)


def kill(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def _stop(signum: int, frame: FrameType | None) -> None:
    if STOP.is_set():  # a second signal: no more waiting
        raise KeyboardInterrupt
    _received.append(signum)
    STOP.set()
    with _lock:
        live = list(_live)
    for process in live:
        kill(process)


@contextlib.contextmanager
def handling() -> Iterator[None]:
    """Within it (on the main thread), SIGINT and SIGTERM stop the run cleanly."""
    STOP.clear()
    _received.clear()
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    for signum in previous:
        signal.signal(signum, _stop)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def interrupted() -> int | None:
    """The exit code a stopped run ends with (128 + the signal), or None."""
    return 128 + _received[0] if _received else None
