"""OneHot as tf2onnx writes it: int32 indices, depth as a 1-element tensor, values from
a Concat of Unsqueezes, next to the plain OneHot(int64 indices, scalar depth, values).

tf2onnx's OneHot handler (tf2onnx/onnx_opset/tensor.py, `version_9`, reused for 11)
turns TF's scalar depth into `Unsqueeze(depth, [0])`, a 1-element tensor, and writes
`values` as `Concat(Unsqueeze(off), Unsqueeze(on))`; its constant folding then leaves a
1-element int32 depth and a 2-element values initializer; the indices stay TF's int32
and the axis stays -1 (magika's model is written so). The spec allows depth as a scalar
"or rank 1 tensor containing exactly one element" (onnx #2210; onnx's own node tests
use a scalar since onnx PR #3774). Observed in this matrix (onnx 1.14.1-1.23.2,
onnxruntime 1.15.1-1.32.0):

- onnx's reference evaluator fails on every 1-element depth, on every onnx release:
  its OneHot calls `np.arange(depth)`, which takes the 1-element array as a scalar, a
  conversion numpy deprecated in 1.25 and refuses from 2.4 ("TypeError: only
  0-dimensional arrays can be converted to Python scalars", wrapped as "Issues with
  types ... (operator 'OneHot')"); with numpy 1.26.4 or 2.3.5 it only warns and
  computes the right outputs. So that the answer does not follow the cell's numpy,
  these cases replace the built-in `reference` with `reference_strict`, the same run
  with numpy's DeprecationWarnings as errors: it fails on every onnx release and every
  numpy (the TypeError with numpy 2.4.6, the DeprecationWarning with 1.26.4). No
  upstream report found; the minimal model is `OneHot(indices, depth=[5], values)`.
- onnxruntime has no OneHot kernel for int32 indices with an int64 depth ("NOT_IMPLEMENTED
  : Could not find an implementation for OneHot(11)") on every release: its CPU kernel
  is registered for a fixed list of (indices, output, depth) types (onnxruntime #1537).
  tf2onnx's own pairing (int32 indices, int32 depth) and int64 indices with an int32
  depth run everywhere.
- Shape inference leaves the depth dim unknown on onnx <= 1.16.2 even for a constant
  depth; 1.17.0 reads it from the initializer (onnx PR #5963). A depth computed by an
  Unsqueeze (tf2onnx before folding) stays unknown on every release: that case declares
  no output shape.
- The checker, negative indices (counted from the end) and axis 0 pass everywhere.

https://github.com/onnx/onnx/issues/2210
https://github.com/onnx/onnx/pull/5963
https://github.com/microsoft/onnxruntime/issues/1537

Rare form: `OneHot(int32 indices, depth=[5] (1-element), Concat(off, on))`, axis -1
Common twin: `OneHot(int64 indices, depth=5 (scalar), values initializer)`
Shows: onnx's reference fails on a 1-element depth (numpy 2.4); ort lacks int32-indices/int64-depth
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper

from compat.core.case import BUILTIN_CHECKS, Case, CustomCheck, Detector, KnownFailure
from compat.corpus.make import const, model, tensor, unknown
from compat.corpus.values import constant, dims, elem_type, made_by
from compat.corpus.walk import find

INDICES = np.array([[0, 2, 4], [1, 3, 0]])
NEGATIVE = np.array([[0, -1, 4], [-5, 3, -2]])
DEPTH, OFF, ON = 5, -1.0, 3.0
STRICT_REFERENCE = CustomCheck(
    name="reference_strict",
    file=str(Path(__file__).with_name("_onehot_checks.py")),
    function="reference_strict",
    package="onnx",
)
DEPTH_1ELEM = KnownFailure(
    package="onnx",
    versions="",
    checks=("reference_strict",),
    reason="the reference OneHot takes a 1-element depth as a scalar (np.arange), a "
    "conversion numpy deprecated in 1.25 and refuses from 2.4",
    link="https://github.com/onnx/onnx/issues/2210",
    phase=("check",),
    raises=("TypeError", "DeprecationWarning"),
    match=r"\(operator 'OneHot'\)|Conversion of an array with ndim > 0 to a scalar",
)
#: the same bug as a model's own `reference` meets it (a drop-in runs no reference_strict):
#: only where the cell has numpy >= 2.4 (`requires` of its detector), as a TypeError in
#: the run, and in annotations_builtin, whose own verdict shares that reference run
DEPTH_1ELEM_NUMPY = KnownFailure(
    package="onnx",
    versions="",
    checks=("reference", "annotations_builtin"),
    reason="the reference OneHot takes a 1-element depth as a scalar (np.arange), which "
    "numpy refuses from 2.4",
    link="https://github.com/onnx/onnx/issues/2210",
)
NO_KERNEL = KnownFailure(
    package="onnxruntime",
    versions="",
    checks=("ort_run",),
    reason="onnxruntime has no OneHot kernel for int32 indices with an int64 depth",
    link="https://github.com/microsoft/onnxruntime/issues/1537",
    phase=("session",),
    raises=("NotImplemented",),
    match=r"Could not find an implementation for OneHot\(11\)",
)
DEPTH_UNREAD = KnownFailure(
    package="onnx",
    versions="<1.17",
    checks=("shape_inference",),
    reason="shape inference before onnx 1.17 ignores a constant depth: the depth dim is unknown",
    link="https://github.com/onnx/onnx/pull/5963",
    phase=("compare",),
    match=r"inferred shape of 'y' is .*'unk__0'",
)


def _oracle(indices: np.ndarray, axis: int) -> np.ndarray:
    """on where the (negative: counted from the end) index names the position, else off."""
    wrapped = np.where(indices < 0, indices + DEPTH, indices)
    hot = wrapped[..., None] == np.arange(DEPTH)
    out = np.where(hot, np.float32(ON), np.float32(OFF)).astype(np.float32)
    return np.moveaxis(out, -1, axis)


def _graph(form: dict[str, Any]) -> tuple[list[onnx.NodeProto], list[onnx.TensorProto]]:
    depth_type = form["depth"]
    nodes: list[onnx.NodeProto] = []
    inits = [const("axes0", np.array([0], dtype=np.int64))]
    if form["shape"] == "scalar":
        inits.append(const("depth", np.array(DEPTH, dtype=depth_type)))
    elif form["shape"] == "one":
        inits.append(const("depth", np.array([DEPTH], dtype=depth_type)))
    else:  # tf2onnx before its constant folding: Unsqueeze of TF's scalar depth
        inits.append(const("depth_scalar", np.array(DEPTH, dtype=depth_type)))
        nodes.append(helper.make_node("Unsqueeze", ["depth_scalar", "axes0"], ["depth"]))
    if form.get("concat"):
        inits += [
            const("off", np.array(OFF, dtype=np.float32)),
            const("on", np.array(ON, dtype=np.float32)),
        ]
        nodes += [
            helper.make_node("Unsqueeze", ["off", "axes0"], ["off1"]),
            helper.make_node("Unsqueeze", ["on", "axes0"], ["on1"]),
            helper.make_node("Concat", ["off1", "on1"], ["values"], axis=0),
        ]
    else:
        inits.append(const("values", np.array([OFF, ON], dtype=np.float32)))
    attrs = {} if form["axis"] is None else {"axis": form["axis"]}
    nodes.append(helper.make_node("OneHot", ["indices", "depth", "values"], ["y"], **attrs))
    return nodes, inits


FORMS: dict[str, dict[str, Any]] = {
    # name -> indices and depth types, depth's shape, axis, values from a Concat
    "plain": dict(indices=np.int64, depth=np.int64, shape="scalar", axis=None),
    "depth_1elem": dict(indices=np.int64, depth=np.int64, shape="one", axis=None),
    "tf2onnx": dict(indices=np.int32, depth=np.int32, shape="one", axis=-1),
    "tf2onnx_unfolded": dict(
        indices=np.int32, depth=np.int32, shape="unsqueeze", axis=-1, concat=True
    ),
    "int32_indices_int64_depth": dict(indices=np.int32, depth=np.int64, shape="scalar", axis=-1),
    "int64_indices_int32_depth": dict(indices=np.int64, depth=np.int32, shape="scalar", axis=-1),
    "axis0": dict(indices=np.int64, depth=np.int64, shape="scalar", axis=0),
    "negative_indices": dict(
        indices=np.int64, depth=np.int64, shape="scalar", axis=None, negative=True
    ),
}


def _spelled(name: str, form: dict[str, Any]) -> str:
    depth = {"scalar": f"{DEPTH}", "one": f"[{DEPTH}]", "unsqueeze": f"Unsqueeze({DEPTH})"}
    values = f"Concat(Unsqueeze({OFF}), Unsqueeze({ON}))" if form.get("concat") else "values"
    types = f"{np.dtype(form['indices']).name} indices, {np.dtype(form['depth']).name} depth"
    axis = "" if form["axis"] is None else f", axis={form['axis']}"
    rows = "negative " if form.get("negative") else ""
    return f"OneHot({rows}indices, {depth[form['shape']]}, {values}{axis}) with {types}"


def _case(name: str) -> Case:
    form = FORMS[name]
    nodes, inits = _graph(form)
    indices = (NEGATIVE if form.get("negative") else INDICES).astype(form["indices"])
    axis = -1 if form["axis"] is None else form["axis"]
    expected = _oracle(indices, axis)
    built = model(
        nodes,
        [tensor("indices", form["indices"], list(indices.shape))],
        [tensor("y", np.float32, unknown(3))],
        inits,
    )
    bugs = (
        (DEPTH_1ELEM, form["shape"] != "scalar"),
        (NO_KERNEL, (form["indices"], form["depth"]) == (np.int32, np.int64)),
        (DEPTH_UNREAD, form["shape"] != "unsqueeze"),
    )
    return Case(
        id=f"onehot_forms.{name}",
        description=_spelled(name, form),
        model=built,
        inputs={"indices": indices},
        expected={"y": expected},
        # a depth an Unsqueeze computes: no release infers it, the case declares no shape
        output_shapes={} if form["shape"] == "unsqueeze" else {"y": list(expected.shape)},
        known=tuple(bug for bug, applies in bugs if applies),
        # the reference's answer on a 1-element depth follows the cell's numpy: asked
        # with numpy's deprecations as errors instead, the same on every numpy
        builtin_checks=tuple(c for c in BUILTIN_CHECKS if c != "reference")
        if form["shape"] != "scalar"
        else BUILTIN_CHECKS,
        custom_checks=(STRICT_REFERENCE,) if form["shape"] != "scalar" else (),
    )


def cases() -> list[Case]:
    return [_case(name) for name in FORMS]


def _depth_1elem(model: onnx.ModelProto) -> list[str]:
    """OneHot whose depth is a 1-element rank-1 tensor: a constant, declared so, or an
    Unsqueeze of a scalar (tf2onnx before its constant folding)."""
    found = []
    for site in find(model, "OneHot"):
        depth = site.node.input[1]
        value = constant(site.scope, depth)
        shape = dims(site.scope, depth)
        unsqueezed = made_by(site.scope, depth, "Unsqueeze")
        if value is not None:
            rank_1 = value.ndim == 1
        elif shape is not None:
            rank_1 = len(shape) == 1
        else:
            rank_1 = (
                unsqueezed is not None and dims(unsqueezed.scope, unsqueezed.node.input[0]) == ()
            )
        if rank_1:
            found.append(site.path)
    return found


def _int32_indices_int64_depth(model: onnx.ModelProto) -> list[str]:
    """OneHot with int32 indices and an int64 depth, a pairing onnxruntime has no kernel for."""
    return [
        site.path
        for site in find(model, "OneHot")
        if elem_type(site.scope, site.node.input[0]) == TensorProto.INT32
        and elem_type(site.scope, site.node.input[1]) == TensorProto.INT64
    ]


#: No detector for DEPTH_UNREAD: a dim shape inference leaves unknown fails only a check
#: that expects it (the cases' output shapes); a model's own strict inference passes, so
#: predicting its shape_inference failure would be a false alarm (slanet_en, onnx 1.16.2).
DETECTORS = [
    Detector(
        id="onehot_forms.depth_1elem",
        construct="OneHot with depth a 1-element rank-1 tensor (as tf2onnx writes it)",
        known=DEPTH_1ELEM,
        find=_depth_1elem,
    ),
    Detector(
        id="onehot_forms.depth_1elem_numpy",
        construct="OneHot with depth a 1-element rank-1 tensor, run by onnx's reference "
        "evaluator where numpy >= 2.4 is installed",
        known=DEPTH_1ELEM_NUMPY,
        find=_depth_1elem,
        requires=("numpy>=2.4",),
    ),
    Detector(
        id="onehot_forms.int32_indices_int64_depth",
        construct="OneHot with int32 indices and an int64 depth",
        known=NO_KERNEL,
        find=_int32_indices_int64_depth,
    ),
]
