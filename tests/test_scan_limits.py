"""The releases a scan says cannot load a model (compat/corpus/load_limits.py): measured
by the support_limits family of the stored run, written by `nox -s report`
(compat/render/load_limits.py), and held against every result of that run.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import onnx
import pytest

from compat import resources
from compat.cli.main import main
from compat.core.case import Case
from compat.core.outcomes import Outcome
from compat.core.report import Report, read_json
from compat.core.versions import in_range
from compat.corpus.discover import discover_cases
from compat.corpus.findings import Finding
from compat.corpus.scan import scan, scan_model
from compat.render.load_limits import render_load_limits
from tests.conftest import ROOT

LAYER_NORM = ROOT / "examples" / "models" / "layer_norm.onnx"


@cache
def stored() -> Report:
    return read_json(ROOT / "docs" / "matrix.json.gz")


@cache
def corpus() -> dict[str, Case]:
    return {c.id: c for c in discover_cases(ROOT / "cases").cases}


def restamped(tmp_path: Path, ir: int, opset: int) -> Path:
    """examples/models/layer_norm.onnx (IR 8, opset 17) stamped a newer IR and opset."""
    model = onnx.load(LAYER_NORM)
    model.ir_version = ir
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            entry.version = opset
    path = tmp_path / f"layer_norm_ir{ir}.onnx"
    onnx.save(model, path)
    (tmp_path / f"layer_norm_ir{ir}.npz").write_bytes(LAYER_NORM.with_suffix(".npz").read_bytes())
    return path


def both(package: str, known: str, first: str) -> list[tuple[str, str, str, str]]:
    """The IR and the opset refusal of one package, alike."""
    return [(package, kind, known, first) for kind in ("ir", "opset")]


def limits(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.kind == "limit"]


def test_the_file_scan_reads_is_what_the_stored_run_measured() -> None:
    """compat/resources/load_limits.json is the stored run's support_limits rows (else
    `nox -s report -- --check` says it drifted): every release of both axes."""
    assert resources.LOAD_LIMITS.read_text() == render_load_limits(stored())
    document = json.loads(resources.LOAD_LIMITS.read_text())
    cells = {c.id: c for c in stored().cells}
    for package in ("onnx", "onnxruntime"):
        releases = [r["release"] for r in document[package]]
        assert releases == [cells[c].version(package) for c in stored().axes[package]]


def test_a_limit_is_predicted_exactly_where_the_stored_run_skipped_at_the_limit() -> None:
    """Over every case of the corpus and every result of the stored run: a result is
    covered by a limit finding of its case's scan (its check, its cell's release in the
    finding's range) exactly when the run skipped it at the release's limit."""
    cells = {c.id: c for c in stored().cells}
    found = {case_id: limits(scan(case.model, None, None)) for case_id, case in corpus().items()}
    wrong = []
    for result in stored().results:
        if result.case not in found:
            continue
        cell = cells[result.cell]
        covered = [
            f.detector
            for f in found[result.case]
            if result.check in f.checks and in_range(cell.version(f.package), f.known)
        ]
        at_limit = result.outcome is Outcome.SKIP and result.phase == "limit"
        if bool(covered) != at_limit:
            said = f"{result.outcome.value}@{result.phase} {covered}"
            wrong.append(f"{result.case} · {result.check} · {result.cell}: {said}")
    assert wrong == []
    assert sum(r.phase == "limit" for r in stored().results) > 300  # the run has them


@pytest.mark.parametrize(
    ("ir", "opset", "expected"),
    [
        (8, 17, set()),
        (10, 21, {*both("onnx", "<1.16", "1.16.2"), *both("onnxruntime", "<1.18", "1.18.1")}),
        (11, 23, {*both("onnx", "<1.18", "1.18.0"), *both("onnxruntime", "<1.23", "1.23.2")}),
        (99, 99, {*both("onnx", "", ""), *both("onnxruntime", "", "")}),
    ],
)
def test_a_newer_model_cannot_load_on_the_releases_that_read_less(
    tmp_path: Path, ir: int, opset: int, expected: set[tuple[str, str, str, str]]
) -> None:
    """The range is what the measured releases refuse, up to the minor release of the
    first that loads it; a model newer than every measured release: every release."""
    found = limits(scan(restamped(tmp_path, ir, opset), None, None))
    seen = set()
    for f in found:
        first = f.reason.rsplit("loads from ", 1)[1] if "loads from" in f.reason else ""
        seen.add((f.package, f.detector.split(".")[1], f.known, first))
    assert seen == expected


def test_scan_names_the_limits_of_the_target_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's model: layer_norm at IR 10 / opset 21, on onnxruntime >= 1.15: the
    releases that cannot load it, the limit, the first that does; exit 1. The default
    target (onnxruntime >= 1.20, onnx >= 1.18) loads it everywhere: exit 0, said outside."""
    model = restamped(tmp_path, 10, 21)
    config = ["--config", str(ROOT / "pyproject.toml")]
    assert main(["scan", str(model), "--ort", ">=1.15", *config]) == 1
    out = capsys.readouterr().out
    assert "2 known incompatibilities (2 load limits)" in out
    assert "IR version 10: onnxruntime >=1.15,<1.18 cannot load it  [support_limits.ir]" in out
    assert "onnxruntime 1.15.1–1.17.3 read IR ≤ 9; this model is IR 10: loads from 1.18.1" in out
    assert "on the axis's 1.15.1, 1.16.3, 1.17.3: ort_run, ort_optimized cannot run" in out
    assert main(["scan", str(model), *config]) == 0
    out = capsys.readouterr().out
    assert "0 known incompatibilities" in out
    assert "outside the target: IR version 10 (onnxruntime 1.15.1–1.17.3 read IR ≤ 9" in out
    assert main(["scan", str(model), "--ort", ">=1.15", "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    kinds = [(f["kind"], f["package"], f["affected"]) for f in document["findings"]]
    assert kinds == [("limit", "onnxruntime", ">=1.15,<1.18")] * 2


def test_the_library_call_says_a_model_too_new_for_the_target(tmp_path: Path) -> None:
    model = restamped(tmp_path, 10, 21)
    assert [f.detector for f in scan(model, onnx=">=1.14", onnxruntime=">=1.20")] == [
        "support_limits.ir",
        "support_limits.opset",
    ]
    assert scan(model, onnx=">=1.16", onnxruntime=">=1.18") == []
    assert len(scan_model(model, ">=1.16", ">=1.18").outside) == 4


@pytest.mark.envs
def test_verify_observes_the_limit_on_both_sides_of_it(
    tmp_path: Path, shared_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The IR-10 model, target onnxruntime 1.17: 1.17.3 and its neighbour below (1.16.3)
    are predicted not to load it and are `unsupported`; 1.18.1, the neighbour above,
    loads and runs it; nothing missed, no false alarm."""
    model = restamped(tmp_path, 10, 21)
    config = ["--config", str(ROOT / "pyproject.toml"), "--state-dir", str(shared_state)]
    target = ["--onnx", ">=1.23", "--ort", ">=1.17,<1.18"]
    args = ["scan", str(model), *target, "--verify", "--json", *config, "--jobs", "2"]
    assert main(args) == 1
    rows = json.loads(capsys.readouterr().out)["verify"]
    assert [r for r in rows if r["verdict"] in ("missed", "false alarm")] == []
    refused = {(r["cell"], r["check"]) for r in rows if r["outcome"] == "unsupported"}
    predicted = {(r["cell"], r["check"]) for r in rows if r["predicted"]}
    assert refused == predicted == {(f"onnx1.23.2-ort{v}", "ort_run") for v in ("1.16.3", "1.17.3")}
    assert {r["outcome"] for r in rows if r["cell"] == "onnx1.23.2-ort1.18.1"} == {"pass"}
