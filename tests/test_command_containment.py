"""A user's command is contained (compat/cell/contain.py): what it starts, daemons
included, dies when it ends, times out, or the run is stopped or its host dies; a
grandchild holding its output never stretches its timeout; a gigabyte of output is
neither held in memory nor logged whole. Real host, worker, shell and processes: the
host's `run_worker` in a process of its own, as `matrix` runs it, and once the CLI."""

from __future__ import annotations

import itertools
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from compat.cell import contain
from compat.cell.attempt import LOG_CAP, Log
from tests.conftest import ROOT

#: A host: the real worker runs one command task (argv: case folder, command, its timeout);
#: it prints the record, its seconds and the peak memory of itself and of its children.
HOST = """\
import json, resource, sys, time
from pathlib import Path
from compat.execute import interrupt
from compat.execute.worker import Task, run_worker

case, command, limit = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3])
(case / "case.json").write_text(json.dumps({"command": {"command": command, "cwd": str(case)}}))
task = Task("command.x", "command", str(case), command_timeout=limit,
            log=str(case / "command.x.log"), timeout=limit + 60)
started = time.monotonic()
with interrupt.handling():
    records = run_worker(Path(sys.executable), [task], case / "work", 120.0)
# this process's own high-water mark: getrusage's SELF keeps the one of the process that
# exec'ed it (Linux carries maxrss across exec), here pytest's, hundreds of MB
status = Path("/proc/self/status").read_text()
peak = {"SELF": int(status.split("VmHWM:")[1].split()[0]) * 1024,
        "CHILDREN": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024}
print(json.dumps({"records": records, "seconds": time.monotonic() - started, "peak": peak}))
sys.exit(interrupt.interrupted() or 0)
"""

pytestmark = pytest.mark.subprocess
_counter = itertools.count()


def marker() -> str:
    """A number no other process sleeps for: `sleep MARKER` is found by it alone."""
    return f"300.{os.getpid()}{next(_counter)}"


def alive(mark: str) -> list[int]:
    """The live processes (zombies are dead) that run `sleep MARK`."""
    found = []
    for folder in Path("/proc").iterdir():
        try:
            cmdline = (folder / "cmdline").read_bytes()
            state = (folder / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if cmdline == f"sleep\0{mark}\0".encode() and state not in "ZX":
            found.append(int(folder.name))
    return found


def kill(mark: str) -> None:
    """What a failed test left: its own sleeps, by their ids."""
    for pid in alive(mark):
        os.kill(pid, signal.SIGKILL)


def gone(mark: str, seconds: float = 10.0) -> list[int]:
    """The processes of `mark` still alive after up to `seconds` (none: all died)."""
    end = time.monotonic() + seconds
    while (left := alive(mark)) and time.monotonic() < end:
        time.sleep(0.1)
    return left


def running(mark: str, count: int = 5, seconds: float = 30.0) -> int:
    """How many `sleep MARK` run, once `count` do or `seconds` passed."""
    end = time.monotonic() + seconds
    while len(alive(mark)) < count and time.monotonic() < end:
        time.sleep(0.05)
    return len(alive(mark))


def escaping(mark: str) -> str:
    """A command that starts what outlives a plain process group: a grandchild holding
    its stdout, a `setsid` daemon, a `nohup` one and a double fork's orphan."""
    return (
        f"(sleep {mark}) & setsid sleep {mark} & nohup sleep {mark} >/dev/null 2>&1 & "
        f'sh -c "(setsid sleep {mark} &) &"; '
    )


def host(case: Path, command: str, limit: float) -> subprocess.Popen[str]:
    case.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-c", HOST, str(case), command, str(limit)]
    return subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def finished(process: subprocess.Popen[str], seconds: float = 120) -> dict[str, Any]:
    try:
        out, err = process.communicate(timeout=seconds)
    finally:
        process.kill()  # a host that hangs: no verdict, and gone
    assert process.returncode == 0, err
    said: dict[str, Any] = json.loads(out)
    return said


def test_what_a_command_leaves_running_dies_when_it_ends_holding_its_output_or_not(
    tmp_path: Path,
) -> None:
    mark = marker()
    try:
        said = finished(host(tmp_path / "case", escaping(mark) + "echo done", 60))
        (record,) = said["records"]
        assert record["outcome"] == "pass" and record["detail"] == "exit 0: done", record
        assert said["seconds"] < 30  # (the sleeps hold its stdout for 300 s)
        assert gone(mark, 0) == []
        log = (tmp_path / "case" / "command.x.log").read_text()
        assert re.search(
            r"\ndone\n# exit 0 after [\d.]+ s; \d processes it left running killed\n$", log
        )
    finally:
        kill(mark)


def test_a_timeout_kills_every_descendant_and_a_held_pipe_does_not_stretch_it(
    tmp_path: Path,
) -> None:
    mark = marker()
    try:
        said = finished(host(tmp_path / "case", escaping(mark) + f"echo begun; sleep {mark}", 2))
        (record,) = said["records"]
        assert record["outcome"] == "timeout", record
        assert record["detail"] == "ran past the 2 s command-timeout; killed: begun"
        assert said["seconds"] < 15  # 2 s, the tree's end and the worker's start
        assert gone(mark, 0) == []
    finally:
        kill(mark)


@pytest.mark.parametrize(
    "signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=["SIGINT", "SIGTERM", "SIGKILL"]
)
def test_a_stopped_or_killed_host_leaves_no_process_of_the_command_alive(
    tmp_path: Path, signum: int
) -> None:
    mark, case = marker(), tmp_path / "case"
    started = tmp_path / "started"
    process = host(case, escaping(mark) + f"touch {started}; sleep {mark}", 120)
    try:
        deadline = time.monotonic() + 60
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started.exists(), process.communicate()
        assert running(mark) == 5  # all of them run
        process.send_signal(signum)
        out, _ = process.communicate(timeout=30)
        assert process.returncode == (128 + signum if signum != signal.SIGKILL else -signum)
        # stopped: the host waited for the worker; killed: the worker sees it within 1 s
        assert gone(mark, 0 if signum != signal.SIGKILL else 10) == []
        if signum != signal.SIGKILL:
            assert json.loads(out)["records"] == []  # no verdict for a stopped task
            log = (case / "command.x.log").read_text()
            assert log.endswith("# stopped by SIGTERM; the command and all it started killed\n")
    finally:
        process.kill()
        kill(mark)


def worker_of(case: Path) -> int:
    """The worker process running the plan in `case`."""
    plan = str(case / "work" / "plan.json").encode()
    for folder in Path("/proc").iterdir():
        if folder.name.isdigit():
            try:
                if plan in (folder / "cmdline").read_bytes():
                    return int(folder.name)
            except OSError:
                continue
    raise AssertionError("no worker runs " + plan.decode())


def test_a_worker_killed_outright_has_what_its_command_started_killed_by_the_host(
    tmp_path: Path,
) -> None:
    """A worker SIGKILLed (the OOM killer's way) cannot kill its command's tree, which
    init inherits: the host finds its processes by the worker's marker."""
    mark, case = marker(), tmp_path / "case"
    started = tmp_path / "started"
    process = host(case, escaping(mark) + f"touch {started}; sleep {mark}", 120)
    try:
        deadline = time.monotonic() + 60
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert running(mark) == 5
        os.kill(worker_of(case), signal.SIGKILL)
        (record,) = finished(process)["records"]
        assert record["outcome"] == "crash" and "SIGKILL" in record["detail"], record
        assert gone(mark, 0) == []
    finally:
        process.kill()
        kill(mark)


def test_sweep_kills_the_processes_of_its_marker_only(tmp_path: Path) -> None:
    mark = marker()
    mine = {**os.environ, contain.MARKER: "mine"}
    other = {**os.environ, contain.MARKER: "other"}
    spawned = [subprocess.Popen(["sleep", mark], env=env) for env in (mine, mine, other)]
    try:
        assert contain.sweep("mine") == 2
        assert [p.wait(10) for p in spawned[:2]] == [-signal.SIGKILL] * 2
        assert spawned[2].poll() is None
    finally:
        for p in spawned:
            p.kill()
            p.wait()


def test_a_gigabyte_of_output_is_never_held_in_memory_and_its_log_is_capped(
    tmp_path: Path,
) -> None:
    said = finished(host(tmp_path / "case", "yes | head -c 1000000000; echo; echo the end", 120))
    (record,) = said["records"]
    assert record["outcome"] == "pass", record
    assert record["detail"].endswith("the end (the log cut 950 MB of its 1.0 GB of output)")
    assert said["peak"]["SELF"] < 300e6 and said["peak"]["CHILDREN"] < 300e6, said["peak"]
    log = tmp_path / "case" / "command.x.log"
    assert LOG_CAP < log.stat().st_size <= LOG_CAP + 4096  # the output's and a few lines
    with log.open("rb") as f:
        assert f.read(4096).count(b"y\n") > 1000  # the output's start
        f.seek(-4096, os.SEEK_END)
        end = f.read().decode()
    assert re.search(r"y\n\nthe end\n# exit 0 after [\d.]+ s\n$", end)
    cut = "# ---- 950 MB of output cut here: the log keeps its first 46 MB and its last 4.0 MB"
    assert cut in log.read_text()


def test_a_log_past_its_cap_keeps_its_head_and_tail_and_the_summary_reads_both(
    tmp_path: Path,
) -> None:
    path = tmp_path / "x.log"
    log = Log(str(path), "make noise", str(tmp_path), "", {}, cap=500)
    log.start()
    log.add(b"== test session starts ==\n")  # 26 bytes
    for i in range(100):
        log.add(b"line %03d\n" % i)  # 9 bytes each
    log.add("the end: \u00e9\n".encode())  # 12 bytes
    log.end("exit 1 after 0.1 s")
    assert (log.total, log.cut()) == (938, 938 - 250 - 250)
    text = path.read_text()
    head, _, tail = text.partition(
        "\n# ---- 438 bytes of output cut here: the log keeps its first 250 bytes and its last "
        "250 bytes (at most 500 bytes an attempt) ----\n"
    )
    lines = [f"line {i:03d}\n" for i in range(100)]
    header = f"$ make noise\n# in {tmp_path}, with {sys.prefix}\n\n"
    assert head == header + "== test session starts ==\n" + "".join(lines[:24]) + "line 024"
    assert tail.endswith("line 099\nthe end: \u00e9\n# exit 1 after 0.1 s\n")
    assert len(tail.encode()) == 250 + len("# exit 1 after 0.1 s\n")
    # small: the summary reads it whole
    assert log.text() == "== test session starts ==\n" + "".join(lines) + "the end: \u00e9\n"


def test_the_summary_of_a_large_output_reads_its_head_and_its_tail_only(tmp_path: Path) -> None:
    log = Log("", "pytest", str(tmp_path), "", {})
    log.add(b"=== test session starts ===\n")
    for _ in range(400):
        log.add(b"." * 9999 + b"\n")  # 4 MB of progress
    log.add(b"FAILED t.py::test_x - boom\n=== 1 failed, 9 passed in 1.00s ===\n")
    text = log.text()
    assert len(text.encode()) < 2.5 * 2**20
    assert text.startswith("=== test session starts ===\n")
    assert "\n[1.6 MB of output not read]\n" in text
    assert text.endswith("=== 1 failed, 9 passed in 1.00s ===\n")


@pytest.mark.envs
def test_ctrl_c_on_the_matrix_leaves_no_process_of_a_user_s_command_alive(
    tmp_path: Path, shared_state: Path
) -> None:
    """The attack run's case, through the CLI in a real cell: the tool exited 130 and the
    command's `sleep` ran on."""
    mark, root, started = marker(), tmp_path / "project", tmp_path / "started"
    root.mkdir()
    command = escaping(mark) + f"touch {started}; sleep {mark}"
    (root / "pyproject.toml").write_text(
        f'[tool.compat]\ncorpus = "none"\nrun = [{json.dumps("slow=" + command)}]\n'
        '[tool.compat.onnx]\nversions = ["1.23.2"]\npair = "1.24.4"\n'
        '[tool.compat.onnxruntime]\nversions = ["1.24.4"]\npair = "1.23.2"\n'
    )
    matrix = ["matrix", "--state-dir", str(shared_state), "--axis", "onnx", "--jobs", "1"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "compat", *matrix],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 300  # (the cell is built when no test built it yet)
        while not started.exists() and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.1)
        assert started.exists(), process.communicate()
        assert running(mark) == 5
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
        assert process.returncode == 130, out + err
        assert "onnx-compat: stopped by SIGINT: 0 of 1 cells done" in err
        assert gone(mark, 0) == []
    finally:
        process.kill()
        kill(mark)
