"""onnx's version converter on Split and Squeeze, where an attribute became an input
(or the reverse), each next to the twin spelling that converts fine.

- Split-11 without `split` (equal parts), converted to 18: the adapter dropped the
  implied part count instead of writing `num_outputs`, so the Split-18 it wrote has
  neither `split` nor `num_outputs` and the checker rejects it ("Neither 'split'
  input nor 'num_outputs' attribute has been given"; onnx #5222, fixed by onnx
  PR #6020). Observed failing on onnx 1.14.1-1.16.2, converting from 1.17.0 on, as
  reported. The twin with an explicit `split` attribute converts everywhere.
- Split-13 whose `split` initializer is stored in `raw_data` (numpy_helper's default),
  converted to 12: the adapter read only `int64_data`, wrote `split=[]` and the result
  fails the checker ("Mismatch between number of splits (0) and outputs (2)"; fixed
  by onnx PR #7910). Observed failing on onnx 1.14.1-1.21.0, converting from 1.22.0 on,
  as reported; on 1.14.1 the checker refuses the empty list itself ("Attribute 'split'
  is expected to have field 'ints'": empty list attributes are allowed from onnx 1.15,
  PR #5559), a failure of its own. The twin with the initializer in `int64_data`
  converts everywhere.
- Squeeze-13 whose axes come from `Constant(value_ints=[0])`, converted to 12: the
  adapter looks for the Constant's `value` attribute only and aborts ("required
  undefined attribute 'value'"). Observed on every onnx release, 1.14.1-1.23.2;
  not reported upstream as far as we found (the link names the adapter's source).
  The `Constant(value=tensor)` twin converts everywhere.

Every source model is valid and computes the oracle's outputs on every release; only
`version_converter` differs.

Rare form: Split without `split`; `split` in `raw_data`; Squeeze axes from `Constant(value_ints)`
Common twin: explicit `split`; `split` in `int64_data`; axes from `Constant(value=tensor)`
Shows: onnx's version converter fails on them: < 1.17, < 1.22 and, for Squeeze, every release
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from compat.core.case import Case, Detector, KnownFailure
from compat.corpus.make import model, randn, tensor, unknown
from compat.corpus.values import constant_attribute, constant_node, initializer
from compat.corpus.walk import find

X_SHAPE = (2, 6)
SPLIT = [2, 4]
NO_NUM_OUTPUTS = KnownFailure(
    package="onnx",
    versions="<1.17",
    checks=("version_converter",),
    reason="Split 11 -> 18 writes neither `split` nor `num_outputs`",
    link="https://github.com/onnx/onnx/issues/5222",
    phase=("check",),
    raises=("InferenceError",),
    match="Neither 'split' input nor 'num_outputs' attribute has been given",
)
RAW_DATA_SPLIT = KnownFailure(
    package="onnx",
    versions=">=1.15,<1.22",
    checks=("version_converter",),
    reason="Split 13 -> 12 reads a raw_data `split` initializer as split=[]",
    link="https://github.com/onnx/onnx/pull/7910",
    phase=("check",),
    raises=("InferenceError",),
    match=r"Mismatch between number of splits \(0\) and outputs",
)
#: the same split=[] before onnx 1.15, whose checker refused any empty list attribute
#: (allowed since onnx PR #5559): another message, at the same place
EMPTY_SPLIT_REFUSED = KnownFailure(
    package="onnx",
    versions="<1.15",
    checks=("version_converter",),
    reason="Split 13 -> 12 writes split=[] for a raw_data `split` initializer (onnx PR #7910), "
    "and the checker refuses an empty list attribute",
    link="https://github.com/onnx/onnx/pull/5559",
    phase=("check",),
    raises=("ValidationError",),
    match="Attribute 'split' is expected to have field 'ints'",
)
#: onnx's adapter for the ops whose axes input became an attribute going down
AXES_ADAPTER = (
    "https://github.com/onnx/onnx/blob/main/onnx/version_converter/adapters/"
    "axes_input_to_attribute.h"
)
AXES_FROM_VALUE_ONLY = KnownFailure(
    package="onnx",
    versions="",
    checks=("version_converter",),
    reason="Squeeze 13 -> 12 reads axes only from Constant(value=...): "
    "\"required undefined attribute 'value'\"",
    link=AXES_ADAPTER,
    phase=("convert",),
    raises=("RuntimeError",),
    match="required undefined attribute 'value'",
)


def _x() -> np.ndarray:
    x: np.ndarray = randn(23, *X_SHAPE)
    return x


def _split11(form: str) -> Case:
    x = _x()
    known: tuple[KnownFailure, ...] = ()
    if form == "no_split":
        node = helper.make_node("Split", ["x"], ["a", "b", "c"], axis=1)
        parts = np.split(x, 3, axis=1)
        known = (NO_NUM_OUTPUTS,)
        spelled = "Split-11(x, axis=1) into 3 equal parts"
    else:
        node = helper.make_node("Split", ["x"], ["a", "b"], axis=1, split=SPLIT)
        parts = np.split(x, np.cumsum(SPLIT)[:-1], axis=1)
        spelled = f"Split-11(x, axis=1, split={SPLIT})"
    names = list(node.output)
    built = model(
        [node],
        [tensor("x", np.float32, list(X_SHAPE))],
        [tensor(n, np.float32, unknown(2)) for n in names],
        opset=11,
    )
    return Case(
        id=f"converter_split_squeeze.split11_to_18.{form}",
        description=f"{spelled}, converted to opset 18",
        model=built,
        inputs={"x": x},
        expected=dict(zip(names, parts, strict=True)),
        output_shapes={n: [2, int(p.shape[1])] for n, p in zip(names, parts, strict=True)},
        convert_to=18,
        known=known,
    )


def _split13(form: str) -> Case:
    x = _x()
    known: tuple[KnownFailure, ...] = ()
    if form == "raw_data":
        split = numpy_helper.from_array(np.array(SPLIT, dtype=np.int64), "split")
        known = (EMPTY_SPLIT_REFUSED, RAW_DATA_SPLIT)
    else:
        split = helper.make_tensor("split", TensorProto.INT64, [len(SPLIT)], SPLIT)
    assert split.HasField("raw_data") == (form == "raw_data")
    parts = np.split(x, np.cumsum(SPLIT)[:-1], axis=1)
    built = model(
        [helper.make_node("Split", ["x", "split"], ["a", "b"], axis=1)],
        [tensor("x", np.float32, list(X_SHAPE))],
        [tensor(n, np.float32, unknown(2)) for n in ("a", "b")],
        [split],
        opset=13,
    )
    return Case(
        id=f"converter_split_squeeze.split13_to_12.{form}",
        description=f"Split-13(x, split={SPLIT}) with the split initializer in {form}, "
        "converted to opset 12",
        model=built,
        inputs={"x": x},
        expected={"a": parts[0], "b": parts[1]},
        output_shapes={"a": [2, SPLIT[0]], "b": [2, SPLIT[1]]},
        convert_to=12,
        known=known,
    )


def _squeeze13(form: str) -> Case:
    x = randn(29, 1, 3, 1)
    attr: dict[str, Any]
    known: tuple[KnownFailure, ...] = ()
    if form == "value_ints":
        attr = {"value_ints": [0]}
        known = (AXES_FROM_VALUE_ONLY,)
    else:
        attr = {"value": numpy_helper.from_array(np.array([0], dtype=np.int64), "axes_value")}
    built = model(
        [
            helper.make_node("Constant", [], ["axes"], **attr),
            helper.make_node("Squeeze", ["x", "axes"], ["y"]),
        ],
        [tensor("x", np.float32, [1, 3, 1])],
        [tensor("y", np.float32, unknown(2))],
        opset=13,
    )
    return Case(
        id=f"converter_split_squeeze.squeeze13_to_12.{form}",
        description=f"Squeeze-13(x, axes) with axes = Constant({next(iter(attr))}=[0]), "
        "converted to opset 12",
        model=built,
        inputs={"x": x},
        expected={"y": np.squeeze(x, axis=0)},
        output_shapes={"y": [3, 1]},
        convert_to=12,
        known=known,
    )


def cases() -> list[Case]:
    found: list[Case] = []
    for form in ("no_split", "split_attr"):
        found.append(_split11(form))
    for form in ("raw_data", "int64_data"):
        found.append(_split13(form))
    for form in ("value_ints", "value_tensor"):
        found.append(_squeeze13(form))
    return found


def _split_without_split(model: onnx.ModelProto) -> list[str]:
    """Split-2 / Split-11 (split an attribute) with no split: equal parts."""
    return [
        site.path
        for site in find(model, "Split")
        if site.at("Split", since=2, before=13) and site.attribute("split") is None
    ]


def _split_in_raw_data(model: onnx.ModelProto) -> list[str]:
    """Split-13 and later whose split input is an initializer stored in raw_data."""
    found = []
    for site in find(model, "Split"):
        if not site.at("Split", since=13) or len(site.node.input) < 2:
            continue
        split = initializer(site.scope, site.node.input[1])
        if split is not None and split.HasField("raw_data"):
            found.append(site.path)
    return found


#: the ops onnx converts with that adapter, and the opset that made axes an input
AXES_INPUT_SINCE = {"Squeeze": 13, "Unsqueeze": 13, "ReduceSum": 13} | {
    op: 18
    for op in (
        "ReduceL1",
        "ReduceL2",
        "ReduceLogSum",
        "ReduceLogSumExp",
        "ReduceMax",
        "ReduceMean",
        "ReduceMin",
        "ReduceProd",
        "ReduceSumSquare",
    )
}


def _axes_from_typed_constant(model: onnx.ModelProto) -> list[str]:
    """Squeeze / Unsqueeze / Reduce* with axes an input, made by a Constant in a typed
    form (value_ints...), which the adapter cannot read."""
    found = []
    for site in find(model, *AXES_INPUT_SINCE):
        if not site.at(site.node.op_type, since=AXES_INPUT_SINCE[site.node.op_type]):
            continue
        made = constant_node(site.scope, site.node.input[1]) if len(site.node.input) > 1 else None
        if made is not None and constant_attribute(made) != "value":
            found.append(site.path)
    return found


DETECTORS = [
    Detector(
        id="converter_split_squeeze.split11_no_split",
        construct="Split-11 (opset 2-12) without split (equal parts): onnx < 1.17 cannot "
        "convert it to 18",
        known=NO_NUM_OUTPUTS,
        find=_split_without_split,
    ),
    Detector(
        id="converter_split_squeeze.split13_raw_data",
        construct="Split (opset >= 13) whose split initializer is stored in raw_data: onnx "
        "< 1.22 converts it to opset 12 wrongly",
        known=RAW_DATA_SPLIT,
        find=_split_in_raw_data,
    ),
    Detector(
        id="converter_split_squeeze.split13_raw_data_empty_list",
        construct="Split (opset >= 13) whose split initializer is stored in raw_data: onnx "
        "< 1.15 converts it to opset 12 with an empty split list its checker refuses",
        known=EMPTY_SPLIT_REFUSED,
        find=_split_in_raw_data,
    ),
    Detector(
        id="converter_split_squeeze.axes_value_ints",
        construct="Squeeze / Unsqueeze / ReduceSum (opset >= 13) or another Reduce (opset >= "
        "18) with axes from Constant(value_ints): onnx cannot convert it below",
        known=AXES_FROM_VALUE_ONLY,
        find=_axes_from_typed_constant,
        rewrite="constant_value_tensor",
    ),
]
