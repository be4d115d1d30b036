"""A real run on several Pythons: `matrix --python …` builds each cell from its own
interpreter, no-wheel cells say why and keep the exit code 0, and a cell's results on
another Python agree with 3.11's on the checks that do not depend on Python.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from tests.conftest import ROOT

#: checks of the onnx and onnxruntime code itself: the interpreter does not change them
SAME_ON_EVERY_PYTHON = ("checker", "shape_inference", "ort_run", "reference")
FAMILIES = "pad_pads_from_constant.*,squeeze_empty_axes.*,split_empty_split.*"


@pytest.mark.envs
def test_a_run_on_three_pythons_agrees_with_3_11_and_no_wheel_is_not_a_failure(
    tmp_path: Path, shared_state: Path
) -> None:
    out = tmp_path / "reports"
    command = [
        sys.executable,
        "-m",
        "compat",
        "matrix",
        "--python",
        "3.10,3.11,3.13",
        "--python-releases",
        "all",
        "--onnx",
        "1.16.2,1.18.0",
        "--ort",
        "1.22.1",
        "--cases",
        FAMILIES,
        "--out",
        str(out),
        "--state-dir",
        str(shared_state),
    ]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((out / "matrix.json").read_text())
    cells = {c["id"]: c for c in report["cells"]}
    # onnx 1.16.2 has no wheel for 3.13: n/a, with the reason, and nothing else is
    lacking = {i for i, c in cells.items() if c["state"] == "no-wheel"}
    expected = {i for i in cells if i.startswith("py3.13-onnx1.16.2-")}
    assert lacking == expected and len(expected) == 1, {i: c["detail"] for i, c in cells.items()}
    assert "onnx 1.16.2 has no wheel for CPython 3.13" in cells[next(iter(lacking))]["detail"]
    assert all(c["state"] == "ready" for i, c in cells.items() if i not in lacking)
    for cell_id, cell in cells.items():
        if cell["state"] == "ready":  # built from that Python's interpreter
            assert cell["python"].startswith(cell_id[2:].split("-", 1)[0] + "."), cell_id
    seen: dict[tuple[str, str, str, str], dict[str, str]] = defaultdict(dict)
    for r in report["results"]:
        if r["check"] in SAME_ON_EVERY_PYTHON:
            python, pins = r["cell"].split("-", 1)
            seen[(pins, r["case"], r["check"], "")][python] = r["outcome"]
    compared = 0
    for key, by_python in seen.items():
        if "py3.11" in by_python and len(by_python) > 1:
            assert set(by_python.values()) == {by_python["py3.11"]}, (key, by_python)
            compared += 1
    assert compared > 50


@pytest.mark.envs
def test_by_default_each_other_python_runs_its_newest_pair_and_the_reports_say_so(
    tmp_path: Path, shared_state: Path
) -> None:
    """`--python 3.10,3.11,3.13` without `--python-releases all`: every release on 3.11
    (as many wheels as 3.10, and the Python running), one cell on each of the others,
    and every report says which is which."""
    out = tmp_path / "reports"
    command = [
        sys.executable,
        "-m",
        "compat",
        "matrix",
        "--python",
        "3.10,3.11,3.13",
        "--onnx",
        "1.16.2,1.18.0",
        "--ort",
        "1.22.1",
        "--cases",
        FAMILIES,
        "--out",
        str(out),
        "--state-dir",
        str(shared_state),
    ]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((out / "matrix.json").read_text())
    ids = sorted(c["id"] for c in report["cells"])
    # the onnx axis pairs onnxruntime 1.24.4 (the config's), 3.10 has none: 1.22.1 there
    assert ids == sorted(
        [
            "py3.11-onnx1.16.2-ort1.24.4",
            "py3.11-onnx1.18.0-ort1.24.4",
            "py3.11-onnx1.23.2-ort1.22.1",
            "py3.10-onnx1.23.2-ort1.22.1",
            "py3.13-onnx1.23.2-ort1.24.4",
        ]
    )
    assert all(c["state"] == "ready" for c in report["cells"])
    assert "Python 3.13 (its newest pair only: onnx 1.23.2 with ort 1.24.4)" in done.stdout
    page = (out / "pythons.md").read_text()
    assert "on Python 3.11 and its newest pair on each other Python" in page
    outcomes: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for r in report["results"]:
        if r["check"] in SAME_ON_EVERY_PYTHON and "onnx1.23.2-ort1.22.1" in r["cell"]:
            outcomes[(r["case"], r["check"], r.get("variant", ""))].add(r["outcome"])
    assert outcomes and all(len(seen) == 1 for seen in outcomes.values()), outcomes
