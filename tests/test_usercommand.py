"""`--run`: the project's own command as a check in every cell (real cells)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compat.cli import main
from compat.errors import UsageError
from compat.usercommand import command_cases, parse_run
from tests.conftest import ROOT

GATE = 'gate=python -c "import onnx, sys; sys.exit(onnx.__version__ < \\"1.21\\")"'


def test_a_command_is_named_by_its_name_or_its_slug() -> None:
    assert parse_run("tests=pytest -x tests") == ("tests", "pytest -x tests")
    assert parse_run("pytest tests/test_export.py") == (
        "pytest_tests_test_export_py", "pytest tests/test_export.py",
    )  # fmt: skip
    with pytest.raises(UsageError, match="two commands are named 'a'"):
        command_cases(["a=true", "a=false"], ROOT)
    (case,) = command_cases(["a=true"], ROOT)
    assert case.id == "command.a" and case.checks == ("command",)


def run(tmp_path: Path, state: Path, *args: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    code = main(
        [
            "matrix",
            "--config",
            str(ROOT / "pyproject.toml"),
            "--state-dir",
            str(state),
            "--out",
            str(tmp_path / "out"),
            "--cases",
            "command.*",
            "--install",
            "none",
            *args,
        ]
    )  # fmt: skip  (onnx-compat is a package itself)
    return code, json.loads((tmp_path / "out" / "matrix.json").read_text())


@pytest.mark.envs
def test_the_command_s_exit_status_is_the_verdict_in_each_cell_and_it_always_runs_again(
    tmp_path: Path, shared_state: Path
) -> None:
    axes = ["--onnx", "1.20.1,1.21.0", "--ort", "1.24.4", "--axis", "onnx"]
    where = 'where=python -c "import sys; print(sys.prefix)"'
    code, report = run(tmp_path, shared_state, *axes, "--run", GATE, "--run", where,
                       "--run", "killed=kill -9 $$")  # fmt: skip
    assert code == 1
    got = {(r["cell"], r["case"]): r for r in report["results"]}
    old, new = "onnx1.20.1-ort1.24.4", "onnx1.21.0-ort1.24.4"
    assert got[(old, "command.gate")]["outcome"] == "fail"
    assert got[(old, "command.gate")]["detail"].startswith("exit 1")
    assert got[(new, "command.gate")]["outcome"] == "pass"
    for cell in (old, new):  # the cell's own environment is the active one
        assert got[(cell, "command.where")]["detail"].endswith(f"/envs/{cell}")
        assert got[(cell, "command.killed")]["outcome"] == "crash"
    repro = " ".join(report["run"]["options"]["run"])
    assert "gate=" in repro
    again, report = run(tmp_path, shared_state, *axes, "--run", GATE)
    assert again == 1 and report["run"]["executed"] == 2  # never from the cache


@pytest.mark.envs
def test_bisect_names_the_release_from_which_the_command_passes(
    shared_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["bisect", "--config", str(ROOT / "pyproject.toml"), "--state-dir",
                 str(shared_state), "--run", GATE, "--install", "none", "--package", "onnx",
                 "--good", "1.20.1", "--bad", "1.21.0"])  # fmt: skip
    assert code == 0
    assert "last failing 1.20.1, first passing 1.21.0: fixed in 1.21.0" in capsys.readouterr().out


IMPORTS = 'imports=python -c "import mypkg; assert mypkg.ANSWER == 42"'


@pytest.mark.envs
def test_a_project_that_is_a_package_is_installed_into_each_cell_before_its_command(
    tmp_path: Path, shared_state: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "mypkg"\nversion = "0.1"\n[tool.setuptools]\npy-modules = ["mypkg"]\n'
        + (ROOT / "pyproject.toml")
        .read_text()
        .split("[tool.compat]", 1)[1]
        .join(["[tool.compat]", ""])
    )
    (project / "mypkg.py").write_text("ANSWER = 42\n")
    code = main(["matrix", "--config", str(project / "pyproject.toml"), "--corpus",
                 str(ROOT / "cases"), "--state-dir", str(shared_state), "--out",
                 str(tmp_path / "out"), "--onnx", "1.23.2", "--ort", "1.24.4", "--axis", "onnx",
                 "--cases", "command.*", "--run", IMPORTS])  # fmt: skip
    report = json.loads((tmp_path / "out" / "matrix.json").read_text())
    (cell,) = report["cells"]
    assert cell["id"] == "onnx1.23.2-ort1.24.4"  # the project's setup is not in the id
    assert cell["installed"]["mypkg"] == "0.1"  # its wheel, built once, is in the cell
    assert code == 0, report["results"]
    assert [r["outcome"] for r in report["results"]] == ["pass"]
