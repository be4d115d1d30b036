"""The `onnx_backend` case source, cross-checked against onnx's own backend runner."""

from __future__ import annotations

import unittest
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from compat.cell.casedata import load_pb_data
from compat.cell.loop import run_task
from compat.core.case import Case
from compat.core.outcomes import CellRecord, CellState, CheckResult, Outcome
from compat.core.report import CaseInfo, Report
from compat.corpus.backend_suite import backend_cases
from compat.corpus.discover import write_case
from compat.render.scoreboard import render_scoreboard, scoreboard_rows


@pytest.fixture(scope="session")
def suite() -> tuple[str, list[Case]]:
    """(family, cases): onnx's backend suite, generated once a session and only for the
    tests that read it (about 7 s; never at collection)."""
    family, _, cases = backend_cases()
    return family, cases


@pytest.fixture(scope="session")
def by_name(suite: tuple[str, list[Case]]) -> dict[str, Case]:
    return {c.id.split(".", 1)[1]: c for c in suite[1]}


#: Passing and failing tests on the host's onnxruntime (>= 1.32), tensors and sequences.
SLICE = [
    "test_abs",
    "test_add_bcast",
    "test_relu",
    "test_sequence_insert_at_back",
    "test_split_variable_parts_1d_opset18",
    "test_stft",  # a numerical mismatch
    "test_resize_downsample_scales_linear_align_corners",  # a numerical mismatch
    "test_max_int16",  # no kernel
    "test_cast_FLOAT_to_BFLOAT16",  # numpy cannot carry the type
]


def test_the_suite_is_generated_once_with_op_tags(
    suite: tuple[str, list[Case]], by_name: dict[str, Case]
) -> None:
    family, cases = suite
    assert family == "onnx_backend" and len(cases) > 1000
    assert by_name["test_abs"].tags == ("Abs",)
    expanded = [n for n in by_name if n.endswith("_expanded")]
    assert expanded and by_name[expanded[0]].tags == by_name[expanded[0][: -len("_expanded")]].tags


def ours(case: Case, tmp_path: Path) -> bool:
    directory = str(write_case(case, tmp_path).directory)
    result = run_task({}, {"case": case.id, "check": "ort_run", "case_dir": directory})
    assert result["outcome"] != "skip", result
    return result["outcome"] == "pass"


def theirs(names: list[str]) -> dict[str, bool]:
    """onnx.backend.test.BackendTest with onnxruntime's backend, on the same release."""
    import onnx.backend.test
    import onnxruntime.backend

    runner = onnx.backend.test.BackendTest(onnxruntime.backend, __name__)
    for name in names:
        runner.include(f"^{name}_cpu$")
    suite = unittest.TestSuite()
    for case in runner.test_cases.values():
        suite.addTests(unittest.defaultTestLoader.loadTestsFromTestCase(case))
    result = unittest.TestResult()
    suite.run(result)
    failed = {t.id().rsplit(".", 1)[1] for t, _ in result.failures + result.errors}
    skipped = {t.id().rsplit(".", 1)[1] for t, _ in result.skipped}  # `include` skips the rest
    assert not {f"{name}_cpu" for name in names} & skipped
    return {name: f"{name}_cpu" not in failed for name in names}


def test_pass_and_fail_agree_with_onnx_backend_runner_on_the_host_release(
    tmp_path: Path, by_name: dict[str, Case]
) -> None:
    reference = theirs(SLICE)
    mine = {name: ours(by_name[name], tmp_path) for name in SLICE}
    assert mine == reference
    assert any(reference.values()) and not all(reference.values())  # the slice has both


def board(outcomes: dict[str, list[Outcome]]) -> Report:
    """Two releases, tests with the given outcomes on each."""
    cells = tuple(
        CellRecord(f"onnx1.23.2-ort{v}", "1.23.2", v, CellState.READY) for v in ("1.22.1", "1.24.4")
    )
    cases = tuple(
        CaseInfo(
            f"onnx_backend.{name}",
            "onnx_backend",
            name,
            "0",
            {"ort_run": "onnxruntime"},
            tags=(name.split("_")[1].capitalize(),),
        )
        for name in outcomes
    )
    results = tuple(
        CheckResult(cell.id, f"onnx_backend.{name}", "ort_run", o, detail=f"{o.value} detail")
        for name, pair in outcomes.items()
        for cell, o in zip(cells, pair, strict=True)
    )
    return Report(
        cells,
        cases,
        results,
        {"onnxruntime": tuple(c.id for c in cells)},
        run={"generator_onnx": "1.23.2"},
    )


def test_scores_count_skips_apart_and_changes_lead_with_regressions() -> None:
    report = board(
        {
            "test_abs_a": [Outcome.PASS, Outcome.FAIL],
            "test_add_b": [Outcome.FAIL, Outcome.PASS],
            "test_cos_c": [Outcome.SKIP, Outcome.PASS],
            "test_div_d": [Outcome.ERROR, Outcome.CRASH],
        }
    )
    rows = scoreboard_rows(report)
    assert rows[0] == ["1.22.1", "1", "1", "1", "0", "0", "1", "4", "33.3%"]
    assert rows[1] == ["1.24.4", "2", "1", "0", "1", "0", "0", "4", "50.0%"]
    text = render_scoreboard(report) or ""
    assert "## 1 regressions between consecutive releases" in text
    assert "- 1.22.1 → 1.24.4: `test_abs_a`: fail: fail detail" in text
    assert "- `test_abs_a`: fail: fail detail" in text
    assert "**1 started passing**: `test_add_b`" in text
    assert "**1 newly supported** (skipped before, now pass): `test_cos_c`" in text
    assert "| Abs  | 1/1      | 0/1      |" in text


def test_no_backend_tests_no_scoreboard() -> None:
    report = board({})
    assert render_scoreboard(Report(report.cells, (), (), report.axes)) is None


def same(got: Any, want: Any, where: str) -> None:
    """Equal values: None for an empty optional, lists element by element, arrays by
    dtype, shape and every element."""
    if want is None:
        assert got is None, f"{where}: {got!r} is not an empty optional"
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{where}: {got!r}"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            same(g, w, f"{where}[{i}]")
    else:
        want = np.asarray(want)
        assert isinstance(got, np.ndarray), f"{where}: {type(got).__name__}"
        assert (got.dtype, got.shape) == (want.dtype, want.shape), where
        np.testing.assert_array_equal(got, want, err_msg=where)


def onnx_reads(directory: Path, model: onnx.ModelProto) -> dict[str, Any]:
    """Every data/*.pb as onnx.numpy_helper decodes it, typed as the model declares the
    value (what onnx.backend.test's runner does with its own test data)."""
    protos = {"sequence_type": onnx.SequenceProto, "optional_type": onnx.OptionalProto}
    readers: dict[type, Any] = {
        onnx.SequenceProto: numpy_helper.to_list,
        onnx.OptionalProto: numpy_helper.to_optional,
        onnx.TensorProto: numpy_helper.to_array,
    }
    values = {}
    for prefix, key, infos in (
        ("input", "in.", model.graph.input),
        ("output", "out.", model.graph.output),
    ):
        for j, info in enumerate(infos):
            path = directory / "data" / f"{prefix}_{j}.pb"
            if path.exists():
                proto = protos.get(str(info.type.WhichOneof("value")), onnx.TensorProto)()
                proto.ParseFromString(path.read_bytes())
                values[key + info.name] = readers[type(proto)](proto)
    return values


#: Sequences and optionals of every shape the suite has: a sequence in and out, an
#: empty optional, an optional holding a sequence, one holding a tensor, a tensor
#: split into a sequence.
PB_CASES = [
    "test_sequence_insert_at_back",
    "test_optional_has_element_empty_optional_input",
    "test_optional_get_element_optional_sequence",
    "test_optional_has_element_optional_input",
    "test_split_to_sequence_1",
]


@pytest.mark.parametrize("name", PB_CASES)
def test_sequences_and_optionals_travel_as_protobuf_files(
    name: str, tmp_path: Path, by_name: dict[str, Case]
) -> None:
    case = by_name[name]
    files = write_case(case, tmp_path)
    data = load_pb_data(str(files.directory), case.model)
    generated = {f"in.{k}": v for k, v in case.inputs.items()}
    generated.update({f"out.{k}": v for k, v in case.expected.items()})
    assert sorted(data) == sorted(generated)
    decoded = onnx_reads(files.directory, case.model)
    assert sorted(decoded) == sorted(generated)
    for key, want in generated.items():
        same(data[key], want, f"{name} {key} vs the generator")
        same(data[key], decoded[key], f"{name} {key} vs onnx.numpy_helper")


def test_the_decoded_values_are_the_ones_onnx_generates(
    tmp_path: Path, by_name: dict[str, Case]
) -> None:
    """The values of onnx's generators (onnx/backend/test/case/node), written down."""
    insert = by_name["test_sequence_insert_at_back"]
    data = load_pb_data(str(write_case(insert, tmp_path).directory), insert.model)
    first = [np.array([1, 2, 3, 4]), np.array([5, 6, 7]), np.array([8, 9])]
    same(data["in.sequence"], first, "in.sequence")
    same(data["in.tensor"], np.array([10, 11, 12]), "in.tensor")
    same(data["out.output_sequence"], [*first, np.array([10, 11, 12])], "out.output_sequence")

    empty = by_name["test_optional_has_element_empty_optional_input"]
    data = load_pb_data(str(write_case(empty, tmp_path).directory), empty.model)
    assert data["in.optional_input"] is None
    same(data["out.output"], np.array(False), "out.output")

    held = by_name["test_optional_get_element_optional_sequence"]
    data = load_pb_data(str(write_case(held, tmp_path).directory), held.model)
    same(data["in.optional_input"], [np.array([1, 2, 3, 4], dtype=np.int32)], "in")
    same(data["out.output"], [np.array([1, 2, 3, 4], dtype=np.int32)], "out")
