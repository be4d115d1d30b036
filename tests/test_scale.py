"""Fan-out and follow-up: shards, merge, the CI plan and workflow, repro pins, bisection."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from compat.cli.main import main
from compat.core.errors import UsageError
from compat.core.report import write_json
from compat.followup.bisection import bisect
from compat.followup.repro import parse_pins, repro_cell
from compat.plan.config import load_config
from compat.plan.matrix import expand, parse_shard, select_shard
from compat.state.merge import merge
from tests.conftest import ROOT
from tests.test_report import sample_report

CONFIG = load_config(ROOT / "pyproject.toml")


@pytest.mark.parametrize("n", [1, 2, 3, 5, 30])
def test_shards_cover_every_cell_exactly_once(n: int) -> None:
    plan = expand(CONFIG)
    shards = [select_shard(plan, k, n).cells for k in range(1, n + 1)]
    flat = [c for shard in shards for c in shard]
    assert sorted(c.id for c in flat) == sorted(c.id for c in plan.cells)
    assert max(map(len, shards)) - min(map(len, shards)) <= 1  # balanced


@pytest.mark.parametrize("text", ["0/3", "4/3", "1", "a/b", "1/0"])
def test_a_bad_shard_is_a_usage_error(text: str) -> None:
    with pytest.raises(UsageError, match="--shard"):
        parse_shard(text)


def test_plan_json_is_a_ci_job_matrix(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--config", str(ROOT / "pyproject.toml"), "--json", "--shards", "4"]) == 0
    include = json.loads(capsys.readouterr().out)["include"]
    assert [item["shard"] for item in include] == ["1/4", "2/4", "3/4", "4/4"]
    cells = [c for item in include for c in item["cells"].split(",")]
    assert sorted(cells) == sorted(c.id for c in expand(CONFIG).cells)
    assert (
        main(["plan", "--config", str(ROOT / "pyproject.toml"), "--json", "--onnx", "1.18.0"]) == 0
    )
    first = json.loads(capsys.readouterr().out)["include"][0]
    assert first == {"cell": "onnx1.18.0-ort1.24.4", "onnx": "1.18.0", "onnxruntime": "1.24.4"}


def split(tmp_path: Path) -> list[Path]:
    """The sample report cut into two shards, as two machines would write them."""
    whole = sample_report()
    plan_axes = {name: list(ids) for name, ids in whole.axes.items()}
    dirs = []
    for k, cells in enumerate([whole.cells[:2], whole.cells[2:]], start=1):
        ids = {c.id for c in cells}
        shard = replace(
            whole,
            cells=cells,
            results=tuple(r for r in whole.results if r.cell in ids),
            axes={n: tuple(i for i in a if i in ids) for n, a in whole.axes.items()},
            run={
                "plan_cells": [c.id for c in whole.cells],
                "plan_axes": plan_axes,
                "shard": f"{k}/2",
                "generator_onnx": "1.23.2",
            },
        )
        dirs.append(tmp_path / f"shard{k}")
        write_json(shard, dirs[-1] / "matrix.json")
    return dirs


def test_merged_shards_equal_the_whole(tmp_path: Path) -> None:
    merged = merge(list(reversed(split(tmp_path))))  # order of arguments does not matter
    whole = sample_report()
    assert (merged.cells, merged.results, merged.axes) == (whole.cells, whole.results, whole.axes)


def test_merge_refuses_a_cell_twice_and_a_foreign_shard(tmp_path: Path) -> None:
    one, two = split(tmp_path)
    with pytest.raises(UsageError, match="is also in"):
        merge([one, one])
    foreign = json.loads((two / "matrix.json").read_text())
    foreign["run"]["generator_onnx"] = "1.22.0"
    (two / "matrix.json").write_text(json.dumps(foreign))
    with pytest.raises(UsageError, match="not a shard of the same run"):
        merge([one, two])
    with pytest.raises(UsageError, match="no shard report here"):
        merge([tmp_path / "nowhere"])


def test_pins_come_from_the_command_line_and_a_requirements_file(tmp_path: Path) -> None:
    reqs = tmp_path / "ci-requirements.txt"
    reqs.write_text("# CI pins\nonnxruntime==1.22.1\nnumpy==1.26.4  # old\nrich>=13\n-e .\n")
    pins = parse_pins(["onnx==1.18.0"], reqs)
    assert (pins.onnx, pins.onnxruntime, pins.extra) == ("1.18.0", "1.22.1", ("numpy==1.26.4",))
    cell = repro_cell(pins, CONFIG)
    assert cell.id.startswith("onnx1.18.0-ort1.22.1-")  # its own environment: extra pins
    assert "numpy==1.26.4" in cell.requirements.pins
    alone = repro_cell(parse_pins(["onnx==1.18.0"], None), CONFIG)
    assert alone.id == "onnx1.18.0-ort1.24.4"  # the unpinned package: as in the matrix
    with pytest.raises(UsageError, match="pin releases exactly"):
        parse_pins(["onnx>=1.18"], None)
    with pytest.raises(UsageError, match="pin onnx or onnxruntime"):
        parse_pins([], None)


@pytest.mark.parametrize("n", [2, 3, 7, 16, 33, 100])
def test_bisect_finds_the_change_within_log2_n_plus_2_probes(n: int) -> None:
    versions = [f"1.{i}.0" for i in range(n)]
    for change in range(1, n):
        probed: list[str] = []

        def probe(version: str, change: int = change, probed: list[str] = probed) -> str:
            probed.append(version)
            return "xfail" if versions.index(version) < change else "pass"

        found = bisect(versions, probe)
        assert (found.last, found.first) == (versions[change - 1], versions[change])
        assert len(probed) <= math.ceil(math.log2(n)) + 2 == found.bound
        assert found.verdict().endswith(f"fixed in {versions[change]}")


def test_bisect_skips_releases_that_do_not_install() -> None:
    versions = ["1.0", "1.1", "1.2", "1.3", "1.4"]

    def probe(version: str) -> str | None:
        return None if version in ("1.2", "1.0") else ("pass" if version < "1.3" else "fail")

    found = bisect(versions, probe)
    assert (found.last, found.first) == ("1.1", "1.3")
    assert found.verdict() == "last good 1.1, first bad 1.3"
    assert found.skipped == ["1.0", "1.2"]


def test_bisect_says_when_nothing_changes() -> None:
    with pytest.raises(UsageError, match="both pass: no change between them to find; give "):
        bisect(["1.0", "1.1", "1.2"], lambda v: "pass")


@pytest.mark.subprocess
def test_the_workflow_is_a_valid_github_actions_workflow() -> None:
    workflow = ROOT / ".github" / "workflows" / "matrix.yml"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.github-workflows",
            str(workflow),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    text = workflow.read_text()
    assert "python -m compat plan --json --shards" in text
    assert "nox -s matrix -- --shard ${{ matrix.shard }}" in text
    assert "nox -s merge -- shards/*" in text
