"""Run-time semantics of shape annotations (seed 000, "Semantics of Shape Annotations").

One binding map β per inference run, growing only. Every produced value that
carries an annotation is checked against it:

1. no shape field → satisfied;
2. a rank different from the actual rank → violated;
3. per axis: dim_value k → the axis must equal k; dim_param N → bind β(N) on
   first sight, compare afterwards; neither set → satisfied.

Names are global: one namespace for the whole model, nested subgraphs included.
The element type is checked as well.

This module runs inside every cell (loaded by path from the worker) and on the
host: it imports only the standard library, numpy, onnx (≥ 1.14) and, lazily,
onnxruntime, and stays valid on Python 3.9. It does not use onnx's own checker
(`ReferenceEvaluator(check_shape_annotations=True)`, onnx ≥ 1.23): that one is
what the `annotations_builtin` check compares against.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Tuple

import numpy as np
import onnx
from onnx import helper, numpy_helper

DEFAULT_DIM = 2  # the size of a generated symbolic or anonymous axis, unless --dim says


@dataclass(frozen=True)
class Violation:
    """One annotation that a run contradicts."""

    value: str
    axis: Optional[int]  # None for a rank or element-type violation
    declared: str  # "3", "N", "rank 2", "float32"
    actual: str  # "4", "rank 3", "int64"
    bound_by: Optional[str]  # for a dim_param: "x axis 0 (=2)", the first sight of the name
    message: str
    precondition: bool = False  # a graph input: the caller's obligation

    @property
    def key(self) -> str:
        """`y:1` for an axis, else `y:rank` or `y:dtype`: how cases name expected violations."""
        if self.axis is not None:
            return "%s:%d" % (self.value, self.axis)
        return "%s:%s" % (self.value, "rank" if self.declared.startswith("rank") else "dtype")

    def to_dict(self) -> Dict[str, Any]:
        return {
            "value": self.value,
            "axis": self.axis,
            "declared": self.declared,
            "actual": self.actual,
            "bound_by": self.bound_by,
            "message": self.message,
        }


class Bindings:
    """β: symbolic name → size, plus where each name was first seen. Never overwritten."""

    def __init__(self) -> None:
        self.sizes: Dict[str, int] = {}
        self.origin: Dict[str, Tuple[str, int]] = {}

    def where(self, name: str) -> str:
        value, axis = self.origin[name]
        return "%r axis %d" % (value, axis)


def _dim_text(dim: Any) -> str:
    which = dim.WhichOneof("value")
    if which == "dim_value":
        return str(dim.dim_value)
    if which == "dim_param":
        return str(dim.dim_param)
    return "?"


def shape_text(type_proto: Any) -> str:
    """`[N, 3]`, `[?, 3]` (anonymous axis), or `no shape`."""
    if not type_proto.HasField("tensor_type") or not type_proto.tensor_type.HasField("shape"):
        return "no shape"
    return "[%s]" % ", ".join(_dim_text(d) for d in type_proto.tensor_type.shape.dim)


def np_dtype(elem_type: int) -> Optional[np.dtype]:
    try:
        return np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))
    except Exception:  # no numpy equivalent (bfloat16, float8...): nothing to compare
        return None


def check_value(
    name: str,
    type_proto: Any,
    array: Any,
    beta: Bindings,
    precondition: bool = False,
) -> List[Violation]:
    """Checks one produced value against its annotation, binding new names in `beta`."""
    if type_proto is None or not type_proto.HasField("tensor_type"):
        return []
    shape = getattr(array, "shape", None)
    if shape is None:
        return []
    tensor = type_proto.tensor_type
    found = []
    role = "input %r (a precondition)" % name if precondition else "value %r" % name

    def violation(
        axis: Optional[int], declared: str, actual: str, bound_by: Optional[str], text: str
    ) -> None:
        found.append(Violation(name, axis, declared, actual, bound_by, text, precondition))

    declared_dtype = np_dtype(tensor.elem_type) if tensor.elem_type else None
    actual_dtype = getattr(array, "dtype", None)
    if declared_dtype is not None and actual_dtype is not None:
        strings = declared_dtype == np.dtype(object) and actual_dtype.kind in "OU"
        if actual_dtype != declared_dtype and not strings:
            violation(
                None,
                str(declared_dtype),
                str(actual_dtype),
                None,
                "%s: declared element type %s, actual %s" % (role, declared_dtype, actual_dtype),
            )
    if not tensor.HasField("shape"):  # rule 1: no shape, nothing asserted
        return found
    dims = list(tensor.shape.dim)
    actual = [int(s) for s in shape]
    if len(dims) != len(actual):  # rule 2
        violation(
            None,
            "rank %d" % len(dims),
            "rank %d" % len(actual),
            None,
            "%s: declared %s has rank %d, actual shape %s has rank %d"
            % (role, shape_text(type_proto), len(dims), actual, len(actual)),
        )
        return found
    for axis, (dim, size) in enumerate(zip(dims, actual)):
        which = dim.WhichOneof("value")
        if which == "dim_value" and dim.dim_value < 0:
            continue  # a negative size is no size: read as unknown, as onnxruntime does
        if which == "dim_value":  # rule 3, constant
            if dim.dim_value != size:
                violation(
                    axis,
                    str(dim.dim_value),
                    str(size),
                    None,
                    "%s axis %d: declared %d, actual %d" % (role, axis, dim.dim_value, size),
                )
        elif which == "dim_param":  # rule 3, symbolic: bind on first sight, compare afterwards
            symbol = dim.dim_param
            if symbol not in beta.sizes:
                beta.sizes[symbol] = size
                beta.origin[symbol] = (name, axis)
            elif beta.sizes[symbol] != size:
                where = beta.where(symbol)
                violation(
                    axis,
                    symbol,
                    str(size),
                    where,
                    "%s axis %d: declared %s = %d (bound by %s), actual %d"
                    % (role, axis, symbol, beta.sizes[symbol], where, size),
                )
        # neither set: an anonymous dimension asserts nothing
    return found


# --- which values carry annotations ------------------------------------------


def _subgraphs(graph: Any) -> Iterable[Any]:
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield attr.g
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for g in attr.graphs:
                    yield g


def all_annotations(graph: Any) -> Dict[str, List[Any]]:
    """name → every distinct annotation of that name (an output and a value_info may both
    annotate it), those with a shape first; nested subgraphs included (one namespace)."""
    found: Dict[str, List[Any]] = {}

    def walk(g: Any) -> None:
        for info in list(g.input) + list(g.value_info) + list(g.output):
            types = found.setdefault(info.name, [])
            if info.HasField("type") and info.type not in types:
                types.append(info.type)
        for sub in _subgraphs(g):
            walk(sub)

    walk(graph)
    return {
        name: sorted(types, key=lambda t: not _has_shape(t))
        for name, types in found.items()
        if types
    }


def _has_shape(type_proto: Any) -> bool:
    return type_proto.HasField("tensor_type") and type_proto.tensor_type.HasField("shape")


def annotations_of(graph: Any, top_level: bool = True) -> Dict[str, Any]:
    """name → the most telling annotation of every annotated value (one with a shape over
    one without), nested subgraphs included (one namespace)."""
    return {name: types[0] for name, types in all_annotations(graph).items()}


def nonstandard_dims(graph: Any) -> List[str]:
    """Annotated values that declare a negative dim_value (some exporters write -1 for
    "unknown"): read as an anonymous axis, as onnxruntime does."""
    return sorted(
        name
        for name, types in all_annotations(graph).items()
        if any(
            d.WhichOneof("value") == "dim_value" and d.dim_value < 0
            for t in types
            if _has_shape(t)
            for d in t.tensor_type.shape.dim
        )
    )


def top_level_names(graph: Any) -> List[str]:
    """Annotated values of the main graph, in the order they are produced."""
    declared = {i.name for i in list(graph.input) + list(graph.value_info) + list(graph.output)}
    order = [i.name for i in graph.input]
    order += [t.name for t in graph.initializer if t.name not in order]
    for node in graph.node:
        order += [o for o in node.output if o and o not in order]
    return [n for n in order if n in declared]


# --- one run --------------------------------------------------------------------


@dataclass
class RunVerdict:
    """What one run says about every annotation."""

    bindings: Dict[str, int] = field(default_factory=dict)
    violations: List[Violation] = field(default_factory=list)
    unchecked: List[str] = field(default_factory=list)
    #: annotated values the run produced and were checked (inputs and initializers aside)
    observed: List[str] = field(default_factory=list)
    error: Optional[str] = None  # the runtime failed: nothing after the inputs is known

    @property
    def ok(self) -> bool:
        return not self.violations and self.error is None

    @property
    def keys(self) -> List[str]:
        return [v.key for v in self.violations]

    def to_dict(self) -> Dict[str, Any]:
        data = {
            "ok": self.ok,
            "bindings": dict(sorted(self.bindings.items())),
            "violations": [v.to_dict() for v in self.violations],
            "unchecked": sorted(self.unchecked),
        }
        if self.error is not None:
            data["error"] = self.error
        return data


def judge(model: Any, feeds: Dict[str, np.ndarray], observed: List[Tuple[str, Any]]) -> RunVerdict:
    """Applies the rules to a run: inputs first (preconditions), then values as produced.

    `observed` lists (name, array) in an order the run could have produced
    them; a name observed twice (a Loop body value) is checked every time.
    """
    annotated = all_annotations(model.graph)
    beta = Bindings()
    verdict = RunVerdict()
    seen = set()
    input_names = [i.name for i in model.graph.input]
    initializers = {t.name: t for t in model.graph.initializer}

    def check(name: str, array: Any, precondition: bool = False) -> List[Violation]:
        """Every annotation of `name` (an output's and a value_info's alike)."""
        return [
            v
            for type_proto in annotated.get(name, [None])
            for v in check_value(name, type_proto, array, beta, precondition)
        ]

    for name in input_names:
        if name in feeds:
            verdict.violations += check(name, feeds[name], True)
            seen.add(name)
        elif name in initializers:  # an input with a default (IR < 4 style)
            verdict.violations += check(name, numpy_helper.to_array(initializers[name]))
            seen.add(name)
    for name, tensor in initializers.items():
        if name not in seen and name in annotated:
            verdict.violations += check(name, numpy_helper.to_array(tensor))
            seen.add(name)
    produced = set()
    for name, array in observed:
        if name in annotated and name not in input_names:
            verdict.violations += check(name, array)
            produced.add(name)
    seen |= produced
    verdict.observed = sorted(produced - set(initializers))
    verdict.bindings = dict(beta.sizes)
    verdict.unchecked = sorted(set(annotated) - seen)
    return verdict
