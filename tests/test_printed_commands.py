"""Every printed command works as printed: the `nox -s repro -- …` line a matrix run
prints for an unexpected result carries what the run loaded its cases with
(`--config`, `--corpus`, `--cases-dir`), and running it reproduces the failure.

`nox -s repro -- ARGS` is `python -m compat repro ARGS` in the project's own venv
(noxfile.py), so the real-environment tests run exactly that, in a fresh process.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from compat.cli.commands.matrix import MatrixRequest
from compat.cli.main import main, parse
from compat.core.outcomes import CellRecord, CellState, CheckResult, Outcome
from compat.core.printed import repro_command
from compat.core.report import CaseInfo, Report, read_json
from compat.workflow.corpus import run_options
from compat.workflow.finish import finish
from compat.workflow.request import Request
from tests.conftest import ROOT

CELL = CellRecord("onnx1.23.2-ort1.24.4", "1.23.2", "1.24.4", CellState.READY)

WRONG_ORACLE = '''"""A deliberately wrong oracle: y = x + 1 judged against x + 2."""

import numpy as np
from onnx import helper

from compat.corpus.make import const, model, tensor
from compat.core.case import Case


def cases():
    x = np.array([1.0, 2.0], dtype=np.float32)
    return [
        Case(
            id="wrong_oracle.add_one",
            description="y = x + 1, the oracle says x + 2",
            model=model(
                [helper.make_node("Add", ["x", "one"], ["y"])],
                [tensor("x", np.float32, [2])],
                [tensor("y", np.float32, [2])],
                [const("one", np.ones(1, dtype=np.float32))],
            ),
            inputs={"x": x},
            expected={"y": x + 2},
            output_shapes={"y": [2]},
        )
    ]
'''

CLAIMED_BUG = """
[[tool.compat.known]]
cases = "wrong_oracle.*"
package = "onnx"
checks = ["checker"]
reason = "a bug this config claims, which does not exist: checker xpasses"
"""


def parsed(*args: str) -> Request:
    """The shared part of a `matrix` command line's request."""
    _, request = parse(["matrix", *args])
    assert isinstance(request, MatrixRequest)
    return request.common


# -- the command as printed (no environment needed) ----------------------------------


def test_without_options_the_command_is_the_plain_one() -> None:
    assert repro_command(CELL, ["a.b", "c.d"]) == (
        "nox -s repro -- onnx==1.23.2 onnxruntime==1.24.4 --cases a.b,c.d"
    )
    assert repro_command(CELL, [], {}) == "nox -s repro -- onnx==1.23.2 onnxruntime==1.24.4"


def test_the_command_carries_the_run_s_options_quoted_and_only_the_folders_it_needs() -> None:
    options = {
        "config": "ci/pyproject.toml",
        "corpus": "/data/my cases",
        "cases_dirs": {"models": "examples/models", "vendor": "/opt/vendor models"},
        "timeout": 5.0,
    }
    assert repro_command(CELL, ["models.m"], options) == (
        "nox -s repro -- onnx==1.23.2 onnxruntime==1.24.4 --cases models.m "
        "--config ci/pyproject.toml --corpus '/data/my cases' "
        "--cases-dir examples/models --timeout 5"
    )
    everything = repro_command(CELL, [], options)  # a whole-cell repro loads every folder
    assert "--cases-dir examples/models --cases-dir '/opt/vendor models'" in everything


def test_run_options_record_only_what_differs_from_the_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    assert run_options(parsed()) == {}
    assert run_options(parsed("--config", "pyproject.toml", "--corpus", "cases")) == {}
    models = tmp_path / "my models"
    got = run_options(
        parsed(
            "--config",
            str(tmp_path / "ci.toml"),
            "--cases-dir",
            "examples/models",
            "--cases-dir",
            str(models),
            "--timeout",
            "7",
        )
    )
    assert got == {
        "config": str(tmp_path / "ci.toml"),
        "cases_dirs": {"models": "examples/models", "my_models": str(models)},
        "timeout": 7.0,
    }
    # a corpus is recorded when it is not the config's own cases/ folder
    assert run_options(parsed("--config", str(tmp_path / "ci.toml"), "--corpus", "cases")) == {
        "config": str(tmp_path / "ci.toml"),
        "corpus": "cases",
    }


def test_the_terminal_summary_prints_the_command_with_the_run_s_options() -> None:
    broken = replace(CELL, id="onnx1.99.0-ort1.24.4", onnx="1.99.0", state=CellState.INSTALL_ERROR)
    report = Report(
        cells=(CELL, broken),
        cases=(CaseInfo("models.m", "models", "drop-in m.onnx", "0" * 64, {"ort_run": "both"}),),
        results=(CheckResult(CELL.id, "models.m", "ort_run", Outcome.FAIL, detail="differs"),),
        axes={"onnx": (CELL.id, broken.id)},
        run={"options": {"cases_dirs": {"models": "my models"}}},
    )
    assert _printed(report) == [
        "nox -s repro -- onnx==1.99.0 onnxruntime==1.24.4 --cases-dir 'my models'",
        "nox -s repro -- onnx==1.23.2 onnxruntime==1.24.4 --cases models.m --cases-dir 'my models'",
    ]


# -- run for real ----------------------------------------------------------------------


def printed_commands(shared_state: Path, out: Path, args: list[str]) -> list[str]:
    """Runs the matrix for real and returns the repro commands its summary prints.

    The options are recorded in the report by `compat.workflow.corpus.run_options`; until the
    matrix command itself stores them (`report.run["options"]`), they are added here
    from the same parsed arguments before the summary is printed again."""
    common = [
        *("--state-dir", str(shared_state), "--out", str(out), "--fresh"),
        *("--onnx", "1.23.2", "--ort", "1.24.4", "--cross"),
        *("--config", str(ROOT / "pyproject.toml")),  # the corpus test passes its own after
    ]
    assert main(["matrix", *common, *args]) == 1  # something unexpected: the point
    report = read_json(out / "matrix.json")
    options = run_options(parsed(*common, *args))
    report = replace(report, run={"options": options, **report.run})
    return _printed(report)


def _printed(report: Report) -> list[str]:
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        finish(report, [])
    lines = buffer.getvalue().splitlines()
    return [line.strip() for line in lines if line.startswith("    nox -s repro -- ")]


def run_printed(command: str, shared_state: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """`nox -s repro -- ARGS` as nox runs it: `python -m compat repro ARGS`, here."""
    prefix = "nox -s repro -- "
    assert command.startswith(prefix), command
    args = shlex.split(command[len(prefix) :])
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "compat",
            "repro",
            *args,
            "--state-dir",
            str(shared_state),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path.cwd(),
        timeout=600,
    )


@pytest.mark.envs
def test_a_corpus_failure_reproduces_from_its_printed_command(
    tmp_path: Path, shared_state: Path
) -> None:
    """A corpus of its own (--corpus) and a config of its own (--config) with a known
    failure: the wrong oracle fails, the claimed bug xpasses; the command reproduces both."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "wrong_oracle.py").write_text(WRONG_ORACLE)
    config = tmp_path / "ci" / "pyproject.toml"
    config.parent.mkdir()
    config.write_text((ROOT / "pyproject.toml").read_text() + CLAIMED_BUG)
    (command,) = printed_commands(
        shared_state, tmp_path / "out", ["--config", str(config), "--corpus", str(corpus)]
    )
    assert f"--config {config}" in command and f"--corpus {corpus}" in command

    done = run_printed(command, shared_state, tmp_path / "repro")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "== wrong_oracle.add_one · reference: fail" in done.stdout, done.stdout
    assert "== wrong_oracle.add_one · checker: xpass: passes although known" in done.stdout
    script = tmp_path / "repro" / "repro" / CELL.id / "wrong_oracle.add_one.reference"
    assert (script / "repro.py").is_file()

    # the same command without the run's options does not find the case
    bare = command.split(" --config ")[0]
    done = run_printed(bare, shared_state, tmp_path / "bare")
    assert done.returncode == 2
    assert "--cases 'wrong_oracle.add_one' matches no case" in done.stderr


@pytest.mark.envs
def test_a_drop_in_failure_reproduces_from_its_printed_command(
    tmp_path: Path, shared_state: Path
) -> None:
    """A drop-in folder (with a space in its name) whose model breaks its own output
    annotation in the second of its two runs: the command carries --cases-dir."""
    models = tmp_path / "my models"
    models.mkdir()
    example = ROOT / "examples" / "models" / "wrong_output_annotation.onnx"
    (models / "wrong_output_annotation.onnx").write_bytes(example.read_bytes())
    (models / "layer_norm.onnx").write_bytes((example.parent / "layer_norm.onnx").read_bytes())
    x = np.load(example.parent / "layer_norm.npz")["x"]
    np.savez(models / "layer_norm.npz", x=x)
    np.savez(models / "layer_norm.1.npz", x=np.concatenate([x, x]))  # another batch size
    (command,) = printed_commands(
        shared_state, tmp_path / "out", ["--cases-dir", str(models), "--cases", "my_models.*"]
    )
    assert command.endswith(
        f"--cases my_models.wrong_output_annotation --cases-dir {shlex.quote(str(models))}"
    )

    done = run_printed(command, shared_state, tmp_path / "repro")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "== my_models.wrong_output_annotation · annotations: fail" in done.stdout, done.stdout
    assert "1 unexpected" in done.stdout.splitlines()[-1]
    report = json.loads((tmp_path / "out" / "matrix.json").read_text())
    layer_norm = {
        r["check"]: r["outcome"] for r in report["results"] if r["case"] == "my_models.layer_norm"
    }
    assert layer_norm["annotations"] == "pass"  # both of its runs hold


def test_the_repro_command_of_a_weekly_cell_pins_onnx_weekly_and_rebuilds_the_same_cell() -> None:
    from compat.core.outcomes import CellRecord, CellState
    from compat.core.printed import repro_command
    from compat.followup.repro import parse_pins, repro_cell
    from compat.plan.config import load_config
    from compat.plan.matrix import expand

    config = load_config(ROOT / "pyproject.toml")
    version = "1.24.0.dev20261026"
    (cell,) = expand(config, (version,), ("1.24.4",), True, (), (), {version: "onnx-weekly"}).cells
    record = CellRecord(
        id=cell.id,
        onnx=cell.onnx,
        onnxruntime=cell.onnxruntime,
        state=CellState.READY,
        requirements=cell.requirements,
    )
    command = repro_command(record, ["pad_pads_from_constant.tensor"])
    args = shlex.split(command)[4:]
    assert args[:2] == [f"onnx-weekly=={version}", "onnxruntime==1.24.4"]
    again = repro_cell(parse_pins(args[:2], None), config)
    assert (again.id, again.requirements) == (cell.id, cell.requirements)


def test_a_repro_cell_installs_from_the_axes_own_indexes_and_writes_them_without_credentials(
    tmp_path: Path,
) -> None:
    from compat.followup.repro import parse_pins, repro_cell
    from compat.plan.config import load_config
    from compat.plan.index_config import shown
    from compat.plan.matrix import expand

    nightly = "https://bob:s3cret@nightly.example/simple"
    (tmp_path / "pyproject.toml").write_text(
        '[tool.compat.onnx]\nversions = ["1.18.0"]\npair = "1.24.4"\n'
        f'[tool.compat.onnxruntime]\nversions = ["1.24.4"]\npair = "1.18.0"\n'
        f'extra-index-url = "{nightly}"\n'
    )
    config = load_config(tmp_path / "pyproject.toml")
    (cell,) = expand(config, ("1.18.0",), ("1.24.4",), True).cells
    again = repro_cell(parse_pins(["onnx==1.18.0", "onnxruntime==1.24.4"], None), config)
    assert again.requirements == cell.requirements
    assert again.requirements.extra_index_urls == (nightly,)
    lines = again.requirements.index_lines(shown)
    assert lines == ["--extra-index-url https://nightly.example/simple"]
