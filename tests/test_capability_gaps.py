"""A runtime's missing capability is a skip naming what is missing, never the model's
failure (issue 33): onnx 1.16–1.23's reference evaluator has no DequantizeLinear below
opset 19, and says so as a RuntimeError ("No implementation for operator
'DequantizeLinear' domain '' and version 18, found 19, 21, …"), not NotImplementedError."""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from compat.cli.main import main
from tests.conftest import ROOT


def dequantize_18(path: Path) -> Path:
    """y = DequantizeLinear(x, 0.5, 1) at opset 18, IR 8: every release here reads it."""
    node = helper.make_node("DequantizeLinear", ["x", "scale", "zero"], ["y"])
    graph = helper.make_graph(
        [node],
        "dequantize",
        [helper.make_tensor_value_info("x", TensorProto.UINT8, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        [
            helper.make_tensor("scale", TensorProto.FLOAT, [], [0.5]),
            helper.make_tensor("zero", TensorProto.UINT8, [], [1]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return path


@pytest.mark.envs
def test_an_op_version_the_reference_evaluator_lacks_is_a_skip_saying_which(
    tmp_path: Path, shared_state: Path
) -> None:
    models = tmp_path / "quant"
    models.mkdir()
    dequantize_18(models / "dq18.onnx")
    out = tmp_path / "out"
    config = ["--config", str(ROOT / "pyproject.toml"), "--state-dir", str(shared_state)]
    given = ["--out", str(out), "--cases-dir", str(models), "--cases", "quant.*"]
    code = main(["matrix", *config, *given, "--onnx", "1.16.2,1.23.2", "--ort", "1.24.4"])
    report = json.loads((out / "matrix.json").read_text())
    reference = {r["cell"]: r for r in report["results"] if r["check"] == "reference"}
    assert code == 0, reference
    for onnx_release in ("1.16.2", "1.23.2"):
        got = reference[f"onnx{onnx_release}-ort1.24.4"]
        assert got["outcome"] == "skip", got
        assert got["detail"].startswith(
            f"onnx {onnx_release}'s reference evaluator has no ai.onnx DequantizeLinear-18 "
            "(it has 19"
        ), got["detail"]
    ort_run = [r for r in report["results"] if r["check"] == "ort_run"]
    assert ort_run and all(r["outcome"] == "pass" for r in ort_run)
