"""Nondeterminism is a state: unexpected outcomes rerun in fresh workers, disagreeing
runs are `flaky`, and a bug known to be nondeterministic is `xfail` either way."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

from compat import cellcode
from compat.case import KnownFailure
from compat.cell.loop import run_task
from compat.known import classify
from compat.matrix import Cell
from compat.outcomes import CheckResult, Outcome
from compat.reruns import judge_runs, rerun
from compat.runner import Task, run_worker
from tests.helpers import add_one_case, case_dir, hostile_case


def record(outcome: str, detail: str = "", phase: str = "") -> dict[str, object]:
    return {"case": "c", "check": "k", "outcome": outcome, "phase": phase, "detail": detail,
            "seconds": 0.1}  # fmt: skip


def test_runs_that_agree_keep_their_outcome() -> None:
    runs = [record("fail", "got nan"), record("fail", "got 3.0"), record("fail", "got nan")]
    assert judge_runs(runs) == runs[0]


def test_runs_that_disagree_are_flaky_with_counts_and_the_first_odd_detail() -> None:
    runs = [record("pass"), record("fail", "got nan, expected 0.0", "compare"), record("pass"),
            record("pass")]  # fmt: skip
    judged = judge_runs(runs)
    assert judged["outcome"] == "flaky"
    assert judged["detail"] == (
        "failed 1 of 4 runs, passed 3 of 4 runs: fail@compare: got nan, expected 0.0"
    )
    assert judged["runs"] == ["pass", "fail", "pass", "pass"]


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
    bug = KnownFailure("onnxruntime", "<1.20", ("ort_run",), "garbage", "https://x/1",
                       outcomes=("fail", "flaky"))  # fmt: skip
    case = add_one_case(known=(bug,))
    cell = Cell("1.23.2", "1.19.2", ())
    for outcome in (Outcome.PASS, Outcome.FAIL, Outcome.FLAKY):
        got = classify(CheckResult("cell", "c", "ort_run", outcome), case, cell)
        assert got.outcome is Outcome.XFAIL, outcome  # never xpass, never unexpected
    outside = classify(CheckResult("cell", "c", "ort_run", Outcome.FLAKY), case,
                       Cell("1.23.2", "1.24.4", ()))  # fmt: skip
    assert outside.outcome is Outcome.FLAKY and outside.outcome.unexpected
