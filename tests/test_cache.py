"""The result cache: what keys a result, what is kept, and what a torn file still serves.

Real case directories (`write_case`), real cell records, and raw records from the
real in-cell worker loop (`run_task`, in process): nothing of the cache is mocked.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from compat.cell.loop import run_task
from compat.core.case import Case, CustomCheck, Optimized
from compat.core.outcomes import CellRecord, CellState
from compat.corpus.discover import CaseFiles, write_case
from compat.state import cellcode
from compat.state.cache import ResultCache, result_key
from tests.helpers import add_one_case, add_one_model

PACKAGES = {"onnx": "1.23.2", "onnxruntime": "1.24.4", "numpy": "2.4.6", "protobuf": "7.36.2"}
RECORD = CellRecord(
    "onnx1.23.2-ort1.24.4", "1.23.2", "1.24.4", CellState.READY, PACKAGES, "3.11.7", "Linux"
)
CHECK_FILE = """\
def ran(case):
    return "the custom check ran"
"""


def files_of(case: Case, root: Path) -> CaseFiles:
    """The case as the workers see it, written under a root of its own."""
    return write_case(case, root)


def key(root: Path, case: Case | None = None, record: CellRecord = RECORD) -> str:
    return result_key(record, files_of(case or add_one_case(), root), "ort_run")


def worker_record(files: CaseFiles, check: str) -> dict[str, Any]:
    """A raw record as the worker writes it: the real check, run in this process."""
    task = {"case": files.case.id, "check": check, "case_dir": str(files.directory)}
    record: dict[str, Any] = run_task({}, task)
    return record


# --- the key -------------------------------------------------------------------------


def test_identical_inputs_give_the_same_key_wherever_the_case_is_written(
    tmp_path: Path,
) -> None:
    first = files_of(add_one_case(), tmp_path / "run1")
    again = files_of(add_one_case(), tmp_path / "run2")
    assert first.directory != again.directory
    assert first.content == again.content
    same_cell = CellRecord.from_dict(json.loads(json.dumps(RECORD.serialize())))
    assert result_key(RECORD, first, "ort_run") == result_key(same_cell, again, "ort_run")
    assert result_key(RECORD, first, "ort_run") != result_key(RECORD, first, "checker")


@pytest.mark.parametrize(
    "packages",
    [
        {**PACKAGES, "onnxruntime": "1.24.3"},  # another onnxruntime under the same pins
        {**PACKAGES, "numpy": "1.26.4"},  # a dependency resolved differently
        {k: v for k, v in PACKAGES.items() if k != "onnxruntime"},  # one fewer
    ],
    ids=["onnxruntime", "numpy", "removed"],
)
def test_the_key_changes_with_the_installed_versions_the_check_depends_on(
    packages: dict[str, str], tmp_path: Path
) -> None:
    other = replace(RECORD, packages=packages)
    assert key(tmp_path, record=other) != key(tmp_path)


@pytest.mark.parametrize(
    ("check", "unrelated"),
    [
        ("ort_run", {"onnx": "1.14.1", "protobuf": "3.20.3", "ml-dtypes": "0.5.3"}),
        ("checker", {"onnxruntime": "1.15.1", "ml-dtypes": "0.5.3"}),
        ("reference", {"onnxruntime": "1.32.0"}),
    ],
)
def test_a_result_is_shared_by_cells_that_differ_only_in_what_it_does_not_use(
    check: str, unrelated: dict[str, str], tmp_path: Path
) -> None:
    """onnx-only checks are computed once per onnx (numpy, protobuf) release, whatever
    the onnxruntime; onnxruntime-only checks once per onnxruntime (numpy) release."""
    files = files_of(add_one_case(), tmp_path)
    other = replace(RECORD, id="another-cell", packages={**PACKAGES, **unrelated})
    assert result_key(other, files, check) == result_key(RECORD, files, check)
    both = replace(RECORD, packages={**PACKAGES, **unrelated})
    assert result_key(both, files, "annotations") != result_key(RECORD, files, "annotations")


def test_a_drop_in_with_onnxruntime_as_its_oracle_depends_on_everything(
    tmp_path: Path,
) -> None:
    files = files_of(add_one_case(oracle="onnxruntime"), tmp_path)
    other = replace(RECORD, packages={**PACKAGES, "onnxruntime": "1.15.1"})
    assert result_key(other, files, "reference") != result_key(RECORD, files, "reference")


def test_the_key_changes_with_the_python_and_platform_of_the_cell(tmp_path: Path) -> None:
    base = key(tmp_path)
    assert key(tmp_path, record=replace(RECORD, python="3.12.1")) != base
    assert key(tmp_path, record=replace(RECORD, platform="Darwin")) != base


def test_a_command_is_keyed_by_every_installed_distribution_and_its_project_context(
    tmp_path: Path,
) -> None:
    """A command may import anything the cell has (pytest, a plugin, the project's wheel)
    and read the project's files and environment (compat/execute/tree.py `context`)."""
    from compat.corpus.usercommand import command_cases

    (case,) = command_cases(["tests=pytest -q"], tmp_path)
    files = files_of(case, tmp_path / "cases")
    installed = {**PACKAGES, "pytest": "8.3.5", "mypkg": "0.1"}
    cell = replace(RECORD, installed=installed)
    base = result_key(cell, files, "command", project="tree-1")
    assert base == result_key(replace(cell, id="another-cell"), files, "command", project="tree-1")
    for changed in ({**installed, "pytest": "8.4.0"}, {**installed, "pluggy": "1.6.0"}):
        assert (
            result_key(replace(cell, installed=changed), files, "command", project="tree-1") != base
        )
    assert result_key(cell, files, "command", project="tree-2") != base
    assert result_key(replace(cell, python="3.12.1"), files, "command", project="tree-1") != base
    (other,) = command_cases(["tests=pytest -x"], tmp_path)
    assert result_key(cell, files_of(other, tmp_path / "c2"), "command", project="tree-1") != base
    assert result_key(cell, files, "command", share=False, project="tree-1") != base


X = np.array([1.0, 2.0], dtype=np.float32)


@pytest.mark.parametrize(
    "changes",
    [
        {"model": add_one_model(one_dims=(1, 1))},  # another model, same inputs
        {"inputs": {"x": np.array([1.0, 3.0], dtype=np.float32)}},
        {"inputs": {"x": X.astype(np.float64)}},  # same values, another dtype
        {"expected": {"y": X + 2}},
        {"output_shapes": {"y": [2, 1]}},
        {"optimized": Optimized(op_counts={"Identity": 1}, meaning="Identity removed")},
        {"rtol": 1e-2},
        {"extra_runs": ({"x": X * 2},)},
    ],
    ids=["model", "input", "input-dtype", "expected", "shapes", "optimized", "rtol", "runs"],
)
def test_the_key_changes_with_the_case_content(changes: dict[str, Any], tmp_path: Path) -> None:
    changed = add_one_case(**changes)
    assert changed.id == add_one_case().id  # same case id, other content
    assert key(tmp_path / "changed", changed) != key(tmp_path / "base")


def test_the_key_changes_with_the_in_cell_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = files_of(add_one_case(), tmp_path)
    before = result_key(RECORD, files, "ort_run")
    assert cellcode.code_hash() != "0" * 64
    monkeypatch.setattr(cellcode, "code_hash", lambda: "0" * 64)
    assert result_key(RECORD, files, "ort_run") != before


def test_the_key_changes_with_a_custom_check_files_bytes(tmp_path: Path) -> None:
    check_file = tmp_path / "my_checks.py"
    check_file.write_text(CHECK_FILE)
    case = add_one_case(custom_checks=(CustomCheck("ran", str(check_file), "ran"),))
    files = files_of(case, tmp_path / "cases")
    before = result_key(RECORD, files, "ran")
    assert result_key(RECORD, files, "ran") == before  # reading the file changes nothing
    check_file.write_text(CHECK_FILE.replace("the custom check ran", "it ran"))
    # case.json names the file only, so the case's content hash stays: the code hash moves
    assert files_of(case, tmp_path / "cases").content == files.content
    assert result_key(RECORD, files, "ran") != before


# --- what is stored ------------------------------------------------------------------


def test_results_persist_across_a_new_cache_on_the_same_directory(tmp_path: Path) -> None:
    files = files_of(add_one_case(), tmp_path / "cases")
    records = {check: worker_record(files, check) for check in ("checker", "ort_run")}
    assert {r["outcome"] for r in records.values()} == {"pass"}
    keys = {check: result_key(RECORD, files, check) for check in records}
    cache = ResultCache(tmp_path / "cache")
    assert cache.get(keys["checker"]) is None
    cache.put([(keys[c], records[c]) for c in records])
    assert cache.get(keys["ort_run"]) == records["ort_run"]

    reopened = ResultCache(tmp_path / "cache")
    for check, record in records.items():
        assert reopened.get(keys[check]) == record
    assert ResultCache(tmp_path / "other").get(keys["checker"]) is None


def test_a_later_line_of_a_key_replaces_the_earlier_one_and_compaction_keeps_it(
    tmp_path: Path,
) -> None:
    """`--fresh` recomputes and replaces: the last line of a key wins, also after the
    file is compacted."""
    files = files_of(add_one_case(), tmp_path / "cases")
    first = worker_record(files, "checker")
    second = {**first, "detail": "recomputed"}
    k = result_key(RECORD, files, "checker")
    cache = ResultCache(tmp_path / "cache")
    cache.put([(k, first)])
    cache.put([(k, second)])
    assert ResultCache(tmp_path / "cache").get(k) == second
    with cache.path.open("a") as f:  # many replaced lines: the next open compacts
        for _ in range(10_010):
            f.write(json.dumps({"key": k, "record": second}) + "\n")
    compacted = ResultCache(tmp_path / "cache")
    assert compacted.get(k) == second
    assert len(cache.path.read_text().splitlines()) == 1


#: Kept: the outcomes of a check that ran to its end. Rerun: a timeout (it depends on
#: the machine) and a crash (it can be nondeterministic).
KEPT = ("pass", "fail", "error", "skip", "xfail", "xpass")
RERUN = ("timeout", "crash")


def test_timeouts_and_crashes_are_not_cached_the_other_outcomes_are(tmp_path: Path) -> None:
    files = files_of(add_one_case(), tmp_path / "cases")
    real = worker_record(files, "ort_run")
    items = [
        (f"key-{outcome}", {**real, "outcome": outcome, "detail": f"{outcome} detail"})
        for outcome in KEPT + RERUN
    ]
    cache = ResultCache(tmp_path / "cache")
    cache.put(items)
    for reader in (cache, ResultCache(tmp_path / "cache")):
        for name, record in items:
            expected = record if record["outcome"] in KEPT else None
            assert reader.get(name) == expected, name
    assert len(cache.path.read_text().splitlines()) == len(KEPT)


def test_a_batch_of_only_uncached_outcomes_writes_nothing(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path / "cache")
    cache.put([("k1", {"outcome": "crash"}), ("k2", {"outcome": "timeout"})])
    assert not cache.path.exists()


def test_a_torn_last_line_is_skipped_and_the_results_before_it_served(tmp_path: Path) -> None:
    files = files_of(add_one_case(), tmp_path / "cases")
    records = {check: worker_record(files, check) for check in ("checker", "ort_run", "reference")}
    keys = {check: result_key(RECORD, files, check) for check in records}
    cache = ResultCache(tmp_path / "cache")
    cache.put([(keys["checker"], records["checker"]), (keys["ort_run"], records["ort_run"])])
    whole = json.dumps({"key": keys["reference"], "record": records["reference"]})
    with cache.path.open("a") as f:
        f.write(whole[: len(whole) // 2])  # the run was killed mid-write

    after = ResultCache(tmp_path / "cache")
    assert after.get(keys["checker"]) == records["checker"]
    assert after.get(keys["ort_run"]) == records["ort_run"]
    assert after.get(keys["reference"]) is None  # that result reruns

    # the rerun's result lands on a line of its own, readable by the run after
    after.put([(keys["reference"], records["reference"])])
    final = ResultCache(tmp_path / "cache")
    assert {c: final.get(k) for c, k in keys.items()} == records


def test_result_files_of_older_in_cell_code_are_deleted_the_previous_one_kept(
    tmp_path: Path,
) -> None:
    """Every key holds the in-cell code's hash: a new version of the code can match no
    line of an old file, which would otherwise be read, and grow, on every run."""
    directory = tmp_path / "cache"
    directory.mkdir()
    stale = []
    for age, name in enumerate(["results.jsonl", "results-aaaa.jsonl", "results-bbbb.jsonl"]):
        path = directory / name
        path.write_text('{"key": "k", "record": {}}\n')
        os.utime(path, (1_000_000 + age, 1_000_000 + age))
        stale.append(path)
    cache = ResultCache(directory)
    record = {
        "case": "c",
        "check": "checker",
        "outcome": "pass",
        "phase": "",
        "detail": "",
        "seconds": 0.1,
    }
    cache.put([("k2", record)])
    assert sorted(p.name for p in directory.glob("*.jsonl")) == sorted(
        [cache.path.name, "results-bbbb.jsonl"]  # the newest other generation stays
    )
    assert ResultCache(directory).get("k2") == record
    assert ResultCache(directory).get("k") is None


def test_a_cache_opened_only_to_write_parses_nothing_until_it_has_grown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--fresh` reads no result back; it still writes each one, replacing the old."""
    import compat.state.cache

    passed = {
        "case": "c",
        "check": "checker",
        "outcome": "pass",
        "phase": "",
        "detail": "",
        "seconds": 0.1,
    }
    cache = ResultCache(tmp_path / "cache")
    cache.put([("k", {**passed, "outcome": "fail"})])
    writer = ResultCache(tmp_path / "cache", read=False)
    assert writer.get("k") is None
    writer.put([("k", passed)])
    assert ResultCache(tmp_path / "cache").get("k") == passed
    with cache.path.open("a") as f:
        f.write((json.dumps({"key": "k", "record": passed}) + "\n") * 10)
    monkeypatch.setattr(compat.state.cache, "WRITE_ONLY_COMPACTION", 5)
    ResultCache(tmp_path / "cache", read=False)
    assert len(cache.path.read_text().splitlines()) == 1
