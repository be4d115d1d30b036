"""`onnx-compat scan` on models nobody here wrote (issue #27): small models written by real
producers from the package index (tests/data/scanned/, made by its make_models.py in a
venv of pinned onnxscript and skl2onnx), and the real exporters' models shipped in wheels
(tests/data/exporters/); and a matrix run of drop-in models saying which of its results
the scan predicted (compat/cli/commands/matrix.py `dropin_scan`,
compat/render/terminal.py `render_predictions`).

The expected findings are not what the scan happens to say: each was confirmed by
`scan --verify` running the model on the releases it names (the runs are quoted beside
each table), and one test here runs `--verify` again.
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

from compat.cli.commands.matrix import dropin_scan
from compat.cli.main import main
from compat.core.outcomes import CellRecord, CellState, CheckResult, Outcome
from compat.core.report import Report, read_json
from compat.corpus.scan import scan_model
from compat.plan.config import load_config
from compat.render.terminal import render_predictions
from compat.workflow.corpus import load_corpus
from compat.workflow.request import CorpusRequest, Request
from tests.conftest import ROOT

SCANNED = ROOT / "tests" / "data" / "scanned"
EXPORTERS = ROOT / "tests" / "data" / "exporters"
PAD = "pad_pads_from_constant.value_ints"
LINKED = "local_function.linked_attribute"
LOOP = "loop_trip_count_omitted.empty_trip_count"
EMPTY_ROI = "resize_empty_inputs.empty_roi"
RAW_SPLIT = "converter_split_squeeze.split13_raw_data"
NO_ADAPTER = "resize_empty_inputs.no_adapter"

#: fixture -> detector -> (the bug's range, where the scan finds the construct), for every
#: release (`scan MODEL --onnx '' --ort ''`). Confirmed by `python -m compat scan MODEL
#: --onnx '' --ort '' --verify` on the default axes (each onnx release beside onnxruntime
#: 1.24.4; 1 Dec 2026):
#: - onnxscript_pad_value_ints: checker and shape_inference fail on onnx 1.16.2-1.20.1 as
#:   predicted and pass on 1.21.0; 1.14.1 and 1.15.0 load no IR 10 (skip): 40 agree,
#:   16 not observed, no missed, no false alarm.
#: - onnxscript_function_while: reference errors on onnx 1.16.2-1.23.2 ("Issues with types
#:   ... linked_attributes"), as predicted; the Loop's onnx < 1.16 is not observed (IR 10
#:   skipped on 1.14.1 and 1.15.0): 52 agree, 18 not observed, no missed, no false alarm.
#: - skl2onnx_kmeans: nothing predicted; all 14 results pass on onnx 1.23.2 with onnxruntime
#:   1.24.4 and 1.32.0.
FIXTURES: dict[str, dict[str, tuple[str, tuple[str, ...]]]] = {
    "onnxscript_pad_value_ints": {PAD: ("<1.21", ("graph/node 'n1'",))},
    "onnxscript_function_while": {
        LINKED: ("", ("graph/node 'n0'/function 'leaky'/node 'n0'",)),
        LOOP: ("<1.16", ("graph/node 'n6'",)),
    },
    "skl2onnx_kmeans": {},
}

#: exporter model -> detectors found for every release. Confirmed by `scan MODEL --verify`
#: (target onnx >=1.18; 1 Dec 2026): ppocr_v4_det's reference errors (IndexError, empty
#: roi) on onnx 1.17.0-1.21.0 as predicted, and fails on 1.22.0 unpredicted (onnx's
#: reference BatchNormalization with `momentum`, no bug of the corpus: "missed");
#: ddddocr_common_det's likewise, passing on 1.22.0. nudenet_320n's two are
#: version_converter bugs, a check drop-in models do not run: scanned only.
#: paddle2onnx's one-output BatchNormalization-9: onnx's reference takes its training path
#: (onnx PR #8442); the plain-venv oracle saw its outputs differ from onnxruntime's on every
#: onnx release (oracle_observed-*.json: reference_matches_ort)
BN9 = "batchnorm_legacy_opset.opset9"
EXPORTED: dict[str, set[str]] = {
    "ppocr_v2_cls": {BN9},
    "ppocr_v4_det": {EMPTY_ROI, BN9},
    "ppocr_v4_rec": {BN9},
    # the raw_data Split also meets onnx < 1.15's refusal of the empty list it converts to
    "nudenet_320n": {RAW_SPLIT, f"{RAW_SPLIT}_empty_list", NO_ADAPTER},
    # tf2onnx's OneHot: the oracle saw the reference's TypeError on every onnx release
    # (numpy 2.4: depth_1elem_numpy); its BatchNormalization-9 (which the OneHot failure
    # hides from the reference) is predicted, not yet observed here
    "magika_standard_v1": {
        "onehot_forms.depth_1elem",
        "onehot_forms.depth_1elem_numpy",
        BN9,
    },
    "ddddocr_common_old": set(),
    "ddddocr_common": set(),
    "ddddocr_common_det": {EMPTY_ROI},
}


#: fixture -> the releases that cannot load it, (package, detector, range), from the
#: measured limits (compat/resources/load_limits.json): onnxscript writes IR 10, which
#: onnx 1.14.1 and 1.15.0 and onnxruntime 1.15.1-1.17.3 do not read (the --verify runs
#: quoted above saw the onnx side as skips then; as `unsupported` now, predicted).
LOADS: dict[str, set[tuple[str, str, str]]] = {
    "onnxscript_pad_value_ints": {
        ("onnx", "support_limits.ir", "<1.16"),
        ("onnxruntime", "support_limits.ir", "<1.18"),
    },
    "onnxscript_function_while": {
        ("onnx", "support_limits.ir", "<1.16"),
        ("onnxruntime", "support_limits.ir", "<1.18"),
    },
    "skl2onnx_kmeans": set(),  # IR 8
}


def made_by_producers() -> list[str]:
    """The models tests/data/scanned/producers.py writes (its MODELS), read without
    importing it: it needs onnxscript and skl2onnx, which the project does not."""
    tree = ast.parse((SCANNED / "producers.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "MODELS":
            assert isinstance(node.value, ast.Tuple)
            return [e.id for e in node.value.elts if isinstance(e, ast.Name)]
    raise AssertionError("producers.py has no MODELS")


def test_the_fixtures_are_what_the_producers_write_and_small() -> None:
    assert made_by_producers() == list(FIXTURES)
    assert sorted(p.stem for p in SCANNED.glob("*.onnx")) == sorted(FIXTURES)
    for name in FIXTURES:
        assert (SCANNED / f"{name}.onnx").stat().st_size < 100_000
        assert (SCANNED / f"{name}.npz").is_file()


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_a_scan_for_every_release_finds_what_the_runs_confirmed(name: str) -> None:
    result = scan_model(SCANNED / f"{name}.onnx", None, None)
    bugs = [f for f in result.findings if f.kind == "bug"]
    assert {f.detector: (f.known, f.where) for f in bugs} == FIXTURES[name]
    limits = {(f.package, f.detector, f.known) for f in result.findings if f.kind == "limit"}
    assert limits == LOADS[name]
    assert result.outside == ()


def test_the_default_target_keeps_what_meets_it_and_says_the_rest(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """onnx >=1.18: the pads bug on 1.18-1.20 and the linked attribute everywhere are
    findings (exit 1); the Loop's onnx < 1.16 is said outside; KMeans exits 0."""
    config = ["--config", str(ROOT / "pyproject.toml")]
    assert main(["scan", str(SCANNED / "onnxscript_pad_value_ints.onnx"), *config]) == 1
    out = capsys.readouterr().out
    assert "affects onnx >=1.18,<1.21 (of the axis: 1.18.0, 1.19.1, 1.20.1)" in out
    assert main(["scan", str(SCANNED / "onnxscript_function_while.onnx"), *config]) == 1
    out = capsys.readouterr().out
    assert f"[{LINKED}]" in out
    assert 'outside the target: Loop with its trip count M written as ""' in out
    assert main(["scan", str(SCANNED / "skl2onnx_kmeans.onnx"), *config]) == 0
    out = capsys.readouterr().out
    assert "0 known incompatibilities" in out
    assert "not covered by the corpus (nothing is known of them here): ArgMin, Gemm" in out


# -- a matrix run of drop-ins says which results the scan predicted -----------------------


def dropins(folder: Path, *names: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        for suffix in (".onnx", ".npz"):
            shutil.copyfile(SCANNED / f"{name}{suffix}", folder / f"{name}{suffix}")
    return folder


def test_each_drop_in_and_respelling_is_scanned_once_for_every_release(tmp_path: Path) -> None:
    """The pads model is predicted to fail where its bug is, and where its IR 10 cannot
    load; the respelling that writes the pads as Constant(value=tensor) carries only the
    IR; a model without a construct (IR 8) is scanned too (an empty list: scanned,
    nothing predicted)."""
    folder = dropins(tmp_path / "mine", "onnxscript_pad_value_ints", "skl2onnx_kmeans")
    request = Request(
        config=ROOT / "pyproject.toml",
        corpus=CorpusRequest(cases="mine.*,pad_pads*", cases_dirs=(folder,), mutate=""),
    )
    config = load_config(request.config)
    scanned = dropin_scan(request, config, load_corpus(request, config))["scan"]
    assert isinstance(scanned, dict)
    pad = {
        "detector": PAD,
        "package": "onnx",
        "known": "<1.21",
        "checks": ["checker", "shape_inference"],
        "requires": [],
    }
    ir10 = [
        {
            "detector": "support_limits.ir",
            "package": package,
            "known": known,
            "checks": list(checks),
            "requires": [],
        }
        for package, known, checks in (
            (
                "onnx",
                "<1.16",
                (
                    "checker",
                    "shape_inference",
                    "reference",
                    "inferred_annotations",
                    "annotations_builtin",
                    "version_converter",
                ),
            ),
            ("onnxruntime", "<1.18", ("ort_run", "ort_optimized")),
        )
    ]
    assert scanned["mine.onnxscript_pad_value_ints"] == [*ir10, pad]
    assert scanned["mine.onnxscript_pad_value_ints~constant_value_tensor"] == ir10
    assert scanned["mine.skl2onnx_kmeans"] == []
    assert not any(case.startswith(("pad_pads", "annotations")) for case in scanned)


def test_a_run_without_drop_ins_records_and_prints_no_scan(tmp_path: Path) -> None:
    request = Request(config=ROOT / "pyproject.toml", corpus=CorpusRequest(cases="pad_pads*"))
    config = load_config(request.config)
    assert dropin_scan(request, config, load_corpus(request, config)) == {}
    assert render_predictions(read_json(ROOT / "docs" / "matrix.json.gz")) == ""


def cell(version: str) -> CellRecord:
    return CellRecord(f"onnx{version}-ort1.24.4", version, "1.24.4", CellState.READY)


def test_predictions_are_set_against_the_results_by_the_bug_s_own_range() -> None:
    """A failure inside the bug's range is predicted, one outside it or of another check
    is not, and a predicted failure that passed is said too."""
    case = "mine.pads"
    finding = {
        "detector": PAD,
        "package": "onnx",
        "known": "<1.21",
        "checks": ["checker", "shape_inference"],
    }
    cells = (cell("1.20.1"), cell("1.21.0"))
    results = (
        CheckResult(cells[0].id, case, "checker", Outcome.FAIL),
        CheckResult(cells[0].id, case, "shape_inference", Outcome.XFAIL),
        CheckResult(cells[0].id, case, "reference", Outcome.ERROR),
        CheckResult(cells[1].id, case, "checker", Outcome.PASS),
        CheckResult(cells[1].id, case, "shape_inference", Outcome.FAIL),
        CheckResult(cells[0].id, "other.case", "checker", Outcome.FAIL),  # not scanned
    )
    report = Report(
        cells, (), results, {"onnx": tuple(c.id for c in cells)}, run={"scan": {case: [finding]}}
    )
    assert render_predictions(report).splitlines() == [
        "scan of the drop-in models, before the run: 2 of 4 failing results predicted",
        f"  predicted by scan ({PAD}):",
        "    mine.pads · checker fail on onnx1.20.1-ort1.24.4",
        "    mine.pads · shape_inference xfail on onnx1.20.1-ort1.24.4",
        "  not predicted:",
        "    mine.pads · reference error on onnx1.20.1-ort1.24.4",
        "    mine.pads · shape_inference fail on onnx1.21.0-ort1.24.4",
    ]
    wrong = {**finding, "known": "<1.22"}  # a detector whose range were too wide
    report = Report(cells, (), results, report.axes, run={"scan": {case: [wrong]}})
    said = render_predictions(report)
    assert said.splitlines()[0].endswith(
        "3 of 4 failing results predicted; 1 predicted failures passed"
    )
    passed = f"  predicted by scan ({PAD}), yet passed:\n    mine.pads · checker pass on onnx1.21"
    assert passed in said


# -- real environments ---------------------------------------------------------------------


@pytest.mark.envs
def test_verify_on_a_producer_s_model_observes_exactly_what_was_predicted(
    shared_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """onnxscript's pads from Constant(value_ints), target onnx >=1.18: the releases in the
    bug's range (1.18.0-1.20.1) and either side (1.17.0, 1.21.0); every predicted failure
    fails, every other result passes or is not observed."""
    args = [
        "scan",
        str(SCANNED / "onnxscript_pad_value_ints.onnx"),
        "--verify",
        "--json",
        "--config",
        str(ROOT / "pyproject.toml"),
        "--state-dir",
        str(shared_state),
        "--jobs",
        "2",
    ]
    assert main(args) == 1
    rows = json.loads(capsys.readouterr().out)["verify"]
    versions = ("1.17.0", "1.18.0", "1.19.1", "1.20.1", "1.21.0")
    assert {r["cell"] for r in rows} == {f"onnx{v}-ort1.24.4" for v in versions}
    assert [r for r in rows if r["verdict"] in ("missed", "false alarm")] == []
    failed = {(r["cell"], r["check"]) for r in rows if r["outcome"] in ("fail", "error")}
    predicted = {(r["cell"], r["check"]) for r in rows if r["predicted"]}
    assert (
        failed
        == predicted
        == {
            (f"onnx{v}-ort1.24.4", c) for v in versions[:-1] for c in ("checker", "shape_inference")
        }
    )


@pytest.mark.envs
def test_a_matrix_of_a_drop_in_says_which_failures_the_scan_predicted(
    tmp_path: Path, shared_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The pads model on onnx 1.20.1 and 1.21.0, either side of its bug's boundary: the
    report records the scan, and the terminal names the detector beside each failure."""
    folder = dropins(tmp_path / "mine", "onnxscript_pad_value_ints")
    out = tmp_path / "out"
    code = main(
        [
            "matrix",
            "--config",
            str(ROOT / "pyproject.toml"),
            "--state-dir",
            str(shared_state),
            "--cases-dir",
            str(folder),
            "--cases",
            "mine.*",
            "--onnx",
            "1.20.1,1.21.0",
            "--ort",
            "1.24.4",
            "--axis",
            "onnx",
            "--out",
            str(out),
            "--jobs",
            "2",
        ]
    )
    printed = capsys.readouterr().out
    assert code == 1  # a drop-in's failure is unexpected: no [[known]] says otherwise
    report = read_json(out / "matrix.json")
    case = "mine.onnxscript_pad_value_ints"
    assert list(report.run["scan"]) == [case]
    assert [f["detector"] for f in report.run["scan"][case]] == [*["support_limits.ir"] * 2, PAD]
    failing = {(r.cell, r.check) for r in report.results if r.outcome is Outcome.FAIL}
    assert failing == {
        ("onnx1.20.1-ort1.24.4", "checker"),
        ("onnx1.20.1-ort1.24.4", "shape_inference"),
    }
    assert "scan of the drop-in models, before the run: 2 of 2 failing results predicted\n" in (
        printed
    )
    assert (
        f"  predicted by scan ({PAD}):\n    {case} · checker fail on onnx1.20.1-ort1.24.4\n"
        f"    {case} · shape_inference fail on onnx1.20.1-ort1.24.4\n"
    ) in printed
    assert "not predicted" not in printed


@pytest.mark.envs
def test_the_exporters_models_carry_what_the_runs_confirmed(tmp_path: Path) -> None:
    """The eight real exporters' models (extracted from their pinned wheels), scanned for
    every release: the constructs --verify confirmed, and nothing else; and a load limit
    exactly for the one of IR 10, which onnx < 1.16 and onnxruntime < 1.18 cannot read."""
    for name in EXPORTED:
        command = [
            sys.executable,
            str(EXPORTERS / "make_models.py"),
            "--out",
            str(tmp_path),
            "--only",
            name,
        ]
        subprocess.run(command, check=True, capture_output=True)
    scans = {name: scan_model(tmp_path / f"{name}.onnx", None, None) for name in EXPORTED}
    assert {
        name: {f.detector for f in s.findings if f.kind == "bug"} for name, s in scans.items()
    } == EXPORTED
    limits = {
        name: {(f.package, f.affected) for f in s.findings if f.kind == "limit"}
        for name, s in scans.items()
    }
    ir = {
        name: onnx.load(tmp_path / f"{name}.onnx", load_external_data=False).ir_version
        for name in EXPORTED
    }
    assert {name for name, found in limits.items() if found} == {n for n, v in ir.items() if v > 9}
    assert limits["nudenet_320n"] == {("onnx", "<1.16"), ("onnxruntime", "<1.18")}
