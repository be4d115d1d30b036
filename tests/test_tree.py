"""Each cell's own copy of the project's tree (compat/execute/tree.py), on real folders:
what it holds, that it is a copy and never a way into the checkout, what survives a run,
and what the result cache's `context` changes with."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

import pytest

from compat.execute.tree import checked_out, context, home, sync

GIT = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args], cwd=root, env={**os.environ, **GIT}, check=True, capture_output=True
    )


def checkout(tmp_path: Path) -> Path:
    """A git checkout: tracked files, an untracked one, ignored ones, a state folder."""
    root = tmp_path / "project"
    (root / "tests" / "data").mkdir(parents=True)
    (root / "pkg.py").write_text("ANSWER = 42\n")
    (root / "tests" / "test_a.py").write_text("def test_a():\n    pass\n")
    (root / "tests" / "data" / "table.csv").write_text("a,b\n1,2\n")
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    git(root, "init", "-q", ".")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "one")
    (root / "new_module.py").write_text("NEW = 1\n")  # untracked, not ignored: in the tree
    (root / "debug.log").write_text("ignored\n")
    (root / "build").mkdir()
    (root / "build" / "out.txt").write_text("ignored\n")
    (root / ".compat" / "envs").mkdir(parents=True)  # the state directory: never copied
    (root / ".compat" / "envs" / "x.txt").write_text("state\n")
    return root


#: what a copy of checkout()'s tree holds: tracked and untracked files, nothing ignored
TREE = {".gitignore", "pkg.py", "tests/test_a.py", "tests/data/table.csv", "new_module.py"}


def synced(tmp_path: Path) -> tuple[Path, Path]:
    """checkout()'s tree and a first copy of it."""
    root = checkout(tmp_path)
    copy = tmp_path / "copy"
    sync(root, copy)
    return root, copy


def listing(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.subprocess
def test_a_copy_holds_the_tracked_and_untracked_files_and_nothing_ignored(tmp_path: Path) -> None:
    root, copy = synced(tmp_path)
    assert listing(copy) == TREE
    # a real copy: its own inode, and an edit in place never reaches the checkout
    assert (copy / "pkg.py").stat().st_ino != (root / "pkg.py").stat().st_ino
    with (copy / "pkg.py").open("r+") as f:
        f.write("ANSWER = 41")
    assert (root / "pkg.py").read_text() == "ANSWER = 42\n"


@pytest.mark.subprocess
def test_a_resync_restores_the_tree_removes_what_a_run_left_and_keeps_its_caches(
    tmp_path: Path,
) -> None:
    root, copy = synced(tmp_path)
    # what a run does in its copy
    (copy / "tests" / "temp").mkdir()
    (copy / "tests" / "temp" / "gen.py").write_text("x = 1\n")
    (copy / "tests" / "test_a.py").write_text("broken by a test\n")
    (copy / "tests" / "data" / "table.csv").unlink()
    (copy / ".pytest_cache" / "v" / "cache").mkdir(parents=True)
    (copy / ".pytest_cache" / "v" / "cache" / "lastfailed").write_text("{}")
    (copy / "tests" / "__pycache__").mkdir()
    (copy / "tests" / "__pycache__" / "test_a.cpython-311.pyc").write_bytes(b"\0")
    # what the user does in the checkout
    (root / "pkg.py").write_text("ANSWER = 43\n")
    sync(root, copy)
    caches = {".pytest_cache/v/cache/lastfailed", "tests/__pycache__/test_a.cpython-311.pyc"}
    assert listing(copy) == TREE | caches
    assert (copy / "pkg.py").read_text() == "ANSWER = 43\n"
    assert (copy / "tests" / "test_a.py").read_text() == "def test_a():\n    pass\n"


@pytest.mark.subprocess
def test_a_folder_a_run_replaced_by_a_link_into_the_checkout_is_never_written_through(
    tmp_path: Path,
) -> None:
    root, copy = synced(tmp_path)
    (copy / "tests").rename(copy / "tests-moved")
    (copy / "tests").symlink_to(root / "tests")
    (root / "tests" / "test_a.py").write_text("def test_a():\n    assert True\n")
    sync(root, copy)
    assert not (copy / "tests").is_symlink()
    assert (copy / "tests" / "test_a.py").read_text() == "def test_a():\n    assert True\n"
    assert not (copy / "tests-moved").exists()
    assert listing(root / "tests") == {"test_a.py", "data/table.csv"}


def test_a_plain_folder_is_copied_without_outputs_environments_and_caches(
    tmp_path: Path,
) -> None:
    root = tmp_path / "plain"
    for name in (
        "src/mod.py",
        "tests/test_b.py",
        ".venv/bin/python",
        "reports/matrix.md",
        "src/__pycache__/mod.pyc",
        "src/mod.egg-info/PKG-INFO",
    ):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n")
    copy = tmp_path / "copy"
    sync(root, copy, leave=[root / "state"])
    assert listing(copy) == {"src/mod.py", "tests/test_b.py"}


@pytest.mark.subprocess
def test_the_context_follows_the_files_bytes_and_the_environment_not_times_or_commits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = checkout(tmp_path)
    first = context(root)
    os.utime(root / "pkg.py", (1, 1))  # touched: the same bytes
    git(root, "commit", "-q", "--allow-empty", "-m", "nothing changed")
    (root / "debug.log").write_text("another ignored line\n")
    (root / ".compat" / "envs" / "y.txt").write_text("more state\n")
    monkeypatch.setenv("SHLVL", "7")  # volatile: says nothing a test reads
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw9")
    assert context(root) == first
    (root / "tests" / "test_a.py").write_text("def test_a():\n    pass\n# edited\n")
    edited = context(root)
    assert edited != first
    monkeypatch.setenv("PYTEST_ADDOPTS", "-x")  # what a command reads: a new key
    assert context(root) != edited


@pytest.mark.subprocess
def test_two_runs_sharing_a_state_directory_take_turns_in_a_copy(tmp_path: Path) -> None:
    root = checkout(tmp_path)
    copy = home(tmp_path / "trees", root) / "cell" / "command.tests"
    inside, order = threading.Event(), []

    def second() -> None:
        inside.wait()
        with checked_out([(root, copy)]):
            order.append("second")

    other = threading.Thread(target=second)
    other.start()
    with checked_out([(root, copy)]):
        inside.set()
        other.join(0.5)
        order.append("first")
        assert (copy / "pkg.py").is_file()
    other.join()
    assert order == ["first", "second"]
