"""Real exporters' models from wheels on the package index (tests/data/exporters/: paddle2onnx
OCR models, a Keras/tf2onnx model, PyTorch CRNNs with an LSTM and a quantized contrib
DynamicQuantizeLSTM) through the matrix on three cells, verdict by verdict against a
plain-venv oracle computed here (issue #22; marked `envs`).

The truth is what a plain `onnx==X onnxruntime==1.24.4 numpy` venv does with each model
(tests/data/exporters/oracle.py); these tests assert it, not what the matrix happens to say.
The detectors whose reference run is slow on old onnx releases (nudenet_320n,
ddddocr_common_det) are left out here to keep the runtime modest: see the folder's README.
"""

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

DATA = ROOT / "tests" / "data" / "exporters"
ONNX = ("1.16.2", "1.20.1", "1.23.2")
ORT = "1.24.4"
CELLS = {f"onnx{v}-ort{ORT}": [f"onnx=={v}", f"onnxruntime=={ORT}", "numpy"] for v in ONNX}
#: the models these tests run: every exporter of the set, none with a minutes-long reference
MODELS = (
    "ppocr_v4_det",
    "ppocr_v4_rec",
    "magika_standard_v1",
    "ddddocr_common_old",
    "ddddocr_common",
)
CHECKS = ("checker", "shape_inference", "ort_run", "reference", "annotations")


def models(folder: Path, names: tuple[str, ...]) -> Path:
    """The named models and their inputs, extracted from the pinned wheels into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        subprocess.run(
            [sys.executable, str(DATA / "make_models.py"), "--out", str(folder), "--only", name],
            check=True,
            capture_output=True,
        )
    return folder


@pytest.fixture(scope="module")
def truth(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:  # type: ignore[type-arg]
    """cell -> model -> the oracle's facts, from one plain venv per cell (no project code)."""
    root = tmp_path_factory.mktemp("exporters-oracle")
    folder = models(root / "models", (*MODELS, "ppocr_v2_cls"))
    uv = find_uv()
    facts = {}
    for cell, pins in CELLS.items():
        venv = root / f"plain-{cell}"
        subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True)
        subprocess.run(
            [uv, "pip", "install", "-q", "--python", str(env_python(venv)), *pins], check=True
        )
        done = subprocess.run(
            [
                sys.executable,
                str(DATA / "oracle.py"),
                "--python",
                str(env_python(venv)),
                "--models",
                str(folder),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        facts[cell] = json.loads(done.stdout)["models"]
    return facts


def expected(facts: dict) -> dict[str, str]:  # type: ignore[type-arg]
    """The verdict each check must reach, read off the oracle's facts."""
    assert "crash" not in facts, facts
    ort_ok = facts["ort_run"]["ok"] and facts["ort_levels_agree"]["ok"]
    reference = facts["reference_run"]
    if not facts["ort_run"]["ok"]:
        reference_verdict = "skip"  # a drop-in's oracle is onnxruntime: no oracle, no verdict
    elif not reference["ok"] and (
        reference.get("did_not_finish") or reference["error"].startswith("NotImplementedError")
    ):
        reference_verdict = "skip"  # a limit of this onnx's evaluator, not the model's failure
    elif not reference["ok"]:
        reference_verdict = "error"  # the evaluator crashed on a model onnxruntime runs
    else:
        reference_verdict = "pass" if facts["reference_matches_ort"]["ok"] else "fail"
    produced = facts["annotations"]["violations"]
    model_violations = [v for v in produced if not v.startswith("input ")]
    return {
        "checker": "pass" if facts["checker_full"]["ok"] else "fail",
        "shape_inference": "pass" if facts["shape_inference"]["ok"] else "fail",
        "ort_run": "pass" if ort_ok else ("fail" if facts["ort_run"]["ok"] else "error"),
        "reference": reference_verdict,
        "annotations": "fail" if model_violations else "pass",
    }


def matrix(folder: Path, state: Path, out: Path) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable,
        "-m",
        "compat",
        "matrix",
        "--axis",
        "onnx",
        "--onnx",
        ",".join(ONNX),
        "--ort",
        ORT,
        "--cells",
        ",".join(CELLS),
        "--cases-dir",
        str(folder),
        "--cases",
        f"{folder.name}.*",
        "--state-dir",
        str(state),
        "--out",
        str(out),
    ]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)


def compare(
    report: dict,
    truth: dict,
    family: str,
    names: tuple[str, ...],  # type: ignore[type-arg]
) -> tuple[list[str], int]:
    """Every verdict that differs from the oracle, with the matrix's detail, and how many
    verdicts were compared."""
    got = {(r["cell"], r["case"], r["check"]): r for r in report["results"]}
    wrong, compared = [], 0
    for cell in CELLS:
        for name in names:
            facts = truth[cell][name]
            for check, verdict in expected(facts).items():
                result = got.get((cell, f"{family}.{name}", check))
                outcome = result["outcome"] if result else "missing"
                compared += 1
                if outcome != verdict:
                    detail = (result or {}).get("detail", "")
                    wrong.append(
                        f"{cell} {name} {check}: matrix {outcome} ({detail[:300]}), "
                        f"plain venv says {verdict}"
                    )
    return wrong, compared


def test_every_verdict_on_exporters_models_matches_plain_venvs(
    tmp_path: Path,
    shared_state: Path,
    truth: dict,  # type: ignore[type-arg]
) -> None:
    folder = models(tmp_path / "exporters", MODELS)
    run = matrix(folder, shared_state, tmp_path / "out")
    assert run.returncode in (0, 1), run.stdout[-3000:] + run.stderr[-3000:]
    report = json.loads((tmp_path / "out" / "matrix.json").read_text())
    wrong, compared = compare(report, truth, "exporters", MODELS)
    assert wrong == []
    assert compared == len(CELLS) * len(MODELS) * len(CHECKS) == 75
    got = {(r["cell"], r["case"], r["check"]): r for r in report["results"]}
    # the violated output is named, with its declared and its actual shape, on every cell
    for cell in CELLS:
        for name in ("ddddocr_common_old", "ddddocr_common"):
            detail = got[(cell, f"exporters.{name}", "annotations")]["detail"]
            assert "387" in detail and "[20, 1, 8210]" in detail, detail


def test_a_paddle2onnx_model_with_open_declarations_is_judged_not_refused(
    tmp_path: Path,
    shared_state: Path,
    truth: dict,  # type: ignore[type-arg]
) -> None:
    """ppocr_v2_cls declares its input [-1, 3, "?", "?"]; onnxruntime runs it on
    1x3x48x192 on every cell. Its checks must be judged like any model's (the
    annotations verdict is left out: whether two "?" bind one size is the open question
    named in the folder's README)."""
    folder = models(tmp_path / "paddle", ("ppocr_v2_cls",))
    run = matrix(folder, shared_state, tmp_path / "out")
    assert run.returncode in (0, 1), run.stdout[-3000:] + run.stderr[-3000:]
    report = json.loads((tmp_path / "out" / "matrix.json").read_text())
    wrong, compared = compare(report, truth, "paddle", ("ppocr_v2_cls",))
    assert [w for w in wrong if " annotations: " not in w] == []
    assert compared == len(CELLS) * len(CHECKS)
