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


def test_an_existing_workflow_is_kept_and_a_local_wheel_is_not_sent_to_ci(tmp_path: Path) -> None:
    wheel = tmp_path / "onnx_compat-0.1.0-py3-none-any.whl"
    wheel.write_text("")
    said = write_workflow(tmp_path, str(wheel), "3.11")
    assert "installs onnx-compat from the package index" in said[1]
    assert 'ONNX_COMPAT: "onnx-compat"' in (tmp_path / WORKFLOW).read_text()
    assert write_workflow(tmp_path, "x", "3.11") == [f"{WORKFLOW}: exists already; left as it is"]
