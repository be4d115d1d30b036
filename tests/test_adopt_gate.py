"""`init --ci github`'s workflow on a real git repository: pushes to the branch git names
run it (`--branch` replaces it), `--gate new` makes a pull request fail only on what the
base branch's committed results lack (its merge step run for real, against a real
origin), and a noxfile installing a name the package index lacks is warned of."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from compat.adopt import InitOptions, init
from compat.adopt.ci import WATCH, WORKFLOW
from compat.cli.main import main
from compat.core.report import write_json
from tests.conftest import ROOT
from tests.test_adopt import INDEX, _steps
from tests.test_changes_page import OLD, report

#: the package index as these tests see it: onnx-compat is not on it
ON_INDEX = {"onnx-compat": False}.get


def git(where: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(where), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def linted(file: Path, *zizmor: str) -> None:
    """actionlint and zizmor (with the options `zizmor`) find nothing in the file, as
    tests/test_adopt.py and tests/test_watch.py hold the workflows to."""
    bin_dir = Path(sys.executable).parent
    for tool in (["actionlint"], ["zizmor", "--offline", "--no-progress", *zizmor]):
        found = shutil.which(tool[0], path=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
        assert found, f"{tool[0]} is missing: pip install -e '.[test]'"
        done = subprocess.run(
            [found, *tool[1:], str(file)], capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stdout + done.stderr


def adopt(project: Path, **options: Any) -> list[str]:
    chosen = InitOptions(ci="github", **options)
    return init(project, chosen, INDEX.__getitem__, on_index=ON_INDEX)


@pytest.mark.subprocess
def test_the_workflow_runs_on_pushes_to_the_branch_git_names(tmp_path: Path) -> None:
    project = tmp_path / "cse"
    project.mkdir()
    git(project, "init", "-q", "-b", "master")
    said = adopt(project, watch=True)
    runs = "  runs on pushes to master (the branch checked out; --branch replaces it)"
    assert f"{runs}, pull requests, weekly" in said
    text = (project / WORKFLOW).read_text()
    assert '  push:\n    branches: ["master"]' in text and "[main]" not in text
    linted(project / WORKFLOW)
    linted(project / WATCH, "--persona=auditor")

    # a clone: the remote's default branch, whichever is checked out
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q", "-b", "trunk")
    git(origin, "commit", "-q", "--allow-empty", "-m", "first")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    git(clone, "checkout", "-q", "-b", "feature")
    said = adopt(clone)
    assert any("pushes to trunk (the default branch of git remote origin;" in s for s in said)
    assert '    branches: ["trunk"]' in (clone / WORKFLOW).read_text()

    # --branch replaces it; no git repository: main
    (tmp_path / "named").mkdir()
    said = adopt(tmp_path / "named", branch="release/2.x")
    assert "  runs on pushes to release/2.x (--branch), pull requests, weekly" in said
    assert '    branches: ["release/2.x"]' in (tmp_path / "named" / WORKFLOW).read_text()
    (tmp_path / "plain").mkdir()
    said = adopt(tmp_path / "plain")
    assert any("pushes to main (no git branch found;" in s for s in said)


def test_a_bad_branch_or_a_gate_without_ci_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["init", "--ci", "github", "--branch", "my branch"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--branch my branch: no branch name git allows" in err
    assert main(["init", "--gate", "new"]) == 2
    assert "--gate: it sets the CI workflow; give --ci github too" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # nothing written


def test_a_noxfile_installing_what_the_index_lacks_is_warned_of(tmp_path: Path) -> None:
    said = init(tmp_path, InitOptions(), INDEX.__getitem__, on_index=ON_INDEX)
    warning = (
        "warning: onnx-compat is not on your package index, so `nox -s matrix` will fail to "
        "install it: run init again with --install PATH/TO/WHEEL (a wheel of onnx-compat)"
    )
    assert said[-2:] == [warning, said[-1]] and said[-1].startswith("next: nox -s matrix")
    wheel = tmp_path / "dist" / "onnx_compat-0.3.1-py3-none-any.whl"
    wheel.parent.mkdir()
    wheel.write_bytes(b"a wheel")
    again = init(tmp_path, InitOptions(install=str(wheel)), INDEX.__getitem__, on_index=ON_INDEX)
    assert warning not in again  # the noxfile installs the wheel now
    assert f"  ONNX_COMPAT, what the sessions install: onnx-compat → {wheel} (--install)" in again
    on_it = init(tmp_path / "dist", InitOptions(), INDEX.__getitem__, on_index={}.get)
    assert warning not in on_it  # the index could not be asked: no warning


@pytest.mark.subprocess
def test_gate_new_fails_a_pull_request_only_on_what_the_base_branch_lacks(
    tmp_path: Path,
) -> None:
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q", "-b", "master")
    said = adopt(origin, gate="new")
    assert any(s.startswith("  a pull request fails only on what the base") for s in said)
    known = report([OLD], {(OLD.id, "pad.edge", "ort_run"): "wrong values"})
    write_json(known, origin / "docs" / "matrix.json.gz")  # the results accepted
    git(origin, "add", "pyproject.toml", "noxfile.py", ".github", "docs/matrix.json.gz")
    git(origin, "commit", "-q", "-m", "adopt onnx-compat, with a known failure")
    clone = tmp_path / "clone"  # what actions/checkout with fetch-depth 0 leaves
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    git(clone, "checkout", "-q", "-b", "pull-request")
    text = (clone / WORKFLOW).read_text()
    linted(clone / WORKFLOW)
    gate = re.search(r'PR_FAIL_ON: "(\w+)"', text)
    assert gate and gate[1] == "new"
    assert "${{ github.base_ref }}" in text  # passed through env, never inside run:
    (merge,) = [s for s in _steps(text) if "onnx-compat merge" in s]
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "onnx-compat").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m compat "$@"\n')
    (shim / "onnx-compat").chmod(0o755)

    def pull_request(base: str, *failing: str) -> subprocess.CompletedProcess[str]:
        """The merge step on one shard whose results fail `failing` (and the known one)."""
        shard = clone / "shards" / "onnx-compat-shard-1"
        shutil.rmtree(clone / "shards", ignore_errors=True)
        failures = {(OLD.id, "pad.edge", "ort_run"): "wrong values"}
        failures |= {(OLD.id, case, "ort_run"): "new" for case in failing}
        write_json(report([OLD], failures), shard / "matrix.json")
        env = {
            **os.environ,
            "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}",
            "PYTHONPATH": str(ROOT),
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
            "PR_FAIL_ON": gate[1],
            "BASE_REF": base,
        }
        return subprocess.run(
            ["bash", "-e", "-c", merge], cwd=clone, env=env, capture_output=True, text=True
        )

    done = pull_request("master")
    assert done.returncode == 0, done.stdout + done.stderr  # the known failure is no new one
    assert "since origin/master: 0 new failures, 0 fixed" in done.stdout
    done = pull_request("master", "pad.constant")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "since origin/master: 1 new failure" in done.stdout
    done = pull_request("")  # a push: every unexpected result fails it
    assert done.returncode == 1 and "since" not in done.stdout, done.stdout + done.stderr
