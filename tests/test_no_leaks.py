"""A default matrix leaves the temp folder as it found it (issue #31): every folder a
check, a worker or a run makes is removed when it is done."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from compat.plan.config import load_config
from compat.plan.matrix import expand
from tests.conftest import ROOT

pytestmark = pytest.mark.envs


def test_a_default_matrix_leaves_the_temp_folder_and_the_state_s_work_folder_as_it_found_them(
    tmp_path: Path, shared_state: Path
) -> None:
    scratch = tmp_path / "tmp"  # the run's TMPDIR: every process of the run inherits it
    scratch.mkdir()
    (scratch / "someone-else.txt").write_text("not ours")
    work = shared_state / "work"
    before = sorted(work.iterdir()) if work.exists() else []
    config = ROOT / "pyproject.toml"
    out = tmp_path / "out"
    places = ["--config", str(config), "--state-dir", str(shared_state), "--out", str(out)]
    done = subprocess.run(
        [sys.executable, "-m", "compat", "matrix", *places, "--fresh"],  # --fresh: every check runs
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(scratch)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    cells = json.loads((out / "matrix.json").read_text())["cells"]
    default = expand(load_config(config)).cells
    assert sorted(c["id"] for c in cells) == sorted(c.id for c in default)  # the default plan
    assert {c["state"] for c in cells} == {"ready"}  # every cell ran its checks
    assert sorted(p.name for p in scratch.iterdir()) == ["someone-else.txt"]
    assert sorted(work.iterdir()) == before
