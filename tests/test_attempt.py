"""A command's attempts in the cell (compat/cell/attempt.py, compat/cell/pytest_only.py):
a rerun runs only the failing tests, says which it ran, and appends to the one log.
Real pytest runs in a real folder, through `check_command` as a worker calls it."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from compat.cell.command import check_command
from compat.cell.verdict import Verdict

SUITE = """\
import pytest

def test_ok():
    pass

def test_broken():
    assert 1 == 2

@pytest.mark.parametrize("x", ["a b", "c[d]"])
def test_param(x):
    assert x == "a b"

class TestGroup:
    def test_inner(self):
        assert False
"""


def attempt(folder: Path, command: str, **task: Any) -> tuple[str, dict[str, Any]]:
    """The verdict's outcome and what the check said beside it, as the worker records it."""
    case = SimpleNamespace(
        spec={"command": {"command": command, "cwd": str(folder)}},
        task={"command_timeout": 120, **task},
        extra={},
    )
    try:
        check_command(case)
        outcome = "pass"
    except Verdict as verdict:
        outcome = verdict.outcome
    return outcome, case.extra


@pytest.mark.subprocess
def test_a_rerun_runs_only_the_failing_tests_and_says_which_it_ran(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text(SUITE)
    imported = tmp_path / "imported.txt"  # a module without a failing test: not collected
    (tmp_path / "tests" / "test_other.py").write_text(
        f"open({str(imported)!r}, 'a').write('imported\\n')\ndef test_fine():\n    pass\n"
    )
    command = f"{sys.executable} -m pytest -q -p no:cacheprovider tests"
    log = tmp_path / "logs" / "command.tests.log"
    outcome, first = attempt(tmp_path, command, log=str(log))
    assert outcome == "fail" and first["runner"] == "pytest"
    assert first["failing"] == [
        "tests/test_x.py::test_broken",
        "tests/test_x.py::test_param[c[d]]",
        "tests/test_x.py::TestGroup::test_inner",
    ]
    assert "observed" not in first  # a whole run
    only = ["tests/test_x.py::test_broken", "tests/test_x.py::test_param[c[d]]"]
    outcome, second = attempt(tmp_path, command, log=str(log), attempt=2, only=only)
    assert outcome == "fail"
    assert second["failing"] == only and second["observed"] == sorted(only)
    text = log.read_text()
    head, rerun = text.split("# ---- attempt 2: only the 2 failing tests attempt 1 reported ----")
    assert "3 failed, 3 passed" in head
    assert "2 failed, 3 deselected" in rerun and "test_ok" not in rerun
    assert imported.read_text() == "imported\n"  # by attempt 1 only


@pytest.mark.subprocess
def test_an_id_that_names_a_file_runs_all_of_it_and_a_run_holding_none_ends_0(
    tmp_path: Path,
) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "src" / "test_src.py").write_text("def test_src():\n    pass\n")
    (tmp_path / "tests" / "test_x.py").write_text(SUITE)
    pytest_ = f"{sys.executable} -m pytest -q -p no:cacheprovider"
    # the IR library's way: its src tests, then its tests; the first holds no failing id
    command = f"{pytest_} src && {pytest_} tests"
    outcome, said = attempt(tmp_path, command, attempt=2, only=["tests/test_x.py"])
    assert outcome == "fail"  # `pytest src` selected nothing and went on: exit 0, not 5
    assert said["failing"] == [
        "tests/test_x.py::test_broken",
        "tests/test_x.py::test_param[c[d]]",
        "tests/test_x.py::TestGroup::test_inner",
    ]
    assert said["observed"] == ["tests/test_x.py"]


@pytest.mark.subprocess
def test_a_command_that_runs_no_pytest_says_it_observed_nothing(tmp_path: Path) -> None:
    outcome, said = attempt(tmp_path, "echo no tests here; exit 3", attempt=2, only=["t::x"])
    assert outcome == "fail" and said == {"runner": "", "failing": []}
