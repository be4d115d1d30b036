"""The seed's annotation semantics, rule by rule (quoted), plus property tests."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

from compat.cell.inputs import generate_inputs
from compat.cell.observe import check_run
from compat.cell.semantics import Bindings, check_value, judge
from compat.corpus.make import model, tensor

F32 = np.float32


def annotation(
    dims: list[int | str | None] | None, elem: int = TensorProto.FLOAT
) -> onnx.TypeProto:
    return helper.make_tensor_type_proto(elem, dims)


def no_shape() -> onnx.TypeProto:
    return helper.make_tensor_type_proto(TensorProto.FLOAT, None)


def arr(*shape: int) -> np.ndarray:
    return np.zeros(shape, dtype=F32)


# --- "Checking a value against its annotation", rule by rule ------------------


def test_rule_1_no_shape_is_satisfied() -> None:
    """Seed: "If a does not specify a rank (no shape at all, i.e. the type has no shape
    field), the check trivially succeeds."
    """
    beta = Bindings()
    assert check_value("v", no_shape(), arr(2, 3), beta) == []
    assert beta.sizes == {}


def test_rule_2_a_different_rank_fails() -> None:
    """Seed: "If a specifies a rank different from r, the check fails." """
    (v,) = check_value("v", annotation(["N", 3]), arr(2, 3, 4), Bindings())
    assert (v.value, v.axis, v.declared, v.actual) == ("v", None, "rank 2", "rank 3")
    assert v.key == "v:rank"


def test_rule_2_rank_zero_is_a_rank() -> None:
    assert check_value("v", annotation([]), np.array(1.0, dtype=F32), Bindings()) == []
    (v,) = check_value("v", annotation([1]), np.array(1.0, dtype=F32), Bindings())
    assert v.declared == "rank 1" and v.actual == "rank 0"


def test_rule_3_dim_value_requires_equality() -> None:
    """Seed: "if a_i is a constant dim_value = k, the check requires s_i == k"."""
    assert check_value("v", annotation([2, 3]), arr(2, 3), Bindings()) == []
    (v,) = check_value("v", annotation([2, 3]), arr(2, 4), Bindings())
    assert (v.axis, v.declared, v.actual, v.bound_by) == (1, "3", "4", None)
    assert v.message == "value 'v' axis 1: declared 3, actual 4"


def test_rule_3_dim_param_binds_on_first_sight() -> None:
    """Seed: "otherwise, the check succeeds for this axis and binds β("N") := s_i"."""
    beta = Bindings()
    assert check_value("x", annotation(["N", "M"]), arr(2, 5), beta) == []
    assert beta.sizes == {"N": 2, "M": 5}


def test_rule_3_dim_param_compares_afterwards_and_names_the_binder() -> None:
    """Seed: "if β("N") is already defined, the check requires s_i == β("N")"."""
    beta = Bindings()
    check_value("x", annotation(["N"]), arr(2), beta)
    assert check_value("y", annotation(["N"]), arr(2), beta) == []
    (v,) = check_value("z", annotation([1, "N"]), arr(1, 3), beta)
    assert (v.value, v.axis, v.declared, v.actual, v.bound_by) == ("z", 1, "N", "3", "'x' axis 0")
    assert v.message == "value 'z' axis 1: declared N = 2 (bound by 'x' axis 0), actual 3"


def test_rule_3_a_dimension_with_neither_set_asserts_nothing() -> None:
    """Seed: "if a_i has neither dim_value nor dim_param set, the check trivially succeeds
    for this axis (an anonymous unknown dimension asserts nothing)."
    """
    beta = Bindings()
    assert check_value("v", annotation([None, None]), arr(7, 0), beta) == []
    assert beta.sizes == {}


def test_zero_is_a_size_a_name_can_bind() -> None:
    """β maps names to "non-negative integers": 0 included."""
    beta = Bindings()
    assert check_value("x", annotation(["N", 3]), arr(0, 3), beta) == []
    assert beta.sizes == {"N": 0}


def test_beta_is_never_overwritten() -> None:
    """Seed: "an existing entry is never overwritten, only added to." """
    beta = Bindings()
    check_value("x", annotation(["N"]), arr(2), beta)
    check_value("y", annotation(["N"]), arr(9), beta)  # a violation does not rebind
    assert beta.sizes == {"N": 2} and beta.origin == {"N": ("x", 0)}


def test_the_element_type_is_checked() -> None:
    (v,) = check_value("v", annotation([2]), np.zeros(2, dtype=np.int64), Bindings())
    assert (v.key, v.declared, v.actual) == ("v:dtype", "float32", "int64")


def test_a_value_with_no_annotation_places_no_obligation() -> None:
    """Seed: "an annotation on an unchecked value places no runtime obligation" — and a value
    without one is simply not checked."""
    assert check_value("v", None, arr(2), Bindings()) == []


# --- whole runs ------------------------------------------------------------------


def concat_model(out_dims: list[int | str | None]) -> onnx.ModelProto:
    return model(
        [helper.make_node("Concat", ["x", "x"], ["y"], axis=0)],
        [tensor("x", F32, ["N"])],
        [tensor("y", F32, out_dims)],
    )


@pytest.mark.parametrize("runtime", ["ort", "reference"])
def test_an_output_assertion_is_judged_against_the_run(runtime: str) -> None:
    """Outputs are "assertions that are expected to hold true in any inference run\"."""
    assert check_run(concat_model([None]), {"x": arr(2)}, runtime).ok
    verdict = check_run(concat_model(["N"]), {"x": arr(2)}, runtime)
    assert verdict.keys == ["y:0"] and verdict.bindings == {"N": 2}


@pytest.mark.parametrize("runtime", ["ort", "reference"])
def test_inputs_are_preconditions_reported_even_when_the_runtime_refuses(runtime: str) -> None:
    """ "Annotations attached to the model's inputs are preconditions." """
    fixed = model(
        [helper.make_node("Neg", ["x"], ["y"])], [tensor("x", F32, [3])], [tensor("y", F32, [3])]
    )
    verdict = check_run(fixed, {"x": arr(2)}, runtime)
    assert verdict.violations[0].precondition
    assert verdict.violations[0].message.startswith("input 'x' (a precondition) axis 0")
    if runtime == "ort":
        assert verdict.error and "ort run failed" in verdict.error  # onnxruntime refused it


def test_every_run_gets_a_fresh_binding_map() -> None:
    """Seed: "Different runs (different inputs) may pick different witnesses for N." """
    doubled = concat_model([None])
    first, second = check_run(doubled, {"x": arr(2)}), check_run(doubled, {"x": arr(5)})
    assert first.ok and second.ok
    assert (first.bindings, second.bindings) == ({"N": 2}, {"N": 5})


def if_model(then_dims: list[int | str | None]) -> onnx.ModelProto:
    then = helper.make_graph(
        [
            helper.make_node("Concat", ["x", "x"], ["t"], axis=0),
            helper.make_node("Identity", ["t"], ["t_out"]),
        ],
        "then",
        [],
        [tensor("t_out", F32, [None])],
    )
    then.value_info.append(tensor("t", F32, then_dims))
    other = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["e"])], "else", [], [tensor("e", F32, [None])]
    )
    return model(
        [helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)],
        [tensor("x", F32, ["N"]), tensor("c", np.bool_, [])],
        [tensor("y", F32, [None])],
    )


def test_names_are_global_across_nested_subgraphs() -> None:
    """Seed: "a dim_param with a given name denotes the same value everywhere it occurs in a
    model, including inside nested subgraphs."
    """
    feeds = {"x": arr(3), "c": np.array(True)}
    assert check_run(if_model(["M"]), feeds, "reference").ok  # a new name binds in the branch
    verdict = check_run(if_model(["N"]), feeds, "reference")
    assert verdict.keys == ["t:0"] and verdict.violations[0].bound_by == "'x' axis 0"


def test_a_value_the_runtime_cannot_observe_is_unchecked_never_claimed() -> None:
    verdict = check_run(if_model(["N"]), {"x": arr(3), "c": np.array(True)}, "ort")
    assert verdict.ok  # onnxruntime cannot see inside the branch...
    assert "t" in verdict.unchecked  # ...and says so


def test_generated_inputs_satisfy_the_input_annotations() -> None:
    built = model(
        [helper.make_node("Add", ["a", "b"], ["y"])],
        [tensor("a", F32, ["N", 3, None]), tensor("b", np.int64, ["N", 1, 1])],
        [tensor("y", F32, [None, None, None])],
    )
    feeds = generate_inputs(built, {"N": 4})
    assert feeds["a"].shape == (4, 3, 2) and feeds["b"].shape == (4, 1, 1)
    assert feeds["b"].dtype == np.int64


# --- properties --------------------------------------------------------------------


@st.composite
def dag_with_annotations(
    draw: st.DrawFn,
) -> tuple[list[list[int]], list[tuple[str, object, np.ndarray]]]:
    """A random DAG of values with random actual shapes and random annotations."""
    count = draw(st.integers(2, 8))
    parents = [
        sorted(set(draw(st.lists(st.integers(0, i - 1), max_size=2)))) if i else []
        for i in range(count)
    ]
    names = ["N", "M", "K"]
    values = []
    for i in range(count):
        shape = draw(st.lists(st.integers(0, 3), min_size=0, max_size=3))
        kind = draw(st.sampled_from(["none", "exact", "random"]))
        if kind == "none":
            type_proto = no_shape()
        else:
            rank = len(shape) if kind == "exact" or draw(st.booleans()) else len(shape) + 1
            dims = [
                draw(st.one_of(st.integers(0, 3), st.sampled_from(names), st.none()))
                for _ in range(rank)
            ]
            type_proto = annotation(dims)
        values.append((f"v{i}", type_proto, arr(*shape)))
    return parents, values


def topological_order(parents: list[list[int]], rng: random.Random) -> list[int]:
    remaining, order = set(range(len(parents))), []
    while remaining:
        ready = sorted(i for i in remaining if all(p in order for p in parents[i]))
        choice = rng.choice(ready)
        order.append(choice)
        remaining.remove(choice)
    return order


def verdict_in(
    order: list[int], values: list[tuple[str, object, np.ndarray]]
) -> tuple[bool, list[dict[str, int]]]:
    beta, ok, history = Bindings(), True, []
    for i in order:
        name, type_proto, array = values[i]
        ok &= not check_value(name, type_proto, array, beta)
        history.append(dict(beta.sizes))
    return ok, history


@settings(max_examples=200, deadline=None)
@given(dag_with_annotations(), st.randoms(use_true_random=False))
def test_the_verdict_is_the_same_under_every_topological_order(
    dag: tuple[list[list[int]], list[tuple[str, object, np.ndarray]]], rng: random.Random
) -> None:
    """Seed: "whether a model's declared annotations hold for a given run is a well-defined
    property of the run, independent of execution order."
    """
    parents, values = dag
    verdicts = {verdict_in(topological_order(parents, rng), values)[0] for _ in range(6)}
    assert len(verdicts) == 1


@settings(max_examples=200, deadline=None)
@given(dag_with_annotations(), st.randoms(use_true_random=False))
def test_beta_only_grows(
    dag: tuple[list[list[int]], list[tuple[str, object, np.ndarray]]], rng: random.Random
) -> None:
    """Seed: "β starts empty and grows monotonically over the course of the run." """
    parents, values = dag
    _, history = verdict_in(topological_order(parents, rng), values)
    for before, after in itertools.pairwise(history):
        assert after.items() >= before.items()


@st.composite
def real_model(draw: st.DrawFn) -> onnx.ModelProto:
    """A random chain-and-branch model of shape-changing ops on one input."""
    rank = draw(st.integers(1, 3))
    shape = draw(st.lists(st.integers(0, 3), min_size=rank, max_size=rank))
    nodes, values, ranks = [], ["x"], {"x": rank}
    for i in range(draw(st.integers(1, 6))):
        source = draw(st.sampled_from(values))
        out = f"v{i}"
        op = draw(st.sampled_from(["Relu", "Concat", "Transpose", "Unsqueeze"]))
        if op == "Concat":
            axis = draw(st.integers(0, ranks[source] - 1))
            nodes.append(helper.make_node("Concat", [source, source], [out], axis=axis))
            ranks[out] = ranks[source]
        elif op == "Unsqueeze" and ranks[source] < 4:
            nodes.append(helper.make_node("Unsqueeze", [source, "zero"], [out]))
            ranks[out] = ranks[source] + 1
        elif op == "Transpose":
            nodes.append(helper.make_node("Transpose", [source], [out]))
            ranks[out] = ranks[source]
        else:
            nodes.append(helper.make_node("Relu", [source], [out]))
            ranks[out] = ranks[source]
        values.append(out)
    zero = helper.make_tensor("zero", TensorProto.INT64, [1], [0])
    built = model(
        nodes,
        [tensor("x", F32, shape)],
        [tensor(values[-1], F32, [None] * ranks[values[-1]])],
        [zero],
    )
    return built


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(real_model(), st.sampled_from(["ort", "reference"]), st.data())
def test_annotations_read_off_a_real_run_hold_for_that_run(
    built: onnx.ModelProto, runtime: str, data: st.DataObject
) -> None:
    """Annotate every value with what one real run produced (a size, a name shared by every
    axis of that size, or nothing): the same run must satisfy all of them."""
    feeds = generate_inputs(built)
    observed = dict(check_run_observations(built, feeds))
    annotated = onnx.ModelProto()
    annotated.CopyFrom(built)
    for name, value in observed.items():
        dims = [
            data.draw(st.sampled_from([size, f"S{size}", None]), label=f"{name} axis {axis}")
            for axis, size in enumerate(value.shape)
        ]
        if name == annotated.graph.output[0].name:
            annotated.graph.output[0].CopyFrom(tensor(name, F32, dims))
        else:
            annotated.graph.value_info.append(tensor(name, F32, dims))
    verdict = check_run(annotated, feeds, runtime)
    assert verdict.ok, verdict.violations
    assert not verdict.unchecked


def check_run_observations(
    built: onnx.ModelProto, feeds: dict[str, np.ndarray]
) -> list[tuple[str, np.ndarray]]:
    from onnx.reference import ReferenceEvaluator

    names = [o for node in built.graph.node for o in node.output]
    results = ReferenceEvaluator(built).run(names, feeds)
    return list(zip(names, results, strict=True))


def test_judge_checks_inputs_before_anything_else() -> None:
    built = concat_model(["N"])
    verdict = judge(built, {"x": arr(3)}, [("y", arr(6))])
    assert verdict.bindings == {"N": 3}  # bound by the input, so y is the violator
    assert verdict.keys == ["y:0"]


def loop_model(body_dims: list[int | str | None]) -> onnx.ModelProto:
    """Loop three times over v -> v + 1; the body's `w` is annotated `body_dims`."""
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Add", ["v_in", "one"], ["w"]),
            helper.make_node("Identity", ["w"], ["v_out"]),
        ],
        "body",
        [tensor("i", np.int64, []), tensor("cond_in", np.bool_, []), tensor("v_in", F32, [None])],
        [tensor("cond_out", np.bool_, []), tensor("v_out", F32, [None])],
        [helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])],
    )
    body.value_info.append(tensor("w", F32, body_dims))
    return model(
        [helper.make_node("Loop", ["trips", "cond", "x"], ["y"], body=body)],
        [tensor("x", F32, ["N"])],
        [tensor("y", F32, [None])],
        [
            helper.make_tensor("trips", TensorProto.INT64, [], [3]),
            helper.make_tensor("cond", TensorProto.BOOL, [], [True]),
        ],
    )


def test_values_inside_a_loop_body_are_checked_at_every_iteration() -> None:
    holds = check_run(loop_model(["N"]), {"x": arr(4)}, "reference")
    assert holds.ok and "w" not in holds.unchecked
    violated = check_run(loop_model([5]), {"x": arr(4)}, "reference")
    assert violated.keys == ["w:0", "w:0", "w:0"]  # once per iteration


# --- an output's annotation is an assertion, whatever else names that value -------


def violated_output(kind: str, shadow: bool = False) -> onnx.ModelProto:
    """x: [N, 4]. `rank`: Unsqueeze gives [1, N, 4], declared [1, N]; `symbolic`: Concat
    on axis 0 gives [2N, 4], declared [N, 4] (N bound by the input); `fixed`: Identity
    gives [N, 4], declared [N, 5]. `shadow`: a value_info of the same name, typed, with
    no shape (an exporter's leftover), beside the output's annotation."""
    nodes = {
        "rank": [helper.make_node("Unsqueeze", ["x", "axes"], ["y"])],
        "symbolic": [helper.make_node("Concat", ["x", "x"], ["y"], axis=0)],
        "fixed": [helper.make_node("Identity", ["x"], ["y"])],
    }[kind]
    declared = {"rank": [1, "N"], "symbolic": ["N", 4], "fixed": ["N", 5]}[kind]
    built = model(nodes, [tensor("x", F32, ["N", 4])], [tensor("y", F32, declared)])
    if kind == "rank":
        built.graph.initializer.append(onnx.numpy_helper.from_array(np.array([0]), "axes"))
    if shadow:
        built.graph.value_info.append(helper.make_value_info("y", no_shape()))
    return built


@pytest.mark.parametrize("runtime", ["ort", "reference"])
@pytest.mark.parametrize("kind", ["rank", "symbolic", "fixed"])
@pytest.mark.parametrize("shadow", [False, True])
def test_a_violated_output_annotation_is_found_even_behind_a_shapeless_value_info(
    runtime: str, kind: str, shadow: bool
) -> None:
    verdict = check_run(violated_output(kind, shadow), {"x": arr(3, 4)}, runtime)
    expected = {"rank": "y:rank", "symbolic": "y:0", "fixed": "y:1"}[kind]
    assert verdict.keys == [expected] and verdict.observed == ["y"]
    message = verdict.violations[0].message
    assert message.startswith("value 'y'")
    assert {
        "rank": "declared [1, N] has rank 2, actual shape [1, 3, 4] has rank 3",
        "symbolic": "declared N = 3 (bound by 'x' axis 0), actual 6",
        "fixed": "axis 1: declared 5, actual 4",
    }[kind] in message


def test_a_negative_dim_value_is_read_as_unknown_and_said_to_be_non_standard() -> None:
    paddle = model(  # paddle2onnx's way of writing "any batch": dim_value -1
        [helper.make_node("Relu", ["x"], ["y"])],
        [tensor("x", F32, [-1, 3, "h", "w"])],
        [tensor("y", F32, [-1, 3, "h", "w"])],
    )
    for runtime in ("ort", "reference"):
        assert check_run(paddle, {"x": arr(2, 3, 8, 8)}, runtime).ok
    feeds = generate_inputs(paddle)
    assert feeds["x"].shape[0] > 0  # generated inputs pick a real size for it
    from compat.cell.semantics import nonstandard_dims

    assert nonstandard_dims(paddle.graph) == ["x", "y"]


def test_a_pass_says_why_each_declared_value_was_not_observed(tmp_path: Path) -> None:
    """annotations.if_branch_shared declares four values, three of them inside the If's
    branches: onnxruntime shows none of those, and the reference evaluator runs one
    branch only. Each part's pass names what it did not see, and why."""
    from compat.cell.casedata import CaseData
    from compat.cell.checks_annotations import check_annotations
    from compat.corpus.discover import discover_cases, write_case
    from tests.conftest import ROOT

    cases = discover_cases(ROOT / "cases").cases
    (case,) = [c for c in cases if c.id == "annotations.if_branch_shared"]
    data = CaseData(str(write_case(case, tmp_path).directory))
    ort = check_annotations(data, ("ort",))
    assert ort.startswith("ort run 1: 1 of 4 annotated values checked"), ort
    assert "ort shows no value inside a subgraph ('" in ort
    reference = check_annotations(data, ("reference",))
    assert reference.startswith("reference run 1: 3 of 4 annotated values checked"), reference
    assert "reference produced no 'e_out'" in reference
