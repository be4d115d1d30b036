"""Rewrites of what the model declares rather than computes: its shape annotations
(symbolic dimensions renamed or made anonymous, intermediate value annotations dropped
or inferred) and its versions (the least IR version, the opset raised or lowered by
onnx's version converter). The annotation rewrites are the ones the catalogue
(compat/corpus/rewrites.py) marks `annotations=True`: a case that expects annotation
violations does not keep its expectations under them.
"""

from __future__ import annotations

import onnx
from onnx import helper

from compat.corpus.rewrite_base import Applied, copied, top_opset


def _dims(model: onnx.ModelProto) -> list[onnx.TensorShapeProto.Dimension]:
    infos = [*model.graph.input, *model.graph.output, *model.graph.value_info]
    return [
        d for i in infos if i.type.HasField("tensor_type") for d in i.type.tensor_type.shape.dim
    ]


def dim_params_renamed(model: onnx.ModelProto) -> Applied | None:
    """Every symbolic dimension renamed consistently (`N` -> `N_1`): names carry no
    meaning beyond equality."""
    copy = copied(model)
    named = [d for d in _dims(copy) if d.HasField("dim_param") and d.dim_param]
    if not named:
        return None
    for d in named:
        d.dim_param = f"{d.dim_param}_1"
    return Applied(copy, tuple(sorted({d.dim_param for d in named})))


def dim_params_anonymous(model: onnx.ModelProto) -> Applied | None:
    """Symbolic dimensions of outputs and intermediate values made anonymous (inputs keep
    theirs): an anonymous dimension asserts nothing, a named one only equality."""
    copy = copied(model)
    infos = [*copy.graph.output, *copy.graph.value_info]
    named = [
        (i.name, d)
        for i in infos
        if i.type.HasField("tensor_type")
        for d in i.type.tensor_type.shape.dim
        if d.HasField("dim_param") and d.dim_param
    ]
    if not named:
        return None
    for _, dim in named:
        dim.ClearField("dim_param")
    return Applied(copy, tuple(sorted({name for name, _ in named})))


def value_info_removed(model: onnx.ModelProto) -> Applied | None:
    """The intermediate value annotations dropped: they assert, they do not compute."""
    if not model.graph.value_info:
        return None
    copy = copied(model)
    where = tuple(v.name for v in copy.graph.value_info)
    del copy.graph.value_info[:]
    return Applied(copy, where)


def value_info_inferred(model: onnx.ModelProto) -> Applied | None:
    """Intermediate value annotations added by onnx's (non-strict) shape inference."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:
        return None
    before = {v.name for v in model.graph.value_info}
    added = tuple(v.name for v in inferred.graph.value_info if v.name not in before)
    return Applied(inferred, added) if added else None


def ir_version_minimum(model: onnx.ModelProto) -> Applied | None:
    """The IR version lowered to the least its opsets need."""
    try:
        least = helper.find_min_ir_version_for(list(model.opset_import), ignore_unknown=True)
    except Exception:
        return None
    if least >= model.ir_version:
        return None
    copy = copied(model)
    copy.ir_version = least
    return Applied(copy, (f"ir_version {model.ir_version} -> {least}",))


def _converted(model: onnx.ModelProto, target: int) -> Applied | None:
    from onnx import version_converter

    opset = top_opset(model)
    if target < 7 or opset == target or len(model.graph.node) == 0:
        return None
    if any(o.domain not in ("", "ai.onnx") for o in model.opset_import):
        return None  # the converter converts the default domain only
    try:
        converted = version_converter.convert_version(model, target)
        onnx.checker.check_model(converted)
    except Exception:
        return None  # no adapter for some op: this rewrite does not apply
    return Applied(converted, (f"opset {opset} -> {target}",))


def opset_up(model: onnx.ModelProto) -> Applied | None:
    """The default-domain opset raised by one with onnx's version converter (attribute
    forms become inputs where the newer opset says so: Squeeze axes, Split split)."""
    return _converted(model, top_opset(model) + 1)


def opset_down(model: onnx.ModelProto) -> Applied | None:
    """The default-domain opset lowered by one with onnx's version converter."""
    return _converted(model, top_opset(model) - 1)
