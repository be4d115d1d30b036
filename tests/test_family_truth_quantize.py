"""The verdicts of the quantize_rounding_ties family (issue 35 item 1) held to plain venvs.

The matrix runs the family on onnx 1.14.1, 1.15.0 and 1.23.2 and onnxruntime 1.15.1,
1.24.4 and 1.32.0: either side of onnx PR #5408, which made the reference evaluator's
QuantizeLinear round x / scale half to even (1.14.1 rounds half up, 1.15.0 and 1.23.2 to
even), and of onnxruntime's missing QuantizeLinear-19 kernel (1.15.1; onnxruntime rounds
ties to even in every release). A plain venv per cell's pair (uv venv, onnx +
onnxruntime + numpy, nothing of this project) runs
tests/data/family_truth/quantize_ties.py on the very bytes the matrix ran, and for each
(cell, case, check) of `reference` and `ort_run` the matrix's verdict (pass, a failure
known or not) is the plain venv's; the plain venv's outputs say how each tie was rounded.
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

FAMILY = "quantize_rounding_ties"
ONNX = ("1.14.1", "1.15.0", "1.23.2")
ORT = ("1.15.1", "1.24.4", "1.32.0")
PIVOT = "1.24.4"  # the onnxruntime the onnx axis runs with
#: the cells of the default (not cross) matrix of those releases: every onnx with the
#: pivot onnxruntime, every onnxruntime with the newest onnx
PAIRS = [(o, PIVOT) for o in ONNX] + [(ONNX[-1], r) for r in ORT if r != PIVOT]
CHECKS = ("reference", "ort_run")
VERDICT = {"pass": "pass", "xpass": "pass", "fail": "fail", "xfail": "fail", "error": "fail"}
#: x / scale of the tie cases, and what rounding half up (onnx 1.14) and half to even
#: (the spec) make of it with uint8 zero point 128
TIES = [0.5, 1.5, 2.5, 4.5, 300.0, -0.5, -1.5, -2.5, -3.5, -300.0]
HALF_UP = [int(np.clip(np.floor(v + 0.5) + 128, 0, 255)) for v in TIES]
HALF_EVEN = [int(np.clip(np.rint(v) + 128, 0, 255)) for v in TIES]


def _write_cases(folder: Path, report: dict) -> None:
    """Each case's model (the bytes the matrix ran: same sha256) and its arrays."""
    folder.mkdir()
    ran = {c["id"]: c["sha256"] for c in report["cases"]}
    for case in discover_cases(ROOT / "cases").cases:
        if case.family != FAMILY:
            continue
        data = case.model.SerializeToString()
        assert hashlib.sha256(data).hexdigest() == ran[case.id], case.id
        (folder / f"{case.id}.onnx").write_bytes(data)
        arrays = {f"in_{k}": v for k, v in case.inputs.items()}
        arrays.update({f"out_{k}": v for k, v in case.expected.items()})
        np.savez(folder / f"{case.id}.npz", **arrays)


@pytest.mark.envs
@pytest.mark.subprocess
def test_the_quantize_ties_verdicts_are_what_plain_venvs_show(
    tmp_path: Path, shared_state: Path
) -> None:
    report = family_matrix(tmp_path / "out", shared_state, (FAMILY,), (ONNX, ORT), PAIRS)
    _write_cases(tmp_path / "cases", report)
    plain = plain_answers(
        tmp_path / "venvs", "quantize_ties.py", PAIRS, str(tmp_path / "cases"), base=sys.executable
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
    cases = len({r["case"] for r in report["results"] if r["case"].startswith("quantize_")})
    assert cases == 8 and compared == cases * len(PAIRS) * len(CHECKS), compared

    def said(cell: str, case: str, check: str) -> dict:
        return dict(plain[cell]["results"][f"{FAMILY}.{case}"][check])

    def verdicts(check: str, case: str, cells: list[str]) -> list[str]:
        return [said(cell, case, check)["verdict"] for cell in cells]

    by_onnx = [f"onnx{o}-ort{PIVOT}" for o in ONNX]
    by_ort = [f"onnx{ONNX[-1]}-ort{r}" for r in ORT]
    for case in ("uint8.opset13.ties", "int8.opset19.ties"):
        assert verdicts("reference", case, by_onnx) == ["fail", "pass", "pass"], case
    for case in ("uint8.opset13.no_ties", "int8.opset19.no_ties"):
        assert verdicts("reference", case, by_onnx) == ["pass"] * 3, case
    # how 1.14.1 rounds: half up; 1.15.0 and onnxruntime: half to even
    old, new = (said(cell, "uint8.opset13.ties", "reference")["got"]["y"] for cell in by_onnx[:2])
    assert (old, new) == (HALF_UP, HALF_EVEN)
    for cell in by_ort:
        assert said(cell, "uint8.opset13.ties", "ort_run")["got"]["y"] == HALF_EVEN, cell
    # onnxruntime 1.15.1 has no QuantizeLinear-19 kernel; later releases run it
    assert verdicts("ort_run", "uint8.opset19.ties", by_ort) == ["fail", "pass", "pass"]
    assert "QuantizeLinear(19)" in said(by_ort[0], "uint8.opset19.ties", "ort_run")["detail"]
