"""The seed corpus: interface ids, stable bytes, and its checks on the host's releases."""

from __future__ import annotations

from pathlib import Path

import onnx
import onnxruntime
import pytest

from compat.cell.loop import run_task
from compat.core.errors import ConfigError
from compat.core.install import InstallRequest
from compat.core.outcomes import CheckResult, Outcome
from compat.core.versions import in_range
from compat.corpus.discover import discover_cases, select_cases, write_case
from compat.corpus.known import classify
from compat.plan.matrix import Cell
from tests.conftest import ROOT

CORPUS = discover_cases(ROOT / "cases")
INTERFACE_IDS = {
    "pad_pads_from_constant.value_ints",
    "pad_pads_from_constant.tensor",
    *(
        f"conv_bias_fusion.{kind}.{form}"
        for kind in ("batchnorm", "add", "mul")
        for form in ("omitted", "empty_name")
    ),
    *(
        f"shape_slice_folding.{v}"
        for v in ("start1_end3", "startm3_endm1", "start0_end2", "static_input")
    ),
}


def test_the_seed_case_ids_are_all_there() -> None:
    assert {c.id for c in CORPUS.cases} >= INTERFACE_IDS
    assert {"pad_pads_from_constant", "conv_bias_fusion", "shape_slice_folding"} <= set(
        CORPUS.families
    )
    assert all(CORPUS.families.values())


def test_model_bytes_are_identical_across_builds(tmp_path: Path) -> None:
    again = discover_cases(ROOT / "cases")
    for a, b in zip(CORPUS.cases, again.cases, strict=True):
        assert write_case(a, tmp_path / "a").sha256 == write_case(b, tmp_path / "b").sha256


def test_select_cases_by_glob() -> None:
    picked = select_cases(CORPUS.cases, ("shape_slice_folding.start*",))
    assert [c.id for c in picked] == [
        "shape_slice_folding.start0_end2",
        "shape_slice_folding.start1_end3",
        "shape_slice_folding.startm3_endm1",
    ]


@pytest.mark.parametrize("case", CORPUS.cases, ids=lambda c: c.id)
def test_each_case_is_as_expected_on_the_host_releases(case: object, tmp_path: Path) -> None:
    """Every check of every seed case, run in process on the host's onnx and onnxruntime."""
    files = write_case(case, tmp_path)  # type: ignore[arg-type]
    cell = Cell(onnx.__version__, onnxruntime.__version__, InstallRequest())
    for check in files.case.checks:
        raw = run_task({}, {"case": case.id, "check": check, "case_dir": str(files.directory)})  # type: ignore[attr-defined]
        result = classify(
            CheckResult(
                "host", raw["case"], check, Outcome(raw["outcome"]), raw["detail"], raw["phase"]
            ),
            files.case,
            cell,
        )
        assert not result.outcome.unexpected, result


def test_value_ints_pads_are_a_known_failure_before_onnx_1_21() -> None:
    (case,) = [c for c in CORPUS.cases if c.id == "pad_pads_from_constant.value_ints"]
    (bug,) = case.known
    assert bug.package == "onnx" and {"checker", "shape_inference"} <= set(bug.checks)
    assert in_range("1.14.1", bug.versions) and in_range("1.20.1", bug.versions)
    assert not in_range("1.21.0", bug.versions)


def test_a_case_module_without_cases_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "broken_family.py").write_text('"""Nothing here."""\n')
    with pytest.raises(ConfigError, match="defines no cases\\(\\) function"):
        discover_cases(tmp_path)
