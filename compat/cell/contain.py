"""A user's command and everything it starts, kept as one tree that dies with it.

The command leads a session of its own, but what it starts may leave that session
(`setsid`, a daemon's double fork) or outlive its parent (`nohup ... &`), and a
grandchild that keeps the command's stdout open would hold a reader that waits for
EOF. So, on Linux, the worker that runs the command is a child subreaper
(prctl PR_SET_CHILD_SUBREAPER): an orphan below it is reparented to it instead of to
init, and every process whose parent chain leads to the worker, found in /proc, is the
command's. When the command ends, times out, or the worker is told to stop (SIGTERM,
SIGINT) or loses its host, all of them are killed, repeatedly until none is left.

The output is read from a pipe the worker alone reads, as it comes; the command's end
is the shell's exit, never the pipe's EOF, and what is left in the pipe is read for at
most DRAIN_SECONDS once the tree is gone, so a held pipe never stretches the timeout.

Every process a worker starts also carries MARKER in its environment, with a value the
host chose for that worker: a worker killed outright (the host's last resort, the
kernel's OOM killer) leaves its command's processes to init, and the host finds and
kills them by it (`sweep`). Elsewhere than Linux the command's own process group is
killed, which is all a portable program can reach.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import subprocess
import threading
import time
from typing import Callable, Dict, FrozenSet, List, Optional, Set, Tuple

#: The variable that tells which worker a process descends from (its value: the host's).
MARKER = "ONNX_COMPAT_WORKER"
#: Seconds the pipe is still read once the command's tree is killed.
DRAIN_SECONDS = 2.0
#: Seconds spent killing a tree at most (a process in uninterruptible sleep may linger).
KILL_SECONDS = 5.0
#: Bytes read from the pipe at once, and the pipe's size asked for (Linux: F_SETPIPE_SZ).
CHUNK = 1 << 20
_POLL = 0.1
_PR_SET_CHILD_SUBREAPER = 36
_F_SETPIPE_SZ = 1031


class Stopped(BaseException):
    """The worker was told to stop (SIGTERM, SIGINT) while its command ran: the command's
    tree is killed, then the worker dies of that signal (`die`)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def become_subreaper() -> bool:
    """Makes this process the reaper of its orphaned descendants (Linux 3.4+); whether it
    is one."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):  # not Linux: no such call
        return False


#: A process as /proc shows it: (parent, state, start time in clock ticks since boot).
Process = Tuple[int, str, int]


def _processes() -> Optional[Dict[int, Process]]:
    """Every process, by id, from /proc; None where there is no /proc."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return None
    table = {}
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue  # ended meanwhile
        table[int(name)] = (int(fields[1]), fields[0].decode(), int(fields[19]))
    return table


def descendants(table: Dict[int, Process], root: int) -> List[int]:
    """The processes whose parent chain leads to `root`, parents first."""
    children: Dict[int, List[int]] = {}
    for pid, process in table.items():
        children.setdefault(process[0], []).append(pid)
    found = []
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def present() -> FrozenSet[Tuple[int, int]]:
    """This process's descendants now, as (id, start time): what `kill_tree` spares."""
    table = _processes() or {}
    return frozenset((p, table[p][2]) for p in descendants(table, os.getpid()))


def alive(spare: FrozenSet[Tuple[int, int]] = frozenset()) -> List[int]:
    """The live descendants of this process but those in `spare` (none without /proc)."""
    table = _processes() or {}
    mine = [p for p in descendants(table, os.getpid()) if (p, table[p][2]) not in spare]
    return [p for p in mine if table[p][1] not in "ZX"]


def kill_tree(
    spare: FrozenSet[Tuple[int, int]] = frozenset(), seconds: float = KILL_SECONDS
) -> None:
    """Kills every descendant of this process but those in `spare` (SIGKILL, again until
    none is alive, for at most `seconds`) and reaps those that end as its children."""
    me = os.getpid()
    end = time.monotonic() + seconds
    while True:
        table = _processes()
        if table is None:
            return
        mine = [p for p in descendants(table, me) if (p, table[p][2]) not in spare]
        for pid in mine:
            if table[pid][0] == me and table[pid][1] in "ZX":
                with contextlib.suppress(ChildProcessError, OSError):
                    os.waitpid(pid, os.WNOHANG)  # an orphan it adopted, or one it killed
        living = [p for p in mine if table[p][1] not in "ZX"]
        if not living or time.monotonic() > end:
            return
        for pid in living:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)


def sweep(token: str, seconds: float = KILL_SECONDS) -> int:
    """Kills every process whose environment holds MARKER=`token` (the host's, after its
    worker died: what that worker's command left); how many (0 where there is no /proc)."""
    wanted = ("\0%s=%s\0" % (MARKER, token)).encode()
    killed: Set[int] = set()
    end = time.monotonic() + seconds
    while time.monotonic() <= end:
        table = _processes() or {}
        found = []
        for pid, (_, state, _) in table.items():
            try:
                with open("/proc/%d/environ" % pid, "rb") as f:
                    marked = wanted in b"\0" + f.read()
            except OSError:  # another user's, or ended
                continue
            if marked and state not in "ZX" and pid != os.getpid():
                found.append(pid)
        if not found:
            break
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            killed.add(pid)
        time.sleep(0.01)
    return len(killed)


class _Signals:
    """Within it, on the main thread, SIGTERM and SIGINT are kept in `received` for the
    loop to see (never raised from wherever the handler happens to run)."""

    def __init__(self) -> None:
        self.received = 0
        self.previous: Dict[int, object] = {}

    def __enter__(self) -> "_Signals":
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGTERM, signal.SIGINT):
                self.previous[signum] = signal.signal(signum, self._keep)
        return self

    def _keep(self, signum: int, frame: object) -> None:
        self.received = self.received or signum

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]


def die(signum: int) -> None:
    """Ends this process by `signum`, as the signal would have without a handler."""
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    os._exit(128 + signum)  # (only if the signal is blocked)


def run(
    command: str,
    cwd: str,
    env: Dict[str, str],
    timeout: Optional[float],
    sink: Callable[[bytes], None],
) -> Tuple[int, float, bool, int]:
    """Runs `command` through the shell, its output (stdout and stderr together) given to
    `sink` as it comes: (exit code, seconds, timed out, how many processes it left
    running, now killed). Past `timeout` seconds the command and all it started are killed; when the
    worker is told to stop (SIGTERM, SIGINT) they are too, then `Stopped` is raised."""
    become_subreaper()
    before = present()  # the worker's own, never the command's (a test's, in-process)
    with _Signals() as signals:  # from here a stop is seen by the loop, never lost
        read, write = os.pipe()
        with contextlib.suppress(OSError, AttributeError):
            import fcntl

            fcntl.fcntl(write, _F_SETPIPE_SZ, CHUNK)  # fewer, larger reads
        started = time.monotonic()
        try:
            process = _start(command, cwd, env, write)
        except BaseException:
            os.close(read)
            raise
        finally:
            os.close(write)  # its only reader is here: EOF is the writers' end, never ours
        try:
            deadline = started + float(timeout) if timeout else None
            timed_out = _pump(process, read, sink, deadline, signals)
        finally:  # the command's end, its timeout, a stop, or a bug here: the tree dies
            left = len(alive(before))  # (after its end: what it left running)
            with contextlib.suppress(OSError):
                os.killpg(process.pid, signal.SIGKILL)  # its group, where there is no /proc
            process.wait()
            kill_tree(before)
            _drain(read, sink)
            os.close(read)
    if signals.received:
        raise Stopped(signals.received)
    return process.returncode, time.monotonic() - started, timed_out, left


def _start(command, cwd, env, out):
    """The command through the shell, in a session of its own, writing to `out`."""
    return subprocess.Popen(
        command,
        shell=True,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=out,
        start_new_session=True,
    )


def _pump(process, read, sink, deadline, signals):
    """Gives the output to `sink` until the shell ends or the worker is told to stop
    (False) or `deadline` passes (True); the pipe's EOF ends nothing."""
    open_ = True
    while process.poll() is None and not signals.received:
        left = deadline - time.monotonic() if deadline is not None else _POLL
        if left <= 0:
            return True
        if not open_:  # every writer closed it: only the shell's end is awaited
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(min(_POLL, left))
            continue
        if select.select([read], [], [], min(_POLL, left))[0]:
            data = os.read(read, CHUNK)
            if data:
                sink(data)
            else:
                open_ = False
    return False


def _drain(read, sink, seconds=DRAIN_SECONDS):
    """What is left in the pipe, read for at most `seconds` (a writer that escaped the
    tree would otherwise hold it open)."""
    end = time.monotonic() + seconds
    while True:
        left = end - time.monotonic()
        if left <= 0 or not select.select([read], [], [], left)[0]:
            return
        data = os.read(read, CHUNK)
        if not data:
            return
        sink(data)
