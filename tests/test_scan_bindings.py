"""A scan reads the sizes the model's inputs give its symbolic dims (compat/corpus/
bindings.py, issue 35 item 2): a MatMul of an `["n", 3]` input by a vector is the
zero_size_dims bug (onnxruntime < 1.32) when the .npz shipped beside the model feeds
n = 0, nothing when it feeds n = 2, and a conditional finding ("if n = 0") when no
inputs came with it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from compat.cli.main import main
from compat.corpus.bindings import bind, from_inputs, symbols
from compat.corpus.scan import scan_model

VECTOR = "zero_size_dims.matmul_vector"


def _model(path: Path) -> Path:
    """x: [n, 3] times a 3-vector."""
    w = numpy_helper.from_array(np.ones(3, np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["n", 3])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["n"])],
        [w],
    )
    built = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    onnx.save(built, str(path))
    return path


def _inputs(path: Path, rows: int) -> None:
    np.savez(path.with_suffix(".npz"), x=np.zeros((rows, 3), np.float32))


def test_the_inputs_beside_the_model_bind_n_to_zero(tmp_path: Path) -> None:
    model = _model(tmp_path / "m.onnx")
    _inputs(model, 0)
    result = scan_model(model, None, None)
    assert [f.detector for f in result.findings] == [VECTOR]
    assert result.conditional == ()


def test_inputs_that_feed_rows_leave_nothing_to_find(tmp_path: Path) -> None:
    model = _model(tmp_path / "m.onnx")
    _inputs(model, 2)
    result = scan_model(model, None, None)
    assert (result.findings, result.conditional) == ((), ())


def test_without_inputs_a_dim_at_zero_is_a_conditional_finding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = _model(tmp_path / "m.onnx")
    result = scan_model(model, None, None)
    assert result.findings == ()
    ((finding),) = result.conditional
    assert (finding.detector, finding.condition, finding.affected) == (VECTOR, "if n = 0", "<1.32")
    assert main(["scan", str(model), "--onnx", "", "--ort", ""]) == 0  # a condition: no failure
    said = capsys.readouterr().out
    assert "if n = 0 (no inputs came with the model to say): MatMul of a matrix" in said
    main(["scan", str(model), "--json", "--onnx", "", "--ort", ""])
    (shown,) = json.loads(capsys.readouterr().out)["conditional"]
    assert shown["condition"] == "if n = 0"


def test_scan_inputs_names_the_npz_and_a_condition_outside_the_target_is_dropped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = _model(tmp_path / "m.onnx")
    empty = tmp_path / "empty.npz"
    np.savez(empty, x=np.zeros((0, 3), np.float32))
    assert main(["scan", str(model), "--inputs", str(empty), "--json", "--ort", ""]) == 1
    assert [f["detector"] for f in json.loads(capsys.readouterr().out)["findings"]] == [VECTOR]
    assert scan_model(model, None, ">=1.32").conditional == ()  # fixed there


def test_binding_reaches_subgraphs_and_keeps_other_symbols(tmp_path: Path) -> None:
    inner = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["z"])],
        "then",
        [],
        [helper.make_tensor_value_info("z", onnx.TensorProto.FLOAT, ["n", "m"])],
    )
    graph = helper.make_graph(
        [helper.make_node("If", ["c"], ["z"], then_branch=inner, else_branch=inner)],
        "g",
        [
            helper.make_tensor_value_info("c", onnx.TensorProto.BOOL, []),
            helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["n", "m"]),
        ],
        [helper.make_tensor_value_info("z", onnx.TensorProto.FLOAT, None)],
    )
    built = helper.make_model(graph)
    assert symbols(built) == ["n", "m"]
    sizes = from_inputs(built, {"x": np.zeros((0, 5)), "c": np.array(True)})
    assert sizes == {"n": 0, "m": 5}
    bound = bind(built, {"n": 0})
    branch = bound.graph.node[0].attribute[0].g.output[0].type.tensor_type.shape.dim
    assert [(d.dim_value, d.dim_param) for d in branch] == [(0, ""), (0, "m")]
    assert built.graph.input[1].type.tensor_type.shape.dim[0].dim_param == "n"  # a copy
