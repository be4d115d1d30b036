"""Reports stay inside their folder (issue 34): `report` and `merge` read matrix.json
files a user may have been handed (a CI artifact, a shard), so a name in them that
would lead a page or a log out of `--out` (`../../README`, `/tmp/x`), a field of the
wrong type, a shard's symlinked logs or a folder in a report's place is one line, exit
2, and nothing outside `--out` changes; the report set is replaced whole or not at all."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compat.cli.main import main
from compat.core.report import Report, dumps, read_json
from tests.test_report import sample_report


def _written(report: Report, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(report))
    return path


def _snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` (links as their target's name), by relative path."""
    found = {}
    for path in sorted(folder.rglob("*")):
        key = str(path.relative_to(folder))
        if path.is_symlink():
            found[key] = str(path.readlink()).encode()
        elif path.is_file():
            found[key] = path.read_bytes()
    return found


def _report(results: Path, out: Path) -> int:
    return main(["report", "--results", str(results), "--out", str(out)])


@pytest.mark.parametrize("family", ["../../README", "/tmp/compat-absolute", "a/b", ".hidden"])
def test_a_family_that_leads_out_of_out_writes_nothing(
    tmp_path: Path, family: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The attack: a case whose family is `../../README` made report overwrite the
    project's README.md; an absolute one was a traceback."""
    project = tmp_path / "project"
    readme = project / "README.md"
    project.mkdir()
    readme.write_text("the project's own\n")
    data = json.loads(dumps(sample_report()))
    data["cases"][0]["family"] = family
    results = project / "dl" / "matrix.json"
    results.parent.mkdir()
    results.write_text(json.dumps(data))
    before = _snapshot(tmp_path)
    assert _report(results, project / "dl" / "reports") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no name a file can take" in err and family in err
    assert _snapshot(tmp_path) == before
    assert not Path("/tmp/compat-absolute.md").exists()


def _leaves(data: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path of every value in the first of each list (one result, one cell...)."""
    yield at
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _leaves(value, (*at, key))
    elif isinstance(data, list) and data:
        yield from _leaves(data[0], (*at, 0))


def _put(data: Any, at: tuple[Any, ...], value: Any) -> Any:
    if not at:
        return value
    data[at[0]] = _put(data[at[0]], at[1:], value)
    return data


def test_every_field_of_the_wrong_type_is_one_line_never_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each value of a real report (the whole file, each section, each field of a result,
    a cell and a case) replaced by a list, an object, a number, null or a path out: the
    report renders (exit 0) or says in one line what is wrong (exit 2)."""
    original = dumps(sample_report())
    out = tmp_path / "out"
    paths = list(_leaves(json.loads(original)))
    assert len(paths) > 40  # the walk reached the fields
    for at in paths:
        for value in ([], {}, 7, None, "../../x"):
            data = _put(json.loads(original), at, value)
            results = tmp_path / "matrix.json"
            results.write_text(json.dumps(data))
            code = _report(results, out)
            printed = capsys.readouterr()
            assert code in (0, 2), (at, value, printed.err)
            if code == 2:
                assert printed.err.count("\n") == 1, (at, value, printed.err)
    assert not (tmp_path / "x").exists() and not (tmp_path.parent / "x").exists()


def _shards(tmp_path: Path) -> tuple[Path, Path]:
    """Two shards of one run, each with its own cells' logs."""
    whole = sample_report()
    ready = [c for c in whole.cells if c.state.value == "ready"]
    run = {"plan_cells": [c.id for c in whole.cells], "plan_axes": whole.axes}
    dirs = []
    for index, cells in enumerate((ready[:1], ready[1:])):
        ids = {c.id for c in cells}
        shard = Report(
            cells=tuple(cells),
            cases=whole.cases,
            results=tuple(r for r in whole.results if r.cell in ids),
            axes={n: tuple(i for i in c if i in ids) for n, c in whole.axes.items()},
            families=whole.families,
            run=run,
        )
        folder = tmp_path / f"shard{index}"
        _written(shard, folder / "matrix.json")
        for cell in ids:
            (folder / "logs" / cell).mkdir(parents=True)
            (folder / "logs" / cell / "case.log").write_text(f"{cell}'s log\n")
        dirs.append(folder)
    return dirs[0], dirs[1]


def test_merge_copies_the_shards_own_logs_and_follows_no_link(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The attack: a shard whose `logs/etc` links to /etc gave a merged logs/ holding
    copies of passwd and shadow (the CI artifact), then a traceback. Links, a FIFO and
    a log linked to a secret are left behind, each said; the shards' own logs are
    merged; nothing outside the merged folder is written."""
    first, second = _shards(tmp_path)
    secret = tmp_path / "secret"
    secret.write_text("password\n")
    (first / "logs" / "etc").symlink_to("/etc")
    cell = next(p for p in (second / "logs").iterdir())
    (cell / "passwd.log").symlink_to(secret)
    os.mkfifo(cell / "pipe.log")
    out = tmp_path / "merged"
    code = main(["merge", str(first), str(second), "--out", str(out)])
    err = capsys.readouterr().err
    assert code in (0, 1), err
    logs = {str(p.relative_to(out / "logs")) for p in (out / "logs").rglob("*") if p.is_file()}
    own = [c for s in (first, second) for c in (s / "logs").iterdir() if not c.is_symlink()]
    assert logs == {f"{c.name}/case.log" for c in own}
    assert not any(p.is_symlink() for p in out.rglob("*"))
    assert "password" not in "".join(p.read_text() for p in (out / "logs").rglob("*.log"))
    for left in ("etc", "passwd.log", "pipe.log"):
        assert f"{left}: " in err and "not copied" in err
    assert read_json(out / "matrix.json").cells


def test_a_shard_that_is_no_report_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A shard holding `[]`, a string, a number or a report with a cell id `../x`."""
    first, second = _shards(tmp_path)
    for text in ("[]", '"x"', "7", "null", "{}"):
        (second / "matrix.json").write_text(text)
        assert main(["merge", str(first), str(second), "--out", str(tmp_path / "m")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "not a matrix report" in err, text
    data = json.loads((first / "matrix.json").read_text())
    data["cells"][0]["id"] = "../x"
    (second / "matrix.json").write_text(json.dumps(data))
    assert main(["merge", str(first), str(second), "--out", str(tmp_path / "m")]) == 2
    assert "cell id '../x' is no name a file can take" in capsys.readouterr().err


def _changed(results: Path) -> None:
    """The stored results changed so that every page renders otherwise."""
    data = json.loads(results.read_text())
    data["cases"][0]["description"] += " (changed)"
    results.write_text(json.dumps(data))


@pytest.mark.subprocess
def test_the_report_set_is_replaced_whole_or_not_at_all(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The attack: an immutable junit.xml gave a traceback after the run and a mixed
    old/new report set. Now a report that cannot be replaced (an immutable junit.xml,
    written after the pages; a folder in its place): one line naming it, exit 2, and
    every file of the earlier set as it was, none half-new."""
    out = tmp_path / "reports"
    results = _written(sample_report(), tmp_path / "results" / "matrix.json")
    assert _report(results, out) == 0
    capsys.readouterr()
    _changed(results)
    junit = out / "junit.xml"
    if subprocess.run(["chattr", "+i", str(junit)], capture_output=True).returncode != 0:
        pytest.skip("no chattr here: an immutable file cannot be made")
    try:
        before = _snapshot(out)
        assert _report(results, out) == 2
    finally:
        subprocess.run(["chattr", "-i", str(junit)], check=True)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "junit.xml" in err and "keeps the earlier set" in err
    assert _snapshot(out) == before
    junit.unlink()
    junit.mkdir()
    before = _snapshot(out)
    assert _report(results, out) == 2
    assert "a folder is in its place" in capsys.readouterr().err
    assert _snapshot(out) == before


def test_a_folder_of_the_set_linking_out_of_out_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """families/ linked to a folder outside --out: nothing is written there, nor in
    --out."""
    out = tmp_path / "reports"
    results = _written(sample_report(), tmp_path / "results" / "matrix.json")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out.mkdir()
    (out / "families").symlink_to(elsewhere)
    before = _snapshot(tmp_path)
    assert _report(results, out) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "leads outside" in err
    assert _snapshot(tmp_path) == before


@pytest.mark.envs
def test_a_run_whose_reports_cannot_be_written_says_so_and_keeps_its_results(
    tmp_path: Path, shared_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The attack: an immutable junit.xml gave a traceback after the run. Now one line,
    exit 2, the earlier set as it was; the same command with another --out writes this
    run's reports from what it remembered, running nothing again."""
    cell = ["--onnx", "1.20.1", "--ort", "1.24.4", "--cells", "onnx1.20.1-ort1.24.4"]
    args = ["matrix", *cell, "--cases", "pad_pads*", "--state-dir", str(shared_state)]
    out = tmp_path / "reports"
    assert main([*args, "--out", str(out), "--fresh"]) == 0
    capsys.readouterr()
    junit = out / "junit.xml"
    if subprocess.run(["chattr", "+i", str(junit)], capture_output=True).returncode != 0:
        pytest.skip("no chattr here: an immutable file cannot be made")
    try:
        before = _snapshot(out)
        assert main([*args, "--out", str(out), "--fresh"]) == 2
    finally:
        subprocess.run(["chattr", "-i", str(junit)], check=True)
    err = capsys.readouterr().err
    (said,) = [line for line in err.splitlines() if "error" in line]
    assert "Traceback" not in err and "junit.xml" in said and "remembered" in said, err
    data = ("matrix.json", ".compat-rendered")  # the results as they came, and their stamp
    assert {k: v for k, v in _snapshot(out).items() if k not in data} == {
        k: v for k, v in before.items() if k not in data
    }
    assert main([*args, "--out", str(tmp_path / "other")]) == 0
    assert "nothing changed since the last run" in "".join(capsys.readouterr())
