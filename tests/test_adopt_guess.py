"""compat/adopt/guess.py: what a project's tests import, and the command that runs them."""

from __future__ import annotations

from pathlib import Path

from compat.adopt.guess import (
    guess_requires,
    imported_modules,
    local_modules,
    looks_like_pytest,
    suite_command,
)
from compat.adopt.testsource import suite

TEST_FILE = """\
import os, json
import numpy as np
import onnx
from google.protobuf import text_format
import hypothesis.strategies as st
import ml_dtypes
import yaml
from sklearn.linear_model import LinearRegression
from mylib import convert
from .helpers import data
import helpers
try:
    import torch
except ImportError:
    torch = None
if True:
    from PIL import Image


def test_x():
    import onnxscript
"""


def _project(tmp_path: Path) -> Path:
    (tmp_path / "src" / "mylib").mkdir(parents=True)
    (tmp_path / "src" / "mylib" / "__init__.py").write_text("")
    tests = tmp_path / "test"
    tests.mkdir()
    (tests / "test_x.py").write_text(TEST_FILE)
    (tests / "helpers.py").write_text("")
    (tests / "broken.py").write_text("def (:\n")  # a file that does not parse is passed over
    return tmp_path


def test_the_guess_is_the_third_party_distributions_the_tests_import(tmp_path: Path) -> None:
    project = _project(tmp_path)
    folder = project / "test"
    files = suite(project).files
    assert files == sorted(folder.rglob("*.py"))  # test/ is found, src/ holds no test
    imports = imported_modules(files)
    assert "torch" not in imports  # optional: imported under `except ImportError`
    assert {"onnxscript", "PIL", "mylib", "helpers"} <= imports
    guess = guess_requires(imports, local_modules(project, files), own="mylib")
    # import names mapped to distributions; stdlib, the project, its helpers and what
    # every cell has (onnx, numpy, protobuf) left out
    assert guess == ["hypothesis", "ml_dtypes", "onnxscript", "pillow", "pyyaml", "scikit-learn"]


def test_a_folder_is_pytest_unless_it_is_plain_unittest(tmp_path: Path) -> None:
    folder = tmp_path / "tests"
    folder.mkdir()
    files = [folder / "test_a.py"]
    assert looks_like_pytest(files, {"numpy"}, {})  # bare test functions
    assert not looks_like_pytest(files, {"unittest", "numpy"}, {})
    assert looks_like_pytest(files, {"unittest"}, {"tool": {"pytest": {}}})
    assert looks_like_pytest([*files, folder / "conftest.py"], {"unittest"}, {})
    assert suite_command(tmp_path, folder, True) == "tests=pytest -q tests"
    assert suite_command(tmp_path, folder, False) == "tests=python -m unittest discover -q -s tests"
    assert suite(tmp_path / "tests").files == []  # no tests/ or test/ inside it


def test_a_workflow_s_run_steps_are_read_and_its_step_names_are_not(tmp_path: Path) -> None:
    from compat.adopt.testsource import declared_commands

    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "ci.yml").write_text(
        "jobs:\n  test:\n    name: pytest\n    steps:\n"
        "      - name: Run pytest\n        run: pixi run test\n"
        "      - name: Unit tests\n        run: |\n"
        "          pip install .\n          python -m pytest -q tests --cov=mine ${{ matrix.x }}\n"
        "      - run: pytest src\n"
    )
    found = declared_commands(tmp_path, {})
    assert [c.command for c in found] == ["pytest -q tests --cov=mine", "pytest src"]
    assert found[0].source == ".github/workflows/ci.yml"
    assert found[0].plugins() == ["pytest-cov"]
