"""The verdicts of the converter-form families (onehot_forms, optimizer_numerics: issue
35 item 1) held to plain venvs.

The matrix runs both families on onnx 1.16.2, 1.17.0 and 1.23.2 and onnxruntime 1.15.1,
1.24.4, 1.26.0 and 1.27.0: either side of onnx 1.17's reading of a constant OneHot
depth in shape inference, of numpy 2.4 (onnxruntime 1.15.1's cell has numpy 1.x, the
others numpy 2) for the reference's 1-element depth, and of onnxruntime 1.27's fix of
Q/DQ Resize(linear) in int8. A plain venv per cell's pair (uv venv, onnx + onnxruntime
+ numpy, nothing of this project) runs tests/data/family_truth/converter_forms.py on the
very bytes the matrix ran, and for each (cell, case, check) of shape_inference,
reference, reference_strict, ort_run and levels_against_disabled the matrix's verdict
(pass, a failure known or not, skip) is the plain venv's, and the optimizers the matrix
names responsible are those whose disabling alone makes the plain venv's outputs match.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from compat.cell.blame import responsible_in
from compat.corpus.discover import discover_cases
from tests.conftest import ROOT
from tests.data.family_truth.venvs import plain_answers
from tests.helpers import family_matrix

FAMILIES = ("onehot_forms", "optimizer_numerics")
ONNX = ("1.16.2", "1.17.0", "1.23.2")
ORT = ("1.15.1", "1.24.4", "1.26.0", "1.27.0")
PIVOT = "1.24.4"  # the onnxruntime the onnx axis runs with
PAIRS = [(o, PIVOT) for o in ONNX] + [(ONNX[-1], r) for r in ORT if r != PIVOT]
CHECKS = ("shape_inference", "reference", "reference_strict", "ort_run", "levels_against_disabled")
VERDICT = {"pass": "pass", "xpass": "pass", "fail": "fail", "xfail": "fail", "error": "fail"}
SUSPECTS = ["NchwcTransformer", "QDQSelectorActionTransformer"]


def _write_cases(folder: Path, report: dict) -> None:
    """Each case's model (the bytes the matrix ran: same sha256), its arrays and what the
    plain script needs of its spec."""
    folder.mkdir()
    ran = {c["id"]: c["sha256"] for c in report["cases"]}
    for case in discover_cases(ROOT / "cases").cases:
        if case.family not in FAMILIES:
            continue
        data = case.model.SerializeToString()
        assert hashlib.sha256(data).hexdigest() == ran[case.id], case.id
        (folder / f"{case.id}.onnx").write_bytes(data)
        arrays = {f"in_{k}": v for k, v in case.inputs.items()}
        arrays.update({f"out_{k}": v for k, v in case.expected.items()})
        np.savez(folder / f"{case.id}.npz", **arrays)
        spec = {
            "checks": list(case.checks),
            "rtol": case.rtol,
            "atol": case.atol,
            "output_shapes": {k: list(v) for k, v in case.output_shapes.items()},
            "suspects": SUSPECTS if case.family == "optimizer_numerics" else [],
        }
        (folder / f"{case.id}.json").write_text(json.dumps(spec))


def _compare(report: dict, plain: dict) -> int:
    """Asserts every verdict and every optimizer named is the plain venv's; the count."""
    compared, mismatches = 0, []
    for result in report["results"]:
        if result["check"] not in CHECKS or result["phase"] == "limit":
            continue
        answer = plain[result["cell"]]["results"][result["case"]][result["check"]]
        verdict = VERDICT.get(result["outcome"], result["outcome"])
        named = responsible_in(result["detail"])
        compared += 1
        if verdict != answer["verdict"] or named != answer.get("responsible", []):
            where = (result["cell"], result["case"], result["check"])
            mismatches.append((*where, verdict, named, answer))
    assert not mismatches, mismatches
    return compared


@pytest.mark.envs
@pytest.mark.subprocess
def test_the_converter_families_verdicts_are_what_plain_venvs_show(
    tmp_path: Path, shared_state: Path
) -> None:
    report = family_matrix(tmp_path / "out", shared_state, FAMILIES, (ONNX, ORT), PAIRS)
    _write_cases(tmp_path / "cases", report)
    plain = plain_answers(
        tmp_path / "venvs",
        "converter_forms.py",
        PAIRS,
        str(tmp_path / "cases"),
        base=sys.executable,
    )
    assert _compare(report, plain) >= 200  # 12 cases x 6 cells x 3-4 checks

    def said(cell: str, case: str, check: str) -> dict:
        return dict(plain[cell]["results"][case][check])

    onnx_cells = [f"onnx{o}-ort{PIVOT}" for o in ONNX]
    ort_cells = [f"onnx{ONNX[-1]}-ort{r}" for r in ORT]
    # onnx 1.17 reads a constant depth; a computed one stays unknown everywhere
    plain_depth = [said(c, "onehot_forms.plain", "shape_inference")["verdict"] for c in onnx_cells]
    assert plain_depth == ["fail", "pass", "pass"]
    # the 1-element depth: refused with numpy 2 (TypeError), deprecated with numpy 1.x
    assert plain[ort_cells[0]]["numpy"].startswith("1.")
    for cell in onnx_cells + ort_cells:
        strict = said(cell, "onehot_forms.tf2onnx", "reference_strict")
        assert strict["verdict"] == "fail", (cell, strict)
        old = plain[cell]["numpy"].startswith("1.")
        assert strict["detail"].startswith("DeprecationWarning" if old else "TypeError"), strict
        kernel = said(cell, "onehot_forms.int32_indices_int64_depth", "ort_run")
        assert "NOT_IMPLEMENTED" in kernel["detail"], kernel
    # Q/DQ Resize(linear) in int8 until onnxruntime 1.27, QDQSelectorActionTransformer's
    qdq = [said(c, "optimizer_numerics.qdq_resize.linear", "ort_run") for c in ort_cells]
    assert [a["verdict"] for a in qdq] == ["fail", "fail", "fail", "pass"]
    assert [a["responsible"] for a in qdq[:3]] == [["QDQSelectorActionTransformer"]] * 3
    twin = [said(c, "optimizer_numerics.qdq_resize.nearest", "ort_run") for c in ort_cells]
    assert [a["verdict"] for a in twin] == ["pass"] * 4
    # the blocked Conv differs from disabled only through NchwcTransformer (none on a CPU
    # without NCHWc kernels); the 62-channel twin never does
    for cell in ort_cells:
        nchwc = said(cell, "optimizer_numerics.nchwc_conv", "levels_against_disabled")
        assert nchwc["verdict"] == "pass" and nchwc["responsible"] in ([], SUSPECTS[:1]), nchwc
        twin_conv = said(cell, "optimizer_numerics.conv_62_channels", "levels_against_disabled")
        assert twin_conv == {"verdict": "pass", "detail": "", "responsible": []}, twin_conv
