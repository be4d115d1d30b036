"""Adoption from another project: the wheel (with the built-in corpus), `onnx-compat
init`, and that project's own `nox -s matrix` (real wheel, real nox, real cells)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from compat.adopt import init
from tests.conftest import ROOT


def test_init_writes_what_is_missing_and_never_overwrites(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "mine"\n')
    said = init(tmp_path, "onnx-compat", ["models"], ['tests=pytest -q -k "not slow"'])
    text = (tmp_path / "pyproject.toml").read_text()
    assert text.startswith('[project]\nname = "mine"\n') and "[tool.compat.onnx]" in text
    assert 'run = ["tests=pytest -q -k \\"not slow\\""]' in text
    assert "def matrix(" in (tmp_path / "noxfile.py").read_text()
    assert [line.split(": ")[1] for line in said[:2]] == [
        "[tool.compat] appended", "`matrix` session written",
    ]  # fmt: skip
    before = {p.name: p.read_text() for p in tmp_path.iterdir()}
    again = init(tmp_path, "other", [], [])
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == before
    assert all("left as it is" in line for line in again[:2])
    from compat.config import load_config

    config = load_config(tmp_path / "pyproject.toml")  # what init writes is a valid config
    assert config.run == ('tests=pytest -q -k "not slow"',)
    assert config.cases_dirs == (tmp_path / "models",)


@pytest.mark.envs
@pytest.mark.subprocess
def test_a_fresh_project_runs_seed_cases_its_models_and_its_command_from_the_wheel(
    tmp_path: Path, shared_state: Path
) -> None:
    uv, nox = shutil.which("uv"), shutil.which("nox")
    if not (uv and nox):
        pytest.fail("this test needs uv and nox on PATH (pip install uv nox)")
    wheels = tmp_path / "wheels"
    subprocess.run([uv, "build", "--wheel", "--out-dir", str(wheels), str(ROOT)],
                   check=True, capture_output=True)  # fmt: skip
    (wheel,) = wheels.glob("onnx_compat-*.whl")
    project = tmp_path / "project"
    shutil.copytree(ROOT / "examples" / "consumer", project)
    subprocess.run([sys.executable, "-m", "compat", "init", "--install", str(wheel),
                    "--run", "check=python check_model.py"],
                   cwd=project, check=True, capture_output=True)  # fmt: skip
    done = subprocess.run(
        [nox, "-s", "matrix", "--", "--onnx", "1.23.2", "--ort", "1.24.4", "--axis", "onnx",
         "--cases", "pad_pads_from_constant.*,models.*,command.*",
         "--state-dir", str(shared_state)],
        cwd=project, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((project / "reports" / "matrix.json").read_text())
    cases = {r["case"]: r["outcome"] for r in report["results"]}
    assert {"pad_pads_from_constant.tensor", "models.layer_norm", "command.check"} <= set(cases)
    assert cases["command.check"] == "pass"
    # the seed cases came from inside the wheel: the project has no cases/ of its own
    assert not (project / "cases").exists()
    shipped = list(
        (project / ".nox" / "matrix").glob(
            "lib/python*/site-packages/compat/builtin_cases/pad_pads_from_constant.py"
        )
    )
    assert shipped, "the wheel does not ship the built-in corpus"
    table = (project / "reports" / "matrix.md").read_text()
    assert "models" in table and "command" in table and "pad_pads_from_constant" in table
