"""What an attack run still found in the inputs (issue 34): each is a one-line error
(exit 2) or an honest outcome, never a traceback nor a silent pick — a dangling or
looping link among the drop-in models, a folder or FIFO named x.onnx, `--with numpy`
with no release, a generated input too large to hold, a repro's pin given twice or
with a marker, a known bug whose link is no web address."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from onnx import TensorProto, helper

from compat.cell.annotations_cli import main as annotations
from compat.cli.main import main
from tests.conftest import ROOT

AXES = """[project]
name = "x"
version = "0"
[tool.compat]
onnx = { versions = ["1.20.1"], pair = "1.24.4" }
onnxruntime = { versions = ["1.24.4"], pair = "1.20.1" }
"""


def _project(tmp_path: Path, extra: str = "") -> Path:
    (tmp_path / "pyproject.toml").write_text(AXES + extra)
    models = tmp_path / "models"
    models.mkdir()
    shutil.copy(ROOT / "examples" / "models" / "layer_norm.onnx", models)
    return models


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_links_folders_and_fifos_named_onnx_are_each_said_and_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A dangling link was a traceback (the listing's key stat'ed it); a loop too; a
    folder or a FIFO named x.onnx was skipped without a word. Each is said, the real
    model is a case."""
    models = _project(tmp_path)
    (models / "dangling.onnx").symlink_to(tmp_path / "nowhere.onnx")
    (models / "loop.onnx").symlink_to(models / "loop.onnx")
    (models / "folder.onnx").mkdir()
    os.mkfifo(models / "fifo.onnx")
    config = str(tmp_path / "pyproject.toml")
    assert main(["matrix", "--config", config, "--cases-dir", str(models), "--list"]) == 0
    printed = capsys.readouterr()
    assert "models.layer_norm" in printed.out
    for name in ("dangling", "loop"):
        assert (
            f"{name}.onnx: a link that leads nowhere (dangling, or a loop); skipped" in printed.err
        )
    for name in ("folder", "fifo"):
        assert f"{name}.onnx: not a regular file" in printed.err
    assert printed.err.count("skipped") == 4


@pytest.mark.parametrize("asked", ["numpy", "onnx", "Protobuf"])
def test_with_a_bare_name_of_what_every_cell_has_is_refused(
    asked: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", "--with", asked]) == 2
    assert f"every cell has {asked} already" in _one_line(capsys)


def test_with_a_bare_name_of_something_new_is_a_requirement(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`--with pytest` installs pytest in every cell: a requirement resolved per cell."""
    from compat.plan.matrix import parse_with

    assert main(["plan", "--with", "pytest"]) == 0
    assert parse_with("pytest") == ("pytest", False)


def test_a_generated_input_too_large_to_hold_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`annotations --dim batch=100000000000` was numpy's memory traceback; a drop-in
    model whose declared sizes ask for as much is a one-line error too."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 8])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "relu.onnx"
    path.write_bytes(model.SerializeToString())
    assert annotations([str(path), "--dim", "batch=100000000000"]) == 2
    err = _one_line(capsys)
    assert "would hold 800000000000 elements" in err and "--dim NAME=SIZE" in err
    assert annotations([str(path), "--dim", "batch=3"]) == 0
    capsys.readouterr()
    big = tmp_path / "big"
    big.mkdir()
    x.type.tensor_type.shape.dim[0].dim_value = 10**12
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    (big / "big.onnx").write_bytes(model.SerializeToString())
    (tmp_path / "pyproject.toml").write_text(AXES)
    config = str(tmp_path / "pyproject.toml")
    assert main(["matrix", "--config", config, "--cases-dir", str(big), "--list"]) == 2
    assert "big.onnx: input 'x' of shape" in _one_line(capsys)


@pytest.mark.parametrize(
    ("pins", "says"),
    [
        (["onnx==1.23.2", "onnx==1.18.0"], "onnx is pinned twice (1.23.2, 1.18.0)"),
        (["onnx==1.23.2;x"], "no marker here"),
        (["onnx==1.23.2; python_version >= '3'"], "no marker here"),
    ],
)
def test_a_repro_pin_given_twice_or_with_a_marker_is_refused(
    pins: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first pin was used silently; `;x` was dropped unsaid."""
    assert main(["repro", *pins]) == 2
    assert says in _one_line(capsys)


def test_a_requirements_file_keeps_its_markers_meaning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """In CI's requirements file a marker chooses the line: one false here is left
    out, one that does not parse is named; the command line's pin is over the file's."""
    from compat.followup.repro import parse_pins

    file = tmp_path / "ci.txt"
    file.write_text(
        "onnx==1.18.0\nnumpy==1.26.4; python_version < '3'\nnumpy==2.2.6; python_version >= '3'\n"
    )
    pins = parse_pins(["onnx==1.21.0"], file)
    assert (pins.onnx, pins.extra) == ("1.21.0", ("numpy==2.2.6",))
    file.write_text("onnx==1.18.0; x\n")
    assert main(["repro", "onnxruntime==1.24.4", "--requirements", str(file)]) == 2
    assert "the marker does not parse ('x')" in _one_line(capsys)


@pytest.mark.parametrize("link", ["javascript:alert(1)", "data:text/html,x", "//x.org", "issue 7"])
def test_a_known_bug_whose_link_is_no_web_address_is_refused(
    tmp_path: Path, link: str, capsys: pytest.CaptureFixture[str]
) -> None:
    known = (
        '\n[[tool.compat.known]]\ncases = "models.*"\npackage = "onnx"\nchecks = ["checker"]\n'
        f'reason = "r"\nlink = "{link}"\n'
    )
    models = _project(tmp_path, known)
    config = str(tmp_path / "pyproject.toml")
    assert main(["matrix", "--config", config, "--cases-dir", str(models), "--list"]) == 2
    assert "an http(s) address: give the issue's URL" in _one_line(capsys)
