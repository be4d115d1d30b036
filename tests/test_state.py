"""Damaged state is detected, never trusted: environments, staged code and cases, the
result cache and remembered runs (issue 23, item 5).

The environment tests build a cell of their own in tmp_path (the shared state is never
damaged) and damage it as an attack run did: a deleted extension module, another
onnxruntime installed into it."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from compat.cli.main import main
from compat.core.report import Report
from compat.corpus.discover import write_case
from compat.execute.envs import env_python
from compat.execute.installer import find_uv
from compat.state import cellcode
from compat.state.cache import ResultCache
from compat.state.memo import recall, remember
from tests.conftest import ROOT
from tests.helpers import add_one_case

CELL = "onnx1.23.2-ort1.24.4"
PASSED = {
    "case": "tiny.add_one",
    "check": "checker",
    "outcome": "pass",
    "phase": "",
    "detail": "",
    "seconds": 0.01,
    "traceback": "",
}


# --- the result cache ------------------------------------------------------------------


MALFORMED = {
    "torn": '{"key": "k9", "record": {"case": "tiny.ad',
    "not json": "\x00\x01garbage",
    "a list": json.dumps([{"key": "k9", "record": PASSED}]),
    "a string": json.dumps("k9"),
    "a record that is a list": json.dumps({"key": "k9", "record": [PASSED]}),
    "a missing key": json.dumps({"record": PASSED}),
    "a key that is no string": json.dumps({"key": 9, "record": PASSED}),
    "a record missing a field": json.dumps(
        {"key": "k9", "record": {k: v for k, v in PASSED.items() if k != "detail"}}
    ),
    "an unknown outcome": json.dumps({"key": "k9", "record": {**PASSED, "outcome": "great"}}),
    "seconds that are text": json.dumps({"key": "k9", "record": {**PASSED, "seconds": "1"}}),
}


@pytest.mark.parametrize("line", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_cache_line_is_ignored_counted_and_dropped(
    line: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = ResultCache(tmp_path / "cache")
    cache.put([("k1", PASSED), ("k2", {**PASSED, "check": "ort_run"})])
    with cache.path.open("a") as f:
        f.write(line + "\n")

    again = ResultCache(tmp_path / "cache")
    assert again.get("k1") == PASSED and again.get("k2") == {**PASSED, "check": "ort_run"}
    assert again.get("k9") is None  # computed again
    assert again.ignored == 1
    err = capsys.readouterr().err
    assert "ignored 1 malformed cache entries" in err and len(err.splitlines()) == 1
    # dropped from the file: the next run neither sees nor reports it
    assert ResultCache(tmp_path / "cache").ignored == 0
    assert capsys.readouterr().err == ""
    assert len(again.path.read_text().splitlines()) == 2


@pytest.mark.parametrize("read", [True, False], ids=["read", "fresh"])
def test_a_folder_where_the_cache_file_should_be_is_survived_and_replaced(
    read: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = ResultCache(tmp_path / "cache").path
    path.mkdir(parents=True)
    (path / "inside").write_text("x")

    cache = ResultCache(tmp_path / "cache", read=read)
    assert "ignored 1 malformed cache entries" in capsys.readouterr().err
    cache.put([("k1", PASSED)])  # results are cached again
    assert ResultCache(tmp_path / "cache").get("k1") == PASSED


def test_an_unreadable_cache_file_is_one_malformed_entry_and_the_run_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = ResultCache(tmp_path / "cache").path
    path.parent.mkdir(parents=True)
    path.symlink_to(path.parent / "loop")  # a dangling link: exists() is False, open fails
    (path.parent / "loop").symlink_to(path)
    cache = ResultCache(tmp_path / "cache")
    assert cache.entries == {}
    cache.put([("k1", PASSED)])  # cannot be written: said once, the run's results stand
    cache.put([("k2", PASSED)])
    err = capsys.readouterr().err
    assert err.count("results not cached") == 1 and cache.get("k2") == PASSED


# --- remembered runs -------------------------------------------------------------------


def remembered(tmp_path: Path, name: str = "abc") -> Path:
    memo = tmp_path / "runs" / f"{name}.json"
    remember(Report(cells=(), cases=(), results=(), axes={}, run={"digest": "abc"}), memo)
    return memo


BAD_RESULT = {
    "cell": CELL,
    "case": "c",
    "check": "checker",
    "outcome": "great",
    "detail": "",
    "phase": "",
    "seconds": 0,
}
MEMOS: dict[str, Callable[[dict[str, Any]], object]] = {
    "a list": lambda report: [report],
    "a string": lambda report: "report",
    "no results": lambda report: {k: v for k, v in report.items() if k != "results"},
    "results that are not objects": lambda report: {**report, "results": [1, 2]},
    "an unknown outcome": lambda report: {**report, "results": [BAD_RESULT]},
    "cells that are a string": lambda report: {**report, "cells": "onnx"},
}


@pytest.mark.parametrize("damage", MEMOS.values(), ids=MEMOS.keys())
def test_a_malformed_remembered_run_is_ignored_and_computed_again(
    damage: Callable[[dict[str, Any]], object],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    memo = remembered(tmp_path)
    memo.write_text(json.dumps(damage(json.loads(memo.read_text()))))

    assert recall(memo) is None
    err = capsys.readouterr().err
    assert "ignored 1 malformed remembered run" in err and len(err.splitlines()) == 1
    assert not memo.exists()  # the run computes it again and remembers it anew
    remembered(tmp_path)
    assert recall(memo) is not None


def test_a_remembered_run_that_is_not_json_is_ignored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    memo = remembered(tmp_path)
    memo.write_bytes(b"{\x00\xff")
    assert recall(memo) is None and "malformed remembered run" in capsys.readouterr().err


def test_a_remembered_run_of_other_inputs_or_a_folder_is_not_served(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert recall(remembered(tmp_path)) is not None
    assert recall(remembered(tmp_path, "def")) is None  # its digest is abc's
    assert "other inputs" in capsys.readouterr().err
    folder = tmp_path / "runs" / "ghi.json"
    folder.mkdir()
    assert recall(folder) is None and not folder.exists()
    remember(Report(cells=(), cases=(), results=(), axes={}, run={"digest": "ghi"}), folder)
    assert recall(folder) is not None


# --- staged code and cases -------------------------------------------------------------


@pytest.mark.parametrize("damage", ["garbled", "truncated", "deleted", "a folder"])
def test_staged_in_cell_code_that_no_longer_hashes_is_staged_again(
    damage: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = cellcode.stage(tmp_path / "code")
    victim = target / "compat" / "cell" / "loop.py"
    if damage == "garbled":
        victim.write_bytes(victim.read_bytes().replace(b"def ", b"dfe ", 1))
    elif damage == "truncated":
        victim.write_bytes(victim.read_bytes()[:100])
    elif damage == "deleted":
        victim.unlink()
    else:
        victim.unlink()
        victim.mkdir()
    assert not cellcode.intact(target)

    assert cellcode.stage(tmp_path / "code") == target
    assert cellcode.intact(target)
    assert victim.read_bytes() == (ROOT / "compat" / "cell" / "loop.py").read_bytes()
    assert "staged again" in capsys.readouterr().err
    assert [p.name for p in (tmp_path / "code").iterdir()] == [target.name]  # no leftovers
    cellcode.stage(tmp_path / "code")
    assert capsys.readouterr().err == ""  # intact now: reused silently


@pytest.mark.parametrize(
    "name, damage",
    [
        ("model.onnx", "truncated"),
        ("case.json", "garbled"),
        ("data.npz", "a folder"),
        ("model.onnx", "deleted"),
    ],
)
def test_a_staged_case_that_differs_from_its_content_hash_is_written_again(
    name: str, damage: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = write_case(add_one_case(), tmp_path / "cases", keyed=True)
    good = (first.directory / name).read_bytes()
    victim = first.directory / name
    if damage == "truncated":
        victim.write_bytes(good[: len(good) // 2])
    elif damage == "garbled":
        victim.write_bytes(good.replace(b'"id"', b'"ID"'))
    else:
        victim.unlink()
        if damage == "a folder":
            victim.mkdir()

    again = write_case(add_one_case(), tmp_path / "cases", keyed=True)
    assert (again.directory, again.content) == (first.directory, first.content)
    assert victim.read_bytes() == good
    assert "written again" in capsys.readouterr().err
    assert [p.name for p in (tmp_path / "cases").iterdir()] == [first.directory.name]
    write_case(add_one_case(), tmp_path / "cases", keyed=True)
    assert capsys.readouterr().err == ""


# --- real environments -----------------------------------------------------------------


def run(tmp_path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    code = main(
        [
            "matrix",
            "--config",
            str(ROOT / "pyproject.toml"),
            "--corpus",
            str(ROOT / "cases"),
            "--state-dir",
            str(tmp_path / "state"),
            "--out",
            str(tmp_path / "out"),
            "--onnx",
            "1.23.2",
            "--ort",
            "1.24.4",
            "--cross",
            "--cases",
            "pad_pads_from_constant.*",
            *args,
        ]
    )
    return code, json.loads((tmp_path / "out" / "matrix.json").read_text())


def untimed(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [{**r, "seconds": 0, "origin": ""} for r in report["results"]]


def site_packages(tmp_path: Path) -> Path:
    return next((tmp_path / "state" / "envs" / CELL).glob("lib/python*/site-packages"))


def stack(report: dict[str, Any]) -> tuple[str, str]:
    (cell,) = report["cells"]
    return cell["packages"]["onnx"], cell["packages"]["onnxruntime"]


@pytest.mark.envs
def test_a_deleted_extension_and_damaged_staged_files_are_rebuilt_and_results_stay_right(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, first = run(tmp_path)
    assert code == 0 and stack(first) == ("1.23.2", "1.24.4")
    assert {r["outcome"] for r in first["results"]} <= {"pass", "skip"}
    capsys.readouterr()

    (library,) = site_packages(tmp_path).glob("onnxruntime/capi/onnxruntime_pybind11_state*.so")
    library.unlink()  # unlinked, never written: uv may have hard-linked it from its cache
    state = tmp_path / "state"
    (model, *_) = sorted(state.glob("cases/*/model.onnx"))
    model.write_bytes(model.read_bytes()[:20])
    (loop,) = state.glob("code/*/compat/cell/loop.py")
    loop.write_text("raise SystemExit('garbled')\n")

    code, again = run(tmp_path, "--fresh")
    err = capsys.readouterr().err
    assert f"environment {CELL} differs from what was built" in err
    assert f"{library.name} is missing" in err and "rebuilding it" in err
    assert "staged in-cell code" in err and "staged case" in err
    assert code == 0 and library.exists()
    assert stack(again) == ("1.23.2", "1.24.4")
    assert untimed(again) == untimed(first)  # computed in the rebuilt cell, all right


@pytest.mark.envs
def test_another_onnxruntime_installed_into_a_cell_is_detected_and_rebuilt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, first = run(tmp_path)
    assert code == 0 and stack(first) == ("1.23.2", "1.24.4")
    python = env_python(tmp_path / "state" / "envs" / CELL)
    done = subprocess.run(
        [find_uv(), "pip", "install", "--quiet", "--python", str(python), "onnxruntime==1.20.1"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert list(site_packages(tmp_path).glob("onnxruntime-1.20.1.dist-info"))
    # the cache damaged too: not a traceback
    (cache,) = (tmp_path / "state" / "cache").glob("results-*.jsonl")
    with cache.open("a") as f:
        f.write("".join(line + "\n" for line in MALFORMED.values()))
    capsys.readouterr()

    code, again = run(tmp_path)
    err = capsys.readouterr().err
    assert f"environment {CELL} differs from what was built" in err
    assert "onnxruntime 1.24.4 is now 1.20.1" in err
    assert f"ignored {len(MALFORMED)} malformed cache entries" in err
    assert code == 0 and stack(again) == ("1.23.2", "1.24.4")
    assert untimed(again) == untimed(first)
    installed = sorted(p.name for p in site_packages(tmp_path).glob("onnxruntime-*.dist-info"))
    assert installed == ["onnxruntime-1.24.4.dist-info"]  # what matrix.json says is what ran

    (memo,) = (tmp_path / "state" / "runs").glob("*.json")
    memo.write_text("[]")  # a remembered run of another shape: computed again
    code, third = run(tmp_path)
    err = capsys.readouterr().err
    assert "ignored 1 malformed remembered run" in err and "environment" not in err
    assert code == 0 and untimed(third) == untimed(first) and not third["run"].get("remembered")
    code, fourth = run(tmp_path)  # nothing damaged any more: served, nothing said
    printed = capsys.readouterr()
    assert code == 0 and "warning" not in printed.err
    assert "nothing changed since the last run" in printed.out + printed.err
    assert untimed(fourth) == untimed(first)
