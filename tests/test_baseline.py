"""`--baseline` and `--fail-on new` on real runs: a project of one tiny case family whose
expected value the tests edit between runs of onnx 1.18.0 × onnxruntime 1.24.4, and
`--baseline git:REV` reading a matrix.json.gz committed to a throwaway repository."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from compat.cli.main import main

CASES = '''"""A tiny family: y = x + 1, against an expected value the tests edit."""

import numpy as np
from onnx import helper

from compat.core.case import Case
from compat.corpus.make import const, model, tensor

OFFSET = {offset}
EXTRA = {extra}


def cases():
    x = np.array([1.0, 2.0], dtype=np.float32)
    add = model(
        [helper.make_node("Add", ["x", "one"], ["y"])],
        [tensor("x", np.float32, [2])],
        [tensor("y", np.float32, [2])],
        [const("one", np.ones((1,), dtype=np.float32))],
    )
    found = [
        Case(
            id="tiny.add_one",
            description="y = x + 1",
            model=add,
            inputs={{"x": x}},
            expected={{"y": x + OFFSET}},
            builtin_checks=("checker", "ort_run"),
        )
    ]
    if EXTRA:
        found.append(
            Case(
                id="tiny.add_two",
                description="y = x + 1, expected as x + 2",
                model=add,
                inputs={{"x": x}},
                expected={{"y": x + 2}},
                builtin_checks=("checker", "ort_run"),
            )
        )
    return found
'''

CONFIG = """[tool.compat.onnx]
versions = ["1.18.0"]
pair = "1.24.4"
[tool.compat.onnxruntime]
versions = ["1.24.4"]
pair = "1.18.0"
"""


def project(root: Path, offset: float, extra: bool = False) -> Path:
    """The project's pyproject.toml, its cases/tiny.py expecting y = x + `offset`."""
    (root / "cases").mkdir(parents=True, exist_ok=True)
    (root / "cases" / "tiny.py").write_text(CASES.format(offset=offset, extra=extra))
    config = root / "pyproject.toml"
    config.write_text(CONFIG)
    return config


def matrix(config: Path, state: Path, out: Path, *args: str) -> int:
    argv = ["matrix", "--config", str(config), "--state-dir", str(state), "--out", str(out)]
    return main([*argv, "--reruns", "0", "--jobs", "1", *args])


def changes(out: Path) -> dict[str, Any]:
    run: dict[str, Any] = json.loads((out / "matrix.json").read_text())["run"]
    return {"baseline": run["baseline"], **run["changes"]}


@pytest.mark.envs
def test_an_edited_case_is_one_change_and_fail_on_new_gates_only_what_is_new(
    tmp_path: Path, shared_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = project(tmp_path / "project", offset=2.0)  # ort_run fails: got 2, expected 3
    first = tmp_path / "first"
    assert matrix(config, shared_state, first) == 1
    project(tmp_path / "project", offset=3.0)  # fails otherwise: expected 4
    second = tmp_path / "second"
    capsys.readouterr()
    # its one unexpected result was unexpected in the baseline too: not new
    assert matrix(config, shared_state, second, "--baseline", str(first), "--fail-on", "new") == 0
    out = capsys.readouterr().out
    found = changes(second)
    (change,) = found["changes"]
    assert (change["kind"], change["case"], change["check"]) == (
        "changed",
        "tiny.add_one",
        "ort_run",
    )
    assert "expected 3.0" in change["before"] and "expected 4.0" in change["after"]
    assert found["baseline"]["given"] == str(first)
    assert found["baseline"]["identity"].startswith(f"{first / 'matrix.json'}, sha256 ")
    assert out.splitlines()[-1] == (
        f"since {first}: 0 new failures, 0 fixed, 1 changed; --fail-on new: exit 0 (nothing new)"
    )
    assert out.index("what changed since") < out.index("unexpected:")  # the changes first
    assert "expected 3.0" in out and "expected 4.0" in out
    assert "## What changed since" in (second / "matrix.md").read_text().split("## tiny")[0]
    page = (second / "matrix.html").read_text()
    assert '"kind": "changed"' in page and 'id="change"' in page
    junit = (second / "junit.xml").read_text()
    assert '<property name="change" value="changed" />' in junit
    # merge compares the merged report the same way
    merged = tmp_path / "merged"
    argv = ["merge", str(second), "--out", str(merged), "--config", str(config)]
    assert main([*argv, "--baseline", str(first), "--fail-on", "new"]) == 0
    assert [c["kind"] for c in changes(merged)["changes"]] == ["changed"]
    assert main([*argv, "--baseline", str(first)]) == 1
    # the default judges the run whole: the same results exit 1
    assert matrix(config, shared_state, tmp_path / "default", "--baseline", str(first)) == 1
    # one more unexpected result, one the baseline did not have: exit 1
    project(tmp_path / "project", offset=3.0, extra=True)
    third = tmp_path / "third"
    assert matrix(config, shared_state, third, "--baseline", str(second), "--fail-on", "new") == 1
    (new,) = changes(third)["changes"]
    assert (new["kind"], new["case"], new["release"]) == ("new", "tiny.add_two", "")


@pytest.mark.envs
def test_a_release_added_to_an_axis_is_a_new_release_not_changes(
    tmp_path: Path, shared_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = project(tmp_path / "project", offset=2.0)
    before, after = tmp_path / "before", tmp_path / "after"
    assert matrix(config, shared_state, before) == 1
    args = ("--onnx", "1.18.0,1.20.1", "--baseline", str(before / "matrix.json"))
    assert matrix(config, shared_state, after, *args, "--fail-on", "new") == 0
    found = changes(after)
    assert found["new_releases"] == ["onnx 1.20.1"] and found["gone_releases"] == []
    # the new cell's ort_run fails as before (onnxruntime is the same release): no change;
    # its checker is a result the baseline has no counterpart of, and it passes
    assert found["changes"] == [] and found["new_results"] == 1
    last = capsys.readouterr().out.splitlines()[-1]
    assert last == (
        f"since {before / 'matrix.json'}: 0 new failures, 0 fixed, 0 changed, 1 new release; "
        "--fail-on new: exit 0 (nothing new)"
    )
    # and the other way round, the release is gone, not a change either
    back = tmp_path / "back"
    assert matrix(config, shared_state, back, "--baseline", str(after), "--fail-on", "new") == 0
    assert changes(back)["gone_releases"] == ["onnx 1.20.1"] and changes(back)["changes"] == []


def git(root: Path, *args: str) -> str:
    who = ["-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "commit.gpgsign=false"]
    done = subprocess.run(["git", *who, *args], cwd=root, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.envs
def test_a_git_revision_s_committed_results_are_the_baseline(
    tmp_path: Path, shared_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "project"
    config = project(root, offset=2.0)
    assert matrix(config, shared_state, root / "docs", "--fail-on", "unexpected") == 1
    from compat.core.report import read_json, write_json

    write_json(read_json(root / "docs" / "matrix.json"), root / "docs" / "matrix.json.gz")
    git(root, "init", "-q")
    git(root, "add", "pyproject.toml", "cases/tiny.py", "docs/matrix.json.gz")
    git(root, "commit", "-q", "-m", "results of 1.4.0")
    git(root, "tag", "v1.4.0")
    commit = git(root, "rev-parse", "HEAD")
    project(root, offset=3.0)
    out = tmp_path / "out"
    capsys.readouterr()
    assert matrix(config, shared_state, out, "--baseline", "git:v1.4.0", "--fail-on", "new") == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "since v1.4.0: 0 new failures, 0 fixed, 1 changed; --fail-on new: exit 0 (nothing new)"
    )
    baseline = changes(out)["baseline"]
    assert baseline["identity"] == f"commit {commit}, docs/matrix.json.gz"
    # the run names the commit it was made of (and that the checkout had changes), and a
    # later comparison with it names that commit in changes.md, the watch's issue body
    made_of = json.loads((out / "matrix.json").read_text())["run"]["commit"]
    assert made_of == f"{commit[:12]} with changes"
    against = tmp_path / "against"
    again = ["report", "--config", str(config), "--results", str(out / "matrix.json")]
    assert main([*again, "--out", str(against), "--baseline", str(out)]) == 0
    assert f"of commit `{made_of}`" in (against / "changes.md").read_text()
    # report renders stored results against the same revision, the file named
    rendered = tmp_path / "rendered"
    argv = ["report", "--config", str(config), "--results", str(out / "matrix.json")]
    baseline_given = f"git:{commit[:10]}:docs/matrix.json.gz"
    assert main([*argv, "--out", str(rendered), "--baseline", baseline_given]) == 0
    head = (rendered / "matrix.md").read_text().split("## tiny")[0]
    assert f"## What changed since {commit[:10]}" in head and "expected 3.0" in head
    # a revision the repository has not: one line naming the value and the fix
    capsys.readouterr()
    assert main([*argv, "--out", str(rendered), "--baseline", "git:v9.9"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--baseline git:v9.9: 'v9.9' is no commit" in err


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("missing.json", "--baseline {tmp}/missing.json: no such file or folder; give a reports"),
        ("empty", "--baseline {tmp}/empty: no matrix.json or matrix.json.gz in it; give"),
        ("notes.json", "--baseline {tmp}/notes.json: not a matrix report (schema_version None"),
        ("junk.json.gz", "--baseline {tmp}/junk.json.gz: not a matrix report ("),
    ],
)
def test_a_baseline_that_names_no_stored_run_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], given: str, said: str
) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "notes.json").write_text('{"results": []}')
    (tmp_path / "junk.json.gz").write_bytes(b"\x1f\x8bnot gzip")
    config = project(tmp_path / "project", offset=2.0)
    argv = ["report", "--config", str(config), "--results", str(tmp_path / "r.json")]
    assert main([*argv, "--baseline", str(tmp_path / given)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and said.format(tmp=tmp_path) in err, err


def test_fail_on_new_without_a_baseline_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["matrix", "--list", "--fail-on", "new"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--fail-on new: new since what? give --baseline" in err
    assert main(["merge", "somewhere", "--fail-on", "new"]) == 2
    assert "--fail-on new: new since what?" in capsys.readouterr().err


def test_matrix_help_shows_the_reference_page_s_option_groups(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from compat.cli.reference import GROUPS

    with pytest.raises(SystemExit):
        main(["matrix", "--help"])
    text = capsys.readouterr().out
    headings = [heading for _, heading, _ in GROUPS]
    assert "Which cells" in headings and "Compared with a baseline" in headings
    found = [line[:-1] for line in text.splitlines() if line[:-1] in headings]
    assert found == headings  # every group, in the reference page's order
    cells = text.split("\nWhich cells:\n", 1)[1].split("\n\n", 1)[0]
    assert "--onnx" in cells and "--shard" in cells and "--jobs" not in cells
    assert "--fail-on" in text.split("\nCompared with a baseline:\n", 1)[1]


SUITE = """
def test_known():
    assert {known}, "a failure the project lives with"

def test_a():
    assert {a}, "test_a broke"
{more}
"""


@pytest.mark.envs
def test_a_test_command_is_compared_by_its_failing_tests(
    tmp_path: Path, shared_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A suite that fails on both sides: one more failing test is a new failure that
    `--fail-on new` gates, one test added that passes is no change (only its summary's
    counts moved), and a test that no longer fails is a fix, each naming the tests."""
    from tests.test_usercommand import project_with_tests

    def run_project(project: Path, state: Path, *args: str) -> tuple[int, dict[str, Any]]:
        out = Path(args[args.index("--out") + 1])
        code = matrix(project / "pyproject.toml", state, out, *args)
        return code, json.loads((out / "matrix.json").read_text())

    compat = 'requires = ["pytest"]\nrun = ["tests=python -m pytest -q tests -p no:cacheprovider"]'
    suite = SUITE.format(known=False, a=True, more="")
    project = project_with_tests(tmp_path, compat, suite)
    tests = project / "tests" / "test_suite.py"
    first = tmp_path / "first"
    code, report = run_project(project, shared_state, "--out", str(first))
    (result,) = report["results"]
    assert (code, result["failing"]) == (1, ["tests/test_suite.py::test_known"])
    # a passing test more: "1 failed, 2 passed" where it said "1 failed, 1 passed"
    tests.write_text(SUITE.format(known=False, a=True, more="def test_b():\n    pass\n"))
    second = tmp_path / "second"
    argv = ["--out", str(second), "--baseline", str(first), "--fail-on", "new"]
    code, report = run_project(project, shared_state, *argv)
    assert code == 0 and report["run"]["changes"]["changes"] == []
    assert "1 failed, 2 passed" in report["results"][0]["detail"]
    # test_a breaks: one more failing test, a new failure though the command failed before
    tests.write_text(SUITE.format(known=False, a=False, more=""))
    third = tmp_path / "third"
    argv = ["--out", str(third), "--baseline", str(first), "--fail-on", "new"]
    capsys.readouterr()
    code, report = run_project(project, shared_state, *argv)
    (change,) = report["run"]["changes"]["changes"]
    assert (code, change["kind"]) == (1, "new-failure")
    assert change["after"].startswith("newly failing: tests/test_suite.py::test_a; fail@")
    assert (
        capsys.readouterr()
        .out.splitlines()[-1]
        .endswith(
            "1 new failure, 0 fixed, 0 changed; --fail-on new: exit 1 (1 unexpected result new)"
        )
    )
    # and fixed again, against that run: a fix naming it, nothing new
    tests.write_text(SUITE.format(known=False, a=True, more=""))
    argv = ["--out", str(tmp_path / "fourth"), "--baseline", str(third), "--fail-on", "new"]
    code, report = run_project(project, shared_state, *argv)
    (change,) = report["run"]["changes"]["changes"]
    assert (code, change["kind"]) == (0, "fixed")
    assert change["after"].startswith("no longer failing: tests/test_suite.py::test_a;")


@pytest.mark.envs
def test_committing_a_baseline_runs_no_command_again(
    tmp_path: Path, shared_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The results a user commits for `--baseline git:REV` (docs/matrix.json.gz) are
    onnx-compat's own output, not the project: writing them changes no command's result,
    so the next run serves every command from the last; any other file still counts."""
    import gzip

    from tests.test_usercommand import project_with_tests

    compat = 'requires = ["pytest"]\nrun = ["tests=python -m pytest -q tests -p no:cacheprovider"]'
    project = project_with_tests(tmp_path, compat, "def test_ok():\n    pass\n")
    config = project / "pyproject.toml"
    out = project / "reports"
    assert matrix(config, shared_state, out) == 0
    (project / "docs").mkdir()
    (project / "docs" / "matrix.json.gz").write_bytes(
        gzip.compress((out / "matrix.json").read_bytes(), mtime=0)
    )
    capsys.readouterr()
    assert matrix(config, shared_state, out) == 0
    assert "(0 computed, 0 shared between cells, 1 from earlier runs)" in capsys.readouterr().out
    (project / "docs" / "notes.md").write_text("the project's own file\n")
    assert matrix(config, shared_state, out) == 0
    assert "(1 computed" in capsys.readouterr().out
