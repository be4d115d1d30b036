"""Drop-in model directories: cases without a hand-written oracle."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

from compat.cell.loop import run_task
from compat.corpus import write_case
from compat.dropin import load_dropins
from compat.errors import ConfigError
from tests.conftest import ROOT
from tests.helpers import add_one_model

EXAMPLES = ROOT / "examples" / "models"


def test_every_model_becomes_a_case_with_the_checks_that_need_no_oracle() -> None:
    family, description, cases = load_dropins(EXAMPLES)
    assert family == "models" and "examples/models" in description
    assert [c.id for c in cases] == [
        "models.layer_norm",
        "models.reshape_batch",
        "models.wrong_output_annotation",
    ]
    assert all("ort_optimized" not in c.checks and "annotations" in c.checks for c in cases)
    layer_norm = cases[0]
    saved = np.load(EXAMPLES / "layer_norm.npz")["x"]
    assert np.array_equal(layer_norm.inputs["x"], saved)  # the npz beside it
    assert cases[1].inputs["x"].shape == (2, 4, 8)  # generated from [batch, 4, 8]


@pytest.mark.parametrize("check", ["ort_run", "reference"])
def test_runtimes_are_compared_with_onnxruntime_unoptimized(check: str, tmp_path: Path) -> None:
    _, _, cases = load_dropins(EXAMPLES)
    directory = str(write_case(cases[0], tmp_path).directory)
    result = run_task({}, {"case": "c", "check": check, "case_dir": directory})
    assert result["outcome"] == "pass", result
    assert "onnxruntime's with optimizations disabled" in result["detail"]


def test_a_directory_without_models_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no \*\.onnx models"):
        load_dropins(tmp_path)


def test_an_unreadable_model_is_named(tmp_path: Path) -> None:
    (tmp_path / "broken.onnx").write_text("nope")
    with pytest.raises(ConfigError, match=r"broken\.onnx: not a readable ONNX model"):
        load_dropins(tmp_path)


def test_an_npz_without_an_input_is_named(tmp_path: Path) -> None:
    onnx.save(add_one_model(), str(tmp_path / "m.onnx"))  # type: ignore[arg-type]
    np.savez(tmp_path / "m.npz", y=np.zeros(2))
    with pytest.raises(ConfigError, match=r"m\.npz: missing input 'x'"):
        load_dropins(tmp_path)
