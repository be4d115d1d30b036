"""State heals (issue 34): an environment record written by an interrupted or failed
probe is never trusted. The attack: a first run stopped by SIGTERM while it probed new
environments left two cells recorded as `import-error: (no message)`, and every later
run, --fresh included, reported them broken (exit 1), though both imported fine."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from compat.core.install import InstallRequest
from compat.core.outcomes import CellState
from compat.execute.probe import KILLED, answered, probe
from compat.plan.matrix import Cell
from compat.state import cellcode
from tests.conftest import ROOT

CELL = "onnx1.20.1-ort1.24.4"
ARGS = ["--onnx", "1.20.1", "--ort", "1.24.4", "--cells", CELL, "--cases", "pad_pads*"]


def _command(state: Path, out: Path) -> list[str]:
    run = ["matrix", *ARGS, "--state-dir", str(state), "--out", str(out)]
    return [sys.executable, "-m", "compat", *run]


def _matrix(state: Path, out: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(_command(state, out), cwd=ROOT, text=True, capture_output=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def _probing(tmp: Path) -> bool:
    return any(p.name.startswith("compat-probe-") for p in tmp.iterdir())


@pytest.mark.envs
def test_a_run_stopped_while_it_probes_is_followed_by_a_clean_run(tmp_path: Path) -> None:
    """SIGTERM to a first run the moment it probes its new environment (its probe's
    scratch folder appears in the run's TMPDIR): exit 143, nothing recorded of the
    probe; the next run, same state, exits 0 with the cell ready."""
    state, tmp, out = tmp_path / "state", tmp_path / "tmp", tmp_path / "reports"
    tmp.mkdir()
    environ = {**os.environ, "TMPDIR": str(tmp)}
    run = subprocess.Popen(
        _command(state, out),
        cwd=ROOT,
        env=environ,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.monotonic() + 600
    while not _probing(tmp) and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    assert run.poll() is None, "the run ended before it probed"
    os.killpg(run.pid, signal.SIGTERM)
    printed, _ = run.communicate(timeout=120)
    assert run.returncode == 143, printed
    marker = state / "envs" / CELL / "compat-env.json"
    if marker.exists():  # what was recorded is an answer of the probe, not its death
        saved = json.loads(marker.read_text())
        assert saved["record"]["state"] == "ready", saved["record"]
    _matrix(state, out)
    cells = json.loads((out / "matrix.json").read_text())["cells"]
    assert [(c["id"], c["state"]) for c in cells] == [(CELL, "ready")]


@pytest.mark.envs
def test_a_cell_recorded_broken_by_its_import_is_probed_again(tmp_path: Path) -> None:
    """What an earlier onnx-compat left after such a stop: the marker of a good
    environment saying `import-error: (no message)`. The next run probes it again and
    runs it (exit 0); the marker now holds the probe's answer."""
    state = tmp_path / "state"
    _matrix(state, tmp_path / "first")
    marker = state / "envs" / CELL / "compat-env.json"
    saved = json.loads(marker.read_text())
    saved["record"].update(state="import-error", detail="(no message)", packages={})
    marker.write_text(json.dumps(saved))
    out = tmp_path / "second"
    _matrix(state, out)
    assert json.loads(marker.read_text())["record"]["state"] == "ready"
    assert [c["state"] for c in json.loads((out / "matrix.json").read_text())["cells"]] == ["ready"]


@pytest.mark.subprocess
def test_a_probe_killed_by_a_signal_says_so_and_is_no_answer(tmp_path: Path) -> None:
    """A probe whose interpreter dies by SIGTERM (here: a stand-in that kills itself)
    is an import-error for this run that names the signal, never "(no message)", and
    is not kept; one that exits 1 silently says so."""
    cell = Cell("1.20.1", "1.24.4", InstallRequest(("onnx==1.20.1", "onnxruntime==1.24.4")))
    code = cellcode.stage(tmp_path / "code")
    for body, says, kept in (
        ("import os, signal; os.kill(os.getpid(), signal.SIGTERM)", f"{KILLED}SIGTERM", False),
        ("raise SystemExit(1)", "the import probe exited 1 and printed nothing", True),
    ):
        python = tmp_path / "python"
        python.write_text(f"#!{sys.executable}\n{body}\n")
        python.chmod(0o755)
        record = probe(cell, python, code)
        assert record.state is CellState.IMPORT_ERROR
        assert record.detail == says and answered(record) is kept
