"""The verdicts of the reference-evaluator families (qdq_reference_opset,
batchnorm_legacy_opset, global_max_pool_3d, lstm_cell_state_output: issue 35 item 1)
held to plain venvs.

The matrix runs the four families on onnx 1.15.0, 1.16.2 and 1.23.2 and onnxruntime
1.15.1, 1.16.3, 1.24.4 and 1.25.1: either side of the DequantizeLinear gap (onnx 1.15.0
runs DequantizeLinear-13, 1.16.2 and 1.23.2 lack it), of onnxruntime's missing opset 19
Q/DQ kernels (1.15.1 / 1.16.3) and of its 8-bit MatMulNBits fusion (1.24.4 / 1.25.1);
the BatchNormalization and GlobalMaxPool bugs are in every release, the LSTM's missing
`Y_c` before onnx 1.23 (1.15.0 raises KeyError where a node reads it, 1.16.2
RuntimeError; 1.23.2 returns it). A plain venv per
cell's pair (uv venv, onnx + onnxruntime + numpy, nothing of this project) runs
tests/data/family_truth/reference_limits.py on the very bytes the matrix ran, and for
each (cell, case, check) of `reference` and `ort_run` the matrix's verdict (pass, a
failure known or not, skip) is the plain venv's. A skip for a release's support limit
(the model's IR version or opset above what it reads) is the project's own refusal, not
asked of the plain venv.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import numpy as np
import pytest

from compat.corpus.discover import discover_cases
from tests.conftest import ROOT
from tests.data.family_truth.venvs import plain_answers
from tests.helpers import family_matrix

FAMILIES = (
    "qdq_reference_opset",
    "batchnorm_legacy_opset",
    "global_max_pool_3d",
    "lstm_cell_state_output",
)
ONNX = ("1.15.0", "1.16.2", "1.23.2")
ORT = ("1.15.1", "1.16.3", "1.24.4", "1.25.1")
#: the onnxruntime the onnx axis runs with (the project's pivot release among those)
PIVOT = "1.24.4"
#: the cells of the default (not cross) matrix of those releases: every onnx with the
#: pivot onnxruntime, every onnxruntime with the newest onnx
PAIRS = [(o, PIVOT) for o in ONNX] + [(ONNX[-1], r) for r in ORT if r != PIVOT]
CHECKS = ("reference", "ort_run")
VERDICT = {"pass": "pass", "xpass": "pass", "fail": "fail", "xfail": "fail", "error": "fail"}


def _write_cases(folder: Path, report: dict) -> None:
    """Each case's model (the bytes the matrix ran: same sha256) and its arrays."""
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


@pytest.mark.envs
@pytest.mark.subprocess
def test_the_reference_families_verdicts_are_what_plain_venvs_show(
    tmp_path: Path, shared_state: Path
) -> None:
    report = family_matrix(tmp_path / "out", shared_state, FAMILIES, (ONNX, ORT), PAIRS)
    _write_cases(tmp_path / "cases", report)
    plain = plain_answers(
        tmp_path / "venvs",
        "reference_limits.py",
        PAIRS,
        str(tmp_path / "cases"),
        base=sys.executable,
    )
    compared, mismatches = 0, []
    for result in report["results"]:
        if result["check"] not in CHECKS or result["phase"] == "limit":
            continue
        answer = plain[result["cell"]]["results"][result["case"]][result["check"]]
        verdict = VERDICT.get(result["outcome"], result["outcome"])
        compared += 1
        if verdict != answer["verdict"]:
            mismatches.append((result["cell"], result["case"], result["check"], verdict, answer))
    assert not mismatches, mismatches
    assert compared >= 200, compared  # 20 cases x 6 cells x 2 checks, less the limits

    def said(cell: str, case: str, check: str) -> str:
        return str(plain[cell]["results"][f"{case}"][check]["verdict"])

    newest = f"onnx{ONNX[-1]}-ort{PIVOT}"
    # the DequantizeLinear gap: 1.15.0 runs opset 13, 1.16.2 and 1.23.2 lack it
    gap = [
        said(f"onnx{o}-ort{PIVOT}", "qdq_reference_opset.qdq.opset13", "reference") for o in ONNX
    ]
    assert gap == ["pass", "skip", "skip"]
    assert said(newest, "qdq_reference_opset.qdq.opset19", "reference") == "pass"
    # onnxruntime 1.15.1 has no opset 19 Q/DQ kernel, 1.16.3 has
    kernels = [
        said(f"onnx{ONNX[-1]}-ort{r}", "qdq_reference_opset.qdq.opset19", "ort_run")
        for r in ORT[:2]
    ]
    assert kernels == ["fail", "pass"]
    # the 8-bit MatMulNBits fusion: from 1.25
    fused = [
        said(f"onnx{ONNX[-1]}-ort{r}", "qdq_reference_opset.weight.opset13", "ort_run")
        for r in ORT[2:]
    ]
    assert fused == ["pass", "fail"]
    for case, wrong in (
        ("batchnorm_legacy_opset.opset9_plain", "fail"),
        ("batchnorm_legacy_opset.opset7_momentum", "fail"),
        ("batchnorm_legacy_opset.opset15_plain", "pass"),
        ("global_max_pool_3d.ncl", "fail"),
        ("global_max_pool_3d.nchw", "pass"),
    ):
        assert [said(f"onnx{o}-ort{PIVOT}", case, "reference") for o in ONNX] == [wrong] * 3
        assert said(newest, case, "ort_run") == "pass"
    # the LSTM's Y_c: missing before onnx 1.23 wherever it is used, returned by 1.23.2
    lstm = "lstm_cell_state_output."
    for case, wrong in (
        ("state_output", "fail"),
        ("c_consumed", "fail"),
        ("if_branch_consumed", "fail"),
        ("y_h", "pass"),
        ("c_unused", "pass"),
    ):
        ran = [said(f"onnx{o}-ort{PIVOT}", lstm + case, "reference") for o in ONNX]
        assert ran == [wrong, wrong, "pass"], case
        assert said(newest, lstm + case, "ort_run") == "pass"
    # up to onnx 1.15 a read Y_c is a KeyError, from 1.16 the evaluator's RuntimeError
    consumed = [plain[f"onnx{o}-ort{PIVOT}"]["results"][lstm + "c_consumed"] for o in ONNX[:2]]
    assert consumed[0]["reference"]["detail"] == "KeyError: 'c'"
    assert consumed[1]["reference"]["detail"].startswith("RuntimeError: Unable to find input 'c'")
