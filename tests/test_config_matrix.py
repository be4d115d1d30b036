"""[tool.compat] loading and the expansion of axes into cells."""

from __future__ import annotations

from pathlib import Path

import pytest

from compat.config import load_config
from compat.errors import ConfigError, UsageError
from compat.matrix import expand, parse_version_list, select_cells
from tests.conftest import ROOT

CONFIG = load_config(ROOT / "pyproject.toml")

MINIMAL = """
[tool.compat.onnx]
versions = ["1.18.0", "1.21.0"]
pair = "1.24.4"

[tool.compat.onnxruntime]
versions = ["1.17.3", "1.24.4"]
pair = "1.23.2"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "pyproject.toml"
    path.write_text(text)
    return path


def test_the_default_matrix_spans_every_minor_release_from_the_brief() -> None:
    onnx_minors = {v.rsplit(".", 1)[0] for v in CONFIG.onnx.versions}
    ort_minors = {v.rsplit(".", 1)[0] for v in CONFIG.onnxruntime.versions}
    assert {f"1.{m}" for m in range(14, 24)} <= onnx_minors
    assert {f"1.{m}" for m in range(15, 33)} <= ort_minors


def test_axes_pair_each_release_with_the_other_package_and_share_no_cell_twice() -> None:
    plan = expand(CONFIG, onnx=("1.18.0", "1.23.2"), ort=("1.17.3", "1.24.4"))
    assert [c.id for c in plan.axes["onnx"]] == ["onnx1.18.0-ort1.24.4", "onnx1.23.2-ort1.24.4"]
    assert [c.id for c in plan.axes["onnxruntime"]] == [
        "onnx1.23.2-ort1.17.3",
        "onnx1.23.2-ort1.24.4",
    ]
    assert len(plan.cells) == 3  # onnx1.23.2-ort1.24.4 is on both axes, built once


def test_cross_runs_the_product() -> None:
    plan = expand(CONFIG, onnx=("1.18.0", "1.21.0"), ort=("1.17.3", "1.24.4"), cross=True)
    assert [c.id for c in plan.cells] == [
        "onnx1.18.0-ort1.17.3",
        "onnx1.18.0-ort1.24.4",
        "onnx1.21.0-ort1.17.3",
        "onnx1.21.0-ort1.24.4",
    ]
    assert set(plan.axes) == {"cell"}


def test_declared_constraints_apply_only_inside_their_range() -> None:
    plan = expand(CONFIG, onnx=("1.23.2",), ort=("1.18.0", "1.18.1"), cross=True)
    old, new = plan.cells
    assert "numpy<2" in old.requirements
    assert "numpy<2" not in new.requirements
    assert new.requirements[:2] == ("onnx==1.23.2", "onnxruntime==1.18.1")


def test_cells_select_by_glob_and_a_glob_matching_nothing_is_a_usage_error() -> None:
    plan = expand(CONFIG)
    picked = select_cells(plan, ("onnx1.18*",))
    assert [c.id for c in picked.cells] == ["onnx1.18.0-ort1.24.4"]
    with pytest.raises(UsageError, match="matches no cell"):
        select_cells(plan, ("onnx9*",))


def test_a_version_list_rejects_junk_naming_the_flag() -> None:
    assert parse_version_list("1.18.0, 1.21.0", "--onnx") == ("1.18.0", "1.21.0")
    with pytest.raises(UsageError, match=r"--ort: 'latest' is not a version"):
        parse_version_list("1.17.3,latest", "--ort")


def test_a_minimal_config_loads(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, MINIMAL))
    assert config.onnx.pair == "1.24.4"
    assert config.timeout == 60
    assert config.constraints == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (MINIMAL + "\n[tool.compat]\njobs = 3\n", "unknown key 'jobs' in [tool.compat]"),
        (MINIMAL.replace('pair = "1.24.4"', 'pair = "1.24.4"\npin = 1'), "unknown key 'pin'"),
        (MINIMAL.replace('"1.21.0"', '"newest"'), "'newest' is not a version"),
        (MINIMAL.replace('pair = "1.23.2"', ""), "is missing 'pair'"),
        ("[tool.other]\n", "no [tool.compat] table"),
        (
            MINIMAL
            + '[[tool.compat.constraints]]\npackage = "numpy"\nversions = ""\nrequires = []\n',
            "package 'numpy' must be one of",
        ),
        ("[tool.compat\n", "cannot read configuration"),
    ],
)
def test_bad_configuration_is_one_clear_error_naming_the_file(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert message in str(info.value)
    assert str(path) in str(info.value)
    assert "\n" not in str(info.value)
