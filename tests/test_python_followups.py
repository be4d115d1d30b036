"""The follow-ups on a Python axis: `repro --python 3.12` rebuilds a cell on CPython 3.12
and every printed repro command of a cell on an axis says so (compat/core/printed.py);
bisect and triage run on one Python (compat/followup/on_python.py), a release without a
wheel for it one line; `plan` spreads the Pythons over the shards and says which each
job installs, as the CI workflow does; `init` writes the axis from requires-python and
what is installed here (compat/adopt/python_axis.py).

The interpreters are this machine's (pyenv's CPython 3.9-3.13); the wheels the index's.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import onnx
import pytest
from onnx import helper

from compat.adopt import InitOptions, init
from compat.adopt.ci import workflow_text
from compat.cli.commands.repro import ReproRequest
from compat.cli.main import main, parse
from compat.core.errors import CompatError, UsageError
from compat.core.outcomes import CellRecord, CellState
from compat.core.printed import axis_python, repro_command
from compat.core.report import Report
from compat.followup.on_python import follow_up_python, given_python
from compat.followup.repro import parse_pins, repro_cell
from compat.followup.triage.command import TriageRequest, load_case, prepare
from compat.followup.triage.report import write_triage
from compat.plan.config import load_config
from compat.plan.matrix import expand
from tests.conftest import ROOT
from tests.test_adopt import _steps
from tests.test_printed_commands import WRONG_ORACLE, run_printed

CONFIG = load_config(ROOT / "pyproject.toml")
PINS = ["onnx==1.16.2", "onnxruntime==1.17.3"]


def _record(python: str, full: str) -> tuple[CellRecord, tuple[str, ...]]:
    """The record of onnx 1.16.2 × onnxruntime 1.17.3 in a plan of `python` and one
    other Python (its id names it), as the matrix writes it; and its requirements."""
    other = "3.10" if python != "3.10" else "3.12"
    plan = expand(CONFIG, ("1.16.2",), ("1.17.3",), True, (), pythons=(other, python))
    (cell,) = [c for c in plan.cells if c.python == python]
    record = CellRecord(
        cell.id,
        cell.onnx,
        cell.onnxruntime,
        CellState.READY,
        python=full,
        requirements=cell.requirements,
    )
    return record, cell.requirements


def _unoffline(package: str) -> list[str]:
    raise CompatError(f"cannot list {package} releases from the package index: offline")


# -- the printed command ----------------------------------------------------------------


def test_a_cell_on_a_python_axis_prints_its_python_and_any_other_cell_does_not() -> None:
    record, _ = _record("3.12", "3.12.1")
    assert record.id == "py3.12-onnx1.16.2-ort1.17.3" and axis_python(record) == "3.12"
    assert repro_command(record, ["a.b"]) == (
        "nox -s repro -- --python 3.12 onnx==1.16.2 onnxruntime==1.17.3 --cases a.b"
    )
    # a run on one interpreter: its cells are rebuilt on the one the command runs on
    plain = CellRecord("onnx1.16.2-ort1.17.3", "1.16.2", "1.17.3", CellState.READY, python="3.12.1")
    assert axis_python(plain) == ""
    assert repro_command(plain, []) == "nox -s repro -- onnx==1.16.2 onnxruntime==1.17.3"
    # a cell that never got built still says its Python (no-wheel: the minor version only)
    lacking = CellRecord(
        "py3.13-onnx1.16.2-ort1.17.3", "1.16.2", "1.17.3", CellState.NO_WHEEL, python="3.13"
    )
    assert repro_command(lacking, []).startswith("nox -s repro -- --python 3.13 onnx==1.16.2 ")


@pytest.mark.subprocess  # finds the interpreter by asking it its version
@pytest.mark.parametrize("python", ["3.10", "3.12"])
def test_the_printed_command_parsed_rebuilds_the_same_cell(python: str) -> None:
    record, requirements = _record(python, f"{python}.9")
    args = shlex.split(repro_command(record, []))[4:]
    assert args[:2] == ["--python", python]
    _, request = parse(["repro", *args])
    assert isinstance(request, ReproRequest) and given_python(request.common)
    on = follow_up_python(request.common, CONFIG, "repro")
    again = repro_cell(parse_pins(list(request.pins), None), CONFIG, on, True)
    assert (again.id, again.requirements, again.python) == (record.id, requirements, python)
    # without --python: the run's interpreter, the id and requirements of before
    _, bare = parse(["repro", *PINS])
    assert isinstance(bare, ReproRequest) and follow_up_python(bare.common, CONFIG, "x") == ""
    before = repro_cell(parse_pins(PINS, None), CONFIG)
    assert (before.id, before.python, before.env_name) == ("onnx1.16.2-ort1.17.3", "", before.id)


@pytest.mark.subprocess
def test_a_follow_up_runs_on_one_python(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["repro", "--python", "3.10,3.12", *PINS]) == 2
    assert (
        "--python 3.10,3.12: repro runs on one Python (3.10, 3.12 given); choose one, "
        "like --python 3.12" in capsys.readouterr().err
    )
    config = tmp_path / "pyproject.toml"
    config.write_text(
        (ROOT / "pyproject.toml").read_text()
        + '\n[tool.compat.python]\nversions = ["3.10", "3.11"]\n'
    )
    _, request = parse(["repro", "--config", str(config), *PINS])
    assert isinstance(request, ReproRequest)
    # a config's axis of several (what init writes): one chosen, and said
    assert follow_up_python(request.common, load_config(config), "bisect") == "3.11"
    said = (
        "bisect: on Python 3.11, the one of [tool.compat.python]'s 3.10, 3.11 that runs "
        "every release"
    )
    assert f"{said} (--python X.Y for another)" in capsys.readouterr().out
    # ... and of one: the follow-ups run on it, as the matrix does
    config.write_text(
        (ROOT / "pyproject.toml").read_text() + '\n[tool.compat.python]\nversions = ["3.10"]\n'
    )
    _, request = parse(["repro", "--config", str(config), *PINS])
    assert isinstance(request, ReproRequest)
    assert follow_up_python(request.common, load_config(config), "repro") == "3.10"


@pytest.mark.envs
def test_repro_on_3_12_builds_from_3_12_and_its_folder_names_the_python(
    tmp_path: Path, shared_state: Path
) -> None:
    """The printed command of a cell on an axis (a wrong oracle fails its `reference`
    check), run as nox runs it: the cell rebuilt from CPython 3.12, the same id, its
    cases run there, and a repro folder that says to make its venv with python3.12."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "wrong_oracle.py").write_text(WRONG_ORACLE)
    record, _ = _record("3.12", "3.12.1")
    command = repro_command(record, ["wrong_oracle.add_one"], {"corpus": str(corpus)})
    assert command.startswith(f"nox -s repro -- --python 3.12 {' '.join(PINS)} ")
    done = run_printed(command, shared_state, tmp_path / "out")
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"reproducing {record.id}: onnx==1.16.2 onnxruntime==1.17.3" in done.stdout
    assert "; Python 3.12." in done.stdout  # the cell's own interpreter said so
    assert "== wrong_oracle.add_one · reference: fail" in done.stdout
    python = shared_state / "envs" / record.id / "bin" / "python"
    asked = subprocess.run([str(python), "--version"], capture_output=True, text=True, check=True)
    assert asked.stdout.startswith("Python 3.12.")
    folder = tmp_path / "out" / "repro" / record.id / "wrong_oracle.add_one.reference"
    requirements = (folder / "requirements.txt").read_text().splitlines()
    assert requirements[0].startswith("# CPython 3.12 (the cell ran on 3.12.")
    assert "onnx==1.16.2" in requirements and "onnxruntime==1.17.3" in requirements
    script = (folder / "repro.py").read_text()
    assert f"from the onnx-compat cell {record.id} (Python 3.12." in script
    assert "    python3.12 -m venv venv && venv/bin/pip install" in script


# -- bisect -------------------------------------------------------------------------------


def _bisect(tmp_path: Path, *args: str) -> list[str]:
    return [
        "bisect",
        "--package",
        "onnxruntime",
        "--case",
        "pad_pads_from_constant.tensor",
        "--check",
        "ort_run",
        "--config",
        str(ROOT / "pyproject.toml"),
        "--state-dir",
        str(tmp_path / "state"),
        *args,
    ]


@pytest.mark.subprocess  # asks the package index
def test_bisect_refuses_a_release_without_a_wheel_for_its_python_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_bisect(tmp_path, "--python", "3.12", "--good", "1.16.3")) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "onnx-compat: error: --good 1.16.3: onnxruntime 1.16.3 has no wheel for CPython 3.12 "
        "on this platform (wheels for 3.8, 3.9, 3.10, 3.11): not installable there, by the "
        "package index; bisect on another --python, or between releases with wheels for 3.12"
    )
    assert main(_bisect(tmp_path, "--python", "3.12", "--bad", "1.16.0")) == 2
    assert (
        "--bad 1.16.0: onnxruntime 1.16.0 has no wheel for CPython 3.12" in capsys.readouterr().err
    )


@pytest.mark.subprocess  # asks the package index
def test_bisect_on_a_python_says_each_release_without_a_wheel_and_builds_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """numpy 1.24.4 has no wheel for 3.12: every probe's cell is no-wheel, decided from
    the index before anything is built, one line each, never an install error."""
    args = _bisect(
        tmp_path,
        "--python",
        "3.12",
        "--good",
        "1.17.0",
        "--bad",
        "1.18.0",
        "--with",
        "numpy==1.24.4",
    )
    assert main(args) == 2
    out, err = capsys.readouterr()
    lines = out.splitlines()
    # only releases with a 3.12 wheel are bisected over (1.17.2 has none)
    assert (
        lines[0] == "bisecting 4 onnxruntime releases on CPython 3.12: 1.17.0, 1.17.1, "
        "1.17.3, 1.18.0"
    )
    skipped = [line for line in lines if ": no-wheel, skipped: " in line]
    assert len(skipped) == 4 and all(
        "numpy 1.24.4 has no wheel for CPython 3.12 on this platform" in line for line in skipped
    )
    assert "install-error" not in out + err
    assert "fewer than two installable releases" in err
    assert not list((tmp_path / "state" / "envs").glob("py3.12-*/bin"))  # nothing was built


# -- triage -------------------------------------------------------------------------------


def _model(tmp_path: Path) -> Path:
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    path = tmp_path / "relu.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def _triage(tmp_path: Path, *args: str) -> TriageRequest:
    _, request = parse(
        [
            "triage",
            str(_model(tmp_path)),
            "--config",
            str(ROOT / "pyproject.toml"),
            "--state-dir",
            str(tmp_path / "state"),
            "--onnx",
            "1.16.2,1.18.0",
            "--ort",
            "1.17.3",
            *args,
        ]
    )
    assert isinstance(request, TriageRequest)
    return request


@pytest.mark.subprocess  # finds the interpreters, asks the index for the pairs
def test_triage_runs_on_one_python_and_its_cells_name_it(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="triage runs on one Python"):
        prepare(_triage(tmp_path, "--python", "3.10,3.12"))
    run, _ = prepare(_triage(tmp_path, "--python", "3.12"))
    assert {c.python for c in run.plan.cells} == {"3.12"}
    assert [c.id for c in run.plan.cells] == [
        "py3.12-onnx1.16.2-ort1.24.4",
        "py3.12-onnx1.18.0-ort1.24.4",
        "py3.12-onnx1.23.2-ort1.17.3",
    ]
    assert all(c.show_python for cells in run.plan.axes.values() for c in cells)
    plain, _ = prepare(_triage(tmp_path))  # no --python: as before, no Python in the ids
    assert all(not c.python and c.id.startswith("onnx") for c in plain.plan.cells)


@pytest.mark.envs
def test_triage_on_3_12_finds_the_same_boundary_and_its_report_says_3_12(
    tmp_path: Path, shared_state: Path
) -> None:
    """value_ints pads (fixed in onnx 1.21) triaged on CPython 3.12: every cell, bisect
    probe and reduction worker on 3.12, and every file that rebuilds one says so."""
    from tests.test_triage import _save, pads_model

    path, out = _save(tmp_path, "pads", pads_model()), tmp_path / "out"
    assert (
        main(
            [
                "triage",
                str(path),
                "--config",
                str(ROOT / "pyproject.toml"),
                "--state-dir",
                str(shared_state),
                "--out",
                str(out),
                "--onnx",
                "1.20.1,1.21.0",
                "--axis",
                "onnx",
                "--python",
                "3.12",
            ]
        )
        == 0
    )
    document = json.loads((out / "triage.json").read_text())
    assert document["python"] == "3.12"
    (finding,) = [f for f in document["findings"] if f["check"] == "shape_inference"]
    assert (finding["kind"], finding["last_bad"], finding["first_good"]) == (
        "fixed",
        "1.20.1",
        "1.21.0",
    )
    report = (out / "report.md").read_text()
    assert "cells py3.12-onnx1.20.1-ort1.24.4, py3.12-onnx1.21.0-ort1.24.4;" in report
    folder = out / Path(finding["report"]).parent
    assert "python3.12 -m venv venv && venv/bin/pip" in (folder / "report.md").read_text()
    for name in ("requirements.txt", "requirements-good.txt"):
        assert (folder / name).read_text().startswith("# CPython 3.12 (the cell ran on 3.12.")
    assert "cell py3.12-onnx1.20.1-ort1.24.4 (Python 3.12." in (folder / "repro.py").read_text()


def test_triage_s_report_names_the_python_of_its_cells(tmp_path: Path) -> None:
    request = _triage(tmp_path)
    case = load_case(request)
    cells = tuple(
        CellRecord(f"py3.12-onnx{v}-ort1.24.4", v, "1.24.4", CellState.READY, python="3.12.1")
        for v in ("1.16.2", "1.18.0")
    )
    write_triage(tmp_path / "out", request.model, case, Report(cells, (), (), {}), [])
    assert json.loads((tmp_path / "out" / "triage.json").read_text())["python"] == "3.12"
    report = (tmp_path / "out" / "report.md").read_text()
    assert "cells py3.12-onnx1.16.2-ort1.24.4, py3.12-onnx1.18.0-ort1.24.4;" in report
    plain = tuple(
        CellRecord(c.id[7:], c.onnx, c.onnxruntime, c.state, python=c.python) for c in cells
    )
    write_triage(tmp_path / "plain", request.model, case, Report(plain, (), (), {}), [])
    assert "python" not in json.loads((tmp_path / "plain" / "triage.json").read_text())


# -- plan and the CI workflow --------------------------------------------------------------


@pytest.mark.subprocess  # finds the interpreters, asks the index for the pairs
def test_every_shard_gets_cells_of_every_python_and_says_which(
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = ["--config", str(ROOT / "pyproject.toml")]
    every = ["--python", "3.10,3.12", "--python-releases", "all"]
    assert main(["plan", *config, *every, "--json", "--shards", "3"]) == 0
    shards = json.loads(capsys.readouterr().out)["include"]
    assert main(["plan", *config, *every, "--json"]) == 0
    cells = json.loads(capsys.readouterr().out)["include"]
    assert {c["python"] for c in cells} == {"3.10", "3.12"}
    assert all(c["cell"].startswith(f"py{c['python']}-") for c in cells)
    ids = [i for shard in shards for i in shard["cells"].split(",")]
    assert sorted(ids) == sorted(c["cell"] for c in cells)  # each cell once
    for shard in shards:
        assert shard["python"] == "3.10 3.12"
        assert {i.split("-")[0] for i in shard["cells"].split(",")} == {"py3.10", "py3.12"}
    assert main(["plan", *config, "--python", "3.12,3.10", "--pythons"]) == 0
    assert capsys.readouterr().out == "3.12 3.10\n"
    # without a Python axis: no key, nothing to install
    assert main(["plan", *config, "--json", "--shards", "2"]) == 0
    assert all("python" not in shard for shard in json.loads(capsys.readouterr().out)["include"])
    assert main(["plan", *config, "--pythons"]) == 0
    assert capsys.readouterr().out == "\n"


@pytest.mark.subprocess  # runs the workflow's own scripts in bash
def test_the_workflow_installs_the_pythons_the_plan_needs_before_planning_and_running(
    tmp_path: Path,
) -> None:
    """The plan job's and a shard job's scripts, run as the jobs run them, with
    onnx-compat and uv stand-ins that say what they were asked."""
    text = workflow_text("onnx-compat", "3.12", 2)
    assert "PYTHONS: ${{ matrix.python }}" in text  # a shard's: what the plan job listed
    plan, shard = (s for s in _steps(text) if "onnx-compat plan" in s or "onnx-compat matrix" in s)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "log"
    (bin_dir / "uv").write_text(f'#!/bin/sh\necho "uv $*" >> {log}\n')
    (bin_dir / "onnx-compat").write_text(
        f'#!/bin/sh\necho "onnx-compat $*" >> {log}\n'
        'case "$*" in *--pythons*) echo "$NEEDED";; *--json*) echo "{}";; esac\n'
    )
    for tool in ("uv", "onnx-compat"):
        (bin_dir / tool).chmod(0o755)

    def step(script: str, **env: str) -> list[str]:
        log.write_text("")
        done = subprocess.run(
            ["bash", "-e", "-c", script],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env={
                "PATH": f"{bin_dir}:/usr/bin:/bin",
                "GITHUB_OUTPUT": str(tmp_path / "out"),
                "SHARDS": "2",
                **env,
            },
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return log.read_text().splitlines()

    assert step(plan, NEEDED="3.10 3.12") == [
        "onnx-compat plan --pythons",
        "uv python install 3.10 3.12",
        "onnx-compat plan --json --shards 2",
    ]
    assert "uv" not in " ".join(step(plan, NEEDED=""))  # no axis: nothing to install
    ran = step(shard, SHARD="1/2", PYTHONS="3.10 3.12")
    assert ran[0] == "uv python install 3.10 3.12" and ran[1].startswith("onnx-compat matrix")
    assert step(shard, SHARD="1/2", PYTHONS="")[0].startswith("onnx-compat matrix")


# -- init -------------------------------------------------------------------------------


def _project(tmp_path: Path, requires_python: str | None) -> Path:
    line = f'requires-python = "{requires_python}"\n' if requires_python is not None else ""
    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "mine"\n{line}')
    return tmp_path


@pytest.mark.subprocess  # asks this machine's interpreters their versions
def test_init_writes_the_installed_pythons_requires_python_allows(tmp_path: Path) -> None:
    from compat.plan.pythons import installed

    project = _project(tmp_path, ">=3.10")
    said = init(project, InitOptions(), _unoffline)
    here = [v for v in installed() if tuple(map(int, v.split("."))) >= (3, 10)]
    assert len(here) >= 2, "this machine has pyenv's 3.10-3.13"
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    chosen = [v for v in here if v in (here[0], here[-1], running)]
    line = (
        f"  python: {', '.join(chosen)}: the oldest and newest CPython installed here that "
        f"requires-python >=3.10 allows, and {running}, this one: every release runs on the one "
        "with wheels for the most releases, each other runs its newest pair"
    )
    assert any(said_line.startswith(line) for said_line in said), said
    text = (project / "pyproject.toml").read_text()
    versions = ", ".join(f'"{v}"' for v in chosen)
    assert f"[tool.compat.python]\nversions = [{versions}]  # one Python runs every" in text
    assert load_config(project / "pyproject.toml").python.versions == ",".join(chosen)


@pytest.mark.parametrize(
    ("requires", "installed", "written"),
    [
        (">=3.10", ("3.9", "3.10", "3.11", "3.12"), "3.10,3.11,3.12"),
        (">=3.8", ("3.8", "3.9", "3.12"), "3.9,3.12"),  # 3.8: older than the cells' code
        ("<3.11", ("3.9", "3.10", "3.11"), "3.9,3.10"),
        (">=3.12", ("3.10", "3.11", "3.12"), ""),  # one: the sessions' Python, no axis
        (None, ("3.10", "3.11", "3.12"), ""),  # no requires-python: nothing says which
    ],
)
def test_the_axis_init_derives(
    tmp_path: Path, requires: str | None, installed: tuple[str, ...], written: str
) -> None:
    project = _project(tmp_path, requires)
    said = init(project, InitOptions(), _unoffline, lambda: installed)
    assert load_config(project / "pyproject.toml").python.versions == written
    assert any(line.startswith("  python: ") for line in said) == bool(written)


@pytest.mark.parametrize(
    ("given", "written", "line"),
    [
        (
            "3.11,3.13",
            "3.11,3.13",
            "  python: 3.11, 3.13 (--python): every release runs on "
            "one, each other runs its newest pair",
        ),
        (
            ">=3.11",
            ">=3.11",
            "  python: >=3.11 (--python): every installed Python in that "
            "range; every release runs on one, each other runs its newest "
            "pair",
        ),
        ("none", "", None),
    ],
)
def test_init_python_names_the_axis_or_none(
    tmp_path: Path, given: str, written: str, line: str | None
) -> None:
    project = _project(tmp_path, ">=3.10")
    said = init(project, InitOptions(python=given), _unoffline, lambda: ("3.10", "3.12"))
    assert load_config(project / "pyproject.toml").python.versions == written
    assert [s for s in said if s.startswith("  python: ")] == ([line] if line else [])


def test_init_python_of_junk_is_one_line_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(_project(tmp_path, None))
    assert main(["init", "--python", "3"]) == 2
    assert "--python 3: give minor versions, like --python 3.10,3.12" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pyproject.toml"]


def test_bisect_s_with_pin_of_the_other_package_replaces_its_pair() -> None:
    from compat.cli.commands.bisect import partner_from_with

    pairs = ("1.23.2", "1.32.0")  # (onnx's pair, onnxruntime's pair)
    got = partner_from_with("onnx", pairs, ("onnxruntime==1.24.4", "numpy==1.26.4"))
    assert got == (("1.23.2", "1.24.4"), ("numpy==1.26.4",))
    assert partner_from_with("onnxruntime", pairs, ("onnx==1.18.0",)) == (("1.18.0", "1.32.0"), ())
    with pytest.raises(UsageError, match=r"--with onnx==1.18.0: bisect --package onnx chooses"):
        partner_from_with("onnx", pairs, ("onnx==1.18.0",))
