"""Each built-in check's pass, fail, error and skip paths, on tiny models, in process."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import helper

from compat.cell.compare import compare_outputs, largest_difference
from compat.cell.gates import model_opset
from compat.cell.loop import run_task
from compat.cell.session import ort_limits
from compat.core.case import Optimized
from compat.corpus.make import model, tensor
from tests.helpers import add_one_case, add_one_model, case_dir, hostile_case


def run(case: object, check: str, tmp_path: Path) -> dict[str, object]:
    directory = case_dir(case, tmp_path)  # type: ignore[arg-type]
    return run_task({}, {"case": "c", "check": check, "case_dir": directory})


@pytest.mark.parametrize(
    "check", ["checker", "shape_inference", "reference", "ort_run", "ort_optimized"]
)
def test_every_check_passes_on_a_correct_case(check: str, tmp_path: Path) -> None:
    result = run(add_one_case(), check, tmp_path)
    assert (result["outcome"], result["phase"]) == ("pass", ""), result


def test_checker_fails_on_an_unknown_op(tmp_path: Path) -> None:
    broken = add_one_model()
    broken.graph.node[0].op_type = "NoSuchOp"
    result = run(add_one_case(model=broken), "checker", tmp_path)
    assert (result["outcome"], result["phase"]) == ("fail", "check")
    assert "NoSuchOp" in str(result["detail"])


def test_shape_inference_fails_when_inference_rejects_the_model(tmp_path: Path) -> None:
    # x: [2] + one: [3] cannot broadcast: strict inference raises.
    result = run(add_one_case(model=add_one_model(one_dims=(3,))), "shape_inference", tmp_path)
    assert (result["outcome"], result["phase"]) == ("fail", "infer")
    assert "InferenceError" in str(result["detail"])


def test_shape_inference_fails_when_the_shape_differs_from_the_expectation(tmp_path: Path) -> None:
    result = run(add_one_case(output_shapes={"y": [3]}), "shape_inference", tmp_path)
    assert (result["outcome"], result["phase"]) == ("fail", "compare")
    assert result["detail"] == "inferred shape of 'y' is [2], expected [3]"


def test_reference_fails_on_wrong_values_and_says_where(tmp_path: Path) -> None:
    wrong = {"y": np.array([2.0, 9.0], dtype=np.float32)}
    result = run(add_one_case(expected=wrong), "reference", tmp_path)
    assert (result["outcome"], result["phase"]) == ("fail", "compare")
    assert result["detail"] == (
        "output 'y' differs at 1 of 2 elements beyond rtol 1e-05, atol 1e-06: largest "
        "absolute difference 6 and relative 0.667 at [1] (got 3.0, expected 9.0)"
    )


def test_ort_run_fails_at_every_level_with_wrong_values(tmp_path: Path) -> None:
    wrong = {"y": np.array([2.0, 9.0], dtype=np.float32)}
    result = run(add_one_case(expected=wrong), "ort_run", tmp_path)
    assert (result["outcome"], result["phase"]) == ("fail", "compare")
    # one message for all four levels, not four copies of it
    assert str(result["detail"]).startswith("disabled, basic, extended, all: output 'y' differs")
    assert str(result["detail"]).count("output 'y'") == 1


def test_ort_run_fails_on_a_wrong_dtype(tmp_path: Path) -> None:
    wrong = {"y": np.array([2.0, 3.0], dtype=np.float64)}
    result = run(add_one_case(expected=wrong), "ort_run", tmp_path)
    assert result["outcome"] == "fail"
    assert "dtype float32, expected float64" in str(result["detail"])


def test_ort_run_reports_a_session_error_with_its_phase(tmp_path: Path) -> None:
    broken = add_one_model()
    broken.graph.node[0].op_type = "NoSuchOp"
    result = run(add_one_case(model=broken), "ort_run", tmp_path)
    assert (result["outcome"], result["phase"]) == ("error", "session@disabled")
    assert "NoSuchOp" in str(result["detail"])


def test_ort_optimized_fails_when_the_structure_differs(tmp_path: Path) -> None:
    keeps = Optimized(op_counts={"Identity": 1}, meaning="Identity removed")
    result = run(add_one_case(optimized=keeps), "ort_optimized", tmp_path)
    assert (result["outcome"], result["phase"]) == ("fail", "compare")
    assert str(result["detail"]).startswith("Identity removed: Identity x0 (expected 1)")


def test_ort_optimized_skips_without_an_expectation(tmp_path: Path) -> None:
    result = run(add_one_case(optimized=None), "ort_optimized", tmp_path)
    assert result["outcome"] == "skip"


def test_checks_skip_an_opset_the_installed_onnx_does_not_know(tmp_path: Path) -> None:
    future = add_one_model()
    future.opset_import[0].version = 999
    for check in ("checker", "shape_inference", "reference"):
        result = run(add_one_case(model=future), check, tmp_path / check)
        assert result["outcome"] == "skip", result
        assert "opset 999 > max" in str(result["detail"])


def test_a_raising_custom_check_is_an_error_and_an_assertion_is_a_fail(tmp_path: Path) -> None:
    directory = case_dir(hostile_case("explode", "wrong"), tmp_path)
    cases: dict[str, object] = {}
    explode = run_task(cases, {"case": "c", "check": "explode", "case_dir": directory})
    wrong = run_task(cases, {"case": "c", "check": "wrong", "case_dir": directory})
    assert (explode["outcome"], explode["detail"]) == ("error", "RuntimeError: boom")
    assert (wrong["outcome"], wrong["detail"]) == ("fail", "got 3, expected 4")


def test_an_unknown_check_is_an_error(tmp_path: Path) -> None:
    result = run(add_one_case(), "no_such_check", tmp_path)
    assert result["outcome"] == "error"
    assert "unknown check 'no_such_check'" in str(result["detail"])


def test_compare_outputs_accepts_values_within_tolerance() -> None:
    got = [np.array([1.0, 2.0 + 1e-7], dtype=np.float32)]
    expected = {"y": np.array([1.0, 2.0], dtype=np.float32)}
    assert compare_outputs(["y"], got, expected, rtol=1e-5, atol=1e-6) is None
    far = [np.array([1.0, 2.1], dtype=np.float32)]
    assert compare_outputs(["y"], far, expected, rtol=1e-5, atol=1e-6) is not None


def test_a_difference_names_the_largest_absolute_and_relative_and_where() -> None:
    expected = {"y": np.array([[100.0, 0.01], [0.0, -3.0]], np.float32)}
    got = [np.array([[100.002, 0.0101], [0.0, -3.0]], np.float32)]
    assert compare_outputs(["y"], got, expected, rtol=1e-5, atol=1e-6) == (
        "output 'y' differs at 2 of 4 elements beyond rtol 1e-05, atol 1e-06: largest "
        "absolute difference 0.002 at [0, 0] (got 100.002, expected 100.0), largest "
        "relative 0.01 at [0, 1] (got 0.0101, expected 0.01)"
    )
    # an output's own tolerance replaces the case's for that output only
    assert compare_outputs(["y"], got, expected, 1e-5, 1e-6, {"y": (0.02, 0.0)}) is None
    assert compare_outputs(["y"], got, expected, 1e-5, 1e-6, {"z": (0.02, 0.0)}) is not None
    assert largest_difference(["y"], got, expected) == (
        pytest.approx(0.002, rel=0.01),
        "y",
    )
    assert largest_difference(["y"], [expected["y"]], expected) is None


def test_model_opset_reads_the_default_domain() -> None:
    built = helper.make_model(
        helper.make_graph([], "g", [], []),
        opset_imports=[helper.make_opsetid("com.microsoft", 1), helper.make_opsetid("", 17)],
    )
    assert model_opset(built) == 17


def test_onnxruntime_checks_skip_a_model_newer_than_the_runtime_loads(tmp_path: Path) -> None:
    """The limit is probed from the runtime with one-node models, not read off its message."""
    future = add_one_model()
    future.ir_version = 99
    for check in ("ort_run", "ort_optimized"):
        result = run(add_one_case(model=future), check, tmp_path / check)
        assert result["outcome"] == "skip", result
        assert str(result["detail"]).startswith("IR version 99 > max ")
    max_ir, max_opset = ort_limits()
    assert max_ir >= 10 and max_opset >= 21  # the host's onnxruntime is >= 1.18.1


@pytest.mark.parametrize("check", ["reference", "ort_run"])
def test_string_tensors_travel_to_the_cells(check: str, tmp_path: Path) -> None:
    words = np.array(["a", "bc", ""], dtype=object)
    built = model(
        [helper.make_node("Identity", ["s"], ["t"])],
        [tensor("s", np.str_, [3])],
        [tensor("t", np.str_, [3])],
    )
    case = add_one_case(model=built, inputs={"s": words}, expected={"t": words}, output_shapes={})
    assert run(case, check, tmp_path)["outcome"] == "pass"
    wrong = add_one_case(model=built, inputs={"s": words}, expected={"t": words[::-1].copy()})
    assert run(wrong, check, tmp_path / "wrong")["outcome"] == "fail"
