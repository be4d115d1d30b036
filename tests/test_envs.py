"""Real cells built with uv from the package index: few and small (marked `envs`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compat.cli import main
from tests.conftest import ROOT

pytestmark = pytest.mark.envs


def run_matrix(
    tmp_path: Path, *args: str, config: Path = ROOT / "pyproject.toml"
) -> tuple[int, dict]:  # type: ignore[type-arg]
    code = main(
        [
            "matrix",
            "--config",
            str(config),
            "--corpus",
            str(ROOT / "cases"),
            "--state-dir",
            str(tmp_path / "state"),
            "--out",
            str(tmp_path / "out"),
            *args,
        ]
    )
    return code, json.loads((tmp_path / "out" / "matrix.json").read_text())


def test_a_release_that_does_not_exist_is_an_install_error_while_other_cells_finish(
    tmp_path: Path,
) -> None:
    code, report = run_matrix(
        tmp_path,
        "--onnx",
        "1.99.0,1.23.2",
        "--ort",
        "1.24.4",
        "--cross",
        "--cases",
        "pad_pads_from_constant.*",
    )
    assert code == 1  # a cell that cannot be built is unexpected
    cells = {c["id"]: c for c in report["cells"]}
    broken, good = cells["onnx1.99.0-ort1.24.4"], cells["onnx1.23.2-ort1.24.4"]
    assert broken["state"] == "install-error"
    assert "onnx==1.99.0" in broken["detail"]  # uv's own message
    assert good["state"] == "ready"
    assert good["packages"]["onnx"] == "1.23.2" and good["packages"]["onnxruntime"] == "1.24.4"
    assert good["python"] and good["packages"]["numpy"] and good["packages"]["protobuf"]
    results = report["results"]
    assert {r["cell"] for r in results} == {"onnx1.23.2-ort1.24.4"}  # no fake case failures
    assert len(results) == 2 * 8  # two cases, eight built-in checks
    assert {r["outcome"] for r in results} <= {"pass", "skip"}
    markdown = (tmp_path / "out" / "matrix.md").read_text()
    assert "install-error" in markdown

    # An unchanged environment is reused, not rebuilt, on the next run.
    sentinel = tmp_path / "state" / "envs" / "onnx1.23.2-ort1.24.4" / "sentinel"
    sentinel.write_text("still here")
    code, again = run_matrix(
        tmp_path,
        "--onnx",
        "1.23.2",
        "--ort",
        "1.24.4",
        "--cross",
        "--cases",
        "pad_*,models.*",
        "--cases-dir",
        str(ROOT / "examples" / "models"),
    )
    assert code == 1 and sentinel.exists()  # 1: the example's wrong output annotation
    untimed = [{**r, "seconds": 0} for r in again["results"] if r["case"].startswith("pad_")]
    assert untimed == [{**r, "seconds": 0} for r in results]

    # Drop-in models are rows of their own, judged without a hand-written oracle.
    dropins = {
        (r["case"], r["check"]): r["outcome"]
        for r in again["results"]
        if r["case"].startswith("models.")
    }
    assert dropins[("models.wrong_output_annotation", "annotations")] == "fail"
    assert dropins[("models.layer_norm", "ort_run")] == "pass"
    markdown = (tmp_path / "out" / "matrix.md").read_text()
    assert "## models" in markdown and "| wrong_output_annotation · annotations " in markdown


def test_old_onnxruntime_needs_its_declared_numpy_constraint(tmp_path: Path) -> None:
    """onnxruntime 1.17.3 imports under numpy 1.x (the declared constraint) and not under 2."""
    without = tmp_path / "pyproject.toml"
    text = (ROOT / "pyproject.toml").read_text()
    without.write_text(text[: text.index("[[tool.compat.constraints]]")])
    args = (
        "--onnx",
        "1.23.2",
        "--ort",
        "1.17.3",
        "--cross",
        "--cases",
        "shape_slice_folding.start1_end3",
    )

    code, report = run_matrix(tmp_path / "without", *args, config=without)
    (cell,) = report["cells"]
    assert code == 1
    assert cell["state"] == "import-error"
    assert "compiled using NumPy 1.x cannot be run in" in cell["detail"]
    markdown = (tmp_path / "without" / "out" / "matrix.md").read_text()
    assert "import-error: A module that was compiled using NumPy 1.x" in markdown

    code, report = run_matrix(tmp_path / "with", *args)
    (cell,) = report["cells"]
    assert code == 0, report["results"]
    assert cell["state"] == "ready" and cell["packages"]["numpy"].startswith("1.")
    outcomes = {r["check"]: r["outcome"] for r in report["results"]}
    assert outcomes["ort_run"] == "pass" and outcomes["ort_optimized"] == "xfail"
