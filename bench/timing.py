"""Run a command, time it and refuse a failure: how every bench runs what it measures.

Each command a bench times is given the exit code it must end with (and, where that
code also stands for something else, a pattern its output must show); any other end
stops the bench with one line naming the command and the tail of its output, so a
failed run is an error and never a figure. Not a bench itself: the benches import it.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import NoReturn

ROOT = Path(__file__).resolve().parent.parent
#: the machine-speed tool of the shared folder beside the checkout (or $BENCH_CALIBRATE)
CALIBRATE = Path(os.environ.get("BENCH_CALIBRATE", ROOT.parent / "shared" / "tools" / "calibrate"))


@dataclass(frozen=True)
class Run:
    """A finished command: its wall seconds and everything it printed."""

    seconds: float
    stdout: str
    stderr: str


def fail(command: Sequence[object], why: str, output: str = "") -> NoReturn:
    """Stop the bench: one line with the command, what went wrong and the output's tail."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    tail = " | ".join(lines[-3:])[-400:] or "(no output)"
    sys.exit(f"bench: `{shlex.join(str(a) for a in command)}` {why}; output ends: {tail}")


def env(**extra: str) -> dict[str, str]:
    """This process's environment with bytecode written (PYTHONDONTWRITEBYTECODE unset, as
    `pip install` compiles it: a run times the program, not the compiler), plus `extra`."""
    kept = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**kept, **extra}


def run(
    command: Sequence[object],
    *,
    cwd: Path = ROOT,
    expect: int | Collection[int] = 0,
    says: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> Run:
    """Run `command` to its end, timed; an exit code other than `expect` (or than each
    of several), or an output without a match of the regular expression `says`, stops
    the bench."""
    done = capped(command, None, cwd=cwd, expect=expect, says=says, environ=environ)
    assert done is not None  # no cap, no stop
    return done


def capped(
    command: Sequence[object],
    cap: float | None,
    *,
    cwd: Path = ROOT,
    expect: int | Collection[int] = 0,
    says: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> Run | None:
    """`run`, but None when it passes `cap` seconds: the command and every process it
    started are killed (a session of their own, so no worker outlives the cap)."""
    args = [str(a) for a in command]
    started = time.perf_counter()
    with subprocess.Popen(
        args,
        cwd=cwd,
        env=environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=cap is not None,
    ) as process:
        try:
            stdout, stderr = process.communicate(timeout=cap)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            return None
    seconds = time.perf_counter() - started
    codes = (expect,) if isinstance(expect, int) else tuple(expect)
    if process.returncode not in codes:
        wanted = " or ".join(map(str, codes))
        fail(args, f"exited {process.returncode}, not {wanted}", stdout + "\n" + stderr)
    if says is not None and not re.search(says, stdout + stderr):
        fail(args, f"exited {process.returncode} but never said /{says}/", stdout + "\n" + stderr)
    return Run(seconds, stdout, stderr)


def nox_command(*args: str) -> list[str]:
    """`nox ARGS` with the nox this bench runs under (the bench session installs it)."""
    return [sys.executable, "-m", "nox", *args]


def nox(repo: Path, *args: str, expect: int = 0, says: str | None = None) -> Run:
    """`nox ARGS` in the checkout `repo`, checked as by `run`."""
    return run(nox_command(*args), cwd=repo, expect=expect, says=says)


def repeated(
    command: Sequence[object],
    runs: int,
    *,
    cwd: Path = ROOT,
    expect: int = 0,
    says: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[float]:
    """Wall seconds of `runs` runs of `command`, after one untimed run (it writes the
    bytecode and whatever the command caches); each run is checked as by `run`."""
    times = []
    for index in range(runs + 1):
        done = run(command, cwd=cwd, expect=expect, says=says, environ=environ)
        if index:
            times.append(done.seconds)
    return times


def clone(commit: str, where: Path) -> Path:
    """A fresh clone of this checkout at `commit`: what a user starts from."""
    run(["git", "clone", "-q", ROOT, where])
    run(["git", "-C", where, "checkout", "-q", commit])
    return where


@contextmanager
def worktree(commit: str, where: Path) -> Iterator[Path]:
    """A git worktree of this checkout at `commit`, removed at the end."""
    run(["git", "-C", ROOT, "worktree", "add", "-q", "--detach", where, commit])
    try:
        yield where
    finally:
        subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", where], check=False)


def calibration(state: Path = ROOT / ".compat") -> str:
    """The seconds of the shared calibrate tool's fixed workload (lower is faster), or
    "n/a" when the tool or an environment to run it in (onnx 1.23.2, onnxruntime
    1.24.4, in `state`) is missing."""
    python = state / "envs" / "onnx1.23.2-ort1.24.4" / "bin" / "python"
    if not CALIBRATE.exists():
        return "n/a (no calibrate tool)"
    if not python.exists():
        return "n/a (no onnx1.23.2-ort1.24.4 environment yet)"
    done = subprocess.run([CALIBRATE, python], capture_output=True, text=True, check=False)
    lines = done.stdout.strip().splitlines()
    return f"{lines[-1]} s" if done.returncode == 0 and lines else "n/a (calibrate failed)"


def machine() -> str:
    """Today's date, the cores and the load average: said beside every figure."""
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"{date.today()}, {os.cpu_count()} cores, load average {load}"
