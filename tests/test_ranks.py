"""compat/corpus/ranks.py: the rank a detector reads where a model declares none agrees
with onnx's own shape inference on every value both know, on the corpus's models and
on the real exporters' models committed here, with every annotation removed first."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper

from compat.corpus.discover import discover_cases
from compat.corpus.ranks import rank
from compat.corpus.scan import scan_model
from compat.corpus.walk import nodes
from tests.conftest import ROOT

DATA = ROOT / "tests" / "data"
COMMITTED = sorted([*(DATA / "real_models").glob("*.onnx"), *(DATA / "scanned").glob("*.onnx")])


def _agreement(model: onnx.ModelProto) -> tuple[int, list[str]]:
    """How many main-graph values both ranks know, and those where they differ."""
    inferred = onnx.shape_inference.infer_shapes(model)
    infos = [*inferred.graph.value_info, *inferred.graph.output]
    truth = {
        v.name: len(v.type.tensor_type.shape.dim)
        for v in infos
        if v.type.HasField("tensor_type") and v.type.tensor_type.HasField("shape")
    }
    stripped = onnx.ModelProto()
    stripped.CopyFrom(model)
    del stripped.graph.value_info[:]
    both, wrong = 0, []
    for site in nodes(stripped):
        name = site.node.output[0] if site.node.output else ""
        found = rank(site.scope, name) if site.scope.parent is None and name else None
        if found is not None and name in truth:
            both += 1
            if found != truth[name]:
                wrong.append(f"{site.node.op_type} {name!r}: {found}, inference says {truth[name]}")
    return both, wrong


def test_ranks_agree_with_shape_inference_on_the_corpus() -> None:
    total = 0
    for case in discover_cases(ROOT / "cases").cases:
        both, wrong = _agreement(case.model)
        assert wrong == [], case.id
        total += both
    assert total > 200  # the corpus's models have ranks to tell


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.stem)
def test_ranks_agree_with_shape_inference_on_real_models(path: Path) -> None:
    both, wrong = _agreement(onnx.load(str(path)))
    assert both
    assert wrong == []


def test_an_unknown_input_rank_says_nothing_and_a_squeezed_conv_says_three(
    tmp_path: Path,
) -> None:
    """tf2onnx's Conv1d (magika 1.0): Unsqueeze → Conv(2-D) → Squeeze → GlobalMaxPool,
    no value_info; a scan finds the rank-3 pool from the Conv's weight and the axes."""
    w = helper.make_tensor("w", onnx.TensorProto.FLOAT, [4, 2, 3, 1], np.ones(24).tolist())
    axes = helper.make_tensor("axes", onnx.TensorProto.INT64, [1], [3])
    graph = helper.make_graph(
        [
            helper.make_node("Unsqueeze", ["x", "axes"], ["x4"]),
            helper.make_node("Conv", ["x4", "w"], ["c4"]),
            helper.make_node("Squeeze", ["c4", "axes"], ["c3"]),
            helper.make_node("GlobalMaxPool", ["c3"], ["pooled"]),
            helper.make_node("GlobalMaxPool", ["x"], ["unknown"]),
        ],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, None)],
        [
            helper.make_tensor_value_info("pooled", onnx.TensorProto.FLOAT, None),
            helper.make_tensor_value_info("unknown", onnx.TensorProto.FLOAT, None),
        ],
        [w, axes],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=7)
    path = tmp_path / "conv1d.onnx"
    onnx.save(model, str(path))
    found = {(f.detector, f.where) for f in scan_model(path, None, None).findings}
    pool = "graph/node 'pooled'"
    assert found == {
        ("global_max_pool_3d.not_4d", (pool,)),
        ("global_max_pool_3d.not_4d_annotations", (pool,)),
    }
