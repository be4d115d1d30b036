"""Real cells built with uv from the package index: few and small (marked `envs`)."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest
from packaging.version import Version

from compat.cli.main import main
from compat.execute.envs import env_python
from compat.execute.installer import find_uv
from tests.conftest import ROOT

pytestmark = pytest.mark.envs


def run_matrix(
    tmp_path: Path, *args: str, config: Path = ROOT / "pyproject.toml"
) -> tuple[int, dict]:  # type: ignore[type-arg]
    code = main(
        [
            "matrix",
            "--config",
            str(config),
            "--corpus",
            str(ROOT / "cases"),
            "--state-dir",
            str(tmp_path / "state"),
            "--out",
            str(tmp_path / "out"),
            *args,
        ]
    )
    return code, json.loads((tmp_path / "out" / "matrix.json").read_text())


def test_a_release_that_does_not_exist_is_an_install_error_while_other_cells_finish(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # given on the command line, the index is asked first: one line, nothing built
    assert main(["matrix", "--list", "--onnx", "1.99.0,1.23.2"]) == 2
    assert "--onnx 1.99.0: the package index has no onnx 1.99.0" in capsys.readouterr().err
    code, report = run_matrix(  # --offline (or a config's list): found when it is built
        tmp_path,
        "--offline",
        "--onnx",
        "1.99.0,1.23.2",
        "--ort",
        "1.24.4",
        "--cross",
        "--cases",
        "pad_pads_from_constant.*",
    )
    assert code == 1  # a cell that cannot be built is unexpected
    cells = {c["id"]: c for c in report["cells"]}
    broken, good = cells["onnx1.99.0-ort1.24.4"], cells["onnx1.23.2-ort1.24.4"]
    assert broken["state"] == "install-error"
    assert "onnx==1.99.0" in broken["detail"]  # uv's own message
    assert good["state"] == "ready"
    assert good["packages"]["onnx"] == "1.23.2" and good["packages"]["onnxruntime"] == "1.24.4"
    assert good["python"] and good["packages"]["numpy"] and good["packages"]["protobuf"]
    results = report["results"]
    assert {r["cell"] for r in results} == {"onnx1.23.2-ort1.24.4"}  # no fake case failures
    assert len(results) == 2 * 7  # two cases, seven built-in checks (no optimized graph)
    assert {r["outcome"] for r in results} <= {"pass", "skip"}
    markdown = (tmp_path / "out" / "matrix.md").read_text()
    assert "install-error" in markdown

    # An unchanged environment is reused, not rebuilt, on the next run.
    sentinel = tmp_path / "state" / "envs" / "onnx1.23.2-ort1.24.4" / "sentinel"
    sentinel.write_text("still here")
    code, again = run_matrix(
        tmp_path,
        "--onnx",
        "1.23.2",
        "--ort",
        "1.24.4",
        "--cross",
        "--cases",
        "pad_*,models.*",
        "--cases-dir",
        str(ROOT / "examples" / "models"),
    )
    assert code == 1 and sentinel.exists()  # 1: the example's wrong output annotation
    untimed = [
        {**r, "seconds": 0, "origin": ""} for r in again["results"] if r["case"].startswith("pad_")
    ]
    assert untimed == [{**r, "seconds": 0} for r in results]
    assert {r["origin"] for r in again["results"] if r["case"].startswith("pad_")} == {"cache"}

    # Drop-in models are rows of their own, judged without a hand-written oracle.
    dropins = {
        (r["case"], r["check"]): r["outcome"]
        for r in again["results"]
        if r["case"].startswith("models.")
    }
    assert dropins[("models.wrong_output_annotation", "annotations")] == "fail"
    assert dropins[("models.layer_norm", "ort_run")] == "pass"
    markdown = (tmp_path / "out" / "matrix.md").read_text()
    assert "## models" in markdown and "| wrong_output_annotation · annotations " in markdown


def test_old_onnxruntime_needs_its_declared_numpy_constraint(tmp_path: Path) -> None:
    """onnxruntime 1.17.3 imports under numpy 1.x (the declared constraint) and not under 2."""
    without = tmp_path / "pyproject.toml"
    text = (ROOT / "pyproject.toml").read_text()
    without.write_text(text[: text.index("[[tool.compat.constraints]]")])
    args = (
        "--onnx",
        "1.23.2",
        "--ort",
        "1.17.3",
        "--cross",
        "--cases",
        "shape_slice_folding.start1_end3",
    )

    code, report = run_matrix(tmp_path / "without", *args, config=without)
    (cell,) = report["cells"]
    assert code == 1
    assert cell["state"] == "import-error"
    assert "compiled using NumPy 1.x cannot be run in" in cell["detail"]
    markdown = (tmp_path / "without" / "out" / "matrix.md").read_text()
    assert "import-error: A module that was compiled using NumPy 1.x" in markdown

    code, report = run_matrix(tmp_path / "with", *args)
    (cell,) = report["cells"]
    assert code == 0, report["results"]
    assert cell["state"] == "ready" and cell["packages"]["numpy"].startswith("1.")
    outcomes = {r["check"]: r["outcome"] for r in report["results"]}
    assert outcomes["ort_run"] == "pass" and outcomes["ort_optimized"] == "xfail"


def test_shards_merged_equal_a_single_run(tmp_path: Path, shared_state: Path) -> None:
    axes = ["--onnx", "1.21.0,1.23.2", "--ort", "1.22.1", "--cases", "pad_*"]
    common = ["--config", str(ROOT / "pyproject.toml"), "--state-dir", str(shared_state)]
    assert main(["matrix", *common, *axes, "--out", str(tmp_path / "single"), "--fresh"]) == 0
    for k in (1, 2, 3):
        out = str(tmp_path / f"shard{k}")
        assert main(["matrix", *common, *axes, "--shard", f"{k}/3", "--out", out, "--fresh"]) == 0
    shards = [str(tmp_path / f"shard{k}") for k in (3, 1, 2)]
    assert main(["merge", *shards, "--out", str(tmp_path / "merged")]) == 0

    single = json.loads((tmp_path / "single" / "matrix.json").read_text())
    merged = json.loads((tmp_path / "merged" / "matrix.json").read_text())
    # where a shared result was computed depends on which cells a shard holds
    untimed = [
        {k: v for k, v in r.items() if k not in ("seconds", "origin")} for r in single["results"]
    ]
    assert [
        {k: v for k, v in r.items() if k not in ("seconds", "origin")} for r in merged["results"]
    ] == untimed
    for key in ("cells", "cases", "axes", "families"):
        assert merged[key] == single[key]
    single_md = (tmp_path / "single" / "matrix.md").read_text()
    assert (tmp_path / "merged" / "matrix.md").read_text() == single_md


def test_a_failing_cell_reproduces_from_the_written_script_in_a_fresh_venv(
    tmp_path: Path, shared_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "repro",
            "onnx==1.18.0",
            "--cases",
            "pad_pads_from_constant.value_ints",
            "--config",
            str(ROOT / "pyproject.toml"),
            "--state-dir",
            str(shared_state),
            "--out",
            str(tmp_path),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0  # the failures are known ones (xfail)
    assert "installed: numpy" in out and "onnx 1.18.0, onnxruntime 1.24.4" in out
    assert "Traceback (most recent call last)" in out and "'pads' input must be a 1D" in out
    folder = tmp_path / "repro" / "onnx1.18.0-ort1.24.4"
    script = folder / "pad_pads_from_constant.value_ints.shape_inference" / "repro.py"
    pins = script.with_name("requirements.txt").read_text().split()
    assert "onnx==1.18.0" in pins and "onnxruntime==1.24.4" in pins

    venv = tmp_path / "venv"
    uv = find_uv()
    subprocess.run([uv, "venv", "--quiet", str(venv)], check=True)
    subprocess.run(
        [
            uv,
            "pip",
            "install",
            "--quiet",
            "--python",
            str(env_python(venv)),
            "-r",
            str(script.with_name("requirements.txt")),
        ],
        check=True,
    )
    done = subprocess.run(
        [str(env_python(venv)), str(script)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "onnx 1.18.0, onnxruntime 1.24.4" in done.stdout
    assert (
        "fail@infer: InferenceError" in done.stdout and "'pads' input must be a 1D" in done.stdout
    )


def test_bisect_finds_the_release_that_fixed_value_ints_pads(
    shared_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "bisect",
            "--case",
            "pad_pads_from_constant.value_ints",
            "--check",
            "shape_inference",
            "--package",
            "onnx",
            "--config",
            str(ROOT / "pyproject.toml"),
            "--state-dir",
            str(shared_state),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert out.splitlines()[-1] == "last failing 1.20.1, first passing 1.21.0: fixed in 1.21.0"
    listed = out.splitlines()[0].split(": ", 1)[1].split(", ")
    tested = next(line for line in out.splitlines() if line.startswith("tested "))
    count = int(tested.split()[1])
    assert count <= math.ceil(math.log2(len(listed))) + 2
    assert "1.14.1" in listed and "1.21.0" in listed


def test_the_scoreboard_runs_the_backend_suite_in_a_real_cell(
    tmp_path: Path, shared_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "scoreboard",
            "--ort",
            "1.24.4",
            "--cases",
            "onnx_backend.test_abs*,onnx_backend.test_max_*",
            "--config",
            str(ROOT / "pyproject.toml"),
            "--state-dir",
            str(shared_state),
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 0
    board = (tmp_path / "scoreboard.md").read_text()
    assert "generated by onnx" in board and "| 1.24.4 " in board
    assert "| Abs " in board and "| Max " in board
    report = json.loads((tmp_path / "matrix.json").read_text())
    assert report["run"]["generator_onnx"]
    assert {r["check"] for r in report["results"]} == {
        "ort_run",
        "reference",
        "shape_inference",
        "inferred_annotations",
    }


def test_two_runs_started_at_once_on_an_empty_state_directory_both_succeed(
    tmp_path: Path,
) -> None:
    """A matrix and a second terminal (or two CI jobs with one cache) at the same moment:
    the second waits for each environment the first is building, then uses it."""
    import sys

    state = tmp_path / "state"
    command = [
        sys.executable,
        "-m",
        "compat",
        "matrix",
        "--onnx",
        "1.23.2",
        "--ort",
        "1.24.4",
        "--cross",
        "--cases",
        "pad_pads_from_constant.*,shape_slice_folding.*",
        "--state-dir",
        str(state),
        "--jobs",
        "1",
    ]
    runs = [
        subprocess.Popen(
            [*command, "--out", str(tmp_path / name)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for name in ("a", "b")
    ]
    outputs = [run.communicate(timeout=900)[0] for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    a, b = ((tmp_path / name / "matrix.md").read_text() for name in ("a", "b"))
    assert a == b
    for name in ("a", "b"):
        report = json.loads((tmp_path / name / "matrix.json").read_text())
        assert [c["state"] for c in report["cells"]] == ["ready"]
        assert {r["outcome"] for r in report["results"]} <= {"pass", "skip", "xfail"}


def test_results_shared_between_cells_equal_every_cell_computing_everything(
    tmp_path: Path, shared_state: Path
) -> None:
    """Distinct work only: a result computed once and shown in every cell with the same
    versions of what its check depends on is the result each cell computes itself."""
    axes = [
        "--onnx",
        "1.18.0,1.23.2",
        "--ort",
        "1.17.3,1.24.4",
        "--cases",
        "pad_*,shape_slice_folding.*,reshape_allowzero.*,annotations.*",
    ]
    common = ["--config", str(ROOT / "pyproject.toml"), "--state-dir", str(shared_state)]
    assert main(["matrix", *common, *axes, "--out", str(tmp_path / "shared"), "--fresh"]) == 0
    assert (
        main(["matrix", *common, *axes, "--out", str(tmp_path / "full"), "--fresh", "--no-share"])
        == 0
    )
    shared = json.loads((tmp_path / "shared" / "matrix.json").read_text())
    full = json.loads((tmp_path / "full" / "matrix.json").read_text())
    assert {r["origin"] for r in full["results"]} == {""}  # every cell computed its own
    elsewhere = [r for r in shared["results"] if r["origin"] not in ("", "cache")]
    # ort_run (and ort_optimized) of onnx1.18.0-ort1.24.4 is onnx1.23.2-ort1.24.4's (same
    # onnxruntime, numpy); onnx1.23.2-ort1.17.3 has numpy 1.x: it shares no onnx-only result
    assert {r["check"] for r in elsewhere} == {"ort_run", "ort_optimized"}
    assert len([r for r in elsewhere if r["check"] == "ort_run"]) >= 20
    # and the onnxruntime part of each annotations check is computed in one of the two
    # cells with onnxruntime 1.24.4 only
    pair = ("annotations", "onnx1.18.0-ort1.24.4")
    annotated = [r for r in shared["results"] if (r["check"], r["cell"]) == pair]
    assert len(annotated) >= 10
    assert shared["run"]["executed"] <= full["run"]["executed"] - len(elsewhere) - len(annotated)
    strip = ("seconds", "origin")
    assert [{k: v for k, v in r.items() if k not in strip} for r in shared["results"]] == [
        {k: v for k, v in r.items() if k not in strip} for r in full["results"]
    ]
    for name in ("matrix.md", "compatibility.md"):
        assert (tmp_path / "shared" / name).read_text() == (tmp_path / "full" / name).read_text()
    assert shared["run"]["executed"] < full["run"]["executed"]


def test_an_extra_package_axis_pins_each_cell_and_an_unsatisfiable_pair_says_why(
    tmp_path: Path, shared_state: Path
) -> None:
    """`--pkg protobuf=…`: onnx 1.23.2 needs protobuf >= 6.31.1, so that one pair is an
    install-error with uv's reason in one line, never a silent substitution; every other
    cell records the protobuf it was pinned to, with the results of the plain matrix."""
    code = main(
        [
            "matrix",
            "--config",
            str(ROOT / "pyproject.toml"),
            "--state-dir",
            str(shared_state),
            "--out",
            str(tmp_path / "out"),
            "--onnx",
            "1.16.2,1.23.2",
            "--ort",
            "1.24.4",
            "--cross",
            "--pkg",
            "protobuf=3.20.3,6.33.0",
            "--cases",
            "pad_pads_from_constant.*",
        ]
    )
    report = json.loads((tmp_path / "out" / "matrix.json").read_text())
    assert code == 1  # a broken cell
    cells = {c["id"]: c for c in report["cells"]}
    assert sorted(cells) == [
        "onnx1.16.2-ort1.24.4-protobuf3.20.3",
        "onnx1.16.2-ort1.24.4-protobuf6.33.0",
        "onnx1.23.2-ort1.24.4-protobuf3.20.3",
        "onnx1.23.2-ort1.24.4-protobuf6.33.0",
    ]
    broken = cells.pop("onnx1.23.2-ort1.24.4-protobuf3.20.3")
    assert broken["state"] == "install-error"
    assert broken["detail"].splitlines()[0] == (
        "onnx>=1.23.2 requires protobuf>=6.31.1, not protobuf==3.20.3"
    )
    for cell_id, cell in cells.items():
        assert cell["state"] == "ready"
        assert cell["packages"]["protobuf"] == cell_id.rsplit("protobuf", 1)[1]
    outcomes = {
        (r["cell"].split("-")[0], r["case"], r["check"]): r["outcome"] for r in report["results"]
    }
    assert outcomes[("onnx1.16.2", "pad_pads_from_constant.value_ints", "shape_inference")] == (
        "xfail"  # the known onnx < 1.21 bug, whatever the protobuf
    )
    assert outcomes[("onnx1.23.2", "pad_pads_from_constant.value_ints", "shape_inference")] == (
        "pass"
    )
    # the resolver's answer is remembered: a rerun asks uv nothing for that cell
    args = ["matrix", "--config", str(ROOT / "pyproject.toml"), "--state-dir", str(shared_state)]
    args += ["--out", str(tmp_path / "again"), "--onnx", "1.23.2", "--ort", "1.24.4"]
    assert main([*args, "--pkg", "protobuf=3.20.3", "--cases", "pad_pads_from_constant.*"]) == 1
    (again,) = json.loads((tmp_path / "again" / "matrix.json").read_text())["cells"]
    assert again["state"] == "install-error"
    assert again["detail"].splitlines()[0] == broken["detail"].splitlines()[0]
    assert again["detail"].endswith("(remembered for 24 h)")


def test_weekly_runs_the_newest_onnx_weekly_labelled_with_its_real_version(
    tmp_path: Path, shared_state: Path
) -> None:
    code = main(
        [
            "matrix",
            "--config",
            str(ROOT / "pyproject.toml"),
            "--state-dir",
            str(shared_state),
            "--out",
            str(tmp_path / "out"),
            "--onnx",
            "weekly",
            "--ort",
            "1.24.4",
            "--axis",
            "onnx",
            "--cases",
            "pad_pads_from_constant.tensor",
        ]
    )
    report = json.loads((tmp_path / "out" / "matrix.json").read_text())
    (cell,) = report["cells"]
    assert cell["state"] == "ready", cell["detail"]
    version = cell["packages"]["onnx"]
    assert ".dev" in version and cell["id"] == f"onnx{version}-ort1.24.4"
    assert f"onnx-weekly=={version}" in cell["requirements"]
    assert code == 0 or any(r["outcome"] != "pass" for r in report["results"])


@pytest.mark.subprocess
def test_the_writer_reader_table_agrees_with_a_plain_venv_on_a_few_pairs(
    tmp_path: Path, shared_state: Path
) -> None:
    """onnx 1.16.2 writes IR 10: onnxruntime 1.17.3 cannot read it, 1.18.1 can
    (onnxruntime #20559). The matrix's verdict equals a plain venv's, pair by pair."""
    pairs = [("1.16.2", "1.17.3"), ("1.16.2", "1.18.1")]
    code = main(
        [
            "matrix",
            "--config",
            str(ROOT / "pyproject.toml"),
            "--state-dir",
            str(shared_state),
            "--out",
            str(tmp_path / "out"),
            "--cross",
            "--onnx",
            "1.16.2",
            "--ort",
            "1.17.3,1.18.1",
            "--cases",
            "writer_reader.*",
        ]
    )
    assert code == 0
    report = json.loads((tmp_path / "out" / "matrix.json").read_text())
    matrix = {r["cell"]: r["outcome"] for r in report["results"]}
    uv = find_uv()
    for onnx, ort in pairs:
        venv = tmp_path / f"plain-{onnx}-{ort}"
        subprocess.run([uv, "venv", "-q", str(venv)], check=True)
        old = Version(ort) < Version("1.18.1")  # built against numpy 1.x
        pins = [f"onnx=={onnx}", f"onnxruntime=={ort}", "numpy<2" if old else "numpy"]
        subprocess.run(
            [uv, "pip", "install", "-q", "--python", str(env_python(venv)), *pins], check=True
        )
        done = subprocess.run(
            [str(env_python(venv)), str(ROOT / "tests" / "data" / "writer_reader_plain.py")],
            capture_output=True,
            text=True,
            check=True,
        )
        plain = json.loads(done.stdout.strip().splitlines()[-1])
        verdict = matrix[f"onnx{onnx}-ort{ort}"]
        assert verdict in ("pass", "skip")
        assert (verdict == "pass") == plain["loads"], (onnx, ort, plain, verdict)
    assert [matrix[f"onnx{o}-ort{r}"] for o, r in pairs] == ["skip", "pass"]
    page = (tmp_path / "out" / "writer_reader.md").read_text()
    assert "| 1.16.2 (IR 10, opset 21) | ⏭️ | ✅ |" in page


def test_a_downstream_package_that_no_longer_imports_is_the_result_not_a_crash(
    tmp_path: Path, shared_state: Path
) -> None:
    """onnx 1.19 removed onnx.mapping; onnxconverter-common 1.15.0 imported it (onnx
    #7257): its import fails under onnx 1.19.1 and works under 1.18.0, and a result is
    keyed by the downstream release too (1.16.0 imports under both)."""
    code = main(
        [
            "matrix",
            "--config",
            str(ROOT / "pyproject.toml"),
            "--state-dir",
            str(shared_state),
            "--out",
            str(tmp_path / "out"),
            "--fresh",
            "--onnx",
            "1.18.0,1.19.1",
            "--ort",
            "1.24.4",
            "--axis",
            "onnx",
            "--pkg",
            "onnxconverter-common=1.15.0,1.16.0",
            "--cases",
            "downstream_imports.*",
        ]
    )
    report = json.loads((tmp_path / "out" / "matrix.json").read_text())
    got = {r["cell"]: r for r in report["results"]}
    assert code == 1
    broken = got["onnx1.19.1-ort1.24.4-onnxconverter-common1.15.0"]
    assert broken["outcome"] == "fail" and "onnx.mapping" in broken["detail"]
    for cell in (
        "onnx1.18.0-ort1.24.4-onnxconverter-common1.15.0",
        "onnx1.18.0-ort1.24.4-onnxconverter-common1.16.0",
        "onnx1.19.1-ort1.24.4-onnxconverter-common1.16.0",
    ):
        assert got[cell]["outcome"] == "pass", got[cell]
        assert got[cell]["detail"] == "imports: onnxconverter-common " + cell.rsplit("common", 1)[1]
