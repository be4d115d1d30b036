"""The in-cell side of a project's command (compat/cell/command.py): which environment
it runs with, and what resolves as its program. Unit tests on real folders; the real
cells are in tests/test_usercommand.py."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from compat.cell import command
from compat.cell.verdict import Verdict


def venv_like(root: Path, name: str, program: str = "pytest") -> Path:
    """A folder that looks like another Python environment's bin/, with a console script."""
    bin_dir = root / name / "bin"
    bin_dir.mkdir(parents=True)
    (root / name / "pyvenv.cfg").write_text("home = /usr/bin\n")
    script = bin_dir / program
    script.write_text(f"#!{root / name / 'bin' / 'python'}\nimport sys\n")
    script.chmod(0o755)
    return bin_dir


def test_other_python_environments_leave_path_and_the_cell_comes_first(tmp_path: Path) -> None:
    host_venv = venv_like(tmp_path, "host-venv")
    nox_venv = venv_like(tmp_path, ".nox/matrix")
    shims = tmp_path / ".pyenv" / "shims"
    shims.mkdir(parents=True)
    plain = tmp_path / "tools"
    plain.mkdir()
    base = {
        "PATH": os.pathsep.join(map(str, (host_venv, nox_venv, shims, plain, "/usr/bin"))),
        "VIRTUAL_ENV": str(host_venv.parent),
        "PYTHONPATH": "/somewhere",
        "CONDA_PREFIX": "/opt/conda",
        "HOME": "/root",
    }
    env = command.environment(base)
    path = env["PATH"].split(os.pathsep)
    assert path[0] == str(Path(sys.executable).parent)
    assert path[1:] == [str(plain), "/usr/bin"]
    assert env["VIRTUAL_ENV"] == sys.prefix and env["PYTHONNOUSERSITE"] == "1"
    assert "PYTHONPATH" not in env and "CONDA_PREFIX" not in env and env["HOME"] == "/root"


@pytest.mark.parametrize(
    ("line", "program"),
    [
        ("pytest -q tests", "pytest"),
        ("A=1 B=2 pytest -x", "pytest"),
        ("env X=1 tox -e py", "tox"),
        ("python -m pytest", "python"),
        ("cd sub && pytest", "cd"),
        ("(cd sub; make)", None),
        ("for x in a; do echo; done", "for"),
        ("'unterminated", None),
    ],
)
def test_the_program_is_the_first_plain_word(line: str, program: str | None) -> None:
    assert command.program(line) == program


def test_a_program_of_another_environment_is_an_error_that_names_the_fix(tmp_path: Path) -> None:
    # as if the host's venv, with pytest, had been kept on PATH: resolve() still refuses it
    other = venv_like(tmp_path, "dev-venv")
    cell = tmp_path / "cell" / "bin"  # a cell without pytest
    cell.mkdir(parents=True)
    env = {"PATH": os.pathsep.join([str(cell), str(other)])}
    with pytest.raises(Verdict) as caught:
        command.resolve("pytest -q tests", env, str(cell))
    verdict = caught.value
    assert verdict.outcome == "error"
    assert "pytest is not installed in this cell" in verdict.detail
    assert 'requires = ["pytest"]' in verdict.detail and str(other) in verdict.detail
    (cell / "pytest").write_text("#!/cell/bin/python\n")  # once the cell has its own,
    (cell / "pytest").chmod(0o755)  # it is the one that runs
    command.resolve("pytest -q tests", env, str(cell))


def test_a_missing_program_is_an_error_and_shell_words_are_not_programs(tmp_path: Path) -> None:
    env = {"PATH": str(tmp_path)}
    with pytest.raises(Verdict, match=r"nosuchtool is not installed in this cell"):
        command.resolve("nosuchtool --check", env)
    command.resolve("cd sub && nosuchtool", env)  # `cd` is the shell's own
    command.resolve("./run_tests.sh", env)  # a path: the shell says what it says


def test_python_m_of_a_module_the_cell_lacks_is_named() -> None:
    output = "/cell/bin/python: No module named pytest\n"
    assert command._missing_module("python -m pytest -q", output) == "pytest"
    # a test that imports a missing module is the test's failure, not a missing runner
    failing = "E   ModuleNotFoundError: No module named 'ml_dtypes'\n1 failed in 0.1s\n"
    assert command._missing_module("python -m pytest -q", failing) is None
