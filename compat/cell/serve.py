"""A long-lived worker: runs one task per line of stdin, answers one line on stdout.

Protocol (`nox -s triage` evaluates hundreds of candidate models this way, in the
failing release's own environment, without starting a process per candidate):

    python -m compat.cell serve [LIMITS_JSON]

Each stdin line is a task ``{"case", "check", "case_dir"}``; each answer is the
task's result record (as `run` appends it) on one stdout line. Anything the
libraries print goes to stderr: stdout carries answers only. The host restarts the
worker when it dies (a crashing candidate) or stalls past its timeout.
"""

from __future__ import annotations

import faulthandler
import json
import os
import sys

from compat.cell.loop import end_with_parent, run_task
from compat.cell.session import set_limits


def main(argv):
    faulthandler.enable()
    end_with_parent()
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # native code printing to stdout lands in the log, not in the answers
    sys.stdout = sys.stderr
    set_limits(json.loads(argv[0]) if argv else None)
    try:
        import onnxruntime

        onnxruntime.set_default_logger_severity(3)
    except Exception:
        pass
    answers.write(json.dumps({"ready": True}) + "\n")
    answers.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        record = run_task({}, json.loads(line))  # a fresh case per task: candidates differ
        answers.write(json.dumps(record, sort_keys=True) + "\n")
        answers.flush()
    return 0
