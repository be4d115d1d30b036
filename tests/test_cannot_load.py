"""A release that cannot read a user's model is an answer, never a pass (issue 33).

A real model restamped IR 10 / opset 21 (what onnx 1.16+ writes), run as a drop-in on
onnxruntime 1.15.1 (reads IR ≤ 9) and onnx 1.14.1 (IR ≤ 9, opset ≤ 19): every check of
those releases is `unsupported`, named with the limit, and no report draws it green;
the corpus's own cases at such a limit stay skips (a construct that does not apply).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import onnx
import pytest

from compat.cli.main import main
from compat.core.outcomes import CheckResult, Outcome
from compat.corpus.unreadable import read_limit
from tests.conftest import ROOT
from tests.helpers import add_one_case, add_one_model

LIMIT = "onnxruntime 1.15.1 reads IR ≤ 9; this model is IR 10"


def restamped(path: Path) -> Path:
    """add_one_model as IR 10, opset 21: loads on onnx ≥ 1.16 and onnxruntime ≥ 1.18."""
    m = add_one_model()
    assert isinstance(m, onnx.ModelProto)
    m.ir_version = 10
    del m.opset_import[:]
    m.opset_import.append(onnx.helper.make_opsetid("", 21))
    onnx.save(m, path)
    return path


def test_a_skip_at_a_limit_is_unsupported_for_a_users_model_only() -> None:
    detail = "IR version 10 > max 9 of onnxruntime 1.15.1"
    raw = CheckResult("c", "m.x", "ort_run", Outcome.SKIP, phase="limit", detail=detail)
    own = add_one_case(oracle="onnxruntime")
    got = read_limit(raw, own)
    assert (got.outcome, got.detail) == (Outcome.UNSUPPORTED, LIMIT)
    assert got.outcome.unexpected
    assert read_limit(raw, add_one_case()) == raw  # the corpus's question is a construct
    plain = CheckResult("c", "m.x", "ort_run", Outcome.SKIP, detail="no ZipMap here")
    assert read_limit(plain, own) == plain  # a capability gap is no limit of the model


@pytest.mark.envs
def test_releases_that_cannot_read_the_model_are_red_everywhere_and_say_the_limit(
    tmp_path: Path, shared_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    models = tmp_path / "mine"
    models.mkdir()
    restamped(models / "ir10.onnx")
    out = tmp_path / "out"
    config = ["--config", str(ROOT / "pyproject.toml"), "--state-dir", str(shared_state)]
    given = ["--out", str(out), "--cases-dir", str(models), "--cases", "mine.*"]
    code = main(["matrix", *config, *given, "--onnx", "1.14.1,1.23.2", "--ort", "1.15.1,1.24.4"])
    terminal = capsys.readouterr().out
    assert code == 1, terminal  # a release of the matrix cannot read it
    report = json.loads((out / "matrix.json").read_text())
    by_cell: dict[str, dict[str, dict[str, str]]] = {}
    for r in report["results"]:
        by_cell.setdefault(r["cell"], {})[r["check"]] = r
    old_ort = by_cell["onnx1.23.2-ort1.15.1"]
    assert old_ort["ort_run"]["outcome"] == "unsupported"
    assert old_ort["ort_run"]["detail"] == LIMIT
    old_onnx = by_cell["onnx1.14.1-ort1.24.4"]
    assert old_onnx["checker"]["outcome"] == "unsupported"
    assert old_onnx["checker"]["detail"] == "onnx 1.14.1 reads IR ≤ 9; this model is IR 10"
    assert by_cell["onnx1.23.2-ort1.24.4"]["ort_run"]["outcome"] == "pass"
    # the terminal: no passing square on those releases, the limit in the list
    assert LIMIT in terminal and "unsupported" in terminal
    (row,) = [line for line in terminal.splitlines() if line.startswith("mine ")]
    squares = row.split()[1:]  # onnx 14 23 | ort 15 24 (the pair cell on both)
    assert squares[0] != "." and squares[2] != ".", row
    # markdown, junit, the page's data and the picture
    markdown = (out / "matrix.md").read_text()
    assert (
        "| unsupported | pass     | cannot read the model ≤ 1.14.1, passes ≥ 1.23.2 |" in markdown
    )
    junit = ET.parse(out / "junit.xml").getroot()
    failed = {
        (case.get("classname"), case.get("name"))
        for case in junit.iter("testcase")
        if case.find("failure") is not None
    }
    assert any("ort1.15.1" in str(c) for c in failed), failed
    html = (out / "matrix.html").read_text()
    assert '"unsupported"' in html
    svg = (out / "summary.svg").read_text()
    assert "cannot read" in svg or "unexpected" in svg
