"""Runs one worker per cell and survives it: crashes and timeouts become results."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from compat.cell import contain, protocol
from compat.cell.checks import slow_runner
from compat.cell.parts import SEPARATOR
from compat.cell.protocol import RawRecord
from compat.execute import interrupt
from compat.state import cellcode

POLL_SECONDS = 0.05


@dataclass(frozen=True)
class Task:
    """One check of one case, as the worker reads it from the plan."""

    case: str
    check: str
    case_dir: str
    #: a command's own timeout (`command-timeout`), after which it kills itself
    command_timeout: float | None = None
    log: str = ""  # where a command writes its whole output
    #: the watchdog's seconds for this task (None: the run's `--timeout`)
    timeout: float | None = None
    cwd: str = ""  # where a command runs: its cell's copy of the project's tree
    attempt: int = 1  # a command's attempt: its rerun is the second
    only: tuple[str, ...] = ()  # a pytest command's rerun: only these failing tests

    def line(self) -> protocol.Task:
        """The task as the worker reads it, every field given (None and "" included);
        a command's folder, attempt and tests only when it has them."""
        line = protocol.task(
            self.case,
            self.check,
            self.case_dir,
            command_timeout=self.command_timeout,
            log=self.log,
            timeout=self.timeout,
        )
        if self.cwd:
            line["cwd"] = self.cwd
        if self.attempt > 1:
            line["attempt"] = self.attempt
        if self.only:
            line["only"] = list(self.only)
        return line


class ResultsFile:
    """Reads a growing JSON-lines file incrementally, counting complete lines."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.count = 0
        self._offset = 0
        self._parsed: list[RawRecord] = []  # records read so far, up to _parsed_offset
        self._parsed_offset = 0

    def refresh(self) -> int:
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return self.count
        if size > self._offset:
            with self.path.open("rb") as f:
                f.seek(self._offset)
                chunk = f.read(size - self._offset)
            complete = chunk.rfind(b"\n") + 1
            self.count += chunk[:complete].count(b"\n")
            self._offset += complete
        return self.count

    def drop_partial_line(self) -> None:
        """A worker killed mid-write may leave half a line: remove it before appending."""
        self.refresh()
        if self.path.exists() and self.path.stat().st_size > self._offset:
            with self.path.open("r+b") as f:
                f.truncate(self._offset)

    def append(self, record: protocol.RawRecord) -> None:
        self.drop_partial_line()
        with self.path.open("a") as f:
            f.write(json.dumps(record, sort_keys=True) + "\n")
        self.refresh()

    def records(self) -> list[RawRecord]:
        """Every complete record so far; only lines not parsed before are read."""
        self.refresh()
        if self._offset < self._parsed_offset:  # truncated (a torn line dropped): again
            self._parsed = []
            self._parsed_offset = 0
        if self._offset > self._parsed_offset:
            with self.path.open("rb") as f:
                f.seek(self._parsed_offset)
                data = f.read(self._offset - self._parsed_offset)
            self._parsed += [json.loads(line) for line in data.splitlines() if line.strip()]
            self._parsed_offset = self._offset
        return list(self._parsed)


def describe_exit(returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"worker killed by {name} (exit {returncode})"
    return f"worker exited with code {returncode} before finishing the check"


def log_tail(log: Path, start: int) -> str:
    """The worker's last words since `start`: faulthandler's verdict, else the last line."""
    with log.open("rb") as f:
        f.seek(start)
        text = f.read().decode(errors="replace")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    fatal = [line for line in lines if line.startswith("Fatal Python error")]
    return (fatal or lines or [""])[-1][:500]


def slow_detail(check: str, slow: str, stack: str, seconds: float, first: str = "") -> str:
    """ "onnx's reference evaluator (onnx 1.16.2) did not finish in 60 s"; a part's reads
    as a check's observer does ("not observed: reference: …"), so `combine` tells it.
    `first`: the task that ran out of time, when this one was not run for it."""
    what = f" {first}" if first else ""
    said = f"{slow}{f' ({stack})' if stack else ''} did not finish{what} in {seconds:g} s"
    said += " in this cell, so this was not run" if first else ""
    if SEPARATOR in check:
        return f"not observed: {check.split(SEPARATOR, 1)[1]}: {said}"
    return f"{said}: a limit of that evaluator on this model, not the model's failure"


#: A task that ran past its time computed through it when its worker used at least this
#: share of that time on the CPU: the runner's limit, measured. Less is a stall (a
#: stopped worker, a starved machine), and its timeout no verdict.
BUSY_SHARE = 0.25


def cpu_seconds(pid: int) -> float | None:
    """The CPU seconds (user and system, every thread) process `pid` has used, from
    /proc; None where there is no /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stop(process: subprocess.Popen[bytes], token: str = "") -> None:
    """Stops the worker and anything it started (compat/execute/interrupt.py)."""
    interrupt.stop(process, token)


def run_worker(
    python: Path,
    tasks: list[Task],
    workdir: Path,
    timeout: float,
    code: Path | None = None,
    limits: tuple[int, ...] = (),
    stack: str = "",
    on_records: Callable[[list[tuple[int, RawRecord]]], object] | None = None,
    memory: int = 0,
) -> list[RawRecord]:
    """Runs every task in one worker process, restarting it after a crash or timeout.

    Returns one raw record per task, in task order (fewer when the run is stopped:
    compat/execute/interrupt.py). The results file in
    `workdir` is the only channel: the worker appends a line per finished task;
    when it dies or stalls, this function appends the `crash` or `timeout`
    line for the task in progress and starts a new worker at the next task.
    `code` is the staged in-cell code (staged under `workdir` when not given);
    `limits` the environment's probed onnxruntime limits, so no worker probes again.
    `memory`: the worker's address-space limit in bytes (0: none).
    `on_records` gets each batch of (task index, record) as they finish, so a host that
    dies mid-unit has kept every finished result (the cache is written as they come).
    """
    if not tasks:
        return []
    workdir.mkdir(parents=True, exist_ok=True)
    code = code or cellcode.stage(workdir / "code")
    plan = workdir / "plan.json"
    given = [t.line() for t in tasks]
    plan.write_text(json.dumps(protocol.plan(given, list(limits), memory)))
    results = ResultsFile(workdir / "results.jsonl")
    results.path.write_text("")
    log = workdir / "worker.log"
    log.write_text("")
    delivered = 0

    def deliver() -> None:
        nonlocal delivered
        if on_records is not None and results.refresh() > delivered:
            fresh = results.records()[delivered:]
            on_records(list(enumerate(fresh, start=delivered)))
            delivered += len(fresh)

    with cellcode.scratch_folder(workdir / "tmp") as scratch:  # TMPDIR, removed after
        while results.refresh() < len(tasks):
            log_start = log.stat().st_size
            token = uuid.uuid4().hex  # what its processes carry (compat/cell/contain.py)
            process = _spawn(python, code, plan, results, log, scratch, token)
            interrupt.register(process)
            watched = _watch(process, results, tasks, timeout, deliver, token)
            timed_out, allowed, last_progress, busy = watched
            interrupt.unregister(process)
            if process.returncode:  # died: what its command started may have outlived it
                contain.sweep(token)
            results.drop_partial_line()
            if results.count >= len(tasks) or interrupt.STOP.is_set():
                break  # (stopped: the records so far, no verdict for the task it was on)
            task = tasks[results.count]
            slow = timed_out and busy is not False  # it computed all along: its limit
            if slow and _skip_slow_rest(given[results.count + 1 :], task, stack, allowed):
                plan.write_text(json.dumps(protocol.plan(given, list(limits), memory)))
            last_words = log_tail(log, log_start)
            lost = (task, process.returncode, timed_out, allowed, stack, memory, last_words)
            outcome, detail = _lost(*lost, busy=busy)
            results.append(
                protocol.record(
                    outcome,
                    detail,
                    index=results.count,
                    case=task.case,
                    check=task.check,
                    seconds=round(time.monotonic() - last_progress, 4),
                    retry=True,  # a crash or a stop is no verdict to keep: computed again
                )
            )
    deliver()
    return results.records()


def _skip_slow_rest(later: list[protocol.Task], task: Task, stack: str, allowed: float) -> bool:
    """After `task` timed out: the same slow runner on the same model in this cell is no
    quicker, so the worker skips those of the `later` tasks, saying why, instead of waiting
    again. Whether any was marked."""
    slow = slow_runner(task.check)
    marked = False
    for line in later if slow else ():
        if slow_runner(line["check"]) == slow and line["case_dir"] == task.case_dir:
            line["skip"] = slow_detail(line["check"], slow, stack, allowed, task.check)
            marked = True
    return marked


def _spawn(
    python: Path,
    code: Path,
    plan: Path,
    results: ResultsFile,
    log: Path,
    scratch: Path,
    token: str,
) -> subprocess.Popen[bytes]:
    """A worker that runs the plan from its first task without a record on; it and all
    it starts carry `token` (compat/cell/contain.py: MARKER)."""
    start = str(results.count)
    with log.open("ab") as err:
        process = subprocess.Popen(
            cellcode.command(python, "run", str(plan), str(results.path), start),
            env={**cellcode.environ(code, scratch), contain.MARKER: token},
            cwd=code,
            stdin=subprocess.DEVNULL,
            stdout=err,
            stderr=err,
            start_new_session=True,
        )
    return process


def _watch(
    process: subprocess.Popen[bytes],
    results: ResultsFile,
    tasks: list[Task],
    timeout: float,
    deliver: Callable[[], None],
    token: str,
) -> tuple[bool, float, float, bool | None]:
    """Waits until the worker ends, the run is stopped, or the task it is on runs past its
    time (the worker is then stopped): (timed out, that task's seconds allowed, when the
    worker last finished a task, whether it computed through that time: None where the
    system cannot say)."""
    seen = results.count
    last_progress = time.monotonic()
    allowed = timeout
    cpu_at_progress = cpu_seconds(process.pid)
    while True:
        try:
            process.wait(timeout=POLL_SECONDS)
            return False, allowed, last_progress, None
        except subprocess.TimeoutExpired:
            pass
        if interrupt.STOP.is_set():
            stop(process, token)
            return False, allowed, last_progress, None
        if results.refresh() != seen:
            seen = results.count
            last_progress = time.monotonic()
            cpu_at_progress = cpu_seconds(process.pid)
            deliver()
        if seen < len(tasks):
            allowed = tasks[seen].timeout or timeout
        if time.monotonic() - last_progress > allowed:
            used = cpu_seconds(process.pid)
            stop(process, token)
            if used is None or cpu_at_progress is None:
                return True, allowed, last_progress, None
            return True, allowed, last_progress, used - cpu_at_progress >= allowed * BUSY_SHARE


def _lost(
    task: Task,
    returncode: int,
    timed_out: bool,
    allowed: float,
    stack: str,
    memory: int,
    tail: str,
    busy: bool | None = None,
) -> tuple[protocol.RecordedOutcome, str]:
    """The outcome and detail of the task a worker died or stalled on (`tail`: its log's
    last words; `busy`: whether it computed through its time, None: unknown)."""
    slow = slow_runner(task.check) if timed_out else ""
    if slow and busy is not False:  # that runner's measured limit on this model: a skip
        return "skip", slow_detail(task.check, slow, stack, allowed)
    if slow and busy is False:  # stopped, or starved: the runner's limit was not measured
        return "timeout", (
            f"the worker stopped answering: it computed less than {BUSY_SHARE:.0%} of the "
            f"{allowed:g} s it was given (stopped, or starved on a loaded machine); no "
            "verdict: run again"
        )
    if timed_out:
        return "timeout", f"ran past the {allowed:g} s timeout; worker killed"
    detail = describe_exit(returncode)
    if memory and returncode in (-6, -9, -11):  # an abort or a kill: memory?
        detail += f" (its memory limit is {memory / 2**30:.1f} GiB: --memory)"
    return "crash", detail + (f": {tail}" if tail else "")
