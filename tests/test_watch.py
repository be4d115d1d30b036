"""The weekly watch: `init --ci github --watch` writes it (actionlint and zizmor pass on
it), `matrix --new-releases` runs only the releases the baseline lacks, and the issue
body a dry run prints is the one the workflow posts (real runs of a project whose one
command fails on onnxruntime 1.23.2 only)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from compat.adopt import InitOptions, init
from compat.adopt.ci import WATCH, WORKFLOW
from compat.cli.main import main
from compat.core.install import InstallRequest
from compat.core.report import Report
from compat.plan.matrix import Cell, Plan
from compat.workflow.new_releases import narrowed
from tests.conftest import ROOT
from tests.test_adopt import INDEX, _steps
from tests.test_changes_page import cell

PROBE = "python -c \\\"import sys, onnxruntime; sys.exit(onnxruntime.__version__ == '1.23.2')\\\""
CONFIG = """[tool.compat]
corpus = "none"
run = ["probe={probe}"]
[tool.compat.onnx]
versions = ["1.18.0"]
pair = "1.24.4"
[tool.compat.onnxruntime]
versions = {ort}
pair = "1.18.0"
"""
#: the onnxruntime axis as the baseline ran it, and following the index: 1.23.2 is new
FIXED, FOLLOWING = '["1.24.4"]', '">=1.23,<1.25"'


def test_the_plan_keeps_only_the_cells_of_releases_the_baseline_never_ran() -> None:
    ran = Cell("1.18.0", "1.24.4", InstallRequest())
    new = Cell("1.18.0", "1.25.0", InstallRequest())
    pair = Cell("1.21.0", "1.24.4", InstallRequest())
    record = cell("1.18.0", "1.24.4")
    baseline = Report((record,), (), (), {"onnxruntime": (record.id,)})
    plan = Plan((ran, new, pair), {"onnxruntime": (ran, new), "onnx": (ran, pair)}, False)
    only = narrowed(plan, baseline, ("onnxruntime",))
    assert only.cells == (new,) and only.axes == {"onnxruntime": (new,), "onnx": ()}
    # onnx does not follow the index: its release 1.21.0 is no new release to watch
    assert narrowed(plan, baseline, ("onnx", "onnxruntime")).cells == (new, pair)
    # a preview build the baseline never ran is new, whatever follows the index
    weekly = Cell("1.24.0.dev20261026", "1.24.4", InstallRequest(), onnx_dist="onnx-weekly")
    plan = Plan((ran, weekly), {"onnx": (ran, weekly)}, False)
    assert narrowed(plan, baseline, ()).cells == (weekly,)


@pytest.mark.subprocess
def test_init_writes_the_watch_only_when_asked_and_it_passes_actionlint_and_zizmor(
    tmp_path: Path,
) -> None:
    (tmp_path / "plain").mkdir()
    init(tmp_path / "plain", InitOptions(ci="github"), INDEX.__getitem__)
    assert not (tmp_path / "plain" / WATCH).exists()
    said = init(tmp_path, InitOptions(ci="github", watch=True), INDEX.__getitem__)
    assert any(line.startswith(f"{WATCH}: written: weekly") for line in said)
    text = (tmp_path / WATCH).read_text()
    assert "@INSTALL@" not in text and "@PYTHON@" not in text  # filled in
    assert "permissions: {}" in text and "issues: write" in text
    assert "--new-releases" in text and "--issue-body issue.md" in text
    bin_dir = Path(sys.executable).parent
    for tool in (["actionlint"], ["zizmor", "--offline", "--no-progress", "--persona=auditor"]):
        found = shutil.which(tool[0], path=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
        assert found, f"{tool[0]} is missing: pip install -e '.[test]'"
        done = subprocess.run(
            [found, *tool[1:], str(tmp_path / WATCH)], capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stdout + done.stderr
    again = init(tmp_path, InitOptions(ci="github", watch=True), INDEX.__getitem__)
    assert f"{WATCH}: exists already; left as it is" in again
    assert f"{WORKFLOW}: exists already; left as it is" in again


def _matrix(project: Path, state: Path, out: Path, *args: str) -> int:
    argv = ["matrix", "--config", str(project / "pyproject.toml"), "--state-dir", str(state)]
    return main([*argv, "--out", str(out), "--reruns", "0", "--jobs", "1", *args])


def _configure(project: Path, ort: str) -> None:
    (project / "pyproject.toml").write_text(CONFIG.format(probe=PROBE, ort=ort))


@pytest.mark.envs
@pytest.mark.subprocess
def test_a_new_release_failing_one_case_is_the_issue_the_watch_posts(
    tmp_path: Path, shared_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    _configure(project, FIXED)
    first = tmp_path / "first"
    assert _matrix(project, shared_state, first) == 0
    _configure(project, FOLLOWING)
    capsys.readouterr()
    # the dry run: the body is printed, what the workflow posts
    assert (
        _matrix(
            project,
            shared_state,
            tmp_path / "new",
            "--new-releases",
            "--baseline",
            str(first),
            "--issue-body",
            "-",
        )
        == 1
    )
    body = capsys.readouterr().out
    run = json.loads((tmp_path / "new" / "matrix.json").read_text())
    assert [c["id"] for c in run["cells"]] == ["onnx1.18.0-ort1.23.2"]  # the new release only
    assert run["run"]["changes"]["gone_releases"] == []  # not planned is not gone
    # set off from the run's summary by a line before and after
    rule = "---- the issue's body (--issue-body -) ----\n"
    page = body.split(rule, 1)[1].split("---- end of the issue's body ----", 1)[0]
    assert page == (tmp_path / "new" / "changes.md").read_text()  # one text, two places
    assert "## New release onnxruntime 1.23.2: 1 unexpected" in page
    assert "- `command.probe` · command on `onnx1.18.0-ort1.23.2`: fail@command: exit 1" in page
    assert (
        "    - repro: `nox -s repro -- onnx==1.18.0 onnxruntime==1.23.2 --cases command.probe"
        in page
    )

    # with nothing new: one line, exit 0, and no body for the workflow to post
    full = tmp_path / "full"
    assert _matrix(project, shared_state, full) == 1
    stale = tmp_path / "issue.md"
    stale.write_text("last week's")
    capsys.readouterr()
    args = ("--new-releases", "--baseline", str(full), "--issue-body", str(stale))
    assert _matrix(project, shared_state, tmp_path / "none", *args) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith(f"no new release since {full}: ") and "onnxruntime >=1.23,<1.25" in line
    assert not stale.exists()

    # the workflow's own steps: the same command, the same body, one issue created
    init(project, InitOptions(ci="github", watch=True), INDEX.__getitem__)
    steps = _steps((project / WATCH).read_text())
    (matrix_step,) = [s for s in steps if "--new-releases" in s]
    (issue_step,) = [s for s in steps if "gh issue create" in s]
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "onnx-compat").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m compat "$@"\n')
    calls = tmp_path / "gh.log"
    (shim / "gh").write_text(f'#!/bin/sh\necho "$@" >> "{calls}"\n')  # no issue open yet
    for name in ("onnx-compat", "gh"):
        (shim / name).chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_REPOSITORY": "me/mine",
        "NEW_RELEASES": "releases",
        "LABEL": "onnx-compat-watch",
        "FROM": str(first),
        "RUN_URL": "https://github.com/me/mine/actions/runs/1",
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

    (project / ".compat").symlink_to(shared_state)  # the environments built above
    done = step(matrix_step)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    posts = (project / "issue.md").read_text()

    def said(text: str) -> list[str]:  # the headings and the changes (run from elsewhere)
        return [line for line in text.splitlines() if line.startswith(("#", "- ", "|"))]

    assert said(posts) == said(page) and len(said(page)) == 6
    dry = step(issue_step, DRY_RUN="true")
    assert dry.returncode == 0 and dry.stdout == posts and not calls.exists()
    assert posts in (tmp_path / "summary.md").read_text()
    posted = step(issue_step, DRY_RUN="false")
    assert posted.returncode == 0, posted.stderr
    said = calls.read_text().splitlines()
    assert said[0].startswith("label create onnx-compat-watch --repo me/mine --force")
    assert said[-1].startswith(
        "issue create --repo me/mine --label onnx-compat-watch --body-file issue.md"
    )

    # an open issue of the label: its body replaced and a comment only when it differs
    (shim / "gh").write_text(
        f'#!/bin/sh\necho "$@" >> "{calls}"\n'
        'case "$1 $2" in "issue list") echo 7;; "issue view") cat "$SAID";; esac\n'
    )
    calls.unlink()
    (tmp_path / "said.md").write_text("last week's")
    assert step(issue_step, DRY_RUN="false", SAID=str(tmp_path / "said.md")).returncode == 0
    edited = calls.read_text().splitlines()
    assert edited[-2] == "issue edit 7 --repo me/mine --body-file issue.md"
    assert edited[-1].endswith("--body Updated by https://github.com/me/mine/actions/runs/1")
    calls.unlink()
    same = step(issue_step, DRY_RUN="false", SAID=str(project / "issue.md"))
    assert "issue #7 says this already" in same.stdout
    assert not [
        c for c in calls.read_text().splitlines() if c.startswith(("issue edit", "issue comment"))
    ]


@pytest.mark.parametrize("flag", [["--new-releases"], ["--issue-body", "-"]])
def test_new_releases_and_the_issue_body_need_a_baseline(
    flag: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["matrix", *flag]) == 2
    assert capsys.readouterr().err.strip() == (
        f"onnx-compat: error: {flag[0]}: new since what? give --baseline (a reports folder, a "
        f"matrix.json(.gz) file or git:REV), or drop {flag[0]}"
    )
