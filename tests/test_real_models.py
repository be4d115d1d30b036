"""Models nobody here wrote (tests/data/real_models/: skl2onnx conversions with ZipMap
and string labels, silero-vad's If+LSTM) through the matrix, verdict by verdict against
a plain-venv oracle computed here, with the folder's known bugs as data (marked `envs`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from compat.execute.envs import env_python
from compat.execute.installer import find_uv
from tests.conftest import ROOT

pytestmark = pytest.mark.envs

MODELS = ROOT / "tests" / "data" / "real_models"
PAIRS = {  # cell -> the plain venv's pins
    "onnx1.16.2-ort1.17.3": ["onnx==1.16.2", "onnxruntime==1.17.3", "numpy<2"],
    "onnx1.23.2-ort1.24.4": ["onnx==1.23.2", "onnxruntime==1.24.4", "numpy"],
}


def oracle(tmp_path: Path, cell: str) -> dict:  # type: ignore[type-arg]
    """What a plain venv with the cell's pins does with each model, without this project."""
    venv = tmp_path / f"plain-{cell}"
    uv = find_uv()
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True)
    subprocess.run(
        [uv, "pip", "install", "-q", "--python", str(env_python(venv)), *PAIRS[cell]], check=True
    )
    done = subprocess.run(
        [sys.executable, str(MODELS / "oracle.py"), "--python", str(env_python(venv))],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)["models"]  # type: ignore[no-any-return]


def expected(facts: dict) -> dict[str, str]:  # type: ignore[type-arg]
    """The verdict each check must reach, read off the oracle's facts."""
    ort_ok = facts["ort_run"]["ok"]
    too_new = "Unsupported model IR version" in facts["ort_load"].get("error", "")
    reference = facts["reference_run"]
    if not ort_ok:
        reference_verdict = "skip"  # a drop-in's oracle is onnxruntime: no oracle, no verdict
    elif not reference["ok"] and reference["error"].startswith("NotImplementedError"):
        reference_verdict = "skip"  # this onnx's reference evaluator lacks an op
    elif not reference["ok"]:
        reference_verdict = "xfail"  # ran it and got it wrong: the folder's compat.toml
    else:
        reference_verdict = "pass" if facts["reference_matches_ort"]["ok"] else "fail"
    return {
        "checker": "pass" if facts["checker"]["ok"] else "fail",
        "shape_inference": "pass" if facts["shape_inference"]["ok"] else "fail",
        # a release that cannot read your model: the model's incompatibility with it
        "ort_run": "pass" if ort_ok else ("unsupported" if too_new else "error"),
        "reference": reference_verdict,
    }


def test_every_verdict_on_real_models_matches_a_plain_venv_oracle(tmp_path: Path) -> None:
    out = tmp_path / "out"
    command = [
        sys.executable,
        "-m",
        "compat",
        "matrix",
        "--cross",
        "--onnx",
        "1.16.2,1.23.2",
        "--ort",
        "1.17.3,1.24.4",
        "--cells",
        ",".join(PAIRS),
        "--cases-dir",
        str(MODELS),
        "--cases",
        "real_models.*",
        "--state-dir",
        str(tmp_path / "state"),
        "--out",
        str(out),
    ]
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    # onnxruntime 1.17.3 cannot read skl_logreg_zipmap (IR 10): a release of the matrix
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-3000:]
    report = json.loads((out / "matrix.json").read_text())
    assert (out / "matrix.json").stat().st_size < 1_000_000
    got = {(r["cell"], r["case"], r["check"]): r for r in report["results"]}
    compared = 0
    for cell in PAIRS:
        for model, facts in oracle(tmp_path, cell).items():
            for check, verdict in expected(facts).items():
                result = got[(cell, f"real_models.{model}", check)]
                assert result["outcome"] == verdict, (cell, model, check, result, facts)
                compared += 1
    assert compared == 2 * 4 * 4
    # the skips say why, in words a user can act on
    zipmap = got[("onnx1.23.2-ort1.24.4", "real_models.skl_logreg_zipmap", "reference")]
    assert "reference evaluator has no ai.onnx.ml ZipMap" in zipmap["detail"]
    too_new = got[("onnx1.16.2-ort1.17.3", "real_models.skl_logreg_zipmap", "ort_run")]
    assert too_new["detail"] == "onnxruntime 1.17.3 reads IR ≤ 9; this model is IR 10"
    for check in ("annotations", "inferred_annotations"):  # one probed limit for the cell
        result = got[("onnx1.16.2-ort1.17.3", "real_models.skl_logreg_zipmap", check)]
        assert result["outcome"] in ("skip", "pass"), result
        assert "IR version 10 > max 9" in result["detail"] or result["outcome"] == "pass"
