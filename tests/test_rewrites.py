"""The rewrite catalogue: each rewrite keeps the computation (checked on a runtime that
runs both spellings, over the corpus's own models) and declines where it must."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from compat.corpus.discover import discover_cases
from compat.corpus.rewrites import CATALOGUE, Rewrite
from tests.conftest import ROOT

CASES = [c for c in discover_cases(ROOT / "cases").cases if c.inputs and c.expected]


def outputs(
    first: onnx.ModelProto, second: onnx.ModelProto, feeds: dict[str, Any]
) -> tuple[list[Any], list[Any]] | None:
    """Both models' outputs from one runtime that runs both: onnxruntime, else onnx's
    reference evaluator; None when neither runs both."""
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator

    def with_ort(model: onnx.ModelProto) -> list[Any]:
        session = ort.InferenceSession(
            model.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        return list(session.run(None, feeds))

    def with_reference(model: onnx.ModelProto) -> list[Any]:
        return list(ReferenceEvaluator(model).run(None, feeds))

    for run in (with_ort, with_reference):
        try:
            return run(first), run(second)
        except Exception:
            continue
    return None


def same(a: list[Any], b: list[Any]) -> bool:
    return len(a) == len(b) and all(
        np.asarray(x).shape == np.asarray(y).shape
        and np.allclose(
            np.asarray(x, dtype=float),
            np.asarray(y, dtype=float),
            rtol=1e-4,
            atol=1e-4,
            equal_nan=True,
        )
        for x, y in zip(a, b, strict=True)
    )


@pytest.mark.parametrize("rewrite", CATALOGUE, ids=lambda r: r.name)
def test_a_rewrite_keeps_the_outputs_on_at_least_two_models(rewrite: Rewrite) -> None:
    checked = []
    for case in CASES:
        applied = rewrite.function(case.model)
        if applied is None:
            continue
        assert applied.where, f"{rewrite.name} on {case.id}: says nothing about where"
        both = outputs(case.model, applied.model, case.inputs)
        if both is None:
            continue  # no runtime here runs both spellings: nothing to compare
        assert same(*both), f"{rewrite.name} changed the outputs of {case.id}"
        checked.append(case.id)
    assert len(checked) >= 2, f"{rewrite.name} checked on {checked} only"


def test_no_rewrite_applies_to_a_model_without_its_construct() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "plain", [x], [y])
    # a domain the version converter does not convert: no opset rewrite applies either
    opsets = [helper.make_opsetid("", 13), helper.make_opsetid("com.example", 1)]
    plain = helper.make_model(graph, opset_imports=opsets)
    plain.ir_version = helper.find_min_ir_version_for(opsets, ignore_unknown=True)
    assert {r.name: r.function(plain) for r in CATALOGUE} == dict.fromkeys(
        (r.name for r in CATALOGUE), None
    )


def test_the_common_twins_rewritten_are_the_seed_rare_forms() -> None:
    """value_ints pads, Split(x, "") and Squeeze(x, "") come out of their common twins."""
    by_id = {c.id: c for c in discover_cases(ROOT / "cases").cases}
    from compat.corpus.rewrites import BY_NAME

    pads = BY_NAME["constant_value_attributes"].function(
        by_id["pad_pads_from_constant.tensor"].model
    )
    assert pads is not None
    kinds = [a.name for n in pads.model.graph.node if n.op_type == "Constant" for a in n.attribute]
    assert "value_ints" in kinds
    for twin, rare, op in (
        ("split_empty_split.opset18.omitted", "split_empty_split.opset18.empty_name", "Split"),
        ("squeeze_empty_axes.omitted", "squeeze_empty_axes.empty_name", "Squeeze"),
    ):
        applied = BY_NAME["optional_input_explicit_empty"].function(by_id[twin].model)
        assert applied is not None
        (made,) = [list(n.input) for n in applied.model.graph.node if n.op_type == op]
        (written,) = [list(n.input) for n in by_id[rare].model.graph.node if n.op_type == op]
        assert made == written  # the hand-written rare form, generated
    f16 = BY_NAME["float16_int32_data"].function(
        by_id["float16_initializer_encoding.add.raw_data"].model
    )
    assert f16 is not None
    rare_f16 = by_id["float16_initializer_encoding.add.int32_data"].model
    assert [list(t.int32_data) for t in f16.model.graph.initializer] == [
        list(t.int32_data) for t in rare_f16.graph.initializer
    ]


MODELS = sorted((ROOT / "examples" / "models").glob("*.onnx")) + sorted(
    (ROOT / "tests" / "data" / "real_models").glob("*.onnx")
)


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.name)
def test_variants_of_models_nobody_here_wrote_pass_the_checker_where_the_original_does(
    path: Any, tmp_path: Any
) -> None:
    import json

    from compat.cli.main import main

    assert main(["variants", str(path), "--out", str(tmp_path)]) == 0
    listed = json.loads((tmp_path / "variants.json").read_text())
    original_ok = True
    try:
        onnx.checker.check_model(onnx.load(str(path)), full_check=True)
    except Exception:
        original_ok = False
    for entry in listed:
        variant = tmp_path / entry["file"]
        assert variant.is_file() and entry["where"]
        if original_ok:
            onnx.checker.check_model(onnx.load(str(variant)), full_check=True)
        if path.with_suffix(".npz").exists():
            assert variant.with_suffix(".npz").exists()  # the inputs travel with it


@pytest.mark.envs
def test_mutate_rediscovers_the_seed_findings_from_the_common_twins_alone(
    tmp_path: Any, shared_state: Any
) -> None:
    """Without the hand-written rare forms: value_ints pads fail strict inference on
    onnx < 1.21, Split-18 with "" fails on onnxruntime < 1.32, Squeeze with "" on every
    release, and float16 in int32_data agrees with raw_data."""
    import json

    from compat.cli.main import main
    from compat.core.report import read_json
    from compat.render.spellings import breaking_spellings

    twins = (
        "pad_pads_from_constant.*,split_empty_split.opset18.*,"
        "squeeze_empty_axes.omitted,squeeze_empty_axes.empty_name,"
        "float16_initializer_encoding.add.*"
    )
    main(
        [
            "matrix",
            "--config",
            str(ROOT / "pyproject.toml"),
            "--state-dir",
            str(shared_state),
            "--out",
            str(tmp_path),
            "--onnx",
            "1.20.1,1.21.0",
            "--ort",
            "1.31.1,1.32.0",
            "--mutate",
            "--cases",
            twins,
            "--reruns",
            "0",
        ]
    )
    report = read_json(tmp_path / "matrix.json")
    found = {k: sorted(v) for k, v in breaking_spellings(report).items()}
    pads = "pad_pads_from_constant.tensor~constant_value_attributes"
    assert found[(pads, "shape_inference")] == ["onnx1.20.1-ort1.24.4"]
    split = "split_empty_split.opset18.omitted~optional_input_explicit_empty"
    assert "onnx1.23.2-ort1.31.1" in found[(split, "ort_run")]
    assert "onnx1.23.2-ort1.32.0" not in found[(split, "ort_run")]
    squeeze = "squeeze_empty_axes.omitted~optional_input_explicit_empty"
    assert {"onnx1.23.2-ort1.31.1", "onnx1.23.2-ort1.32.0"} <= set(found[(squeeze, "ort_run")])
    assert not [k for k in found if k[0].startswith("float16")]
    # the generated rare forms behave as the hand-written ones, cell by cell, check by check
    outcomes = {(r.cell, r.case, r.check): r.outcome.value for r in report.results}
    bad = {"fail", "xfail", "error", "crash", "timeout", "flaky"}
    for generated, written in (
        (pads, "pad_pads_from_constant.value_ints"),
        (split, "split_empty_split.opset18.empty_name"),
        (squeeze, "squeeze_empty_axes.empty_name"),
        (
            "float16_initializer_encoding.add.raw_data~float16_int32_data",
            "float16_initializer_encoding.add.int32_data",
        ),
    ):
        pairs = [
            (o, outcomes[(cell, written, check)])
            for (cell, case, check), o in outcomes.items()
            if case == generated
        ]
        assert len(pairs) >= 20
        assert all((a in bad) == (b in bad) for a, b in pairs), (generated, pairs)
    assert json.loads((tmp_path / "matrix.json").read_text())["results"]
