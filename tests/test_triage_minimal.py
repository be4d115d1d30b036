"""Triage's reduction predicate (compat/followup/triage/minimal.py SameFailure) on real
`ort_run` results, the cell's own check run in this process with the onnxruntime
installed here: it runs onnxruntime's optimizer search (compat/cell/blame.py) only for
a candidate whose failure matches the finding's before the search, and reduces the
model to exactly what searching every candidate gives."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from compat.cell import protocol
from compat.cell.checks_ort import UNSEARCHED
from compat.cell.loop import run_task
from compat.cell.protocol import RawRecord
from compat.core.case import Case
from compat.core.install import InstallRequest
from compat.core.outcomes import CheckResult
from compat.corpus.discover import write_case
from compat.corpus.dropin import load_dropins
from compat.followup.reduce import reduce
from compat.followup.triage.common import only_check
from compat.followup.triage.findings import Finding, head_signature, signature
from compat.followup.triage.minimal import SameFailure
from compat.plan.matrix import Cell


def _layer_norm(name: str, x: str, shape: list[int]) -> tuple[list, list, onnx.ValueInfoProto]:
    """A LayerNorm over the last axis written out (onnxruntime fuses it at `extended`,
    computing the variance another way: values around 1000 come out differently)."""
    n = shape[-1]
    inits = [
        numpy_helper.from_array(np.array([2.0], np.float32), f"{name}_two"),
        numpy_helper.from_array(np.array([1e-5], np.float32), f"{name}_eps"),
        numpy_helper.from_array(np.ones(n, np.float32), f"{name}_gamma"),
        numpy_helper.from_array(np.zeros(n, np.float32), f"{name}_beta"),
    ]
    steps = [
        ("ReduceMean", [x], "mean"),
        ("Sub", [x, "mean"], "d"),
        ("Pow", ["d", "two"], "sq"),
        ("ReduceMean", ["sq"], "var"),
        ("Add", ["var", "eps"], "ve"),
        ("Sqrt", ["ve"], "std"),
        ("Div", ["d", "std"], "n"),
        ("Mul", ["n", "gamma"], "g"),
        ("Add", ["g", "beta"], ""),
    ]
    nodes = []
    for op, inputs, out in steps:
        named = [i if i == x else f"{name}_{i}" for i in inputs]
        axes = {"axes": [-1]} if op == "ReduceMean" else {}
        nodes.append(helper.make_node(op, named, [f"{name}_{out}" if out else name], **axes))
    return nodes, inits, helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def two_layer_norms(folder: Path) -> Path:
    """`y` over a matrix and `z` over a 3-d tensor: both differ at `extended` and `all`,
    their failures told apart by the index of the largest difference."""
    folder.mkdir()
    y_nodes, y_inits, y = _layer_norm("y", "x", [4, 64])
    z_nodes, z_inits, z = _layer_norm("z", "w", [2, 4, 64])
    inputs = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 64]),
        helper.make_tensor_value_info("w", TensorProto.FLOAT, [2, 4, 64]),
    ]
    graph = helper.make_graph(y_nodes + z_nodes, "ln2", inputs, [y, z], y_inits + z_inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(folder / "ln2.onnx"))
    rng = np.random.default_rng(0)
    feeds = {"x": rng.standard_normal((4, 64)) + 1000, "w": rng.standard_normal((2, 4, 64)) + 1000}
    np.savez(folder / "ln2.npz", **{k: v.astype(np.float32) for k, v in feeds.items()})
    return folder


class InProcess:
    """The cell's task loop in this process, counting the runs that searched."""

    def __init__(self, always_search: bool) -> None:
        self.always_search = always_search
        self.searches = 0

    def __call__(self, case: str, check: str, case_dir: Path, *, blame: bool = True) -> RawRecord:
        options = {} if blame or self.always_search else {"blame": False}
        got = run_task({}, protocol.task(case, check, str(case_dir), **options))  # type: ignore[typeddict-item]
        self.searches += got["outcome"] == "fail" and UNSEARCHED not in got["detail"]
        return got


def _finding(case: Case, tmp_path: Path) -> Finding:
    files = write_case(only_check(case, "ort_run"), tmp_path / "original")
    record = InProcess(always_search=True)(case.id, "ort_run", files.directory)
    cell = Cell("1.23.2", "1.24.4", InstallRequest())
    result = CheckResult.from_dict({**record, "cell": cell.id})
    return Finding("ort_run", "onnxruntime", "always", cell, None, result, {"1.24.4": "bad"})


def test_the_reduction_searches_only_candidates_that_fail_alike_before_the_search(
    tmp_path: Path,
) -> None:
    (case,) = load_dropins(two_layer_norms(tmp_path / "ln2"))[2]
    finding = _finding(case, tmp_path)
    assert finding.result.detail.startswith("extended, all: output 'y' differs at ")
    assert "LayerNormFusion" in finding.result.detail  # the search named the fusion
    reduced = {}
    for always in (True, False):
        evaluate = InProcess(always_search=always)
        fails = SameFailure(finding, case, tmp_path / f"c{always}", evaluate, None)
        reduced[always] = (reduce(case.model, case.inputs, fails), evaluate.searches)
    (searching, searched_all), (quick, searched) = reduced[True], reduced[False]
    assert [n.output for n in quick.model.graph.node] == [
        n.output for n in searching.model.graph.node
    ]
    assert len(quick.model.graph.node) == 9 and quick.tried == searching.tried
    # the candidates that keep only `z` fail at [N, N, N], never searched
    assert 0 < searched < searched_all


def test_a_head_signature_is_the_start_of_the_whole_one() -> None:
    head = "extended, all: output 'y' differs at 3 of 256 elements: largest 0.5 at [0, 1]"
    whole = head + "; onnxruntime's optimizer LayerNormFusion is responsible: disabling it"
    seen = head_signature("ort_run", "fail", "compare", head)
    assert seen is not None and signature("ort_run", "fail", "compare", whole).startswith(seen)
    other = head_signature("ort_run", "fail", "compare", head.replace("[0, 1]", "[0, 1, 2]"))
    assert other is not None and other != seen
    # blanking could reach past a head that leaves a quote or a list open: no signature
    assert head_signature("ort_run", "fail", "compare", "output 'y differs") is None
    assert head_signature("ort_run", "fail", "compare", "outputs ['y', 'z'") is None
