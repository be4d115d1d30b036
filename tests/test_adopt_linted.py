"""init on a project laid out as onnx-ir is (tests/data/linted_project/README.md): tests
under src/ beside the code and in tests/, a noxfile that runs both, a strict ruff
configuration. init takes the project's own test commands, guesses the requirements from
every test file, and what it adds to the noxfile draws no finding of the project's ruff."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from compat.adopt.init import InitOptions, init
from tests.conftest import ROOT

FIXTURE = ROOT / "tests" / "data" / "linted_project"
INDEX = {"onnx": ["1.16.2", "1.18.0", "1.19.1"], "onnxruntime": ["1.17.3", "1.24.4"]}
#: what the package index has of the names the tests import (the module a test writes
#: itself is not a distribution)
ON_INDEX = {"hypothesis": True, "parameterized": True, "written_model_module": False}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURE, tmp_path / "irlike", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path / "irlike"


def adopt(project: Path) -> list[str]:
    options = InitOptions(install="dist/onnx_compat-0.1.0-py3-none-any.whl", python="none")
    return init(project, options, INDEX.__getitem__, lambda: ("3.11",), ON_INDEX.get)


def test_init_runs_the_project_s_own_commands_and_guesses_from_every_test_file(
    project: Path,
) -> None:
    said = adopt(project)
    compat = tomllib.loads((project / "pyproject.toml").read_text())["tool"]["compat"]
    # the noxfile's two pytest lines, in order, without the caller's posargs
    assert compat["run"] == ["src=pytest src --doctest-modules", "tests=pytest tests"]
    why = "from noxfile.py session test; --run replaces it"
    assert f"  run: src=pytest src --doctest-modules  ({why})" in said
    # imports of src/**/*_test.py and tests/, not the project's own nor a written module
    assert compat["requires"] == ["hypothesis", "parameterized", "pytest"]
    assert "  tests: 3 files in tests/, src/" in said
    assert any("left out written_model_module" in line for line in said), said


def findings(project: Path) -> list[tuple[str, str]]:
    """The project's own ruff on the project, with the project's own configuration."""
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--exit-zero", "--output-format", "json", "."],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr  # findings or none: exit 0; 1 is ruff's failure
    found = json.loads(done.stdout)
    return sorted((Path(f["filename"]).relative_to(project).as_posix(), f["code"]) for f in found)


@pytest.mark.subprocess
def test_what_init_adds_to_the_noxfile_draws_no_finding_of_the_project_s_ruff(
    project: Path,
) -> None:
    before = findings(project)
    assert not [f for f in before if f[0] == "noxfile.py"]  # the project's noxfile is clean
    said = adopt(project)
    assert any(line.startswith("noxfile.py: sessions matrix") for line in said), said
    text = (project / "noxfile.py").read_text()
    assert "def matrix(" in text and "pathlib" not in text  # the project bans pathlib
    assert findings(project) == before  # nothing new: E402, TID251, D205 … none
