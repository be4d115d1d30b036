"""init pairs each axis with a release that installs beside the project's own pins: a
converter library's `protobuf==3.20.2` excludes onnxruntime >= 1.27 and onnx >= 1.18,
so pairing with the newest would make every cell of an axis an install-error (issue 32,
onnxconverter-common 1.14.0). Asks the real package index through uv's resolver."""

from __future__ import annotations

from pathlib import Path

import pytest

from compat.adopt import InitOptions, init
from compat.adopt.pins import fitting_pair, pair_fits
from compat.execute.installer import clash
from compat.plan.config import load_config


def test_no_declared_pin_asks_nothing() -> None:
    assert pair_fits({"onnx": ">=1.16", "numpy": ""}, clash) is None
    assert pair_fits({"protobuf": "==3.20.2"}, None) is None


def test_the_newest_that_fits_and_what_was_passed_over() -> None:
    def no_newer_than_1_26(requirements: list[str]) -> str:
        release = requirements[0].split("==")[1]
        return "" if release <= "1.26.0" else f"{requirements[0]} requires protobuf>=4.25.8"

    candidates = ["1.24.4", "1.26.0", "1.27.0", "1.32.0"]
    pins = {"protobuf": "==3.20.2"}
    pair, said = fitting_pair("onnxruntime", candidates, pins, no_newer_than_1_26)
    assert pair == "1.26.0"
    assert said == "1.32.0, 1.27.0: onnxruntime==1.32.0 requires protobuf>=4.25.8"


@pytest.mark.subprocess  # uv's resolver on the package index
def test_init_pairs_each_axis_with_a_release_the_projects_pin_allows(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "conv"\nversion = "1"\n'
        'dependencies = ["numpy", "onnx", "packaging", "protobuf==3.20.2"]\n'
    )
    said = init(tmp_path, InitOptions(python="none"), clash=clash)
    config = load_config(tmp_path / "pyproject.toml")
    ort_pair, onnx_pair = config.onnx.pair, config.onnxruntime.pair
    assert clash([f"onnxruntime=={ort_pair}", "protobuf==3.20.2"]) == ""
    assert clash([f"onnx=={onnx_pair}", "protobuf==3.20.2"]) == ""
    assert clash(["onnxruntime==1.32.0", "protobuf==3.20.2"]).startswith(
        "onnxruntime>=1.32.0 requires protobuf>=4.25.8"
    )
    passed = [line for line in said if line.startswith("    (passed over, they do not install")]
    assert len(passed) == 2 and "protobuf==3.20.2" in " ".join(passed), said
