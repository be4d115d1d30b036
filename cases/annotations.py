"""Shape annotations judged against real runs: one binding map per run, names global.

Each case exercises one rule of seed 000 ("Semantics of Shape Annotations"):
a dim_param binds on first sight and is compared afterwards, a dim_value is an
equality, an anonymous dim or a missing shape asserts nothing, a rank mismatch
is a violation, names are shared into nested subgraphs, and every run starts
with an empty binding map. Cases named `*_violated` must produce the violation
they declare (`violations`), and the `annotations` check passes only when that
exact value and axis is reported. The checker and strict shape inference may
reject a deliberately wrong annotation statically; those checks are left out
where they would judge the case's purpose rather than a release, and so is
`ort_run` for a wrong element type, which onnxruntime refuses to load.

Rare form: shared, anonymous, rank-0 and zero-size dims; names shared into If
Common twin: their `*_violated` twins
Shows: ONNX's shape-annotation semantics, rule by rule, judged on real runs
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from compat.core.case import BUILTIN_CHECKS, Case
from compat.corpus.make import model, randn, tensor

F32 = np.float32
#: A deliberately wrong annotation may be rejected statically (checker, strict
#: inference), and whatever inference derives from it is built on a falsehood.
VIOLATED_CHECKS = tuple(
    c for c in BUILTIN_CHECKS if c not in ("checker", "shape_inference", "inferred_annotations")
)

#: onnxruntime refuses to load a model whose value_info has the wrong element type.
NOT_LOADABLE_CHECKS = tuple(c for c in VIOLATED_CHECKS if c not in ("ort_run", "ort_optimized"))


def info(name: str, dims: list[int | str | None] | None, dtype: type = F32) -> onnx.ValueInfoProto:
    return tensor(name, dtype, dims)


def _case(variant: str, description: str, built: onnx.ModelProto, **fields: object) -> Case:
    return Case(id=f"annotations.{variant}", description=description, model=built, **fields)  # type: ignore[arg-type]


def shared_consistent() -> Case:
    built = model(
        [helper.make_node("Add", ["x", "y"], ["z"])],
        [info("x", ["N", 3]), info("y", ["N", 3])],
        [info("z", ["N", 3])],
    )
    x, y = randn(0, 2, 3), randn(1, 2, 3)
    return _case(
        "shared_consistent",
        "x: [N, 3] + y: [N, 3] -> z: [N, 3]",
        built,
        inputs={"x": x, "y": y},
        expected={"z": x + y},
    )


def shared_inconsistent_violated() -> Case:
    built = model(
        [helper.make_node("Concat", ["x", "y"], ["z"], axis=0)],
        [info("x", ["N"]), info("y", ["N"])],
        [info("z", [None])],
    )
    x, y = randn(0, 2), randn(1, 3)
    return _case(
        "shared_inconsistent_violated",
        "inputs x: [N] and y: [N] fed sizes 2 and 3: the precondition on y fails",
        built,
        inputs={"x": x, "y": y},
        expected={"z": np.concatenate([x, y])},
        violations=("y:0",),
        builtin_checks=VIOLATED_CHECKS,
    )


def bound_at_intermediate() -> Case:
    built = model(
        [
            helper.make_node("Relu", ["x"], ["t"]),
            helper.make_node("Add", ["t", "t"], ["y"]),
        ],
        [info("x", [None])],
        [info("y", ["N"])],
    )
    built.graph.value_info.append(info("t", ["N"]))
    x = randn(0, 4)
    return _case(
        "bound_at_intermediate",
        "x: [?] -> t = Relu(x): [N] (first binds N) -> y: [N]",
        built,
        inputs={"x": x},
        expected={"y": 2 * np.maximum(x, 0)},
    )


def output_violated() -> Case:
    built = model(
        [helper.make_node("Concat", ["x", "x"], ["y"], axis=0)],
        [info("x", ["N"])],
        [info("y", ["N"])],
    )
    x = randn(0, 2)
    return _case(
        "output_violated",
        "y = Concat(x, x) declared [N] like x: it is [2N]",
        built,
        inputs={"x": x},
        expected={"y": np.concatenate([x, x])},
        violations=("y:0",),
        builtin_checks=VIOLATED_CHECKS,
    )


def dim_value_violated() -> Case:
    built = model(
        [helper.make_node("Concat", ["x", "x"], ["y"], axis=0)],
        [info("x", [2])],
        [info("y", [3])],
    )
    x = randn(0, 2)
    return _case(
        "dim_value_violated",
        "y = Concat(x: [2], x) annotated [3]: it is [4]",
        built,
        inputs={"x": x},
        expected={"y": np.concatenate([x, x])},
        violations=("y:0",),
        builtin_checks=VIOLATED_CHECKS,
    )


def anonymous_dims() -> Case:
    built = model(
        [helper.make_node("Concat", ["x", "x"], ["y"], axis=1)],
        [info("x", [None, 3])],
        [info("y", [None, None])],
    )
    x = randn(0, 5, 3)
    return _case(
        "anonymous_dims",
        "x: [?, 3] -> y: [?, ?]: anonymous dims assert nothing",
        built,
        inputs={"x": x},
        expected={"y": np.concatenate([x, x], axis=1)},
    )


def unknown_rank() -> Case:
    built = model(
        [
            helper.make_node("Reshape", ["x", "flat"], ["t"]),
            helper.make_node("Neg", ["t"], ["y"]),
        ],
        [info("x", ["N", 3])],
        [info("y", [None])],
        [helper.make_tensor("flat", onnx.TensorProto.INT64, [1], [-1])],
    )
    built.graph.value_info.append(info("t", None))  # element type, no shape field
    x = randn(0, 2, 3)
    return _case(
        "unknown_rank",
        "t = Reshape(x, [-1]) annotated without a shape: no rank asserted",
        built,
        inputs={"x": x},
        expected={"y": -x.reshape(-1)},
    )


def rank_zero() -> Case:
    built = model(
        [helper.make_node("ReduceSum", ["x"], ["y"], keepdims=0)],
        [info("x", ["N"])],
        [info("y", [])],
    )
    x = randn(0, 3)
    return _case(
        "rank_zero",
        "y = ReduceSum(x, keepdims=0): a scalar annotated [] (rank 0)",
        built,
        inputs={"x": x},
        expected={"y": np.array(x.sum(), dtype=F32)},
        atol=1e-5,
    )


def rank_violated() -> Case:
    built = model(
        [helper.make_node("ReduceSum", ["x"], ["y"], keepdims=0)],
        [info("x", ["N"])],
        [info("y", [1])],
    )
    x = randn(0, 3)
    return _case(
        "rank_violated",
        "a scalar annotated [1]: rank 1 declared, rank 0 produced",
        built,
        inputs={"x": x},
        expected={"y": np.array(x.sum(), dtype=F32)},
        atol=1e-5,
        violations=("y:rank",),
        builtin_checks=VIOLATED_CHECKS,
    )


def dtype_violated() -> Case:
    built = model(
        [
            helper.make_node("Cast", ["x"], ["t"], to=onnx.TensorProto.INT64),
            helper.make_node("Identity", ["t"], ["y"]),
        ],
        [info("x", ["N"])],
        [info("y", ["N"], np.int64)],
    )
    built.graph.value_info.append(info("t", ["N"], F32))
    x = np.array([1.0, 2.0], dtype=F32)
    return _case(
        "dtype_violated",
        "t = Cast(x, to=int64) annotated float32 in value_info",
        built,
        inputs={"x": x},
        expected={"y": x.astype(np.int64)},
        violations=("t:dtype",),
        builtin_checks=NOT_LOADABLE_CHECKS,
    )


def zero_size() -> Case:
    built = model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [info("x", ["N", 3])],
        [info("y", ["N", 3])],
    )
    x = np.zeros((0, 3), dtype=F32)
    return _case(
        "zero_size",
        "x: [N, 3] fed N = 0: N binds to 0, y: [N, 3] holds",
        built,
        inputs={"x": x},
        expected={"y": x},
    )


def _if_model(then_node: onnx.NodeProto) -> onnx.ModelProto:
    then_graph = helper.make_graph(
        [then_node, helper.make_node("Identity", ["t"], ["t_out"])],
        "then",
        [],
        [info("t_out", [None])],
    )
    then_graph.value_info.append(info("t", ["N"]))  # N is the outer N: one namespace
    else_graph = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["e_out"])], "else", [], [info("e_out", [None])]
    )
    return model(
        [helper.make_node("If", ["cond"], ["y"], then_branch=then_graph, else_branch=else_graph)],
        [info("x", ["N"]), info("cond", [], np.bool_)],
        [info("y", [None])],
    )


def if_branch_shared() -> Case:
    x = randn(0, 3)
    return _case(
        "if_branch_shared",
        "x: [N]; inside If's then-branch t = Relu(x): [N], the same N",
        _if_model(helper.make_node("Relu", ["x"], ["t"])),
        inputs={"x": x, "cond": np.array(True)},
        expected={"y": np.maximum(x, 0)},
    )


def if_branch_violated() -> Case:
    x = randn(0, 3)
    return _case(
        "if_branch_violated",
        "x: [N]; inside If's then-branch t = Concat(x, x) annotated [N]: it is [2N]",
        _if_model(helper.make_node("Concat", ["x", "x"], ["t"], axis=0)),
        inputs={"x": x, "cond": np.array(True)},
        expected={"y": np.concatenate([x, x])},
        violations=("t:0",),
        builtin_checks=VIOLATED_CHECKS,
    )


def two_runs() -> Case:
    built = model(
        [helper.make_node("Neg", ["x"], ["y"])],
        [info("x", ["N"])],
        [info("y", ["N"])],
    )
    x = randn(0, 2)
    return _case(
        "two_runs",
        "x: [N] -> y: [N] run with N = 2, then N = 5: a fresh β per run",
        built,
        inputs={"x": x},
        expected={"y": -x},
        extra_runs=({"x": randn(1, 5)},),
    )


def cases() -> list[Case]:
    return [
        shared_consistent(),
        shared_inconsistent_violated(),
        bound_at_intermediate(),
        output_violated(),
        dim_value_violated(),
        anonymous_dims(),
        unknown_rank(),
        rank_zero(),
        rank_violated(),
        dtype_violated(),
        zero_size(),
        if_branch_shared(),
        if_branch_violated(),
        two_runs(),
    ]
