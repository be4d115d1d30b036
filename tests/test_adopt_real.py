"""Adoption in a real project nobody here wrote: spox 0.18.2 (a pure-Python ONNX library
from the package index: version from setuptools-scm, `onnx>=1.13` declared, test
dependencies declared only outside pyproject, a pytest suite), made by
tests/data/adopted/make_project.py (its README has the ground truth per release).

Exactly as README says: in a fresh copy, this repository's wheel installed into a
developer's venv that also has pytest (active, first on PATH), `onnx-compat init` with
no hand edits (`--python none`: on one Python, whatever is installed here), then
`nox -s matrix`. Each cell's verdict and failing test ids must match
the same command in a plain venv with the same pins (tests/data/adopted/plain_venv.py);
every printed repro command must run as printed; bisect must name the release the plain
venvs show; and the repro folder's repro.py must fail the same way in a fresh venv made
from its requirements.txt.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from compat.core.result_diff import steady
from tests.conftest import ROOT

pytestmark = [pytest.mark.envs, pytest.mark.subprocess]

DATA = ROOT / "tests" / "data" / "adopted"
#: Cells on both axes where the suite's verdict changes (README.md beside make_project.py):
#: onnx <= 1.18.0 fails test_tensor's ml_dtypes types; onnxruntime 1.17.3 and >= 1.31.0
#: fail test_function.
ONNX, ORT = "1.18.0,1.19.1", "1.17.3,1.30.0,1.31.0"
COMMAND = "pytest -q tests"  # what init writes for spox's tests/ folder
#: `nox -s matrix`'s run: what it printed, and reports/matrix.json
Matrix = tuple[subprocess.CompletedProcess[str], dict[str, Any]]


@dataclass(frozen=True)
class Adopted:
    project: Path
    env: dict[str, str]  # a developer's shell: their venv (with pytest) active

    def run(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            args,
            cwd=cwd or self.project,
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
            timeout=1800,
        )


@pytest.fixture(scope="module")
def adopted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Adopted]:
    uv = shutil.which("uv")
    if uv is None:
        pytest.fail("this test needs uv on PATH (pip install uv nox)")
    root = tmp_path_factory.mktemp("adopted")
    subprocess.run(
        [uv, "build", "--wheel", "--out-dir", str(root / "wheel"), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (wheel,) = (root / "wheel").glob("onnx_compat-*.whl")
    project = root / "spox"
    subprocess.run(
        [sys.executable, str(DATA / "make_project.py"), str(project)],
        check=True,
        capture_output=True,
    )
    dev = root / "dev"  # the user's own venv: it has pytest, as a development venv does
    subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(dev)], check=True)
    subprocess.run(
        [
            uv,
            "pip",
            "install",
            "--quiet",
            "--python",
            str(dev / "bin" / "python"),
            str(wheel),
            "nox",
            "uv",
            "pytest",
        ],
        check=True,
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(VIRTUAL_ENV=str(dev), PATH=f"{dev / 'bin'}{os.pathsep}{env['PATH']}")
    yield Adopted(project, env)


@pytest.fixture(scope="module")
def matrix(adopted: Adopted) -> Matrix:
    # one Python (the sessions'): the ground truth is per release; spox's requires-python
    # (>=3.10) would make every Python installed here an axis
    init = adopted.run("onnx-compat", "init", "--install", _wheel(adopted), "--python", "none")
    assert init.returncode == 0, init.stderr
    config = (adopted.project / "pyproject.toml").read_text()
    assert f'run = ["tests={COMMAND}"]' in config and '"pytest"' in config, init.stdout
    done = adopted.run("nox", "-s", "matrix", "--", "--onnx", ONNX, "--ort", ORT)
    report = json.loads((adopted.project / "reports" / "matrix.json").read_text())
    return done, report


def _wheel(adopted: Adopted) -> str:
    (wheel,) = (adopted.project.parent / "wheel").glob("onnx_compat-*.whl")
    return str(wheel)


def plain(adopted: Adopted, cell: dict[str, Any], tmp: Path) -> dict[str, Any]:
    """The command in a plain venv with the cell's onnx and onnxruntime and the test
    dependencies init guessed, plus the matrix's own numpy<2 constraint where it applies."""
    pins = ["--pin", f"onnx=={cell['onnx']}", "--pin", f"onnxruntime=={cell['onnxruntime']}"]
    extra = ["--with", "pytest", "--with", "ml_dtypes"]
    if tuple(map(int, cell["onnxruntime"].split(".")[:3])) < (1, 18, 1):
        extra += ["--with", "numpy<2"]
    done = subprocess.run(
        [
            sys.executable,
            str(DATA / "plain_venv.py"),
            str(adopted.project),
            *pins,
            *extra,
            "--venv",
            str(tmp / cell["id"]),
            "--",
            *shlex.split(COMMAND),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    truth: dict[str, Any] = json.loads(done.stdout)
    return truth


def test_every_cell_s_verdict_and_failing_tests_match_a_plain_venv(
    adopted: Adopted,
    matrix: Matrix,
    tmp_path: Path,
) -> None:
    done, report = matrix
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    results = {r["cell"]: r for r in report["results"]}
    assert len(results) == 5 and all(c["state"] == "ready" for c in report["cells"])
    verdicts = {}
    for cell in report["cells"]:
        truth = plain(adopted, cell, tmp_path)
        result = results[cell["id"]]
        assert truth["exit_code"] in (0, 1), truth
        assert result["outcome"] == ("pass" if truth["exit_code"] == 0 else "fail"), cell["id"]
        log = (adopted.project / "reports" / result["log"]).read_text()
        first = log.split("\n# ---- attempt 2:")[0]  # the whole run (a rerun: its failures)
        failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", first, re.M)
        assert failed == truth["failed"], cell["id"]  # the same tests, in the same order
        if failed:  # the terminal's detail: the counts and the first failing ids
            assert result["detail"].startswith(f"exit 1: {len(failed)} failed")
            assert failed[0] in result["detail"]
        verdicts[cell["id"]] = result["outcome"]
    # the releases where the suite really changes (tests/data/adopted/README.md)
    assert verdicts["onnx1.23.2-ort1.17.3"] == verdicts["onnx1.23.2-ort1.31.0"] == "fail"
    assert verdicts["onnx1.23.2-ort1.30.0"] == "pass"
    onnx_cells = [c for c in report["cells"] if c["id"] in report["axes"]["onnx"]]
    # built by setuptools-scm from the checkout: the tag, dirty once init edited pyproject
    assert all(c["installed"]["spox"].startswith("0.18.2.post0+g") for c in onnx_cells)
    assert "pyproject says onnx>=1.13; your tests fail on" in done.stdout


def test_every_printed_repro_command_runs_and_its_script_fails_the_same_way_in_a_fresh_venv(
    adopted: Adopted,
    matrix: Matrix,
    tmp_path: Path,
) -> None:
    done, report = matrix
    printed = re.findall(r"^    (nox -s repro -- .+)$", done.stdout, re.M)
    failing = [r for r in report["results"] if r["outcome"] == "fail"]
    assert len(failing) >= 3
    # one per failure as the terminal lists them: those alike in several cells are one
    alike = {(r["case"], r["check"], steady(f"fail@{r['phase']}: {r['detail']}")) for r in failing}
    assert len(printed) == len(alike) >= 2  # each run as printed
    for line in printed:
        run = adopted.run(*shlex.split(line))
        assert run.returncode == 1, line + "\n" + run.stdout[-2000:] + run.stderr[-2000:]
        assert "== command.tests · command: fail@command: exit 1:" in run.stdout, line
    # the last one printed
    onnx, ort = re.findall(r"onnx(?:runtime)?==(\S+)", printed[-1])
    cell = f"onnx{onnx}-ort{ort}"
    folder = adopted.project / "reports" / "repro" / cell / "command.tests.command"
    requirements = (folder / "requirements.txt").read_text()
    assert "ml-dtypes==" in requirements and "pytest==" in requirements  # all it had
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    install = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--quiet", "-r", str(folder / "requirements.txt")],
        cwd=adopted.project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert install.returncode == 0, install.stderr[-2000:]
    shell = {k: v for k, v in adopted.env.items() if k != "VIRTUAL_ENV"}  # dev/ still on PATH
    again = subprocess.run(
        [str(venv / "bin" / "python"), str(folder / "repro.py")],
        cwd=adopted.project,
        capture_output=True,
        text=True,
        check=False,
        env=shell,
    )
    assert again.returncode == 1, again.stdout + again.stderr
    result = next(r for r in report["results"] if r["cell"] == cell)
    assert result["detail"].split(": ", 1)[1][:120] in again.stdout  # the same failure


def test_bisect_of_the_command_names_the_release_the_plain_venvs_show(
    adopted: Adopted, matrix: Matrix
) -> None:
    # README: `nox -s bisect -- --run '…' --package onnxruntime`; here the config's command
    done = adopted.run(
        "nox",
        "-s",
        "bisect",
        "--",
        "--package",
        "onnxruntime",
        "--good",
        "1.30.0",
        "--bad",
        "1.31.1",
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "last good 1.30.0, first bad 1.31.0" in done.stdout
    # a command-line --run replaces the config's, even with the config's name
    only = f"tests={COMMAND.replace('tests', 'tests/test_function.py')}"
    again = adopted.run(
        "nox",
        "-s",
        "bisect",
        "--",
        "--run",
        only,
        "--package",
        "onnxruntime",
        "--good",
        "1.30.0",
        "--bad",
        "1.31.0",
    )
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    assert "first bad 1.31.0" in again.stdout
