"""Ctrl-C and CI cancels (compat/execute/interrupt.py): the first SIGINT or SIGTERM kills the
workers, keeps every finished result, writes the cells done and exits 128 + the signal;
a rerun computes the rest (real host process, real cells)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from compat.corpus.make import model, tensor
from tests.conftest import ROOT

pytestmark = [pytest.mark.envs, pytest.mark.subprocess]


def project(tmp_path: Path) -> Path:
    """A drop-in model and a command that hangs on its first run (its mark is outside the
    project: each run's copy of the tree starts without what the last one left)."""
    import onnx
    from onnx import helper

    root = tmp_path / "project"
    (root / "models").mkdir(parents=True)
    relu = model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [tensor("x", np.float32, [2])],
        [tensor("y", np.float32, [2])],
    )
    onnx.save(relu, str(root / "models" / "relu.onnx"))
    (root / "pyproject.toml").write_text(
        '[tool.compat]\ncorpus = "none"\ncases-dirs = ["models"]\n'
        f'run = ["slow=test -f {tmp_path}/seen || {{ touch {tmp_path}/seen; sleep 120.0417; }}"]\n'
        '[tool.compat.onnx]\nversions = ["1.23.2"]\npair = "1.24.4"\n'
        '[tool.compat.onnxruntime]\nversions = ["1.24.4"]\npair = "1.23.2"\n'
    )
    return root


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_the_first_signal_stops_the_run_keeps_what_finished_and_a_rerun_completes_it(
    tmp_path: Path, shared_state: Path, signum: int
) -> None:
    root = project(tmp_path)
    command = [
        sys.executable,
        "-m",
        "compat",
        "matrix",
        "--state-dir",
        str(shared_state),
        "--axis",
        "onnx",
        "--jobs",
        "1",
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    host = subprocess.Popen(
        command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 120
    while not (tmp_path / "seen").exists() and time.monotonic() < deadline:
        time.sleep(0.1)  # the command has started: it now sleeps
    assert (tmp_path / "seen").exists(), host.communicate()
    host.send_signal(signum)
    out, err = host.communicate(timeout=30)  # (measured: well under 2 s)
    assert host.returncode == 128 + signum, out + err
    name = signal.Signals(signum).name
    assert f"onnx-compat: stopped by {name}: 0 of 1 cells done" in err
    report = json.loads((root / "reports" / "matrix.json").read_text())
    assert report["run"]["interrupted"]["signal"] == signum
    # no worker is left behind
    leftover = subprocess.run(["pgrep", "-f", "sleep 120.0417"], capture_output=True, text=True)
    assert leftover.returncode == 1, leftover.stdout  # pgrep's "none"; its own line is no match
    again = subprocess.run(
        command, cwd=root, env=env, capture_output=True, text=True, check=False, timeout=300
    )
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    report = json.loads((root / "reports" / "matrix.json").read_text())
    assert "interrupted" not in report["run"]
    assert {r["case"] for r in report["results"]} == {"models.relu", "command.slow"}


def test_an_allocation_bomb_is_a_crash_at_the_memory_limit_and_its_neighbours_unchanged(
    tmp_path: Path, shared_state: Path
) -> None:
    """ConstantOfShape of 40000×40000 floats (6.4 GB) under `--memory 2`: every check that
    runs it is a `crash` saying so, the host and the model beside it are untouched."""
    import onnx
    from onnx import helper, numpy_helper

    from compat.cli.main import main

    folder = tmp_path / "bombs"
    folder.mkdir()
    shape = numpy_helper.from_array(np.array([40000, 40000], np.int64), "shape")
    bomb = model(
        [
            helper.make_node("ConstantOfShape", ["shape"], ["big"]),
            helper.make_node("ReduceSum", ["big"], ["s"], keepdims=0),
            helper.make_node("Add", ["x", "s"], ["y"]),
        ],
        [tensor("x", np.float32, [])],
        [tensor("y", np.float32, [])],
        [shape],
    )
    onnx.save(bomb, str(folder / "bomb.onnx"))
    relu = model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [tensor("x", np.float32, [2])],
        [tensor("y", np.float32, [2])],
    )
    onnx.save(relu, str(folder / "relu.onnx"))
    out = tmp_path / "out"
    code = main(
        [
            "matrix",
            "--config",
            str(ROOT / "pyproject.toml"),
            "--state-dir",
            str(shared_state),
            "--out",
            str(out),
            "--cases-dir",
            str(folder),
            "--cases",
            "bombs.*",
            "--onnx",
            "1.23.2",
            "--ort",
            "1.24.4",
            "--cross",
            "--memory",
            "2",
            "--reruns",
            "0",
            "--fresh",
        ]
    )
    report = json.loads((out / "matrix.json").read_text())
    got = {(r["case"], r["check"]): r for r in report["results"]}
    assert code == 1
    assert got["bombs.bomb", "ort_run"]["outcome"] == "crash"
    assert "memory limit" in got["bombs.bomb", "ort_run"]["detail"]
    assert all(r["outcome"] == "pass" for (case, _), r in got.items() if case == "bombs.relu")
