"""`nox -s triage`: a failing model to a finding, its boundary release, a minimal model
that fails the same way, a workaround spelling and a report, on real releases.

The models bury one known fragile construct of the corpus among 30+ unrelated nodes
(tests/helpers.py `buried`): value_ints pads (onnx < 1.21), a MatMul of a [0, K] matrix
by a vector (onnxruntime < 1.32), Split-18 with an empty `split` name (onnxruntime
< 1.32).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import helper

from compat.core.install import InstallRequest
from compat.core.outcomes import CheckResult, Outcome
from compat.corpus.make import randn
from compat.followup.triage.findings import findings_of, same_way, signature
from compat.plan.matrix import Cell, Plan
from tests.conftest import ROOT
from tests.helpers import buried, hostile_case

PADS = [0, 1, 1, 0, 1, 1]


def pads_model() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    core = [
        helper.make_node("Constant", [], ["pads"], value_ints=PADS),
        helper.make_node("Pad", ["p", "pads"], ["padded"]),
    ]
    return buried(core, {"p": randn(1, 1, 2, 3)}, "padded")


def matmul_model() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    core = [helper.make_node("MatMul", ["empty", "v"], ["product"])]
    inputs = {"empty": np.zeros((0, 3), np.float32), "v": randn(2, 3)}
    return buried(core, inputs, "product")


def split_model() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    core = [
        helper.make_node("Split", ["s", ""], ["s0", "s1", "s2"], axis=1, num_outputs=3),
        helper.make_node("Concat", ["s2", "s0", "s1"], ["parts"], axis=1),
    ]
    return buried(core, {"s": randn(3, 2, 6)}, "parts", opset=18)


def reshape_model() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """onnxruntime #28449: Reshape then Reshape(allowzero=1, [0, 0, 4]) of an empty
    tensor; the merge of the two drops allowzero from onnxruntime 1.21 to 1.26."""

    def shape(name: str, values: list[int]) -> onnx.NodeProto:
        value = onnx.numpy_helper.from_array(np.array(values, np.int64), f"{name}_value")
        return helper.make_node("Constant", [], [name], value=value)

    core = [
        shape("shape_a", [4, 2, -1]),
        helper.make_node("Reshape", ["r0", "shape_a"], ["mid"]),
        shape("shape_b", [0, 0, 4]),
        helper.make_node("Reshape", ["mid", "shape_b"], ["reshaped"], allowzero=1),
    ]
    inputs = {"r0": np.zeros((0, 8, 2), np.float32)}
    return buried(core, inputs, "reshaped", exposed={"reshaped": [0, 0, 4]})


def _save(folder: Path, name: str, built: tuple[onnx.ModelProto, dict[str, np.ndarray]]) -> Path:
    model, feeds = built
    onnx.checker.check_model(model, full_check=True)  # legal, whatever a release says
    assert len(model.graph.node) > 30
    path = folder / f"{name}.onnx"
    onnx.save(model, str(path))
    np.savez(path.with_suffix(".npz"), **feeds)  # type: ignore[arg-type]
    return path


def _triage(path: Path, state: Path, out: Path, *args: str) -> dict[str, Any]:
    from compat.cli.main import main

    code = main(
        [
            "triage",
            str(path),
            "--config",
            str(ROOT / "pyproject.toml"),
            "--state-dir",
            str(state),
            "--out",
            str(out),
            *args,
        ]
    )
    assert code == 0
    document: dict[str, Any] = json.loads((out / "triage.json").read_text())
    return document


def _finding(document: dict[str, Any], check: str, package: str) -> dict[str, Any]:
    found = [f for f in document["findings"] if (f["check"], f["package"]) == (check, package)]
    assert len(found) == 1, document["findings"]
    return found[0]


def _boundary(finding: dict[str, Any]) -> tuple[str, str, str]:
    """(kind, the last release on one side, the first on the other), as the kind reads."""
    if finding["kind"] == "regression":
        return finding["kind"], finding["last_good"], finding["first_bad"]
    return finding["kind"], finding["last_bad"], finding["first_good"]


def _repro_in_fresh_venv(folder: Path, requirements: str, venv: Path) -> int:
    """repro.py run by a venv made here from the finding's requirements file."""
    subprocess.run(["uv", "venv", "-q", "--python", sys.executable, str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        ["uv", "pip", "install", "-q", "--python", str(python), "-r", str(folder / requirements)],
        check=True,
    )
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    return subprocess.run([str(python), "repro.py"], cwd=folder, env=env).returncode


@pytest.mark.envs
def test_value_ints_pads_to_fixed_in_onnx_1_21_with_the_tensor_form_as_workaround(
    tmp_path: Path, shared_state: Path
) -> None:
    path = _save(tmp_path, "pads", pads_model())
    out = tmp_path / "out"
    document = _triage(path, shared_state, out, "--onnx", "1.20.1,1.21.0", "--axis", "onnx")
    finding = _finding(document, "shape_inference", "onnx")
    assert _boundary(finding) == ("fixed", "1.20.1", "1.21.0")
    assert "'pads' input must be a 1D" in finding["detail"]
    minimal = finding["minimal"]
    assert minimal["nodes"] <= 3 and "Pad" in minimal["op_types"]
    assert "constant_value_tensor" in {w["rewrite"] for w in finding["workarounds"]}
    original_fix = [w for w in finding["workarounds"] if w["rewrite"] == "constant_value_tensor"]
    assert any(w["model"] == "original" and w["passes_everywhere"] for w in original_fix)
    # the minimal model is a valid model on the passing release, and small
    folder = out / Path(finding["report"]).parent
    reduced = onnx.load(str(folder / "minimal.onnx"))
    assert [n.op_type for n in reduced.graph.node] == minimal["op_types"]
    report = (folder / "report.md").read_text()
    for needed in (
        "last bad 1.20.1, first good 1.21.0",
        "Pad (",
        "constant_value_tensor",
        "onnx 1.20.1",
        "### Minimal model",
    ):
        assert needed in report, needed
    assert _repro_in_fresh_venv(folder, "requirements.txt", tmp_path / "bad") == 1
    assert _repro_in_fresh_venv(folder, "requirements-good.txt", tmp_path / "good") == 0


@pytest.mark.envs
def test_empty_matmul_reduces_to_one_node_fixed_in_onnxruntime_1_32(
    tmp_path: Path, shared_state: Path
) -> None:
    path = _save(tmp_path, "matmul", matmul_model())
    out = tmp_path / "out"
    document = _triage(
        path,
        shared_state,
        out,
        "--ort",
        "1.31.1,1.32.0",
        "--axis",
        "onnxruntime",
        "--check",
        "ort_run",
    )
    finding = _finding(document, "ort_run", "onnxruntime")
    assert _boundary(finding) == ("fixed", "1.31.1", "1.32.0")
    assert finding["minimal"]["op_types"] == ["MatMul"]
    assert "cannot broadcast" in finding["detail"]
    folder = out / Path(finding["report"]).parent
    assert _repro_in_fresh_venv(folder, "requirements.txt", tmp_path / "bad") == 1
    assert _repro_in_fresh_venv(folder, "requirements-good.txt", tmp_path / "good") == 0


@pytest.mark.envs
def test_failing_on_every_release_of_the_axis_looks_beyond_it(
    tmp_path: Path, shared_state: Path
) -> None:
    """An axis of one failing release: the newest release on the index passes, so the
    finding is a fix after the axis, bisected to its boundary."""
    path = _save(tmp_path, "matmul", matmul_model())
    document = _triage(
        path,
        shared_state,
        tmp_path / "out",
        "--ort",
        "1.30.0",
        "--axis",
        "onnxruntime",
        "--check",
        "ort_run",
    )
    finding = _finding(document, "ort_run", "onnxruntime")
    assert _boundary(finding) == ("fixed", "1.31.1", "1.32.0")
    assert finding["tested"]["1.31.0"] == "bad"


@pytest.mark.envs
def test_split_with_empty_name_is_worked_around_by_omitting_the_input(
    tmp_path: Path, shared_state: Path
) -> None:
    path = _save(tmp_path, "split", split_model())
    out = tmp_path / "out"
    document = _triage(path, shared_state, out, "--ort", "1.31.1,1.32.0", "--axis", "onnxruntime")
    finding = _finding(document, "ort_run", "onnxruntime")
    assert _boundary(finding) == ("fixed", "1.31.1", "1.32.0")
    assert "Split" in finding["minimal"]["op_types"] and finding["minimal"]["nodes"] <= 2
    rewrites = {(w["rewrite"], w["model"]) for w in finding["workarounds"]}
    assert ("optional_input_omitted", "original") in rewrites
    folder = out / Path(finding["report"]).parent
    assert _repro_in_fresh_venv(folder, "requirements.txt", tmp_path / "bad") == 1
    assert _repro_in_fresh_venv(folder, "requirements-good.txt", tmp_path / "good") == 0


def combo_model() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """Split-18 with "" and the empty MatMul in one model: onnxruntime < 1.32 stops at
    the Split (session creation), so the MatMul only fails once the Split is spelled
    without the empty name."""
    core = [
        helper.make_node("MatMul", ["empty", "v"], ["product"]),
        helper.make_node("Split", ["s", ""], ["s0", "s1", "s2"], axis=1, num_outputs=3),
        helper.make_node("Concat", ["s2", "s0", "s1"], ["parts"], axis=1),
        helper.make_node("ReduceSum", ["product"], ["psum"], keepdims=0),
        helper.make_node("Add", ["parts", "psum"], ["both"]),
    ]
    inputs = {"empty": np.zeros((0, 3), np.float32), "v": randn(2, 3), "s": randn(3, 2, 6)}
    return buried(core, inputs, "both", opset=18)


@pytest.mark.envs
def test_a_failure_hiding_behind_another_is_triaged_too(tmp_path: Path, shared_state: Path) -> None:
    path = _save(tmp_path, "combo", combo_model())
    document = _triage(
        path,
        shared_state,
        tmp_path / "out",
        "--ort",
        "1.31.1,1.32.0",
        "--axis",
        "onnxruntime",
        "--check",
        "ort_run",
    )
    first, second = document["findings"]
    assert first["minimal"]["op_types"] == ["Split"] and not first["behind"]
    assert first["hidden"][0]["rewrite"] == "optional_input_omitted"
    assert first["followed"] == [2]
    assert second["minimal"]["op_types"] == ["MatMul"]
    assert "optional_input_omitted" in second["behind"]
    assert _boundary(second) == ("fixed", "1.31.1", "1.32.0")
    # the corpus knows both bugs; the likeliest match comes first
    assert second["known"][0]["link"] == "https://github.com/microsoft/onnxruntime/issues/11895"
    assert "split.h" in first["known"][0]["link"]


@pytest.mark.envs
def test_a_regression_is_bisected_between_matrix_releases(
    tmp_path: Path, shared_state: Path
) -> None:
    """The axis has 1.20.1 and 1.22.0 only: bisection over the index finds the first bad
    release between them, and the reduction keeps the two Reshapes the merge needs."""
    path = _save(tmp_path, "reshape", reshape_model())
    document = _triage(
        path,
        shared_state,
        tmp_path / "out",
        "--ort",
        "1.20.1,1.22.0",
        "--axis",
        "onnxruntime",
        "--check",
        "ort_run",
    )
    finding = _finding(document, "ort_run", "onnxruntime")
    assert _boundary(finding) == ("regression", "1.20.1", "1.21.0")
    assert finding["tested"]["1.21.0"] == "bad"  # a release no cell of the matrix had
    assert "shape [0, 8, 4], expected [0, 0, 4]" in finding["detail"]
    assert finding["minimal"]["op_types"].count("Reshape") == 2
    assert finding["minimal"]["nodes"] <= 4


@pytest.mark.envs
def test_a_model_that_behaves_the_same_everywhere_has_no_findings(
    tmp_path: Path, shared_state: Path
) -> None:
    path = _save(
        tmp_path,
        "plain",
        buried([helper.make_node("Relu", ["r"], ["rr"])], {"r": randn(4, 4)}, "rr"),
    )
    document = _triage(
        path, shared_state, tmp_path / "out", "--ort", "1.31.1,1.32.0", "--axis", "onnxruntime"
    )
    assert document["findings"] == []
    assert "No findings" in (tmp_path / "out" / "report.md").read_text()


@pytest.mark.envs
def test_the_served_worker_survives_a_crash_and_a_hang(tmp_path: Path, shared_state: Path) -> None:
    """A candidate that kills the worker is a crash, one that stalls a timeout; the next
    task runs in a fresh worker, and tasks in a healthy worker share one process."""
    from compat.corpus.discover import write_case
    from compat.execute.envs import ensure_env
    from compat.execute.served import ServedWorker
    from compat.plan.config import load_config
    from compat.plan.matrix import make_cell

    config = load_config(ROOT / "pyproject.toml")
    env = ensure_env(make_cell(config, "1.21.0", "1.24.4"), shared_state / "envs")
    files = write_case(hostile_case("ok", "segfault", "hang"), tmp_path / "cases")
    with ServedWorker(env, tmp_path / "work", timeout=3) as worker:
        first = worker.run("tiny.hostile", "ok", files.directory)
        again = worker.run("tiny.hostile", "ok", files.directory)
        assert (first["outcome"], again["outcome"], worker.started) == ("pass", "pass", 1)
        crashed = worker.run("tiny.hostile", "segfault", files.directory)
        assert crashed["outcome"] == "crash" and "SIGSEGV" in crashed["detail"]
        assert worker.run("tiny.hostile", "ok", files.directory)["outcome"] == "pass"
        hung = worker.run("tiny.hostile", "hang", files.directory)
        assert hung["outcome"] == "timeout"
        assert worker.run("tiny.hostile", "ok", files.directory)["outcome"] == "pass"
        assert worker.started == 3


def test_signatures_blank_names_numbers_and_paths() -> None:
    one = signature("ort_run", "error", "run", "Fail: node 'n17' at /src/a/b.cc:61 dim 0 of 4")
    two = signature("ort_run", "error", "run", "Fail: node 'Pad_3' at /build/x/b.cc:70 dim 1 of 7")
    assert one == two == "ort_run error@run: Fail: node '…' at PATH dim N of N"
    assert signature("ort_run", "fail", "run", "x") != signature("ort_run", "error", "run", "x")
    known = signature("reference", "error", "run", "no 'a' in known results ['b', 'c', 'd']")
    assert known == signature("reference", "error", "run", "no 'z' in known results ['b']")
    # a detail cut short (compat.cell.verdict.bounded) is the same failure as its whole
    whole = "Unable to find input 'x' in known results ['a', 'b', 'c'], feed_inputs has ['d']"
    cut = "Unable to find input 'y' in known results ['a', 'b [... 12 characters cut ...] 'c']"
    a, b = (signature("reference", "error", "run", d) for d in (whole, cut))
    assert a != b and same_way(a, b) and same_way(b, a)
    assert not same_way(a, signature("reference", "error", "run", "Unable to read 'x'"))


def _cells(package: str, versions: list[str]) -> list[Cell]:
    return [
        Cell(v, "1.24.4", InstallRequest())
        if package == "onnx"
        else Cell("1.23.2", v, InstallRequest())
        for v in versions
    ]


def test_findings_are_changes_between_neighbours_or_failures_everywhere() -> None:
    cells = _cells("onnxruntime", ["1.17.3", "1.20.1", "1.24.4", "1.32.0"])
    plan = Plan(tuple(cells), {"onnxruntime": tuple(cells)}, cross=False)
    outcomes = {
        "ort_run": ["fail", "skip", "fail", "pass"],  # skip observes nothing: fixed in 1.32.0
        "reference": ["pass", "pass", "error", "error"],  # broken in 1.24.4
        "annotations": ["fail", "fail", "crash", "fail"],  # always
        "checker": ["pass", "pass", "pass", "pass"],
    }
    results = [
        CheckResult(cell.id, "triage.m", check, Outcome(o), detail="boom")
        for check, row in outcomes.items()
        for cell, o in zip(cells, row, strict=True)
    ]
    axes = {c: "onnxruntime" for c in outcomes}
    found = {(f.check, f.kind): f for f in findings_of(plan, results, axes)}
    assert set(found) == {
        ("ort_run", "fixed"),
        ("reference", "regression"),
        ("annotations", "always"),
    }
    fixed = found["ort_run", "fixed"]
    assert (fixed.last_bad, fixed.first_good) == ("1.24.4", "1.32.0")
    regression = found["reference", "regression"]
    assert (regression.last_good, regression.first_bad) == ("1.20.1", "1.24.4")
    assert regression.bad_cell.onnxruntime == "1.24.4"
    assert found["annotations", "always"].title().endswith("(1.17.3–1.32.0)")


def test_failing_everywhere_names_only_the_releases_that_observed_it() -> None:
    """onnxruntime 1.15.1 and 1.16.3 cannot read the model: they saw nothing of the
    failure, and the headline says so instead of spanning them."""
    cells = _cells("onnxruntime", ["1.15.1", "1.16.3", "1.18.1", "1.32.0"])
    plan = Plan(tuple(cells), {"onnxruntime": tuple(cells)}, cross=False)
    row = ["unsupported", "unsupported", "fail", "fail"]
    results = [
        CheckResult(cell.id, "triage.m", "ort_run", Outcome(o), detail="boom")
        for cell, o in zip(cells, row, strict=True)
    ]
    (found,) = findings_of(plan, results, {"ort_run": "onnxruntime"})
    assert found.title() == (
        "ort_run · onnxruntime: fails on every onnxruntime release that ran it "
        "(1.18.1–1.32.0; nothing observed on 1.15.1, 1.16.3)"
    )


@pytest.mark.subprocess
def test_triage_refuses_bad_input_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "junk.onnx").write_bytes(b"not a model")
    for args, needed in (
        (["missing.onnx"], "no such model file"),
        ([str(tmp_path / "junk.onnx")], "not a readable ONNX model"),
    ):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "compat",
                "triage",
                *args,
                "--config",
                str(ROOT / "pyproject.toml"),
            ],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert done.returncode == 2, done.stderr
        assert needed in done.stderr and len(done.stderr.strip().splitlines()) == 1


@pytest.mark.envs
def test_silero_vad_a_model_nobody_here_wrote(tmp_path: Path, shared_state: Path) -> None:
    """silero-vad (shipped in its wheel, tests/data/real_models): onnx's reference
    evaluator fails on it before onnx 1.23.0. Its 121 nodes (+229 inside nested If
    bodies) reduce to the LSTM, deep inside the Ifs, and the Squeeze that reads its
    third output, Y_c, which the reference LSTM did not return (onnx PR #7664)."""
    path = ROOT / "tests" / "data" / "real_models" / "silero_vad_16k_op15.onnx"
    document = _triage(
        path,
        shared_state,
        tmp_path / "out",
        "--onnx",
        "1.22.0,1.23.0",
        "--axis",
        "onnx",
        "--check",
        "reference",
    )
    finding = _finding(document, "reference", "onnx")
    assert _boundary(finding) == ("fixed", "1.22.0", "1.23.0")
    assert "Unable to find input" in finding["detail"]
    assert finding["minimal"]["op_types"] == ["LSTM", "Squeeze"]
    assert finding["minimal"]["nodes_in_bodies"] == 0
    # the known failure declared beside the model (tests/data/real_models/compat.toml)
    assert finding["known"][0]["link"] == "https://github.com/onnx/onnx/pull/7664"
