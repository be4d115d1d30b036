"""compat/core/versions.py's `exact_pin`, read by packaging where a cell's pins were
split on "==" by hand: the probe's pins, repro's printed pins and a cell id's tag."""

from __future__ import annotations

import pytest

from compat.core.install import InstallRequest
from compat.core.versions import exact_pin
from compat.execute.probe import pins


@pytest.mark.parametrize(
    ("text", "pin"),
    [
        ("onnx==1.18.0", ("onnx", "1.18.0")),
        ("ml_dtypes == 0.5.1", ("ml_dtypes", "0.5.1")),
        ("onnx==1.18.*", None),  # a wildcard is a range
        ("onnx>=1.18", None),
        ("onnx>=1.18,==1.18.0", None),
        ("pkg[x]==1.0", None),
        ("numpy==1.26.4; python_version < '3.12'", None),  # was ("numpy", "1.26.4; ...")
        ("numpy", None),
        ("--project /x/y[test]", None),
        ("-e /x/y", None),
    ],
)
def test_only_a_plain_exact_pin_is_one(text: str, pin: tuple[str, str] | None) -> None:
    assert exact_pin(text) == pin


def test_the_probe_checks_the_pins_a_cell_asked_for_and_nothing_else() -> None:
    requirements = (
        "onnx==1.18.0",
        "ONNXRuntime==1.22.1",
        "numpy",
        "protobuf>=5",
        "numpy==2.0.0; python_version >= '3.13'",
        "--project /x",
    )
    request = InstallRequest.from_strings(requirements)
    assert pins(request) == [("onnx", "1.18.0"), ("onnxruntime", "1.22.1")]
