"""Zero-size dims through Concat, MatMul, Shape and Reshape, next to the same graphs non-zero.

Empty tensors are legal everywhere in ONNX and show up in real models (no
detections, an empty KV cache, a LoRA adapter of rank 0). Each graph below runs
once with a zero-size dim (`.zero`) and once with the same dim non-zero
(`.nonzero`); numpy is the oracle (a MatMul over an empty inner dim gives zeros).

Observed in this matrix:

- MatMul of a zero-size matrix by a vector, [0, 3] x [3] (numpy gives [0]),
  fails in onnxruntime 1.15.1-1.31.1 with "left operand cannot broadcast on
  dim 0" and passes in 1.32.0 (onnxruntime #11895).
- MatMul whose right operand has a zero batch dim against a batch of 1,
  [1, 2, 3] x [0, 3, 4], fails in 1.15.1-1.31.1 with "right operand cannot
  broadcast on dim 0" and passes in 1.32.0 (onnxruntime PR #25663 describes
  the zero-size batch broadcasting fix). A zero batch dim on the *left* passes
  everywhere.
- MatMul over an empty inner dim, [2, 0] x [0, 3] (numpy gives zeros), on
  onnxruntime 1.15.1-1.19.2: the CPU MatMul<float> kernel returns without writing
  its output, so the result is whatever the buffer held. Bound to a NaN-filled
  output it fails every time; in the matrix the freed memory is mostly zeros and it
  showed NaN once in about 225 cell runs (a first `nox -s matrix` exited 1 on it).
  Fixed in 1.20.0 (onnxruntime PR #21803, a K == 0 check); issue #21483 reported
  it for CUDA and DML. Recorded as nondeterministic: xfail whether or not it shows.
- Concat, MatMul over an empty outer dim, Shape (constant-folded to a
  [0, 4] initializer when the dims are static), Reshape with -1 and the
  symbolic Concat -> MatMul -> Shape -> Reshape chain pass every check in every
  release, onnx's shape inference included (it infers the zero dims).
  onnxruntime #20375 (https://github.com/microsoft/onnxruntime/issues/20375)
  was named as the report for zero-size dims through these ops; its text was
  not available when this family was written, and no failure beyond the two
  MatMul rows above reproduced in any release here.

Rare form: zero-size dims through Concat, MatMul, Shape and Reshape
Common twin: the same graphs with the dim non-zero
Shows: onnxruntime < 1.32 cannot broadcast zero-size MatMul operands (onnxruntime #11895)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import onnx
from onnx import helper

from compat.core.case import Case, Detector, Dim, KnownFailure, Optimized
from compat.corpus.make import const, model, randn, rng, tensor, unknown
from compat.corpus.values import Dims, dims
from compat.corpus.walk import find

Arrays = dict[str, np.ndarray]

MATMUL_VECTOR = KnownFailure(
    package="onnxruntime",
    versions="<1.32",
    checks=("ort_run",),
    reason="MatMul [0, K] x [K] fails: left operand cannot broadcast on dim 0",
    link="https://github.com/microsoft/onnxruntime/issues/11895",
    phase=("run",),
    raises=("Fail",),
    match="MatMul node.* left operand cannot broadcast on dim 0",
)
MATMUL_INNER = KnownFailure(
    package="onnxruntime",
    versions="<1.20",
    checks=("ort_run",),
    reason="MatMul<float> with an empty inner dim never writes its output: whatever the "
    "buffer held (NaN, garbage) comes back, only sometimes visible",
    link="https://github.com/microsoft/onnxruntime/pull/21803",
    outcomes=("fail", "flaky"),  # nondeterministic: xfail whether or not it shows
    # garbage against the oracle, or two runs of one session that disagree
    phase=("compare", "run"),
    match=r"output 'y' differs|two runs at level \w+ differ",
)
MATMUL_BATCH = KnownFailure(
    package="onnxruntime",
    versions="<1.32",
    checks=("ort_run",),
    reason="MatMul with a zero batch dim on the right against 1: cannot broadcast",
    link="https://github.com/microsoft/onnxruntime/pull/25663",
    phase=("run",),
    raises=("Fail",),
    match="MatMul node.* right operand cannot broadcast on dim 0",
)


class Graph(NamedTuple):
    nodes: list[onnx.NodeProto]
    inputs: dict[str, list[Dim]]  # declared shapes of the graph inputs
    feeds: dict[str, tuple[int, ...]]  # run shapes of the graph inputs
    initializers: dict[str, np.ndarray]
    oracle: Callable[[Arrays], np.ndarray]
    out_rank: int
    shapes: dict[str, list[Dim]]  # what strict shape inference must infer
    optimized: Optimized | None = None
    known: tuple[KnownFailure, ...] = ()
    text: str = ""


def _graph(name: str, n: int) -> Graph:
    """The graph `name` with its varying dim set to `n` (0 or non-zero)."""
    w = randn(12, 4, 3)
    node = helper.make_node
    if name == "concat":
        return Graph(
            [node("Concat", ["a", "b"], ["y"], axis=1)],
            {"a": [2, n], "b": [2, 3]},
            {"a": (2, n), "b": (2, 3)},
            {},
            lambda v: np.concatenate([v["a"], v["b"]], axis=1),
            2,
            {"y": [2, n + 3]},
            text=f"Concat(a: [2, {n}], b: [2, 3], axis=1)",
        )
    if name == "matmul_inner":
        return Graph(
            [node("MatMul", ["a", "b"], ["y"])],
            {"a": [2, n], "b": [n, 3]},
            {"a": (2, n), "b": (n, 3)},
            {},
            lambda v: np.matmul(v["a"], v["b"]),
            2,
            {"y": [2, 3]},
            known=(MATMUL_INNER,) if n == 0 else (),
            text=f"MatMul(a: [2, {n}], b: [{n}, 3])",
        )
    if name == "matmul_rows":
        return Graph(
            [node("MatMul", ["a", "w"], ["y"])],
            {"a": [n, 4]},
            {"a": (n, 4)},
            {"w": w},
            lambda v: np.matmul(v["a"], w),
            2,
            {"y": [n, 3]},
            text=f"MatMul(a: [{n}, 4], w: [4, 3] initializer)",
        )
    if name == "matmul_vector":
        return Graph(
            [node("MatMul", ["a", "b"], ["y"])],
            {"a": [n, 3], "b": [3]},
            {"a": (n, 3), "b": (3,)},
            {},
            lambda v: np.matmul(v["a"], v["b"]),
            1,
            {"y": [n]},
            known=(MATMUL_VECTOR,) if n == 0 else (),
            text=f"MatMul(a: [{n}, 3], b: [3])",
        )
    if name == "matmul_batch":
        return Graph(
            [node("MatMul", ["a", "b"], ["y"])],
            {"a": [1, 2, 3], "b": [n, 3, 4]},
            {"a": (1, 2, 3), "b": (n, 3, 4)},
            {},
            lambda v: np.matmul(v["a"], v["b"]),
            3,
            {"y": [n, 2, 4]},
            known=(MATMUL_BATCH,) if n == 0 else (),
            text=f"MatMul(a: [1, 2, 3], b: [{n}, 3, 4])",
        )
    if name == "shape_reshape":
        return Graph(
            [node("Shape", ["a"], ["dims"]), node("Reshape", ["flat", "dims"], ["y"])],
            {"a": [n, 4], "flat": [4 * n]},
            {"a": (n, 4), "flat": (4 * n,)},
            {},
            lambda v: v["flat"].reshape(v["a"].shape),
            2,
            {"dims": [2]},
            optimized=Optimized(
                op_counts={"Shape": 0}, meaning="Shape of a static input not folded"
            ),
            text=f"Reshape(flat: [{4 * n}], Shape(a: [{n}, 4]))",
        )
    if name == "reshape_infer":
        return Graph(
            [node("Reshape", ["a", "to"], ["y"])],
            {"a": [n, 4]},
            {"a": (n, 4)},
            {"to": np.array([-1, 2], dtype=np.int64)},
            lambda v: v["a"].reshape(-1, 2),
            2,
            {"y": [2 * n, 2]},
            text=f"Reshape(a: [{n}, 4], [-1, 2])",
        )
    # the symbolic chain: nothing is known until run time
    return Graph(
        [
            node("Concat", ["a", "b"], ["rows"], axis=0),
            node("MatMul", ["rows", "w"], ["product"]),
            node("Shape", ["product"], ["dims"]),
            node("Reshape", ["product", "dims"], ["y"]),
        ],
        {"a": ["N", 4], "b": ["M", 4]},
        {"a": (n, 4), "b": (n, 4)},
        {"w": w},
        lambda v: np.matmul(np.concatenate([v["a"], v["b"]]), w),
        2,
        {"dims": [2]},
        text=f"Concat(a: [N, 4], b: [M, 4]) -> MatMul(w) -> Shape -> Reshape, N = M = {n}",
    )


GRAPHS = (
    "concat",
    "matmul_inner",
    "matmul_rows",
    "matmul_vector",
    "matmul_batch",
    "shape_reshape",
    "reshape_infer",
    "symbolic_chain",
)


def _case(name: str, size: str) -> Case:
    n = 0 if size == "zero" else 2
    g = _graph(name, n)
    gen = rng(13)
    feeds = {k: randn(gen, *shape) for k, shape in g.feeds.items()}
    built = model(
        g.nodes,
        [tensor(k, np.float32, dims) for k, dims in g.inputs.items()],
        [tensor("y", np.float32, unknown(g.out_rank))],
        [const(k, v) for k, v in g.initializers.items()],
    )
    return Case(
        id=f"zero_size_dims.{name}.{size}",
        description=g.text,
        model=built,
        inputs=feeds,
        expected={"y": g.oracle(feeds).astype(np.float32)},
        output_shapes=g.shapes,
        optimized=g.optimized,
        known=g.known,
    )


def cases() -> list[Case]:
    return [_case(name, size) for name in GRAPHS for size in ("zero", "nonzero")]


def _matmuls(model: onnx.ModelProto, judge: Callable[[Dims, Dims], bool]) -> list[str]:
    """The MatMuls whose operands' shapes, as constants or annotations show them, satisfy
    `judge(a, b)` (both shapes known, at least their ranks)."""
    found = []
    for site in find(model, "MatMul"):
        if len(site.node.input) < 2:
            continue
        a, b = (dims(site.scope, name) for name in site.node.input[:2])
        if a is not None and b is not None and judge(a, b):
            found.append(site.path)
    return found


def _zero_rows_by_vector(a: Dims, b: Dims) -> bool:
    return len(b) == 1 and len(a) >= 2 and 0 in a[:-1]


def _empty_inner(a: Dims, b: Dims) -> bool:
    return (len(a) >= 1 and a[-1] == 0) or (len(b) >= 2 and b[-2] == 0) or b == (0,)


def _zero_batch_right_against_one(a: Dims, b: Dims) -> bool:
    if len(b) < 3 or len(a) < 3:
        return False
    pairs = zip(reversed(a[:-2]), reversed(b[:-2]), strict=False)
    return any(right == 0 and left == 1 for left, right in pairs)


#: what the model shows of a zero-size dim: a 0 in a constant's or an annotated shape
SHOWN = "(as the model's constants and annotations show its shapes)"

DETECTORS = [
    Detector(
        id="zero_size_dims.matmul_vector",
        construct=f"MatMul of a matrix with a zero-size dim by a 1-D vector, [0, K] x [K] {SHOWN}",
        known=MATMUL_VECTOR,
        find=lambda m: _matmuls(m, _zero_rows_by_vector),
    ),
    Detector(
        id="zero_size_dims.matmul_inner",
        construct=f"MatMul over an empty inner dim, [M, 0] x [0, N] {SHOWN}",
        known=MATMUL_INNER,
        find=lambda m: _matmuls(m, _empty_inner),
    ),
    Detector(
        id="zero_size_dims.matmul_batch",
        construct=f"MatMul whose right operand has a zero batch dim against a batch dim of 1 "
        f"on the left, [1, M, K] x [0, K, N] {SHOWN}",
        known=MATMUL_BATCH,
        find=lambda m: _matmuls(m, _zero_batch_right_against_one),
    ),
]
