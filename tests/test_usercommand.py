"""`--run`: the project's own command as a check in every cell (real cells)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from compat.cli.main import main
from compat.core.errors import UsageError
from compat.corpus.usercommand import command_cases, parse_run
from tests.conftest import ROOT

GATE = 'gate=python -c "import onnx, sys; sys.exit(onnx.__version__ < \\"1.21\\")"'


def test_a_command_is_named_by_its_name_or_its_slug() -> None:
    assert parse_run("tests=pytest -x tests") == ("tests", "pytest -x tests")
    assert parse_run("pytest tests/test_export.py") == (
        "pytest_tests_test_export_py",
        "pytest tests/test_export.py",
    )
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
    )  # (onnx-compat is a package itself)
    return code, json.loads((tmp_path / "out" / "matrix.json").read_text())


@pytest.mark.envs
def test_the_command_s_exit_status_is_the_verdict_in_each_cell(
    tmp_path: Path, shared_state: Path
) -> None:
    axes = ["--onnx", "1.20.1,1.21.0", "--ort", "1.24.4", "--axis", "onnx"]
    where = 'where=python -c "import sys; print(sys.prefix)"'
    code, report = run(
        tmp_path, shared_state, *axes, "--run", GATE, "--run", where, "--run", "killed=kill -9 $$"
    )
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


@pytest.mark.envs
def test_bisect_names_the_release_from_which_the_command_passes(
    shared_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "bisect",
            "--config",
            str(ROOT / "pyproject.toml"),
            "--state-dir",
            str(shared_state),
            "--run",
            GATE,
            "--install",
            "none",
            "--package",
            "onnx",
            "--good",
            "1.20.1",
            "--bad",
            "1.21.0",
        ]
    )
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
        .split("\n[tool.compat]\n", 1)[1]
        .join(["\n[tool.compat]\n", ""])
    )
    (project / "mypkg.py").write_text("ANSWER = 42\n")
    args = [
        "matrix",
        "--config",
        str(project / "pyproject.toml"),
        "--corpus",
        str(ROOT / "cases"),
        "--state-dir",
        str(shared_state),
        "--out",
        str(tmp_path / "out"),
        "--onnx",
        "1.23.2",
        "--ort",
        "1.24.4",
        "--axis",
        "onnx",
        "--cases",
        "command.*",
        "--run",
        IMPORTS,
    ]
    code = main(args)
    report = json.loads((tmp_path / "out" / "matrix.json").read_text())
    (cell,) = report["cells"]
    assert cell["id"] == "onnx1.23.2-ort1.24.4"  # the project's setup is not in the id
    assert cell["installed"]["mypkg"] == "0.1"  # its wheel, built once, is in the cell
    assert code == 0, report["results"]
    assert [r["outcome"] for r in report["results"]] == ["pass"]
    # a change to the project: rebuilt and reinstalled into the same environment
    env_bin = shared_state / "envs" / cell["id"] / "bin"
    before = env_bin.stat().st_ino
    (project / "mypkg.py").write_text("ANSWER = 41\n")
    code = main(args)
    report = json.loads((tmp_path / "out" / "matrix.json").read_text())
    assert code == 1 and [r["outcome"] for r in report["results"]] == ["fail"]
    assert env_bin.stat().st_ino == before  # the environment itself was kept


def project_with_tests(tmp_path: Path, compat: str, tests: str) -> Path:
    """A folder with a pytest suite and a [tool.compat] (not a package: nothing to build)."""
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / "tests" / "test_suite.py").write_text(tests)
    (project / "pyproject.toml").write_text(
        '[tool.compat]\ncorpus = "none"\n' + compat + '\n[tool.compat.onnx]\nversions = ["1.23.2"]'
        '\npair = "1.24.4"\n[tool.compat.onnxruntime]\nversions = ["1.24.4"]\npair = "1.23.2"\n'
    )
    return project


def run_project(project: Path, state: Path, *args: str) -> tuple[int, dict[str, Any]]:
    config, out = project / "pyproject.toml", project / "reports"
    code = main(
        [
            "matrix",
            "--config",
            str(config),
            "--state-dir",
            str(state),
            "--out",
            str(out),
            "--axis",
            "onnx",
            *args,
        ]
    )
    return code, json.loads((project / "reports" / "matrix.json").read_text())


@pytest.mark.envs
def test_launched_from_a_venv_that_has_pytest_a_cell_without_it_never_passes(
    tmp_path: Path, shared_state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # as a developer runs it: this test's own venv (it has pytest) active and first on PATH
    here = Path(sys.executable).parent
    assert (here / "pytest").is_file(), "the test runs from a venv with pytest"
    monkeypatch.setenv("PATH", f"{here}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    project = project_with_tests(tmp_path, "", "def test_ok():\n    pass\n")
    code, report = run_project(
        project,
        shared_state,
        "--run",
        "tests=pytest -q tests",
        "--run",
        "module=python -m pytest -q tests",
    )
    assert code == 1
    got = {r["case"]: r for r in report["results"]}
    for case in ("command.tests", "command.module"):
        assert got[case]["outcome"] == "error", got[case]
        assert "pytest is not installed in this cell" in got[case]["detail"]
        assert 'requires = ["pytest"]' in got[case]["detail"]


@pytest.mark.envs
def test_a_failing_suite_runs_twice_at_most_reads_as_its_counts_and_keeps_its_whole_log(
    tmp_path: Path, shared_state: Path
) -> None:
    runs_file = tmp_path / "runs.txt"  # outside the project: each run's copy starts clean
    tests = (
        "import pathlib\n"
        f"pathlib.Path({str(runs_file)!r}).open('a').write('run\\n')\n"
        "def test_ok():\n    pass\n"
        "def test_broken():\n    assert 1 == 2, 'a message ' * 400\n"
    )
    compat = 'requires = ["pytest"]\nrun = ["tests=python -m pytest -q tests -p no:cacheprovider"]'
    project = project_with_tests(tmp_path, compat, tests)
    code, report = run_project(project, shared_state)
    assert code == 1
    (result,) = report["results"]
    assert result["outcome"] == "fail"
    assert result["detail"].startswith(
        "exit 1: 1 failed, 1 passed: tests/test_suite.py::test_broken"
    )
    runs = runs_file.read_text().splitlines()
    assert len(runs) == 2  # the run and one rerun, never 4
    log = project / "reports" / result["log"]
    assert result["log"] == "logs/onnx1.23.2-ort1.24.4/command.tests.log"
    text = log.read_text()
    first, marker, second = text.partition(
        "# ---- attempt 2: only the failing test attempt 1 reported ----"
    )
    assert marker
    # The whole output of both attempts: pytest prints the message in the traceback, and
    # once more in its short summary where a CI variable stops it from cutting lines.
    assert "a message " * 400 in first
    assert "a message " * 400 in second
    (cell,) = report["cells"]
    assert cell["installed"]["pytest"]  # what the cell really had is recorded


@pytest.mark.envs
def test_a_command_has_its_own_timeout_and_a_check_of_a_model_keeps_its_own(
    tmp_path: Path, shared_state: Path
) -> None:
    compat = (
        'command-timeout = 2\ntimeout = 1\nrun = ["slow=sleep 1.5 && echo done", "hang=sleep 60"]'
    )
    project = project_with_tests(tmp_path, compat, "")
    code, report = run_project(project, shared_state, "--reruns", "0")
    got = {r["case"]: r for r in report["results"]}
    assert got["command.slow"]["outcome"] == "pass"  # past `timeout`, within its own
    assert got["command.hang"]["outcome"] == "timeout"
    assert got["command.hang"]["detail"].startswith("ran past the 2 s command-timeout")
    assert code == 1


@pytest.mark.envs
def test_a_command_printing_binary_and_escapes_leaves_every_report_valid(
    tmp_path: Path, shared_state: Path
) -> None:
    import xml.etree.ElementTree as ET

    noisy = "noise=printf 'FAILED a\\000b\\033]0;title\\007\\033[2J\\377\\376 end\\n'; exit 1"
    project = project_with_tests(tmp_path, "", "")
    code, report = run_project(project, shared_state, "--run", noisy, "--reruns", "0")
    assert code == 1
    (result,) = report["results"]
    assert result["outcome"] == "fail"
    out = project / "reports"
    ET.parse(out / "junit.xml")  # well-formed XML, whatever the command printed
    for name in ("matrix.md", "junit.xml", "matrix.html", "compatibility.md"):
        text = (out / name).read_text()
        assert "\x1b" not in text and "\x07" not in text and "\x00" not in text, name


RACE = """\
import os, pathlib, time
HERE = pathlib.Path(__file__).parent
SEEN = pathlib.Path({seen!r})

def test_a_generated_module_is_its_own():
    (HERE / "temp").mkdir(exist_ok=True)
    mine = HERE / "temp" / "generated.py"
    mine.write_text(f"WHO = {{os.getpid()}}\\n")
    time.sleep(3)  # the other cell runs meanwhile
    assert mine.read_text() == f"WHO = {{os.getpid()}}\\n"
    mine.unlink()

def test_edits_a_tracked_file_in_place():
    data = HERE / "data.txt"
    assert data.read_text() == "original\\n"
    with data.open("r+") as f:
        f.write("overwritten")

def test_its_temp_folder():
    with SEEN.open("a") as f:
        f.write(os.environ["TMPDIR"] + " " + os.getcwd() + "\\n")
"""


@pytest.mark.envs
def test_cells_running_at_once_never_share_a_folder_nor_write_the_checkout(
    tmp_path: Path, shared_state: Path
) -> None:
    """Two cells at once, a suite that writes into its tree (as a converter library's
    does: tests/temp/*.py made and deleted): in one shared folder the cells race and the
    failing ids change from run to run; each in its own copy, none fails."""
    seen = tmp_path / "seen.txt"
    project = project_with_tests(tmp_path, "", RACE.format(seen=str(seen)))
    (project / "tests" / "data.txt").write_text("original\n")
    (project / "pyproject.toml").write_text(
        '[tool.compat]\ncorpus = "none"\nrequires = ["pytest"]\n'
        'run = ["tests=python -m pytest -q tests"]\n'
        '[tool.compat.onnx]\nversions = ["1.21.0", "1.23.2"]\npair = "1.24.4"\n'
        '[tool.compat.onnxruntime]\nversions = ["1.24.4"]\npair = "1.23.2"\n'
    )
    before = {p.relative_to(project): p.read_bytes() for p in project.rglob("*") if p.is_file()}
    code, report = run_project(project, shared_state, "--jobs", "2", "--reruns", "0")
    assert {r["outcome"] for r in report["results"]} == {"pass"}, report["results"]
    assert code == 0
    after = {p.relative_to(project): p.read_bytes() for p in project.rglob("*") if p.is_file()}
    assert {k: v for k, v in after.items() if k.parts[0] != "reports"} == before
    # each cell had a folder and a TMPDIR of its own, neither the checkout nor the host's
    lines = [line.split() for line in seen.read_text().splitlines()]
    temps, folders = {t for t, _ in lines}, {f for _, f in lines}
    assert len(lines) == len(temps) == len(folders) == 2
    assert not folders & {str(project)} and all(not Path(t).exists() for t in temps)
    assert all(str(shared_state / "trees") in f for f in folders)
    (result,) = [r for r in report["results"] if r["cell"] == "onnx1.23.2-ort1.24.4"]
    log = (project / "reports" / result["log"]).read_text()
    assert f"(this cell's copy of {project}'s tree)" in log.splitlines()[1]


COUNTED = """\
import pathlib
def test_counted():
    with pathlib.Path({runs!r}).open("a") as f:
        f.write("run\\n")
"""


@pytest.mark.envs
def test_a_project_s_result_is_served_from_the_cache_until_what_it_depends_on_changes(
    tmp_path: Path, shared_state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = tmp_path / "runs.txt"
    compat = 'requires = ["pytest"]\nrun = ["tests=python -m pytest -q tests"]'
    project = project_with_tests(tmp_path, compat, COUNTED.format(runs=str(runs)))
    suite = project / "tests" / "test_suite.py"

    def matrix(*args: str) -> dict[str, Any]:
        code, report = run_project(project, shared_state, *args)
        assert code == 0, report["results"]
        return report

    def count() -> int:
        return len(runs.read_text().splitlines())

    assert matrix()["run"]["executed"] == 1 and count() == 1
    again = matrix()  # nothing changed: no test runs
    assert again["run"]["executed"] == 0 and count() == 1
    assert [r["origin"] for r in again["results"]] == ["cache"]
    os.utime(suite, (1, 1))  # touched, the same bytes
    assert matrix()["run"]["executed"] == 0 and count() == 1
    suite.write_text(suite.read_text() + "# edited\n")  # the tree changed
    assert matrix()["run"]["executed"] == 1 and count() == 2
    monkeypatch.setenv("COMPAT_TEST_SETTING", "1")  # the environment it sees changed
    assert matrix()["run"]["executed"] == 1 and count() == 3
    assert matrix("--fresh")["run"]["executed"] == 1 and count() == 4
    config = project / "pyproject.toml"
    config.write_text(
        config.read_text().replace("[tool.compat]\n", '[tool.compat]\nno-cache = ["tests"]\n')
    )
    assert matrix()["run"]["executed"] == 1 and count() == 5
    assert matrix()["run"]["executed"] == 1 and count() == 6  # every time


FLAKY = """\
import pathlib
OUT = pathlib.Path({out!r})

def test_ok():
    with (OUT / "ok.txt").open("a") as f:
        f.write("run\\n")

def test_broken():
    assert 1 == 2

def test_flaky():
    mark = OUT / "flaky.mark"
    if not mark.exists():
        mark.write_text("failed once")
        assert False, "the first time only"
"""


@pytest.mark.envs
def test_a_failing_pytest_suite_reruns_only_its_failing_tests_and_names_the_flaky_one(
    tmp_path: Path, shared_state: Path
) -> None:
    compat = 'requires = ["pytest"]\nrun = ["tests=pytest -q tests"]'
    project = project_with_tests(tmp_path, compat, FLAKY.format(out=str(tmp_path)))
    code, report = run_project(project, shared_state)
    assert code == 1
    (result,) = report["results"]
    assert result["outcome"] == "fail"  # test_broken failed in both attempts
    assert result["detail"].startswith("exit 1: 2 failed, 1 passed: ")
    assert result["detail"].endswith(
        "; flaky: 1 test failed in one attempt, not in another: tests/test_suite.py::test_flaky"
    )
    assert (tmp_path / "ok.txt").read_text() == "run\n"  # the rerun ran the failing two only
    log = (project / "reports" / result["log"]).read_text()
    first, second = log.split("# ---- attempt 2: only the 2 failing tests attempt 1 reported ----")
    assert "2 failed, 1 passed" in first and "1 failed, 1 passed, 1 deselected" in second
    # judged: the next run with nothing changed serves it, runs nothing and no rerun
    code, again = run_project(project, shared_state)
    assert code == 1 and again["run"]["executed"] == 0 and not again["run"].get("reran")
    assert [r["detail"] for r in again["results"]] == [result["detail"]]


@pytest.mark.envs
def test_another_runner_s_failure_costs_one_run_more_and_reruns_0_turns_it_off(
    tmp_path: Path, shared_state: Path
) -> None:
    runs = tmp_path / "runs.txt"
    tests = (
        "import pathlib, unittest\n"
        "class T(unittest.TestCase):\n"
        "    def test_broken(self):\n"
        f"        pathlib.Path({str(runs)!r}).open('a').write('run\\n')\n"
        "        self.assertEqual(1, 2)\n"
    )
    compat = 'run = ["tests=python -m unittest discover -s tests"]'
    project = project_with_tests(tmp_path, compat, tests)
    code, report = run_project(project, shared_state)
    assert code == 1 and len(runs.read_text().splitlines()) == 2
    (result,) = report["results"]
    assert result["outcome"] == "fail" and "test_suite.T.test_broken" in result["detail"]
    config = project / "pyproject.toml"
    config.write_text(config.read_text().replace("[tool.compat]\n", "[tool.compat]\nreruns = 0\n"))
    code, report = run_project(project, shared_state, "--fresh")
    assert code == 1 and len(runs.read_text().splitlines()) == 3
