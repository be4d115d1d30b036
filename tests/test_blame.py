"""Which onnxruntime optimizer makes an optimization level differ (compat/cell/blame.py),
found with the onnxruntime installed here, in this process, on real rewrites: the NCHWc
convolution of tests/data/tolerance/nchwc_conv.onnx at level `all`, and a LayerNorm
written as ReduceMean/Sub/Pow/Sqrt/Div, fused at `extended`; and how triage's report
reads the optimizer before it calls a difference a defect."""

from __future__ import annotations

import platform
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from compat.cell import blame
from compat.cell.casedata import CaseData
from compat.cell.checks_ort import check_ort_run
from compat.cell.verdict import Verdict
from compat.core.install import InstallRequest
from compat.core.outcomes import CheckResult, Outcome
from compat.corpus.discover import write_case
from compat.corpus.dropin import load_dropins
from compat.followup.triage.finding_report import finding_markdown
from compat.followup.triage.findings import Finding
from compat.followup.triage.triaged import Triaged
from compat.plan.matrix import Cell
from tests.conftest import ROOT

NCHWC = platform.machine().lower() in ("x86_64", "amd64")
#: what `disabled` is compared with, in a drop-in's words
DISABLED = "onnxruntime's with optimizations disabled"


def ort_run(folder: Path, work: Path, toml: str = "") -> str:
    """check_ort_run on the one model of `folder`: its detail, a pass's or a failure's."""
    if toml:
        (folder / "compat.toml").write_text(toml)
    (case,) = load_dropins(folder)[2]
    data = CaseData(str(write_case(case, work).directory))
    try:
        return "pass: " + check_ort_run(data)
    except Verdict as verdict:
        return f"{verdict.outcome}@{verdict.phase}: {verdict.detail}"


def nchwc(tmp_path: Path) -> Path:
    folder = tmp_path / "noisy"
    folder.mkdir()
    for name in ("nchwc_conv.onnx", "nchwc_conv.npz"):
        shutil.copy(ROOT / "tests" / "data" / "tolerance" / name, folder / name)
    return folder


@pytest.mark.skipif(not NCHWC, reason="onnxruntime's NCHWc kernels are x86-64 only")
def test_the_nchwc_convolution_is_blamed_on_nchwc_transformer(tmp_path: Path) -> None:
    detail = ort_run(nchwc(tmp_path), tmp_path / "cases")
    assert detail.startswith("fail@compare: all: output 'y' differs at "), detail
    assert "elements beyond rtol 0.0001, atol 1e-05: largest absolute difference " in detail
    assert detail.endswith(
        "; onnxruntime's optimizer NchwcTransformer is responsible: disabling it alone "
        f"(disabled_optimizers=['NchwcTransformer']) makes the outputs match {DISABLED} exactly"
    )
    assert blame.responsible_in(detail) == ["NchwcTransformer"]


@pytest.mark.skipif(not NCHWC, reason="onnxruntime's NCHWc kernels are x86-64 only")
def test_a_pass_within_the_tolerance_says_how_close_it_came(tmp_path: Path) -> None:
    detail = ort_run(nchwc(tmp_path), tmp_path / "cases", "rtol = 1e-3\natol = 1e-3\n")
    head, apart = detail.split(" up to ")
    assert head == (
        f"pass: outputs match {DISABLED} at levels disabled, basic, extended, all; within "
        "rtol 0.001, atol 0.001:"
    )
    assert apart.endswith(" apart (output 'y' at level all)")  # 8.39e-05 on AVX-512
    assert 1e-5 < float(apart.split()[0]) < 1e-3


@pytest.mark.skipif(not NCHWC, reason="onnxruntime's NCHWc kernels are x86-64 only")
def test_a_difference_no_known_optimizer_explains_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        blame, "OPTIMIZERS", {"basic": ["ConstantFolding"], "extended": [], "all": []}
    )
    detail = ort_run(nchwc(tmp_path), tmp_path / "cases")
    assert detail.endswith(
        "; no onnxruntime optimizer is responsible: with all 1 it knows disabled, the "
        "outputs still differ (its kernels, not a rewrite)"
    )
    assert blame.responsible_in(detail) == []


def layer_norm(folder: Path) -> Path:
    """LayerNorm over 64 values around 1000, written out: onnxruntime fuses it into one
    LayerNormalization at `extended`, which computes the variance another way."""
    folder.mkdir()
    n = 64
    consts = {"two": 2.0, "eps": 1e-5}
    inits = [numpy_helper.from_array(np.array([v], np.float32), k) for k, v in consts.items()]
    inits += [
        numpy_helper.from_array(np.ones(n, np.float32), "gamma"),
        numpy_helper.from_array(np.zeros(n, np.float32), "beta"),
    ]
    nodes = [
        helper.make_node("ReduceMean", ["x"], ["mean"], axes=[-1]),
        helper.make_node("Sub", ["x", "mean"], ["d"]),
        helper.make_node("Pow", ["d", "two"], ["sq"]),
        helper.make_node("ReduceMean", ["sq"], ["var"], axes=[-1]),
        helper.make_node("Add", ["var", "eps"], ["ve"]),
        helper.make_node("Sqrt", ["ve"], ["std"]),
        helper.make_node("Div", ["d", "std"], ["n"]),
        helper.make_node("Mul", ["n", "gamma"], ["g"]),
        helper.make_node("Add", ["g", "beta"], ["y"]),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, n])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, n])
    model = helper.make_model(
        helper.make_graph(nodes, "ln", [x], [y], inits), opset_imports=[helper.make_opsetid("", 13)]
    )
    model.ir_version = 8
    onnx.save(model, str(folder / "ln.onnx"))
    feeds = np.random.default_rng(0).standard_normal((4, n)) + 1000
    np.savez(folder / "ln.npz", x=feeds.astype(np.float32))
    return folder


def test_a_fused_layer_norm_is_blamed_on_the_fusion(tmp_path: Path) -> None:
    """onnxruntime <= 1.24 differs by 0.57 here, 1.32 by 6.2e-5: beyond the default
    either way, and LayerNormFusion (LayerNormFusionL2 from 1.20) is responsible; with it
    disabled the outputs are within the tolerance, not identical (1.2e-7 apart)."""
    detail = ort_run(layer_norm(tmp_path / "ln"), tmp_path / "cases")
    assert detail.startswith("fail@compare: extended, all: output 'y' differs at "), detail
    assert blame.responsible_in(detail)[0] in ("LayerNormFusion", "LayerNormFusionL2")
    assert detail.endswith(f"makes the outputs match {DISABLED} within tolerance")


def test_triage_names_the_optimizer_before_it_calls_the_difference_a_defect() -> None:
    detail = (
        "all: output 'y' differs at 16 of 16384 elements beyond rtol 0.0001, atol "
        "1e-05: largest absolute difference 8.39e-05 at [0, 23, 12, 1] (got 90.755974, "
        "expected 90.75606); onnxruntime's optimizer NchwcTransformer is responsible: "
        "disabling it alone (disabled_optimizers=['NchwcTransformer']) makes the "
        f"outputs match {DISABLED} exactly"
    )
    cell = Cell("1.23.2", "1.24.4", InstallRequest())
    result = CheckResult(cell.id, "triage.m", "ort_run", Outcome.FAIL, detail, "compare")
    finding = Finding(
        "ort_run", "onnxruntime", "always", cell, None, result, {"1.24.4": "bad"}, last_bad="1.24.4"
    )
    text = finding_markdown(Triaged(finding, 1), Path("m.onnx"), 1)
    assert "**Optimizer:** onnxruntime's `NchwcTransformer` makes an optimization level" in text
    assert "allow it with `rtol`/`atol` in the model folder's `compat.toml`" in text
    assert "this may be a defect of the model itself" not in text  # it is a rewrite's
    assert "beyond rtol 0.0001, atol 1e-05" in text  # the tolerance it exceeds
