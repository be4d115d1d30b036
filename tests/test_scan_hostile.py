"""`onnx-compat scan` on models built to break it (issue 34, item 3): the walk follows the
model's size, not the paths through its calls (25 functions each calling the next twice),
a 2,000-deep chain of calls is no RecursionError, a scan past its time budget gives up
in one line, external data is read from the model's own folder with the refusals of the
cells, `--fix` never writes over the model or its data and is checked before anything
runs, and a model the scan cannot handle does not stop the matrix
(compat/corpus/walk.py, signature.py, values.py, session.py, scan.py;
compat/cli/commands/scan.py, matrix.py `dropin_scan`). The models are built here."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from compat.cli.commands.matrix import dropin_scan
from compat.cli.main import main
from compat.corpus.scan import scan_model
from compat.corpus.values import consumers, producer
from compat.corpus.walk import nodes
from compat.plan.config import load_config
from compat.workflow.corpus import load_corpus
from compat.workflow.request import CorpusRequest, Request
from tests.conftest import ROOT

DOMAIN = "hostile"
SQUEEZE = "squeeze_empty_axes.empty_name"
RESHAPE = "reshape_allowzero.chained_allowzero1"


def _model(
    calls: list[onnx.NodeProto],
    inputs: list[str],
    functions: list[onnx.FunctionProto],
    initializers: Sequence[onnx.TensorProto] = (),
) -> onnx.ModelProto:
    graph = helper.make_graph(
        calls,
        "hostile",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3]) for n in inputs],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        list(initializers),
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid(DOMAIN, 1)]
    built = helper.make_model(graph, opset_imports=opsets, functions=functions)
    built.ir_version = 8
    return built


def _function(name: str, inputs: list[str], body: list[onnx.NodeProto]) -> onnx.FunctionProto:
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid(DOMAIN, 1)]
    return helper.make_function(DOMAIN, name, inputs, ["y"], body, opsets)


def _int64(name: str, values: list[int]) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(values, np.int64), name)


def _call(callee: str, inputs: list[str], output: str) -> onnx.NodeProto:
    return helper.make_node(callee, inputs, [output], domain=DOMAIN)


def fan_out(depth: int = 25) -> onnx.ModelProto:
    """f0 … f24, each calling the next twice (a = f(x); y = f(a)): 2^24 paths to the
    innermost, whose Squeeze(x, "") the squeeze detector knows."""
    functions = []
    for i in range(depth):
        body = [helper.make_node("Squeeze", ["x", ""], ["y"])]
        if i < depth - 1:
            body = [_call(f"f{i + 1}", ["x"], "a"), _call(f"f{i + 1}", ["a"], "y")]
        functions.append(_function(f"f{i}", ["x"], body))
    return _model([_call("f0", ["X"], "Y")], ["X"], functions)


def chain(depth: int = 2000) -> onnx.ModelProto:
    """f0 … f1999, each calling the next with (x, shape); the innermost reshapes x
    twice, the second time allowzero=1 with the main graph's shape [0, 3]."""
    functions = []
    for i in range(depth):
        body = [_call(f"f{i + 1}", ["x", "shape"], "y")]
        if i == depth - 1:
            body = [
                helper.make_node("Reshape", ["x", "shape"], ["r"]),
                helper.make_node("Reshape", ["r", "shape"], ["y"], allowzero=1),
            ]
        functions.append(_function(f"f{i}", ["x", "shape"], body))
    return _model([_call("f0", ["X", "S"], "Y")], ["X"], functions, [_int64("S", [0, 3])])


def permutations(depth: int = 25, width: int = 10) -> onnx.ModelProto:
    """Each function passes its ten arguments on twice, rotated and with two swapped:
    every order of ten graph inputs is another call signature, up to 10! of them."""
    xs = [f"x{i}" for i in range(width)]
    functions = []
    for i in range(depth):
        body = [helper.make_node("Identity", ["x0"], ["y"])]
        if i < depth - 1:
            body += [
                _call(f"f{i + 1}", xs[1:] + xs[:1], "r"),
                _call(f"f{i + 1}", [xs[1], xs[0], *xs[2:]], "s"),
            ]
        functions.append(_function(f"f{i}", xs, body))
    inputs = [f"X{i}" for i in range(width)]
    return _model([_call("f0", inputs, "Y")], inputs, functions)


def saved(model: onnx.ModelProto, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(model.SerializeToString())
    return path


# -- the work follows the model's size ------------------------------------------------------


def test_a_fan_out_of_calls_is_walked_once_per_call_signature(tmp_path: Path) -> None:
    """2^24 paths lead to the innermost Squeeze; the scan finds it in under a second
    (the issue's bound) through the few signatures its calls have, not the paths."""
    built = fan_out()
    assert len(built.SerializeToString()) < 2500  # a 2 KB model
    path = saved(built, tmp_path / "fan.onnx")
    started = time.monotonic()
    found = scan_model(path, None, None).findings
    assert time.monotonic() - started < 1.0
    (squeeze,) = [f for f in found if f.detector == SQUEEZE]
    assert 1 <= len(squeeze.where) <= 8
    assert all(w.endswith("/function 'f24'/node 'y'") for w in squeeze.where)
    assert len(list(nodes(built))) < 25 * 12


def test_calls_whose_arguments_differ_are_each_walked(tmp_path: Path) -> None:
    """The memo merges only calls the body cannot tell apart: one function called with
    a shape [0, 3] and with [2, 3] is judged for each, and the allowzero bug is where
    the zero is; called twice with the same arguments, its body is walked once."""
    body = [
        helper.make_node("Reshape", ["x", "shape"], ["r"]),
        helper.make_node("Reshape", ["r", "shape"], ["y"], allowzero=1),
    ]
    shapes = [_int64("zero", [0, 3]), _int64("full", [2, 3])]
    calls = [
        _call("f", ["X", "full"], "a"),
        _call("f", ["X", "zero"], "b"),
        _call("f", ["X", "full"], "c"),
        helper.make_node("Sum", ["a", "b", "c"], ["Y"]),
    ]
    built = _model(calls, ["X"], [_function("f", ["x", "shape"], body)], shapes)
    (finding,) = scan_model(built, None, None).findings
    assert finding.where == ("graph/node 'b'/function 'f'/node 'y'",)
    walked = [s.path for s in nodes(built) if s.scope.function is not None]
    assert len(walked) == 4  # the body under a and under b; c is a's twin


def test_a_2000_deep_chain_of_calls_is_no_recursion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The shape [0, 3] travels 2,000 calls down to the allowzero Reshape: the constant
    is still seen there, the value questions follow it both ways, and the CLI says the
    finding (exit 1), no traceback."""
    built = chain()
    path = saved(built, tmp_path / "chain.onnx")
    (finding,) = [f for f in scan_model(path, None, None).findings if f.detector == RESHAPE]
    (where,) = finding.where
    assert where.count("/function ") == 2000 and where.endswith("function 'f1999'/node 'y'")
    main_call = next(nodes(built))
    made = producer(main_call.scope, "Y")
    assert made is not None and made.is_op("Reshape") and made.path == where
    readers = consumers(main_call.scope, "X")
    assert [r.node.output[0] for r in readers] == ["r"]
    assert main(["scan", str(path), "--onnx", "", "--ort", ""]) == 1
    out, err = capsys.readouterr()
    assert "Reshape(allowzero=1)" in out and err == ""


def test_a_scan_past_its_budget_gives_up_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """10 arguments in every order are millions of signatures: past --budget the scan
    says where it was and how to give it more time, exit 2, promptly."""
    path = saved(permutations(), tmp_path / "perm.onnx")
    started = time.monotonic()
    assert main(["scan", str(path), "--budget", "0.5"]) == 2
    assert time.monotonic() - started < 15
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1
    assert f"{path}: the scan gave up after 0.5 s in detector " in err
    assert "/function 'f" in err and "--budget SECONDS" in err


@pytest.mark.parametrize("budget", ["0", "-1", "nan", "inf"])
def test_a_budget_that_is_no_number_of_seconds_is_one_line(
    budget: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = saved(fan_out(3), tmp_path / "fan.onnx")
    assert main(["scan", str(path), f"--budget={budget}"]) == 2
    assert "give a positive number of seconds" in capsys.readouterr().err


# -- external data: the model's own folder, the cells' refusals ----------------------------


def with_external_shape(folder: Path, location: str = "w.bin") -> Path:
    """m.onnx in `folder`: Reshape(Reshape(X, S), shape, allowzero=1) whose shape [0, 3]
    is kept in `location` (relative to `folder`), where its 16 bytes are written."""
    shape = _int64("shape", [0, 3])
    data = (folder / location).resolve()
    data.parent.mkdir(parents=True, exist_ok=True)
    data.write_bytes(shape.raw_data)
    shape.ClearField("raw_data")
    shape.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", "0"), ("length", "16")):
        shape.external_data.add(key=key, value=value)
    calls = [
        helper.make_node("Reshape", ["X", "S"], ["r"]),
        helper.make_node("Reshape", ["r", "shape"], ["Y"], allowzero=1),
    ]
    return saved(_model(calls, ["X"], [], [_int64("S", [2, 3]), shape]), folder / "m.onnx")


def _detected(path: Path) -> list[str]:
    return [f.detector for f in scan_model(path, None, None).findings]


def test_external_data_is_read_from_the_model_s_folder_whatever_the_current_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shape [0, 3] the detector needs is in model/w.bin; from the parent folder,
    whose own w.bin holds [2, 3], and from elsewhere, the scan reads the model's."""
    path = with_external_shape(tmp_path / "model")
    (tmp_path / "w.bin").write_bytes(_int64("decoy", [2, 3]).raw_data)
    for where in (tmp_path / "model", tmp_path, tmp_path / "model" / "w.bin"):
        monkeypatch.chdir(where if where.is_dir() else ROOT)
        assert _detected(path.resolve()) == [RESHAPE], where
    monkeypatch.chdir(tmp_path)
    assert _detected(Path("model/m.onnx")) == [RESHAPE]


@pytest.mark.parametrize(
    "location, why",
    [
        ("../w.bin", "it climbs out of the model's folder (..)"),
        ("/etc/hostname", "an absolute path"),
        ("missing.bin", "no such file in the model's folder"),
    ],
)
def test_external_data_outside_the_model_s_folder_is_refused_as_the_cells_refuse_it(
    location: str, why: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    path = with_external_shape(folder, "w.bin")
    model = onnx.load(str(path), load_external_data=False)
    model.graph.initializer[1].external_data[0].value = location
    saved(model, path)
    assert main(["scan", str(path)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert f"initializer 'shape' keeps its data in {location!r}: {why}" in err
    assert "so the model is refused" in err


# -- --fix: never over the model, checked first --------------------------------------------


def test_fix_writes_a_model_with_external_data_beside_it(tmp_path: Path) -> None:
    path = with_external_shape(tmp_path / "model")
    out = tmp_path / "fixed.onnx"
    assert main(["scan", str(path), "--onnx", "", "--ort", "", "--fix", str(out)]) == 1
    assert _detected(out) == [RESHAPE]  # no rewrite removes it; its data travelled inlined


TARGETS = ["the model", "a link to it", "its data", "a folder", "a missing folder"]


@pytest.mark.parametrize("target", TARGETS)
def test_fix_onto_the_model_its_data_or_nowhere_is_one_line_before_anything_runs(
    target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = with_external_shape(tmp_path / "model")
    (tmp_path / "link.onnx").symlink_to(path)
    out = {
        "the model": path,
        "a link to it": tmp_path / "link.onnx",
        "its data": tmp_path / "model" / "w.bin",
        "a folder": tmp_path / "model",
        "a missing folder": tmp_path / "nowhere" / "fixed.onnx",
    }[target]
    before = {p: p.read_bytes() for p in (path, tmp_path / "model" / "w.bin")}
    assert main(["scan", str(path), "--fix", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing scanned, nothing written
    assert len(captured.err.strip().splitlines()) == 1
    assert captured.err.startswith(f"onnx-compat: error: --fix {out}: ")
    assert {p: p.read_bytes() for p in before} == before
    assert not (tmp_path / "nowhere").exists()


# -- the matrix runs a model the scan cannot handle ----------------------------------------


def test_the_matrix_scan_of_drop_ins_says_which_it_gave_up_on_and_scans_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The drop-in scan before a run (no environment built here): the permutations model
    is said in one line and left out of the predictions, the fan-out beside it is
    scanned and its Squeeze predicted."""
    folder = tmp_path / "mine"
    saved(permutations(), folder / "perm.onnx")
    saved(fan_out(), folder / "fan.onnx")
    request = Request(
        config=ROOT / "pyproject.toml",
        corpus=CorpusRequest(cases="mine.*", cases_dirs=(folder,)),
    )
    config = load_config(request.config)
    corpus = load_corpus(request, config)
    assert sorted(c.id for c in corpus.cases) == ["mine.fan", "mine.perm"]
    scanned = dropin_scan(request, config, corpus, budget=0.5)["scan"]
    assert isinstance(scanned, dict) and list(scanned) == ["mine.fan"]
    assert SQUEEZE in [f["detector"] for f in scanned["mine.fan"]]
    err = capsys.readouterr().err
    (said,) = [line for line in err.splitlines() if "mine.perm" in line]
    assert said.startswith("onnx-compat: warning: scan of mine.perm skipped, the matrix runs")
    assert "gave up after 0.5 s" in said
