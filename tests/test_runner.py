"""The worker's crash, timeout and error handling, with real child processes."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import pytest

from compat.execute.worker import ResultsFile, Task, run_worker
from compat.state import cellcode
from tests.helpers import add_one_case, case_dir, hostile_case

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
def test_what_a_worker_leaves_in_its_temp_folder_is_removed_even_when_it_is_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    host_tmp = tmp_path / "host-tmp"
    host_tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(host_tmp))
    directory = case_dir(hostile_case("litter", "litter_and_die", "ok"), tmp_path / "cases")
    tasks = [Task("tiny.hostile", name, directory) for name in ("litter", "litter_and_die", "ok")]

    records = run_worker(Path(sys.executable), tasks, tmp_path / "cell", timeout=30)

    assert [r["outcome"] for r in records] == ["pass", "crash", "pass"]
    left = Path(records[0]["detail"])  # the folder the first check made and never removed
    assert left.parent == tmp_path / "cell" / "tmp"  # the worker's own TMPDIR ...
    assert not left.parent.exists()  # ... gone with everything in it, the killed one's too
    assert list(host_tmp.iterdir()) == []


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


def test_the_staged_code_holds_only_the_compat_package(tmp_path: Path) -> None:
    """A cell's path starts with the staged folder: nothing there may shadow a module."""
    root = cellcode.stage(tmp_path)
    assert sorted(p.name for p in root.iterdir()) == ["compat"]
    assert sorted(p.name for p in (root / "compat").iterdir()) == ["__init__.py", "cell"]
    assert cellcode.stage(tmp_path) == root  # staged once per content


@pytest.mark.parametrize("path", cellcode.FILES, ids=lambda p: p.name)
def test_in_cell_code_imports_nothing_from_the_host_and_parses_as_python_3_9(path: Path) -> None:
    tree = ast.parse(path.read_text(), feature_version=(3, 9))
    foreign = _imports(tree) - STDLIB - CELL_PACKAGES - {"__future__", "compat"}
    assert not foreign, f"{path.name} imports {sorted(foreign)}: cells only have onnx/ort/numpy"
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("compat"):
            assert node.module.startswith("compat.cell") or (node.module == "compat.cell"), (
                f"{path.name} imports {node.module}: only compat.cell runs in a cell"
            )


def test_every_file_of_the_cell_folder_is_staged() -> None:
    folder = Path(cellcode.ROOT) / "compat" / "cell"
    assert {p for p in folder.glob("*.py")} <= set(cellcode.FILES)


@pytest.mark.subprocess
def test_cells_cache_their_bytecode_even_when_the_user_turned_it_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under PYTHONDONTWRITEBYTECODE every worker would compile its imports again."""
    import subprocess

    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    root = cellcode.stage(tmp_path)
    assert not list(root.rglob("*.pyc"))
    subprocess.run(
        cellcode.command(Path(sys.executable), "probe"),
        env=cellcode.environ(root),
        cwd=root,
        capture_output=True,
        check=True,
    )
    assert (root / "compat" / "cell" / "__pycache__").is_dir()
    assert list((root / "compat" / "cell" / "__pycache__").glob("probe.*.pyc"))


@pytest.mark.subprocess
def test_the_cell_entry_points_load_no_host_module(tmp_path: Path) -> None:
    """Run for real from the staged copy: every in-cell module imported, then sys.modules
    holds no `compat.*` outside `compat.cell` (a host module would fail in old cells)."""
    import subprocess

    root = cellcode.stage(tmp_path)
    names = sorted(f"compat.cell.{p.stem}" for p in (root / "compat" / "cell").glob("*.py"))
    program = (
        "import importlib, sys\n"
        f"for name in {[n for n in names if not n.endswith('__main__')]!r}:\n"
        "    importlib.import_module(name)\n"
        "print(sorted(m for m in sys.modules if m.startswith('compat')))\n"
        "print(sys.modules['compat'].__file__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        env=cellcode.environ(root),
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    modules, origin = done.stdout.strip().splitlines()
    loaded = eval(modules)
    assert "compat.cell.loop" in loaded
    assert all(m == "compat" or m.startswith("compat.cell") for m in loaded), loaded
    assert Path(origin).is_relative_to(root)  # the staged copy, not the host's install


@pytest.mark.subprocess
def test_every_builtin_check_runs_in_a_real_cell_process(tmp_path: Path) -> None:
    """In a fresh `python -m compat.cell run` (not in this process, where tests have
    imported modules already) every built-in check, and every part of one, of a seed
    case runs to a verdict; a check's parts combined are the check run whole."""
    from compat.cell.checks import BY_NAME, PARTS, tasks_of
    from compat.cell.parts import combine
    from compat.corpus.discover import discover_cases, write_case

    corpus = discover_cases(Path(cellcode.ROOT) / "cases")
    (case,) = [c for c in corpus.cases if c.id == "annotations.anonymous_dims"]
    files = write_case(case, tmp_path / "cases")
    names = [
        *(n for n, c in BY_NAME.items() if c.default),
        *PARTS,
    ]  # command: tests/test_usercommand.py
    tasks = [Task(case.id, name, str(files.directory)) for name in names]
    records = run_worker(Path(sys.executable), tasks, tmp_path / "cell", timeout=60)
    by_name = {r["check"]: r for r in records}
    outcomes = {name: r["outcome"] for name, r in by_name.items()}
    assert set(outcomes) == set(names)
    assert outcomes.pop("ort_optimized") == "skip"  # the case declares no optimized graph
    assert outcomes.pop("version_converter") == "skip"  # nor a target opset
    assert outcomes == dict.fromkeys(outcomes, "pass"), records
    for check in ("annotations", "inferred_annotations"):
        parts = [by_name[task] for task in tasks_of(check)]
        whole = {k: by_name[check][k] for k in ("check", "outcome", "detail")}
        assert {k: combine(check, parts)[k] for k in whole} == whole


@pytest.mark.subprocess
def test_a_stopped_worker_is_a_timeout_never_a_slow_evaluators_skip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker stopped (SIGSTOP: a suspended job, a starved runner) past `--timeout` on
    the reference evaluator computed nothing: that is no limit of the evaluator (a skip)
    but a timeout, run again, and the next worker goes on with the rest."""
    import os
    import signal

    from compat.execute import worker

    spawned: list[int] = []
    spawn = worker._spawn

    def stopped_first(*args: object, **kwargs: object) -> object:
        process = spawn(*args, **kwargs)  # type: ignore[arg-type]
        if not spawned:
            os.kill(process.pid, signal.SIGSTOP)
        spawned.append(process.pid)
        return process

    monkeypatch.setattr(worker, "_spawn", stopped_first)
    directory = case_dir(add_one_case(), tmp_path / "cases")
    tasks = [Task("tiny.add_one", check, directory) for check in ("reference", "checker")]
    records = run_worker(Path(sys.executable), tasks, tmp_path / "cell", timeout=3)
    by_check = {r["check"]: r for r in records}
    assert by_check["reference"]["outcome"] == "timeout", by_check["reference"]
    assert "stopped answering" in by_check["reference"]["detail"]
    assert by_check["reference"]["retry"]  # no verdict to keep
    assert by_check["checker"]["outcome"] == "pass" and len(spawned) == 2
