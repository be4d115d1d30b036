"""Adoption from another project: the wheel (with the built-in corpus), `onnx-compat
init`, and that project's own `nox -s matrix` (real wheel, real nox, real cells)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from compat.adopt import InitOptions, init
from compat.adopt.ci import WORKFLOW
from compat.core.errors import CompatError
from compat.plan.pythons import PythonTable
from tests.conftest import ROOT


def _offline(package: str) -> list[str]:
    raise CompatError(f"cannot list {package} releases from the package index: offline")


INDEX = {"onnx": ["1.13.1", "1.16.2", "1.18.0", "1.19.1"], "onnxruntime": ["1.17.3", "1.24.4"]}


def test_init_writes_what_is_missing_and_never_overwrites(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "mine"\n')
    (tmp_path / "models").mkdir()
    options = InitOptions(models=["models"], runs=['tests=pytest -q -k "not slow"'])
    said = init(tmp_path, options, _offline)
    text = (tmp_path / "pyproject.toml").read_text()
    assert text.startswith('[project]\nname = "mine"\n') and "[tool.compat.onnx]" in text
    assert 'run = ["tests=pytest -q -k \\"not slow\\""]' in text
    assert "def matrix(" in (tmp_path / "noxfile.py").read_text()
    files = {line.split(": ")[0]: line.split(": ", 1)[1] for line in said if ": " in line}
    assert files["pyproject.toml"] == "[tool.compat] appended"
    assert files[".gitignore"] == ".compat/, reports/, .nox/ written"
    assert "offline: wrote fixed release lists" in "\n".join(said)
    before = {p.name: p.read_text() for p in tmp_path.iterdir() if p.is_file()}
    again = init(tmp_path, InitOptions(), _offline)
    assert {p.name: p.read_text() for p in tmp_path.iterdir() if p.is_file()} == before
    assert all("left as it is" in line for line in again[:3])
    # --install given changes init's one ONNX_COMPAT line, and nothing else
    again = init(tmp_path, InitOptions(install="onnx-compat==0.3"), _offline)
    assert (
        "  ONNX_COMPAT, what the sessions install: onnx-compat → onnx-compat==0.3 (--install)"
        in again
    )
    nox = before["noxfile.py"].replace(
        'ONNX_COMPAT = "onnx-compat"', 'ONNX_COMPAT = "onnx-compat==0.3"'
    )
    assert nox != before["noxfile.py"]
    assert {p.name: p.read_text() for p in tmp_path.iterdir() if p.is_file()} == {
        **before,
        "noxfile.py": nox,
    }
    from compat.plan.config import load_config

    config = load_config(tmp_path / "pyproject.toml")  # what init writes is a valid config
    assert config.run == ('tests=pytest -q -k "not slow"',)
    assert config.cases_dirs == (tmp_path / "models",)
    assert config.onnx.versions and config.onnx.pair == config.onnxruntime.versions[-1]


def test_init_reads_the_projects_ranges_tests_and_test_dependencies(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "mine"\nrequires-python = ">=3.9"\n'
        'dependencies = ["onnx>=1.16", "numpy"]\n'
    )
    (tmp_path / ".gitignore").write_text("/reports\n*.pyc")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_it.py").write_text("import mine\nimport hypothesis\nimport onnx\n")
    running = f"{sys.version_info.major}.{sys.version_info.minor}"  # the tests' 3.11
    installed = tuple(dict.fromkeys(("3.8", "3.9", "3.10", running, "3.14")))
    said = init(tmp_path, InitOptions(), INDEX.__getitem__, lambda: installed)
    assert "  requires guessed from tests/: hypothesis, pytest — check it" in said
    (axis,) = [line for line in said if line.startswith("  python: ")]
    assert axis.startswith(
        f"  python: 3.9, {running}, 3.14: the oldest and newest CPython installed here that "
        f"requires-python >=3.9 allows, and {running}, this one: every release runs on the "
        "one with wheels for the most releases, each other runs its newest pair"
    )  # 3.10 is neither: it would run one cell more and tell little
    guessed = "no test command found in noxfile.py, tox.ini or CI: guessed"
    assert f"  run: tests=pytest -q tests  ({guessed}; --run replaces it)" in said
    assert ".gitignore: .compat/, .nox/ appended" in said  # /reports is ignored already
    assert (tmp_path / ".gitignore").read_text().startswith("/reports\n*.pyc\n# onnx-compat")
    from compat.plan.config import load_config

    config = load_config(tmp_path / "pyproject.toml")
    assert (config.onnx.follows, config.onnx.pair) == (">=1.16", "1.24.4")
    assert (config.onnxruntime.follows, config.onnxruntime.pair) == (">=1.17", "1.19.1")
    assert config.requires == ("hypothesis", "pytest")
    assert config.run == ("tests=pytest -q tests",)
    assert (config.corpus, config.command_timeout) == ("none", 900)
    assert [c.requires for c in config.constraints] == [("numpy<2",)]
    # 3.8 is older than a cell's code runs on
    assert config.python == PythonTable(f"3.9,{running},3.14", "newest")


def test_a_declared_test_group_is_written_instead_of_a_guess(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "mine"\n[dependency-groups]\ntest = ["pytest"]\n'
    )
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "test_it.py").write_text("import unittest\nimport ml_dtypes\n")
    said = init(tmp_path, InitOptions(runs=["t=python -m unittest"]), INDEX.__getitem__)
    text = (tmp_path / "pyproject.toml").read_text()
    from compat.plan.config import load_config

    config = load_config(tmp_path / "pyproject.toml")
    assert (config.groups, config.extras, config.requires) == (("test",), (), ())
    assert (
        "  test dependencies: the project's group test; test/ also imports ml_dtypes: "
        "add them to it or to `requires`" in said
    )
    assert 'run = ["t=python -m unittest"]' in text


@pytest.mark.subprocess
def test_the_written_workflow_passes_actionlint_and_zizmor(tmp_path: Path) -> None:
    init(tmp_path, InitOptions(ci="github"), INDEX.__getitem__)
    workflow = tmp_path / WORKFLOW
    bin_dir = Path(sys.executable).parent
    for tool in (["actionlint"], ["zizmor", "--offline", "--no-progress"]):
        found = shutil.which(tool[0], path=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
        assert found, f"{tool[0]} is missing: pip install -e '.[test]'"
        done = subprocess.run(
            [found, *tool[1:], str(workflow)], capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stdout + done.stderr


def _steps(workflow: str) -> list[str]:
    """The shell scripts of the workflow's `run:` steps, in order."""
    scripts, lines = [], workflow.splitlines()
    for i, line in enumerate(lines):
        key = line.strip().removeprefix("- ")
        if not key.startswith("run:"):
            continue
        if key != "run: |":
            scripts.append(key.removeprefix("run:").strip())
            continue
        indent, body = len(line) - len(line.lstrip()), []
        for following in lines[i + 1 :]:
            if following.strip() and len(following) - len(following.lstrip()) <= indent:
                break
            body.append(following)
        scripts.append(textwrap.dedent("\n".join(body)))
    return scripts


@pytest.mark.envs
@pytest.mark.subprocess
def test_the_workflows_shards_merge_to_the_report_of_one_run(
    tmp_path: Path, shared_state: Path
) -> None:
    """The workflow's own plan, shard and merge scripts, run as its jobs run them (each
    shard's reports moved where download-artifact puts them), against one unsharded run."""
    project = tmp_path / "project"
    shutil.copytree(ROOT / "examples" / "consumer", project)
    options = InitOptions(models=["models"], runs=["check=python check_model.py"], ci="github")
    init(project, options, _offline)
    config = (project / "pyproject.toml").read_text()
    onnx, ort = config.split("[tool.compat.onnxruntime]")
    onnx = re.sub(r"versions = \[.*\]", 'versions = ["1.21.0", "1.23.2"]', onnx)
    onnx = re.sub(r'pair = ".*?"', 'pair = "1.24.4"', onnx)
    ort = re.sub(r"versions = \[.*\]", 'versions = ["1.22.1"]', ort)
    ort = re.sub(r'pair = ".*?"', 'pair = "1.23.2"', ort)
    (project / "pyproject.toml").write_text(onnx + "[tool.compat.onnxruntime]" + ort)
    (project / ".compat").symlink_to(shared_state)  # the environments other tests built
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "onnx-compat").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m compat "$@"\n')
    (shim / "onnx-compat").chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "SHARDS": "2",
    }

    def step(script: str, **more: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-e", "-c", script],
            cwd=project,
            env={**env, **more},
            capture_output=True,
            text=True,
            check=False,
        )

    plan, shard, merge = (
        s for s in _steps((project / WORKFLOW).read_text()) if "onnx-compat " in s
    )
    assert step(plan).returncode == 0
    shards = json.loads((tmp_path / "output").read_text().removeprefix("shards="))
    assert [s["shard"] for s in shards["include"]] == ["1/2", "2/2"]
    for item in shards["include"]:
        done = step(shard, SHARD=item["shard"])
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        name = f"shard-{item['shard'].split('/')[0]}"
        (project / "shards").mkdir(exist_ok=True)
        shutil.move(project / "reports" / name, project / "shards" / f"onnx-compat-{name}")
    merged = step(merge)
    single = step(f"onnx-compat matrix --out {tmp_path / 'single'}")
    assert merged.returncode == single.returncode, merged.stdout + single.stdout
    one = json.loads((tmp_path / "single" / "matrix.json").read_text())
    both = json.loads((project / "reports" / "matrix.json").read_text())
    assert len(one["cells"]) == 3 and {"models.layer_norm", "command.check"} <= {
        r["case"] for r in one["results"]
    }

    def untimed(report: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            {k: v for k, v in r.items() if k not in ("seconds", "origin")}
            for r in report["results"]
        ]

    assert untimed(both) == untimed(one)
    logs = [r["log"] for r in both["results"] if r.get("log")]
    assert len(logs) == 3 and all((project / "reports" / log).is_file() for log in logs)
    for key in ("cells", "cases", "axes"):
        assert both[key] == one[key]
    assert (project / "reports" / "matrix.md").read_text() == (
        tmp_path / "single" / "matrix.md"
    ).read_text()
    summary = (tmp_path / "summary.md").read_text()
    assert summary.startswith("```text\n") and "reports in reports/" in summary


@pytest.mark.envs
@pytest.mark.subprocess
def test_a_fresh_project_runs_seed_cases_its_models_and_its_command_from_the_wheel(
    tmp_path: Path, shared_state: Path
) -> None:
    uv, nox = shutil.which("uv"), shutil.which("nox")
    if not (uv and nox):
        pytest.fail("this test needs uv and nox on PATH (pip install uv nox)")
    wheels = tmp_path / "wheels"
    subprocess.run(
        [uv, "build", "--wheel", "--out-dir", str(wheels), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (wheel,) = wheels.glob("onnx_compat-*.whl")
    project = tmp_path / "project"
    shutil.copytree(ROOT / "examples" / "consumer", project)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "compat",
            "init",
            "--install",
            str(wheel),
            "--run",
            "check=python check_model.py",
        ],
        cwd=project,
        check=True,
        capture_output=True,
    )
    config = project / "pyproject.toml"  # init writes corpus = "none": the seed cases opted in
    config.write_text(config.read_text().replace('corpus = "none"', 'corpus = "seed"'))
    done = subprocess.run(
        [
            nox,
            "-s",
            "matrix",
            "--",
            "--onnx",
            "1.23.2",
            "--ort",
            "1.24.4",
            "--axis",
            "onnx",
            "--cases",
            "pad_pads_from_constant.*,models.*,command.*",
            "--state-dir",
            str(shared_state),
        ],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
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
