"""The detectors beside each family (`DETECTORS`, issue 27): on every case of the corpus
they name exactly the known failures the stored default run observed, no more (twins,
other rare forms, other families) and no fewer; and they find their construct wherever a
model hides it (subgraphs, local functions)."""

from __future__ import annotations

import importlib.util
import re
from collections import defaultdict
from pathlib import Path
from types import ModuleType

import numpy as np
import onnx
import pytest
from onnx import helper

from compat.core.case import Case, Detector, KnownFailure
from compat.core.report import read_json
from compat.core.versions import in_range
from compat.corpus.discover import discover_cases
from compat.corpus.known import unlike
from compat.corpus.make import const, model, tensor, unknown
from compat.corpus.rewrites import BY_NAME
from compat.corpus.walk import input_form, nodes
from tests.conftest import ROOT
from tests.helpers import UNSEEN_BY_MODELS

CORPUS = discover_cases(ROOT / "cases")
_ID = re.compile(r"^[a-z0-9_]+(\.[a-z0-9_]+)+$")


def _module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"compat_detectors_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FAMILY_DETECTORS: dict[str, list[Detector]] = {
    path.stem: list(getattr(_module(path), "DETECTORS", []))
    for path in sorted((ROOT / "cases").glob("*.py"))
    if not path.name.startswith("_")
}
DETECTORS = [d for found in FAMILY_DETECTORS.values() for d in found]


def _observed() -> dict[str, set[KnownFailure]]:
    """Per case, its own known failures that the stored default run shows as xfail: the
    first of `case.known` covering the check in the cell whose declared look the stored
    failure has (as `known.classify` picks)."""
    report = read_json(ROOT / "docs" / "matrix.json.gz")
    cells = {c.id: c for c in report.cells}
    by_id = {c.id: c for c in CORPUS.cases}
    seen: dict[str, set[KnownFailure]] = defaultdict(set)
    for result in report.results:
        case = by_id.get(result.case)
        if result.outcome.value != "xfail" or case is None:
            continue
        cell = cells[result.cell]
        for known in case.known:
            version = cell.onnx if known.package == "onnx" else cell.onnxruntime
            in_force = result.check in known.checks and in_range(version, known.versions)
            passed = not result.phase and "flaky" in known.outcomes  # a flaky bug's pass
            if in_force and (passed or not unlike(known, result)):
                assert known.link == result.known, (result, known)
                seen[case.id].add(known)
                break
    return seen


OBSERVED = _observed()


def _fired(case: Case) -> dict[KnownFailure, list[str]]:
    """The detectors that fire on the case's model, by the bug they name: only those whose
    bug's checks the case runs (a case without `convert_to` cannot show the version
    converter's failure its Resize-13 would)."""
    fired: dict[KnownFailure, list[str]] = defaultdict(list)
    for detector in DETECTORS:
        if detector.requires:  # shows in cells with more installed: see REQUIRING below
            continue
        runs = set(detector.known.checks) & set(case.checks)
        if runs and detector.find(case.model):
            fired[detector.known].append(detector.id)
    return fired


@pytest.mark.parametrize("family", sorted(CORPUS.families))
def test_detectors_name_exactly_the_known_failures_each_case_shows(family: str) -> None:
    """Every detector of every family on each case of `family`: the known failures they
    name (as values, so two bugs sharing a link stay apart) are the case's own that the
    stored run observed. Mismatches are listed, all of them, with their links."""
    mismatches = []
    for case in (c for c in CORPUS.cases if c.family == family):
        fired = _fired(case)
        expected = OBSERVED.get(case.id, set())
        for known in set(fired) - expected:
            mismatches.append(f"{case.id}: {fired[known]} fire, not observed: {known.link}")
        for known in expected - set(fired):
            if known.link in UNSEEN_BY_MODELS:
                continue
            mismatches.append(f"{case.id}: no detector fires for {known.link} ({known.reason})")
    assert not mismatches, "\n".join(mismatches)


def test_every_known_failure_of_the_corpus_has_a_detector_and_back() -> None:
    corpus_known = {k for c in CORPUS.cases for k in c.known}
    detected = {d.known for d in DETECTORS}
    undetected = [k.link for k in corpus_known - detected]
    assert sorted(undetected) == sorted(UNSEEN_BY_MODELS)
    assert [d.id for d in DETECTORS if d.known not in corpus_known and not d.requires] == []


def test_a_detector_that_requires_more_mirrors_a_bug_its_family_asks_for_everywhere() -> None:
    """A detector with `requires` (the OneHot bug that follows the cell's numpy) predicts
    what a model's own checks see where the cell has it; its family asks the same bug
    the same on every cell (reference_strict), and a detector without `requires` finds
    the same construct for the corpus."""
    requiring = [d for d in DETECTORS if d.requires]
    assert [d.id for d in requiring] == ["onehot_forms.depth_1elem_numpy"]
    for detector in requiring:
        twins = [
            d
            for d in DETECTORS
            if not d.requires and d.find is detector.find and d.known.link == detector.known.link
        ]
        assert twins, detector.id
        cases = [c for c in CORPUS.cases if detector.find(c.model)]
        assert cases and all(twins[0].known in c.known for c in cases), detector.id


def test_detector_ids_are_unique_family_prefixed_and_rewrites_exist() -> None:
    ids = [d.id for d in DETECTORS]
    assert len(ids) == len(set(ids))
    for family, found in FAMILY_DETECTORS.items():
        for detector in found:
            assert _ID.match(detector.id) and detector.id.startswith(f"{family}."), detector.id
            assert detector.construct, detector.id
            assert detector.rewrite == "" or detector.rewrite in BY_NAME, detector.id


def _detector(detector_id: str) -> Detector:
    return next(d for d in DETECTORS if d.id == detector_id)


def _squeeze_model_hidden_in_a_function_loop() -> onnx.ModelProto:
    """Squeeze(x, "") inside a Loop body inside a local function; the main graph and the
    If branches hold only the harmless twin."""
    body = helper.make_graph(
        [helper.make_node("Squeeze", ["v_in", ""], ["v_out"], name="deep")],
        "body",
        [tensor("i", np.int64, []), tensor("c", np.bool_, []), tensor("v_in", np.float32, None)],
        [tensor("c", np.bool_, []), tensor("v_out", np.float32, None)],
    )
    loop = helper.make_node("Loop", ["", "cond", "x"], ["y"], name="loop", body=body)
    function = helper.make_function(
        "local",
        "F",
        ["x", "cond"],
        ["y"],
        [loop],
        opset_imports=[helper.make_opsetid("", 13)],
    )
    branch = helper.make_graph(
        [helper.make_node("Squeeze", ["x"], ["b"])], "then", [], [tensor("b", np.float32, None)]
    )
    graph_nodes = [
        helper.make_node("F", ["x", "cond"], ["f"], domain="local"),
        helper.make_node("If", ["cond"], ["b"], then_branch=branch, else_branch=branch),
        helper.make_node("Add", ["f", "b"], ["y"]),
    ]
    built = model(
        graph_nodes,
        [tensor("x", np.float32, [1, 3])],
        [tensor("y", np.float32, unknown(1))],
        [const("cond", np.array(True))],
        opset=13,
    )
    built.opset_import.append(helper.make_opsetid("local", 1))
    built.functions.append(function)
    return built


def test_a_construct_is_found_inside_subgraphs_of_local_functions() -> None:
    built = _squeeze_model_hidden_in_a_function_loop()
    paths = _detector("squeeze_empty_axes.empty_name").find(built)
    assert paths == ["graph/node 'f'/function 'F'/node 'loop'/body/node 'deep'"]
    walked = [site.path for site in nodes(built)]
    assert "graph/node 'b'/then_branch/node 'b'" in walked
    assert "graph/node 'b'/else_branch/node 'b'" in walked


def test_the_opset_in_force_is_the_functions_own() -> None:
    built = _squeeze_model_hidden_in_a_function_loop()
    built.functions[0].opset_import[0].version = 11  # Squeeze-11: axes is an attribute
    assert _detector("squeeze_empty_axes.empty_name").find(built) == []


def test_a_function_nobody_calls_is_walked_once_unbound() -> None:
    built = _squeeze_model_hidden_in_a_function_loop()
    del built.graph.node[0]  # the call of F
    paths = _detector("squeeze_empty_axes.empty_name").find(built)
    assert paths == ["function 'F'/node 'loop'/body/node 'deep'"]


FIRING = [(d, c) for c in CORPUS.cases for d in DETECTORS if d.find(c.model)]


def _firing(built: onnx.ModelProto) -> set[str]:
    return {d.id for d in DETECTORS if d.find(built)}


def test_a_node_outlined_into_a_local_function_changes_nothing_found() -> None:
    """The catalogue's node_outlined moves the first node (a Constant's reader, a
    pattern's first step...) into a function called in its place: the body, bound to
    the call, still sees the caller's constants, annotations and neighbours, as a
    runtime that inlines it does; on twins and rare forms alike, the same detectors fire."""
    differ, outlined = [], 0
    for case in CORPUS.cases:
        applied = BY_NAME["node_outlined"].function(case.model)
        if applied is None:
            continue
        outlined += 1
        before, after = _firing(case.model), _firing(applied.model)
        if before != after:
            differ.append(f"{case.id}: {sorted(before)} -> {sorted(after)}")
    assert outlined > 100 and not differ, "\n".join(differ)


@pytest.mark.parametrize(
    "detector, case", [(d, c) for d, c in FIRING if d.rewrite], ids=lambda x: x.id
)
def test_the_rewrite_a_detector_names_removes_its_construct(detector: Detector, case: Case) -> None:
    applied = BY_NAME[detector.rewrite].function(case.model)
    assert applied is not None
    assert detector.find(applied.model) == []


def test_a_value_a_subgraph_also_reads_has_more_than_one_reader() -> None:
    """Conv+Add fusion needs the Conv's output read by the Add alone; an If branch
    reading it too (an implicit input) is a second reader, and the fusion is off."""
    case = next(c for c in CORPUS.cases if c.id == "conv_bias_fusion.add.empty_name")
    detector = _detector("conv_bias_fusion.add")
    assert detector.find(case.model) == ["graph/node 'conv'"]
    built = onnx.ModelProto()
    built.CopyFrom(case.model)
    branch = helper.make_graph(
        [helper.make_node("Identity", ["conv"], ["seen"])],
        "branch",
        [],
        [tensor("seen", np.float32, None)],
    )
    built.graph.initializer.append(const("flag", np.array(True)))
    built.graph.node.append(
        helper.make_node("If", ["flag"], ["z"], then_branch=branch, else_branch=branch)
    )
    built.graph.output.append(tensor("z", np.float32, None))
    assert detector.find(built) == []


def test_an_empty_input_is_not_an_omitted_one() -> None:
    node = helper.make_node("Clip", ["x", "", "max"], ["y"])
    assert [input_form(node, i) for i in range(4)] == ["given", "empty", "given", "omitted"]
