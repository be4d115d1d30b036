"""A long-lived worker in one cell's environment: a task in, its result out, for
callers that evaluate many small cases one after another (triage's reduction).

It survives what it runs, as `compat.execute.worker` does for a plan: a task that kills the
worker becomes a `crash` result and one that stalls past the timeout a `timeout`
result; the next task starts a fresh worker.
"""

from __future__ import annotations

import json
import selectors
import shutil
import subprocess
import time
from pathlib import Path
from typing import IO, Unpack

from compat.cell import protocol
from compat.cell.protocol import RawRecord
from compat.core.errors import CompatError
from compat.execute.envs import Environment
from compat.execute.worker import describe_exit, log_tail, stop
from compat.state import cellcode


class ServedWorker:
    """`python -m compat.cell serve` in the environment `env`, started on first use."""

    def __init__(self, env: Environment, workdir: Path, timeout: float) -> None:
        self.env = env
        self.timeout = timeout
        workdir.mkdir(parents=True, exist_ok=True)
        self.log = workdir / "served.log"
        self.log.write_text("")
        self.scratch = workdir / "tmp"  # the worker's TMPDIR, removed by close()
        self.process: subprocess.Popen[bytes] | None = None
        self.started = 0  # worker processes started: 1 unless a task killed one
        self.stalled = False  # the last answer never came within the timeout

    def _start(self) -> subprocess.Popen[bytes]:
        self.scratch.mkdir(exist_ok=True)
        limits = json.dumps(list(self.env.record.limits))
        with self.log.open("ab") as err:
            process = subprocess.Popen(
                cellcode.command(self.env.python, "serve", limits),
                env=cellcode.environ(self.env.code, self.scratch),
                cwd=self.env.code,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                start_new_session=True,
            )
        self.started += 1
        self.process = process
        if self._answer(process, 120.0) is None:  # imports done: the first line says ready
            raise CompatError(
                f"the worker in {self.env.record.id} did not start: {log_tail(self.log, 0)}"
            )
        return process

    def _answer(self, process: subprocess.Popen[bytes], timeout: float) -> RawRecord | None:
        """The worker's next line, or None when it died or stalled (and is stopped)."""
        out: IO[bytes] = process.stdout  # type: ignore[assignment]
        with selectors.DefaultSelector() as selector:
            selector.register(out, selectors.EVENT_READ)
            self.stalled = not selector.select(timeout)
            if not self.stalled:
                line = out.readline()
                if line:
                    answer: RawRecord = json.loads(line)
                    return answer
        stop(process)
        self.process = None
        return None

    def run(
        self, case: str, check: str, case_dir: Path, **options: Unpack[protocol.TaskOptions]
    ) -> RawRecord:
        """One check of one written case (`options`: the task's, protocol.TaskOptions):
        the worker's result record."""
        process = self.process or self._start()
        log_start = self.log.stat().st_size
        started = time.monotonic()
        task = protocol.task(case, check, str(case_dir), **options)
        try:
            assert process.stdin is not None
            process.stdin.write((json.dumps(task) + "\n").encode())
            process.stdin.flush()
        except BrokenPipeError:
            pass  # it died on the previous task's way out: read says so
        answer = self._answer(process, self.timeout)
        if answer is not None:
            return answer
        seconds = round(time.monotonic() - started, 4)
        outcome: protocol.RecordedOutcome
        if not self.stalled:
            detail = describe_exit(process.returncode)
            tail = log_tail(self.log, log_start)
            outcome = "crash"
            detail += f": {tail}" if tail else ""
        else:
            outcome = "timeout"
            detail = f"ran past the {self.timeout:g} s timeout; worker killed"
        said = protocol.record(
            outcome, detail, case=case, check=check, seconds=seconds, traceback=""
        )
        return said

    def close(self) -> None:
        if self.process is not None:
            if self.process.stdin:
                self.process.stdin.close()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                stop(self.process)
            self.process = None
        shutil.rmtree(self.scratch, ignore_errors=True)

    def __enter__(self) -> ServedWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
