"""compat/adopt/ci.py: the GitHub workflow `init --ci github` writes (its commands run
for real in tests/test_adopt.py)."""

from __future__ import annotations

import re
from pathlib import Path

from compat.adopt.ci import WORKFLOW, write_workflow


def test_the_workflow_plans_shards_runs_each_and_merges_them(tmp_path: Path) -> None:
    said = write_workflow(tmp_path, 'onnx-compat==0.2 "quoted"', "3.12", shards=3)
    assert said[0].startswith(".github/workflows/onnx-compat.yml: written: 3 shards")
    text = (tmp_path / WORKFLOW).read_text()
    assert not re.search(r"@[A-Z]+@", text)  # every placeholder is filled in
    assert 'ONNX_COMPAT: "onnx-compat==0.2 \\"quoted\\""' in text
    assert 'PYTHON_VERSION: "3.12"' in text and "inputs.shards || '3'" in text
    assert 'onnx-compat plan --json --shards "$SHARDS"' in text
    assert 'onnx-compat matrix --offline --shard "$SHARD" --out "reports/$name"' in text
    assert "onnx-compat merge shards/* --out reports" in text
    assert '"$GITHUB_STEP_SUMMARY"' in text


def test_an_existing_workflow_is_kept_and_a_wheel_given_is_the_one_ci_installs(
    tmp_path: Path,
) -> None:
    elsewhere = tmp_path / "built" / "onnx_compat-0.1.0-py3-none-any.whl"
    elsewhere.parent.mkdir()
    elsewhere.write_bytes(b"the wheel")
    project = tmp_path / "project"
    project.mkdir()
    said = write_workflow(project, str(elsewhere), "3.11")
    copied = ".github/onnx-compat/onnx_compat-0.1.0-py3-none-any.whl"
    assert f"{WORKFLOW}: installs {copied}, copied from {elsewhere}: commit it" in said
    assert (project / copied).read_bytes() == b"the wheel"
    assert f'ONNX_COMPAT: "{copied}"' in (project / WORKFLOW).read_text()
    assert write_workflow(project, "x", "3.11") == [f"{WORKFLOW}: exists already; left as it is"]

    inside = tmp_path / "inside"
    (inside / "dist").mkdir(parents=True)
    (inside / "dist" / elsewhere.name).write_bytes(b"the wheel")
    said = write_workflow(inside, str(inside / "dist" / elsewhere.name), "3.11")
    assert (
        f"{WORKFLOW}: installs dist/{elsewhere.name}: commit it, the jobs see the repository only"
        in said
    )
    assert f'ONNX_COMPAT: "dist/{elsewhere.name}"' in (inside / WORKFLOW).read_text()
