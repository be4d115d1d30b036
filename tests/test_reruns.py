"""Nondeterminism is a state: unexpected outcomes rerun in fresh workers, disagreeing
runs are `flaky`, and a bug known to be nondeterministic is `xfail` either way."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

from compat.cell.loop import run_task
from compat.core.case import KnownFailure
from compat.core.install import InstallRequest
from compat.core.outcomes import CheckResult, Outcome
from compat.corpus.known import classify
from compat.execute.reruns import judge_attempts, judge_runs, next_attempt, rerun
from compat.execute.worker import Task, run_worker
from compat.plan.matrix import Cell
from compat.state import cellcode
from tests.helpers import add_one_case, case_dir, hostile_case


def record(outcome: str, detail: str = "", phase: str = "") -> dict[str, object]:
    return {
        "case": "c",
        "check": "k",
        "outcome": outcome,
        "phase": phase,
        "detail": detail,
        "seconds": 0.1,
    }


def test_runs_that_agree_keep_their_outcome() -> None:
    runs = [record("fail", "got nan"), record("fail", "got 3.0"), record("fail", "got nan")]
    assert judge_runs(runs) == runs[0]


def test_runs_that_disagree_are_flaky_with_counts_and_the_first_odd_detail() -> None:
    runs = [
        record("pass"),
        record("fail", "got nan, expected 0.0", "compare"),
        record("pass"),
        record("pass"),
    ]
    judged = judge_runs(runs)
    assert judged["outcome"] == "flaky"
    assert judged["detail"] == (
        "failed 1 of 4 runs, passed 3 of 4 runs: fail@compare: got nan, expected 0.0"
    )
    assert judged["runs"] == ["pass", "fail", "pass", "pass"]


def attempt(outcome: str, failing: list[str] | None, **more: object) -> dict[str, object]:
    """A command's record, as compat/cell/command.py writes it (pytest named its failures)."""
    said = {"runner": "pytest", **({"failing": failing} if failing is not None else {})}
    detail = f"exit 1: {len(failing or [])} failed" if outcome == "fail" else "exit 0"
    return {
        **record(outcome, detail, "command" if outcome == "fail" else ""),
        "check": "command",
        **said,
        **more,
    }


A, B, C = "tests/t.py::test_a", "tests/t.py::test_b", "tests/t.py::test_c"


def test_a_command_whose_rerun_fails_the_same_tests_fails_with_its_first_detail() -> None:
    first = attempt("fail", [A, B])
    judged = judge_attempts([first, attempt("fail", [A, B], observed=[A, B])])
    assert judged["outcome"] == "fail" and judged["detail"] == first["detail"]
    assert judged["runs"] == ["fail", "fail"]  # judged: served from the cache next time
    assert "flaky" not in judged


def test_a_test_that_fails_in_one_attempt_only_is_flaky_by_name() -> None:
    judged = judge_attempts([attempt("fail", [A, B]), attempt("fail", [A], observed=[A, B])])
    assert judged["outcome"] == "fail"  # test_a failed in both: a real failure
    assert judged["flaky"] == [B]
    assert str(judged["detail"]).endswith(
        "; flaky: 1 test failed in one attempt, not in another: tests/t.py::test_b"
    )
    judged = judge_attempts([attempt("fail", [A, B]), attempt("pass", [], observed=[A, B])])
    assert judged["outcome"] == "flaky" and judged["flaky"] == [A, B]
    assert str(judged["detail"]).startswith(
        "flaky: 2 tests failed in one attempt, not in another: tests/t.py::test_a, "
        "tests/t.py::test_b; attempt 1: exit 1: 2 failed"
    )


def test_a_test_the_rerun_never_reached_is_no_evidence_of_flakiness() -> None:
    """The rerun ran only A (a plugin that could not load, an id pytest would not take):
    B passed nowhere, so it failed every time it ran."""
    judged = judge_attempts([attempt("fail", [A, B]), attempt("fail", [A], observed=[A])])
    assert judged["outcome"] == "fail" and "flaky" not in judged
    # a whole rerun (unittest, or pytest without ids) saw every test
    judged = judge_attempts([attempt("fail", [A, C]), attempt("fail", [A])])
    assert judged["flaky"] == [C]


def test_a_command_without_named_tests_is_judged_by_its_outcomes() -> None:
    bare = [{**attempt("fail", None), "runner": ""}, {**attempt("pass", None), "runner": ""}]
    judged = judge_attempts(bare)
    assert judged["outcome"] == "flaky" and judged["runs"] == ["fail", "pass"]
    same = judge_attempts([attempt("fail", []), attempt("fail", [])])
    assert same["outcome"] == "fail" and same["runs"] == ["fail", "fail"]


def test_a_command_s_rerun_runs_only_what_pytest_named() -> None:
    task = Task("command.tests", "command", "/cases/x", log="/logs/x.log")
    again = next_attempt(task, attempt("fail", [A, B]), 2)
    assert (again.attempt, again.only) == (2, (A, B))
    unnamed = {**attempt("fail", [A]), "runner": "unittest"}
    assert next_attempt(task, unnamed, 2).only == ()  # unittest: the whole command again
    model = Task("tiny.case", "ort_run", "/cases/y")
    assert next_attempt(model, record("fail"), 2) == model


@pytest.mark.subprocess
def test_an_unexpected_outcome_reruns_in_fresh_workers_and_a_flip_is_flaky(
    tmp_path: Path,
) -> None:
    directory = case_dir(hostile_case("flip", "explode"), tmp_path / "cases")
    tasks = [Task("tiny.hostile", name, directory) for name in ("flip", "explode")]
    code = cellcode.stage(tmp_path / "code")
    first = run_worker(Path(sys.executable), tasks, tmp_path / "cell", 30, code)
    assert [r["outcome"] for r in first] == ["fail", "error"]

    judged = rerun(Path(sys.executable), code, tasks, first, 3, tmp_path / "cell", 30)

    flip, explode = judged
    assert flip["outcome"] == "flaky"
    assert flip["detail"].startswith("failed 1 of 4 runs, passed 3 of 4 runs: fail@check:")
    assert "got nan" in flip["detail"]
    assert explode["outcome"] == "error"  # the same every time: a real error, not flaky
    assert (tmp_path / "cases" / "tiny.hostile" / "flip.count").read_text() == "4"


def _random_model_case() -> object:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    nodes = [
        helper.make_node("RandomUniform", [], ["r"], shape=[2, 3], dtype=TensorProto.FLOAT),
        helper.make_node("Add", ["x", "r"], ["y"]),
    ]
    model = helper.make_model(
        helper.make_graph(nodes, "random", [x], [y]),
        opset_imports=[helper.make_opsetid("", 17)],
    )
    model.ir_version = 8
    inputs = {"x": np.zeros((2, 3), np.float32)}
    return add_one_case(model=model, inputs=inputs, expected={"y": np.zeros((2, 3), np.float32)})


def test_an_unseeded_random_uniform_is_reported_as_nondeterministic(tmp_path: Path) -> None:
    directory = case_dir(_random_model_case(), tmp_path)  # type: ignore[arg-type]
    result = run_task({}, {"case": "c", "check": "ort_run", "case_dir": directory})
    assert result["outcome"] == "flaky", result
    assert result["phase"] == "run@disabled"
    assert str(result["detail"]).startswith("nondeterministic: two runs at level disabled differ")


def test_a_known_nondeterministic_bug_is_xfail_whatever_one_run_shows() -> None:
    bug = KnownFailure(
        "onnxruntime", "<1.20", ("ort_run",), "garbage", "https://x/1", outcomes=("fail", "flaky")
    )
    case = add_one_case(known=(bug,))
    cell = Cell("1.23.2", "1.19.2", InstallRequest())
    for outcome in (Outcome.PASS, Outcome.FAIL, Outcome.FLAKY):
        got = classify(CheckResult("cell", "c", "ort_run", outcome), case, cell)
        assert got.outcome is Outcome.XFAIL, outcome  # never xpass, never unexpected
    outside = classify(
        CheckResult("cell", "c", "ort_run", Outcome.FLAKY),
        case,
        Cell("1.23.2", "1.24.4", InstallRequest()),
    )
    assert outside.outcome is Outcome.FLAKY and outside.outcome.unexpected


@pytest.mark.envs
@pytest.mark.parametrize("check", ["crash_once", "stall_once"])
def test_a_crash_or_a_stall_once_is_never_kept_and_the_next_plain_run_is_clean(
    check: str, tmp_path: Path, shared_state: Path
) -> None:
    """A worker killed once (as the OOM killer does), or stalled past the timeout once, is
    `flaky` in that run, and neither cached nor remembered: the next run computes it."""
    from compat.corpus.discover import Corpus
    from compat.execute.progress import Progress
    from compat.execute.run import Settings, run_matrix
    from compat.plan.config import load_config
    from compat.plan.matrix import expand
    from tests.conftest import ROOT

    plan = expand(load_config(ROOT / "pyproject.toml"), ("1.23.2",), ("1.24.4",), cross=True)
    case = hostile_case(check)
    corpus = Corpus([replace(case, id=f"tiny.{check}")], {"tiny": "hostile checks"})
    settings = Settings(
        shared_state / "envs",
        tmp_path / "work",
        timeout=3,
        jobs=1,
        python=sys.executable,
        cache_dir=tmp_path / "cache",
        reruns=1,
    )
    first = run_matrix(plan, corpus, settings, Progress(1, live=False))
    (result,) = first.results
    assert result.outcome is Outcome.FLAKY and result.detail.startswith(
        ("crashed 1 of 2 runs", "timed out 1 of 2 runs")
    )
    again = run_matrix(plan, corpus, settings, Progress(1, live=False))
    (result,) = again.results
    assert result.outcome is Outcome.PASS and result.origin == ""  # computed, not served
    assert not again.run.get("remembered")


@pytest.mark.envs
def test_after_a_sigkill_of_the_host_every_finished_result_is_served_from_the_cache(
    tmp_path: Path, shared_state: Path
) -> None:
    """What a CI job timeout does: the host dies mid-unit; what its worker finished is kept."""
    import os
    import signal
    import subprocess
    import time

    from compat.state.cache import ResultCache
    from tests.conftest import ROOT

    cache = tmp_path / "cache"
    script = ROOT / "tests" / "data" / "run_hostile.py"
    host = subprocess.Popen(
        [
            sys.executable,
            str(script),
            str(shared_state / "envs"),
            str(tmp_path / "work"),
            str(cache),
            "ok",
            "wait",
        ],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not ResultCache(cache).entries:
            time.sleep(0.2)  # `ok` finished; `wait` is running in the same worker
        assert ResultCache(cache).entries, "the finished result never reached the cache"
    finally:
        host.send_signal(signal.SIGKILL)
        host.wait()

    def workers() -> list[int]:
        found = []
        for proc in Path("/proc").iterdir():
            try:
                line = (proc / "cmdline").read_bytes()
            except OSError:
                continue
            if str(tmp_path / "work").encode() in line:
                found.append(int(proc.name))
        return found

    deadline = time.monotonic() + 30
    while workers() and time.monotonic() < deadline:
        time.sleep(0.2)  # a worker leads its own session: it must notice its host is gone
    left = workers()
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, "the worker outlived its host"
    (record,) = ResultCache(cache).entries.values()
    assert record["outcome"] == "pass" and record["check"] == "ok"
