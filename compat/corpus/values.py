"""What a value of a walked model is (compat/corpus/walk.py): the node that computes it,
whether it is a constant and which, its element type and declared shape, who reads it,
whether it leaves the graph. Each question follows the value out of subgraphs and
through local-function calls, as a runtime that inlines the functions would see it.

The answers are what the model itself shows (constants, annotations): no shape
inference runs, and a constant is materialised only when its value is asked for (in a
scan, external data from the model's own folder: compat/corpus/session.py). Each answer
is found in a loop, never by recursion, however deep the calls, and a scope keeps the
ones that following a value out of it takes (`Scope.memo`), so a chain of calls is
followed once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from compat.corpus import session
from compat.corpus.scopes import Scope, Site

Dims = tuple[int | str | None, ...]
Place = tuple[Scope, str]  # a name and the scope it is looked up in


def _remembered(question: str, chain: list[Place], answer: Place | onnx.TypeProto | None) -> None:
    for here, named in chain:
        here.memo[(question, named)] = answer


def resolve(scope: Scope, name: str) -> Place | None:
    """The scope that defines `name` and its name there (a node's output, an
    initializer, an input), following it out of subgraphs and into a call's arguments."""
    current: Place | None = (scope, name) if name else None
    chain: list[Place] = []
    while current is not None and not current[0].defines(current[1]):
        key = ("resolve", current[1])
        if key in current[0].memo:
            current = current[0].memo[key]
            break
        chain.append(current)
        current = current[0].outward(current[1])
    _remembered("resolve", chain, current)
    return current


def producer(scope: Scope, name: str) -> Site | None:
    """The node computing `name`, seen through calls: for a value a local function
    computes, the body's node (bound to the call). None for inputs and initializers."""
    seen: set[tuple[int, str]] = set()
    while (id(scope), name) not in seen:  # a value computed from itself: none computes it
        seen.add((id(scope), name))
        found = resolve(scope, name)
        if found is None or found[1] not in found[0].producers:
            return None
        site = found[0].producers[found[1]]
        if site.body is None:
            return site
        index = list(site.node.output).index(found[1])
        if index >= len(site.body.outputs):
            return None
        scope = site.body
        name = site.body.outputs[index]
    return None


def same_value(scope: Scope, name: str, other_scope: Scope, other: str) -> bool:
    """Two names, each in its scope, are the same value (the same producer through
    calls, or the same input or initializer)."""
    made = producer(scope, name)
    if made is not None:
        return made is producer(other_scope, other)
    found = resolve(scope, name)
    return found is not None and found == resolve(other_scope, other)


def made_by(scope: Scope, name: str, op_type: str) -> Site | None:
    """The producer of `name` when it is a default-domain `op_type` node."""
    site = producer(scope, name)
    return site if site is not None and site.is_op(op_type) else None


def constant_node(scope: Scope, name: str) -> onnx.NodeProto | None:
    """The Constant node (default domain) producing `name`, if that is what produces it."""
    site = made_by(scope, name, "Constant")
    return site.node if site is not None else None


def constant_attribute(node: onnx.NodeProto) -> str:
    """The attribute a Constant node holds its value in: value, value_ints, ..."""
    return node.attribute[0].name if node.attribute else ""


def initializer(scope: Scope, name: str) -> TensorProto | None:
    """The initializer `name` when it is a constant: not also a graph input, which a
    caller may override at run time."""
    found = resolve(scope, name)
    if found is None or found[1] in found[0].producers or found[1] in found[0].inputs:
        return None  # computed, or a graph input (an initializer a caller may override)
    return found[0].initializers.get(found[1])


def is_constant(scope: Scope, name: str) -> bool:
    """`name` is an initializer (not overridable) or a Constant node's output."""
    return initializer(scope, name) is not None or constant_node(scope, name) is not None


def _constant_tensor(scope: Scope, name: str) -> TensorProto | None:
    """The TensorProto holding a constant: the initializer, or a Constant's `value`."""
    found = initializer(scope, name)
    if found is not None:
        return found
    node = constant_node(scope, name)
    if node is not None and constant_attribute(node) == "value":
        value: TensorProto = node.attribute[0].t
        return value
    return None


def constant(scope: Scope, name: str) -> np.ndarray | None:
    """The value of a constant input (initializer or Constant node, every attribute form
    but sparse_value), or None when it is not a constant."""
    tensor = _constant_tensor(scope, name)
    if tensor is not None:
        return _array(tensor)
    node = constant_node(scope, name)
    if node is None or not node.attribute:
        return None
    attr = node.attribute[0]
    if attr.ref_attr_name or attr.name == "sparse_value":
        return None
    value = helper.get_attribute_value(attr)
    if attr.name in ("value_string", "value_strings"):
        texts = value if isinstance(value, list) else [value]
        strings = np.array([t.decode() if isinstance(t, bytes) else t for t in texts], object)
        return strings if attr.name == "value_strings" else strings.reshape(())
    return np.array(value)


def _array(tensor: TensorProto) -> np.ndarray | None:
    """The tensor's value; for external data, read (in a scan) from the file the scan
    checked in the model's folder, never the current one: None without a scan."""
    if tensor.data_location != TensorProto.EXTERNAL:
        return numpy_helper.to_array(tensor)
    scanning = session.current()
    data = scanning.read(tensor) if scanning is not None and scanning.read else None
    if data is None:
        return None
    inline = TensorProto()
    inline.CopyFrom(tensor)
    del inline.external_data[:]
    inline.data_location = TensorProto.DEFAULT
    inline.raw_data = data
    return numpy_helper.to_array(inline)


#: the element type of each typed Constant attribute
_CONSTANT_TYPES = {
    "value_string": TensorProto.STRING,
    "value_strings": TensorProto.STRING,
    "value_float": TensorProto.FLOAT,
    "value_floats": TensorProto.FLOAT,
    "value_int": TensorProto.INT64,
    "value_ints": TensorProto.INT64,
}


def elem_type(scope: Scope, name: str) -> int | None:
    """The element type of `name` (TensorProto.FLOAT, ...): of its constant, or declared."""
    tensor = _constant_tensor(scope, name)
    if tensor is not None:
        return tensor.data_type
    node = constant_node(scope, name)
    if node is not None:
        return _CONSTANT_TYPES.get(constant_attribute(node))
    declared = declared_type(scope, name)
    if declared is not None and declared.HasField("tensor_type"):
        return int(declared.tensor_type.elem_type)
    return None


def declared_type(scope: Scope, name: str) -> onnx.TypeProto | None:
    """The declared type of `name`, looked up along its way out (subgraphs, calls); for
    a function's output, the caller's annotation of the call's output."""
    current: Place | None = (scope, name) if name else None
    chain: list[Place] = []
    found: onnx.TypeProto | None = None
    while current is not None:
        here, named = current
        if ("declared", named) in here.memo:
            found = here.memo[("declared", named)]
            break
        chain.append(current)
        if named in here.declared:
            found = here.declared[named]
            break
        if here.call is not None and here.parent is not None and named in here.outputs:
            index = here.outputs.index(named)
            out = here.call.output[index] if index < len(here.call.output) else ""
            current = (here.parent, out) if out else None
        elif here.defines(named):
            break
        else:
            current = here.outward(named)
    _remembered("declared", chain, found)
    return found


def dims(scope: Scope, name: str) -> Dims | None:
    """The shape of `name` as the model shows it: a constant's dims, or the declared
    (annotated) shape, each dim an int, a symbol or None (unknown); None when unknown."""
    tensor = _constant_tensor(scope, name)
    if tensor is not None:
        return tuple(int(d) for d in tensor.dims)
    value = constant(scope, name) if constant_node(scope, name) is not None else None
    if value is not None:
        return tuple(int(d) for d in value.shape)
    declared = declared_type(scope, name)
    if declared is None or not declared.HasField("tensor_type"):
        return None
    if not declared.tensor_type.HasField("shape"):
        return None
    found: list[int | str | None] = []
    for dim in declared.tensor_type.shape.dim:
        if dim.HasField("dim_value"):
            found.append(int(dim.dim_value))
        else:
            found.append(dim.dim_param or None)
    return tuple(found)


def _read_by(scope: Scope, name: str) -> list[Site | Place]:
    """Who reads `name` here, in order: a node, or (for a call, and for a function's
    output) the name its readers are looked up by in the body or the caller."""
    found: list[Site | Place] = []
    for site in scope.readers.get(name, []):
        body = site.body
        if body is None:
            found.append(site)
            continue
        for index, argument in enumerate(site.node.input):
            if argument == name and index < len(body.inputs):
                found.append((body, body.inputs[index]))
    if scope.call is not None and scope.parent is not None and name in scope.outputs:
        index = scope.outputs.index(name)
        if index < len(scope.call.output) and scope.call.output[index]:
            found.append((scope.parent, scope.call.output[index]))
    return found


@dataclass(frozen=True)
class _Listed:
    """In `consumers`' stack: the readers of this (scope, name) are all listed."""

    key: tuple[int, str]


def consumers(scope: Scope, name: str) -> list[Site]:
    """The nodes that read `name`, seen through calls: a call's reader is the body's
    reader of that argument; a function's output is read by the caller's readers of the
    call's output. Subgraphs reading it from an enclosing scope are not counted."""
    found: list[Site] = []
    following: set[tuple[int, str]] = set()  # the names whose readers are being listed
    stack: list[Site | Place | _Listed] = [(scope, name)]
    while stack:
        item = stack.pop()
        session.tick()
        if isinstance(item, Site):
            found.append(item)
        elif isinstance(item, _Listed):
            following.discard(item.key)
        elif (id(item[0]), item[1]) not in following:  # else a value read by itself
            following.add((id(item[0]), item[1]))
            stack.append(_Listed((id(item[0]), item[1])))
            stack += reversed(_read_by(*item))
    return found


def is_output(scope: Scope, name: str) -> bool:
    """`name` leaves the model's graph or a subgraph (a function's output is followed to
    the call's)."""
    while name in scope.outputs:
        if scope.graph is not None:
            return True
        if scope.call is None or scope.parent is None:
            return True  # an unbound body: its caller is unknown
        index = scope.outputs.index(name)
        out = scope.call.output[index] if index < len(scope.call.output) else ""
        if not out:
            return False
        scope = scope.parent
        name = out
    return False
