"""The tolerance your models' outputs are compared with (compat/plan/tolerance.py): set in
`[tool.compat]`, a drop-in folder's compat.toml and its `[[tolerance]]` tables, the most
specific winning; every bad value one line naming the file, the key, the value and the
fix; and, on a real onnxruntime release, a model whose level `all` differs by ~1e-4
(tests/data/tolerance/make_nchwc_conv.py) fails without a tolerance, naming the
difference and the optimizer, and passes with one.
"""

from __future__ import annotations

import json
import platform
import re
import shutil
from pathlib import Path
from typing import Any

import onnx
import pytest
from onnx import TensorProto, helper

from compat.core.errors import ConfigError
from compat.corpus.discover import spec_of
from compat.corpus.dropin import load_dropins
from compat.plan.config import load_config
from compat.plan.tolerance import DEFAULT_ATOL, DEFAULT_RTOL, Tolerance
from tests.conftest import ROOT

DATA = ROOT / "tests" / "data" / "tolerance"


def two_outputs() -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in ("a", "b")]
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Neg", ["x"], ["b"])]
    graph = helper.make_graph(nodes, "g", [x], outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def folder(tmp_path: Path, toml: str, models: tuple[str, ...] = ("m.onnx",)) -> Path:
    for name in models:
        onnx.save(two_outputs(), str(tmp_path / name))
    (tmp_path / "compat.toml").write_text(toml)
    return tmp_path


def tolerances(directory: Path, base: Tolerance | None = None) -> dict[str, tuple[Any, ...]]:
    """case id's last part -> (rtol, atol, per-output tolerances)."""
    _, _, cases = load_dropins(directory, base)
    return {c.id.split(".")[-1]: (c.rtol, c.atol, dict(c.output_tolerances)) for c in cases}


def test_without_any_setting_the_default_is_documented_and_used(tmp_path: Path) -> None:
    onnx.save(two_outputs(), str(tmp_path / "m.onnx"))
    assert tolerances(tmp_path) == {"m": (1e-4, 1e-5, {})}
    assert (DEFAULT_RTOL, DEFAULT_ATOL) == (1e-4, 1e-5)
    docs = (ROOT / "docs" / "how-to" / "own-models.md").read_text()
    assert "rtol 1e-4, atol 1e-5" in docs


def test_the_most_specific_setting_wins_rtol_and_atol_each_on_its_own(tmp_path: Path) -> None:
    toml = """
rtol = 1e-3                 # the folder: over [tool.compat]'s rtol, keeps its atol

[[tolerance]]
cases = "n*.onnx"           # one model: its atol
atol = 1e-2

[[tolerance]]
cases = "*.onnx"
outputs = ["b"]             # one output of every model: its rtol
rtol = 0.5

[[tolerance]]
cases = "n.onnx"
outputs = ["b"]             # the later of two tables as specific wins
rtol = 0.25
"""
    directory = folder(tmp_path, toml, ("m.onnx", "n.onnx"))
    got = tolerances(directory, Tolerance(rtol=2e-4, atol=3e-5))
    assert got == {
        "m": (1e-3, 3e-5, {"b": (0.5, 3e-5)}),
        "n": (1e-3, 1e-2, {"b": (0.25, 1e-2)}),
    }


def test_an_output_tolerance_reaches_the_cell_only_where_one_is_set(tmp_path: Path) -> None:
    directory = folder(tmp_path, '[[tolerance]]\ncases = "m.onnx"\noutputs = ["a"]\natol = 0.1\n')
    (case,) = load_dropins(directory)[2]
    assert spec_of(case)["tolerances"] == {"a": [1e-4, 0.1]}
    (tmp_path / "compat.toml").write_text("rtol = 1e-3\n")
    (case,) = load_dropins(directory)[2]
    spec = spec_of(case)
    assert "tolerances" not in spec and (spec["rtol"], spec["atol"]) == (1e-3, 1e-5)


def test_tool_compat_sets_every_models_tolerance(tmp_path: Path) -> None:
    text = (
        (ROOT / "pyproject.toml")
        .read_text()
        .replace("[tool.compat]\n", "[tool.compat]\nrtol = 1e-3\natol = 0\n", 1)
    )
    (tmp_path / "pyproject.toml").write_text(text)
    assert load_config(tmp_path / "pyproject.toml").tolerance == Tolerance(1e-3, 0.0)


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        (
            'rtol = "1e-3"\n',
            "compat.toml: rtol = '1e-3': a tolerance is a number, 0 or more (outputs pass where "
            "|got - expected| <= atol + rtol * |expected|), like rtol = 1e-3",
        ),
        ("atol = -1\n", "compat.toml: atol = -1: a tolerance is a number, 0 or more"),
        ("atol = true\n", "compat.toml: atol = True: a tolerance is a number"),
        ("atol = inf\n", "compat.toml: atol = inf: a tolerance is a number"),
        (
            '[[tolerance]]\ncases = "m.onnx"\nrtol = "x"\n',
            "compat.toml: [tolerance #1] rtol = 'x': a tolerance is a number, 0 or more",
        ),
        (
            '[[tolerance]]\ncases = "m.onnx"\n',
            "compat.toml: [tolerance #1] sets no tolerance; give rtol, atol or both",
        ),
        ("[[tolerance]]\natol = 1\n", "compat.toml: [tolerance #1] is missing 'cases'"),
        (
            '[[tolerance]]\ncases = "vad.onnx"\natol = 1\n',
            "compat.toml [tolerance #1]: cases = 'vad.onnx' matches no model file here (m.onnx)",
        ),
        (
            '[[tolerance]]\ncases = "m.onnx"\noutputs = ["logits"]\natol = 1\n',
            "compat.toml [tolerance #1]: outputs: 'logits' is no output of m.onnx (its outputs: "
            "a, b)",
        ),
        (
            '[[tolerance]]\ncases = "m.onnx"\noutputs = "a"\natol = 1\n',
            "compat.toml: [tolerance #1] outputs = 'a': expected a list of output names (leave "
            'it out for every output), like outputs = ["logits"]',
        ),
        (
            '[[tolerance]]\ncases = "m.onnx"\natol = 1\nrtoll = 1\n',
            "compat.toml: unknown key 'rtoll' in [tolerance #1]; allowed keys are atol, cases, "
            "outputs, rtol",
        ),
        (
            "[tolerance]\natol = 1\n",
            "compat.toml: tolerance = {'atol': 1}: "
            "expected an array of tables: write [[tolerance]]",
        ),
    ],
)
def test_a_bad_tolerance_is_one_line_naming_file_key_value_and_fix(
    tmp_path: Path, toml: str, message: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        load_dropins(folder(tmp_path, toml))
    text = str(raised.value)
    assert message in text and len(text.splitlines()) == 1
    assert str(tmp_path / "compat.toml") in text


def test_a_bad_tolerance_in_tool_compat_names_the_table(tmp_path: Path) -> None:
    text = (
        (ROOT / "pyproject.toml")
        .read_text()
        .replace("[tool.compat]\n", "[tool.compat]\nrtol = '0.001'\n", 1)
    )
    (tmp_path / "pyproject.toml").write_text(text)
    with pytest.raises(ConfigError) as raised:
        load_config(tmp_path / "pyproject.toml")
    assert str(raised.value) == (
        f"{tmp_path / 'pyproject.toml'}: [tool.compat] rtol = '0.001': a tolerance is a "
        "number, 0 or more (outputs pass where |got - expected| <= atol + rtol * |expected|), "
        "like rtol = 1e-3"
    )


def test_the_fixture_is_what_its_script_writes(tmp_path: Path) -> None:
    """tests/data/tolerance/nchwc_conv.onnx is make_nchwc_conv.py's output, byte for byte."""
    import importlib.util

    import numpy as np

    spec = importlib.util.spec_from_file_location("make_nchwc_conv", DATA / "make_nchwc_conv.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model, feeds = module.model_and_inputs()
    assert model.SerializeToString() == (DATA / "nchwc_conv.onnx").read_bytes()
    with np.load(DATA / "nchwc_conv.npz") as saved:
        assert np.array_equal(saved["x"], feeds["x"])


NCHWC = platform.machine().lower() in ("x86_64", "amd64")
#: how ort_run says level `all` of nchwc_conv.onnx differs: how many elements, how much
DIFFERENCE = re.compile(
    r"all: output 'y' differs at (\d+) of 16384 elements beyond rtol 0\.0001, atol 1e-05: "
    r"largest absolute difference ([0-9.e-]+) at \[0, \d+, \d+, \d+\] \(got [-0-9.e]+, "
    r"expected [-0-9.e]+\), largest relative "
)


@pytest.mark.envs
@pytest.mark.skipif(not NCHWC, reason="onnxruntime's NCHWc kernels are x86-64 only")
def test_a_folder_tolerance_passes_a_1e_4_rewrite_difference_that_fails_without_it(
    tmp_path: Path, shared_state: Path
) -> None:
    """nchwc_conv.onnx on onnxruntime 1.24.4: level `all` differs from `disabled` by up
    to 8.39e-5 (NchwcTransformer); without a tolerance ort_run fails and says how much,
    where and which optimizer; rtol = atol = 1e-3 in the folder's compat.toml passes it,
    and so does the tolerance of that one output."""
    from compat.cli.main import main

    models = tmp_path / "noisy"
    models.mkdir()
    for name in ("nchwc_conv.onnx", "nchwc_conv.npz"):
        shutil.copy(DATA / name, models / name)
    out = tmp_path / "out"
    args = [
        "matrix",
        "--config",
        str(ROOT / "pyproject.toml"),
        "--state-dir",
        str(shared_state),
        "--out",
        str(out),
        "--cases-dir",
        str(models),
        "--cases",
        "noisy.*",
        "--onnx",
        "1.23.2",
        "--ort",
        "1.24.4",
        "--cross",
    ]

    def results() -> dict[str, dict[str, str]]:
        report = json.loads((out / "matrix.json").read_text())
        return {r["check"]: r for r in report["results"]}

    assert main(args) == 1
    ort_run = results()["ort_run"]
    assert (ort_run["outcome"], ort_run["phase"]) == ("fail", "compare")
    detail = ort_run["detail"]
    # 16 elements, 8.39e-05 at [0, 23, 12, 1] on AVX-512; another CPU sums in other blocks
    found = DIFFERENCE.match(detail)
    assert found, detail
    assert 1e-5 < float(found.group(2)) < 1e-3 and int(found.group(1)) > 0
    assert detail.endswith(
        "; onnxruntime's optimizer NchwcTransformer is responsible: disabling it alone "
        "(disabled_optimizers=['NchwcTransformer']) makes the outputs match onnxruntime's "
        "with optimizations disabled exactly"
    ), detail

    (models / "compat.toml").write_text("rtol = 1e-3\natol = 1e-3\n")
    assert main(args) == 0, results()
    got = results()
    assert got["ort_run"]["detail"] == (
        "outputs match onnxruntime's with optimizations disabled at levels disabled, basic, "
        f"extended, all; within rtol 0.001, atol 0.001: up to {found.group(2)} apart (output "
        "'y' at level all)"
    )
    assert got["reference"]["outcome"] == "pass"  # onnx's evaluator: within it too

    (models / "compat.toml").write_text(
        '[[tolerance]]\ncases = "nchwc_conv.onnx"\noutputs = ["y"]\natol = 1e-3\n'
    )
    assert main(args) == 0, results()
    assert "within rtol 0.0001, atol 0.001" in results()["ort_run"]["detail"]


@pytest.mark.envs
@pytest.mark.skipif(not NCHWC, reason="onnxruntime's NCHWc kernels are x86-64 only")
def test_triage_says_a_difference_within_the_tolerance_is_no_finding(
    tmp_path: Path, shared_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The tolerance of the compat.toml beside the model holds in triage too: the rewrite's
    difference is said, as allowed, and is not called a defect."""
    from compat.cli.main import main

    models = tmp_path / "noisy"
    models.mkdir()
    for name in ("nchwc_conv.onnx", "nchwc_conv.npz"):
        shutil.copy(DATA / name, models / name)
    (models / "compat.toml").write_text("rtol = 1e-3\natol = 1e-3\n")
    out = tmp_path / "out"
    args = [
        "triage",
        str(models / "nchwc_conv.onnx"),
        "--config",
        str(ROOT / "pyproject.toml"),
        "--state-dir",
        str(shared_state),
        "--out",
        str(out),
        "--ort",
        "1.24.4",
        "--axis",
        "onnxruntime",
    ]
    assert main(args) == 0
    assert json.loads((out / "triage.json").read_text())["findings"] == []
    said = capsys.readouterr().out
    assert "within your tolerance, no finding: ort_run on onnx1.23.2-ort1.24.4: outputs" in said
    report = (out / "report.md").read_text()
    assert "No findings" in report
    assert "Within the model's tolerance (not findings):" in report
    assert "within rtol 0.001, atol 0.001: up to " in report
