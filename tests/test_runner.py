"""The worker's crash, timeout and error handling, with real child processes."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import pytest

from compat.envs import WORKER
from compat.runner import ResultsFile, Task, run_worker
from tests.helpers import case_dir, hostile_case

STDLIB = set(sys.stdlib_module_names)
CELL_PACKAGES = {"onnx", "onnxruntime", "numpy", "google"}


@pytest.mark.subprocess
def test_crashes_and_timeouts_are_recorded_and_the_worker_restarts(tmp_path: Path) -> None:
    order = ["ok", "segfault", "ok", "hang", "ok", "exit_early", "explode", "ok"]
    directory = case_dir(hostile_case(*set(order)), tmp_path / "cases")
    tasks = [Task("tiny.hostile", name, directory) for name in order]

    records = run_worker(Path(sys.executable), tasks, tmp_path / "cell", timeout=5)

    outcomes = [(r["check"], r["outcome"]) for r in records]
    assert outcomes == [
        ("ok", "pass"),
        ("segfault", "crash"),
        ("ok", "pass"),
        ("hang", "timeout"),
        ("ok", "pass"),
        ("exit_early", "crash"),
        ("explode", "error"),
        ("ok", "pass"),
    ]
    assert [r["index"] for r in records] == list(range(len(order)))
    by_check = {r["check"]: r for r in records}
    assert "SIGSEGV" in by_check["segfault"]["detail"]
    assert "Segmentation fault" in by_check["segfault"]["detail"]  # the worker's last words
    assert by_check["exit_early"]["detail"].startswith("worker exited with code 3")
    assert "5 s timeout" in by_check["hang"]["detail"]
    assert by_check["explode"]["detail"] == "RuntimeError: boom"


@pytest.mark.subprocess
def test_results_already_written_survive_a_crash_on_disk(tmp_path: Path) -> None:
    directory = case_dir(hostile_case("ok", "segfault"), tmp_path / "cases")
    tasks = [Task("tiny.hostile", name, directory) for name in ("ok", "ok", "segfault")]
    run_worker(Path(sys.executable), tasks, tmp_path / "cell", timeout=30)
    lines = (tmp_path / "cell" / "results.jsonl").read_text().splitlines()
    assert [json.loads(line)["outcome"] for line in lines] == ["pass", "pass", "crash"]


def test_a_half_written_line_is_dropped_before_the_host_appends(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text('{"index": 0, "outcome": "pass"}\n{"index": 1, "outc')
    results = ResultsFile(path)
    assert results.refresh() == 1
    results.append({"index": 1, "outcome": "crash"})
    assert [r["outcome"] for r in results.records()] == ["pass", "crash"]


def _imports(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_no_module_of_the_package_shadows_the_standard_library() -> None:
    """The worker runs from compat/, whose modules would shadow stdlib ones in the cell."""
    names = {path.stem for path in WORKER.parent.glob("*.py")}
    assert not names & STDLIB


def test_the_worker_imports_nothing_from_the_host_and_parses_as_python_3_9() -> None:
    tree = ast.parse(WORKER.read_text(), feature_version=(3, 9))
    foreign = _imports(tree) - STDLIB - CELL_PACKAGES - {"__future__"}
    assert not foreign, f"worker.py imports {sorted(foreign)}: cells only have onnx/ort/numpy"
    assert "compat" not in _imports(tree)
