"""Ctrl-C and CI cancels stop a run cleanly.

The first SIGINT or SIGTERM sets `STOP` and stops every live worker (each leads its own
process group, so the terminal's Ctrl-C never reaches it by itself): nothing new is
scheduled, every result already finished is in the cache (workers' results reach it as
they finish), and the command writes the report of the cells that completed, marked
interrupted, and exits 130 (SIGINT) or 143 (SIGTERM). A second signal stops at once.

A worker is stopped with SIGTERM first: one running a user's command kills it and all it
started, daemons included (compat/cell/contain.py), then dies; `stop` kills it outright
past GRACE seconds, and what still carries its marker after that, the host kills itself.
The host waits for every worker's stop before it exits.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from types import FrameType

from compat.cell import contain

#: Seconds a worker asked to stop has to kill its command's tree before it is killed.
GRACE = 5.0
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
    """Asks the worker to stop (SIGTERM to its group): it kills its command's tree first."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGTERM)


def stop(process: subprocess.Popen[bytes], token: str = "") -> None:
    """Stops the worker and everything it started: asked first (`kill`), killed with its
    group past GRACE seconds; then every process that carries its `token` (its marker,
    compat/cell/contain.py) is killed, for a worker that could not do it itself."""
    kill(process)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=GRACE)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    if token:
        contain.sweep(token)


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
