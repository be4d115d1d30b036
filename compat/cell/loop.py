"""The task loop: runs a plan's checks and appends one JSON line per finished task.

Protocol (the host's only channel to this process):

    python -m compat.cell run PLAN.json RESULTS.jsonl START

PLAN.json holds ``{"tasks": [{"case", "check", "case_dir"}, ...]}`` (the shapes of a
plan, a task and the record it comes to: compat/cell/protocol.py). The loop
runs tasks START, START+1, ... in order and appends one JSON line per finished
task to RESULTS.jsonl, flushed at once, so a crash loses nothing already done.
"""

from __future__ import annotations

import faulthandler
import json
import os
import re
import threading
import time
import traceback

from compat.cell import contain
from compat.cell.casedata import CaseData
from compat.cell.checks import find_check
from compat.cell.protocol import record
from compat.cell.session import set_limits
from compat.cell.verdict import Verdict, one_line


def run_task(cases, task):
    started = time.perf_counter()
    outcome = "pass"
    phase = ""
    detail = ""
    trace = ""
    extra = {}  # what a check says beside its verdict (a command: its runner, failing ids)
    if task.get("skip"):  # the host knows it cannot finish here (a runner too slow)
        return record(
            "skip",
            task["skip"],
            case=task["case"],
            check=task["check"],
            seconds=0.0,
            traceback="",
            retry=True,  # the next run tries again
        )
    try:
        case = cases.get(task["case_dir"])
        if case is None:
            case = cases[task["case_dir"]] = CaseData(task["case_dir"])
        case.task = task
        case.extra = extra
        detail = find_check(case, task["check"])(case) or ""
    except Verdict as verdict:
        outcome = verdict.outcome
        phase = verdict.phase
        detail = verdict.detail
        trace = verdict.trace
    except MemoryError as exc:  # the worker's memory limit: the model's allocation, not ours
        outcome = "crash"
        phase = "memory"
        detail = "memory limit reached (%s)" % one_line(exc)
    except AssertionError as exc:  # a case-specific check's way of saying "fail"
        outcome = "fail"
        phase = "check"
        detail = str(exc) or "assertion failed"
        trace = traceback.format_exc()
    except Exception as exc:  # a check's own bug, or an API missing in this release
        outcome = "error"
        phase = "check"
        detail = one_line(exc)
        trace = traceback.format_exc()
    if outcome == "error" and _BAD_ALLOC.search(detail):  # onnxruntime's, past the limit
        outcome = "crash"
        phase = "memory"
        detail = "memory limit reached (%s)" % detail
    seconds = round(time.perf_counter() - started, 4)
    return record(
        outcome,
        detail,
        phase,
        case=task["case"],
        check=task["check"],
        seconds=seconds,
        traceback=trace,
        **extra,
    )


#: How a C++ runtime says an allocation failed.
_BAD_ALLOC = re.compile(r"bad_alloc|bad allocation|Failed to allocate memory", re.I)


def end_with_parent(every=1.0):
    """A worker whose host died (a SIGKILL, a CI job's end) ends within `every` seconds,
    instead of running its tasks on, unwatched: it leads its own session, so nothing
    else stops it. A command it runs, and all that started, dies first (compat/cell/
    contain.py)."""
    parent = os.getppid()

    def watch():
        while True:
            time.sleep(every)
            if os.getppid() != parent:
                contain.kill_tree()
                os._exit(3)

    threading.Thread(target=watch, name="end-with-parent", daemon=True).start()


def set_memory(limit):
    """Bounds this worker's address space (bytes): an allocation bomb fails here, as a
    `crash` of its check, never starving the host or the other cells."""
    if not limit:
        return
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (int(limit), int(limit)))
    except (ImportError, ValueError, OSError):  # no such limit on this platform
        pass


def main(argv):
    """`run PLAN.json RESULTS.jsonl START`: runs the plan's tasks from START on."""
    faulthandler.enable()  # a segfault leaves "Fatal Python error" and a stack in the log
    end_with_parent()
    plan_path = argv[0]
    results_path = argv[1]
    start = int(argv[2])
    with open(plan_path) as f:
        plan = json.load(f)
    tasks = plan["tasks"]
    set_limits(plan.get("limits"))
    set_memory(plan.get("memory"))
    try:
        import onnxruntime

        onnxruntime.set_default_logger_severity(3)
    except Exception:
        pass
    cases = {}
    with open(results_path, "a") as out:
        for index in range(start, len(tasks)):
            done = run_task(cases, tasks[index])
            done["index"] = index
            out.write(json.dumps(done, sort_keys=True) + "\n")
            out.flush()  # the OS keeps it even if this process dies next
    return 0
