"""When two calls of a local function are one to its body (compat/corpus/walk.py walks
the body once per `Signature.of` a call): what the body can see of the call one step
out. The opsets in force, the call's attributes (those referring to the caller's,
resolved), what each argument is, which arguments are one value, and who reads each
output. An argument is where it is defined when that is the same for every call (an
input, an initializer, a Constant, a node of the main graph or its subgraphs); inside a
function's body, it is the kind of node that computes it, seen through calls as
`values.producer` sees it: a value a call computes is computed by the node inside the
function. So the number of distinct signatures follows the model's size: 25 functions
each calling the next twice pass the next a graph input or a value computed by the
innermost Relu, two signatures each, not one per path.

A question that follows a value further through the caller than one step is answered
for the first call of a signature walked: the approximation that keeps the walk linear.
"""

from __future__ import annotations

from collections.abc import Generator, Hashable
from dataclasses import dataclass, field

import onnx
from google.protobuf.message import Message

from compat.corpus.scopes import Functions, Key, Scope, Site, attribute
from compat.corpus.values import Place, declared_type, resolve

Kind = tuple[object, ...]  # ("op", domain, op_type, output) or ("argument", index)


@dataclass(eq=False)
class Signatures:
    """The signatures of one walk's calls, and what computes each function's outputs."""

    functions: Functions
    kinds: dict[tuple[Key, int], Kind] = field(default_factory=dict)
    made: dict[Key, dict[str, onnx.NodeProto]] = field(default_factory=dict)

    def of(self, site: Site) -> Hashable:
        """The signature of the call `site` (one of a local function: `site.body`)."""
        caller = site.scope
        node = site.node
        opsets = tuple(sorted(site.body.opsets.items())) if site.body is not None else ()
        places = [resolve(caller, name) for name in node.input]
        first: dict[tuple[int, str], int] = {}
        same = tuple(
            -1 if place is None else first.setdefault((id(place[0]), place[1]), index)
            for index, place in enumerate(places)
        )
        given = zip(node.input, places, strict=True)
        arguments = tuple(self._argument(caller, name, place) for name, place in given)
        outputs = tuple(_read(caller, name) for name in node.output)
        attributes = tuple((a.name, _attribute(caller, node, a)) for a in node.attribute)
        return (node.domain, node.op_type, opsets, attributes, arguments, same, outputs)

    def _argument(self, caller: Scope, name: str, place: Place | None) -> Hashable:
        """One argument with the type the caller declares for it ("": none)."""
        return (self._defined(place), _bytes(declared_type(caller, name))) if name else None

    def _defined(self, place: Place | None) -> Hashable:
        """What defines a value, as the module's docstring says; for a function's
        argument passed on by a call, that argument's."""
        seen: set[tuple[int, str]] = set()
        while place is not None and (id(place[0]), place[1]) not in seen:
            seen.add((id(place[0]), place[1]))
            where, named = place
            site = where.producers.get(named)
            if site is None or where.function is None:
                return (where.home, named)
            if site.is_op("Constant"):  # its value may come from the body's call: resolved
                refs = [
                    _attribute(where, site.node, a) for a in site.node.attribute if a.ref_attr_name
                ]
                return (where.home, named, tuple(refs))
            index = list(site.node.output).index(named)
            key = (site.node.domain, site.node.op_type)
            kind = self._kind(key, index) if site.body is not None else ("op", *key, index)
            passed = _passed(kind)
            if passed is None:
                return kind
            argument = site.input(passed)
            place = resolve(where, argument) if argument else None
        return ("undefined",)

    def _kind(self, key: Key, index: int) -> Kind:
        """What computes output `index` of function `key`, through the calls in its
        body: each function's outputs found once a walk, on a stack of `_follow`s."""
        asked = (key, index)
        if asked in self.kinds:
            return self.kinds[asked]
        stack = [(asked, self._follow(key, self._output(key, index)))]
        active = {asked}
        answer: Kind | None = None
        while stack and asked not in self.kinds:
            wanted, following = stack[-1]
            try:
                needed = following.send(answer)
            except StopIteration as done:
                self.kinds[wanted] = answer = done.value
                active.discard(wanted)
                stack.pop()
                continue
            answer = self.kinds.get(needed, ("cycle",) if needed in active else None)
            if answer is None:  # found first, then sent to the follower that asked
                stack.append((needed, self._follow(needed[0], self._output(*needed))))
                active.add(needed)
        return self.kinds[asked]

    def _output(self, key: Key, index: int) -> str:
        outputs = self.functions[key].output
        return outputs[index] if index < len(outputs) else ""

    def _follow(self, key: Key, name: str) -> Generator[tuple[Key, int], Kind | None, Kind]:
        """What computes `name` in the body of function `key`: the node computing it,
        or through a call, what computes the callee's output (asked of `_kind` by
        yielding it), or the function's argument it is."""
        function = self.functions[key]
        if key not in self.made:
            self.made[key] = {out: node for node in function.node for out in node.output}
        for _ in range(len(function.node) + 1):  # more steps: its values form a cycle
            node = self.made[key].get(name) if name else None
            if node is None:
                inputs = list(function.input)
                return ("argument", inputs.index(name)) if name in inputs else ("none",)
            callee = (node.domain, node.op_type)
            index = list(node.output).index(name)
            if callee not in self.functions:
                return ("op", *callee, index)
            found = yield (callee, index)
            passed = _passed(found) if found is not None else None
            if found is None or passed is None:
                return found or ("cycle",)
            name = node.input[passed] if passed < len(node.input) else ""
        return ("cycle",)


def _passed(kind: Kind) -> int | None:
    """The input of a function that is this output of it, passed on (else None)."""
    return kind[1] if kind[0] == "argument" and isinstance(kind[1], int) else None


def _read(caller: Scope, name: str) -> Hashable:
    """Who reads one of the call's outputs in the caller (their kinds, each as often as
    it reads it), whether it leaves the caller, and the type the caller declares."""
    if not name:
        return None
    readers = sorted((r.node.domain, r.node.op_type) for r in caller.readers.get(name, []))
    return (tuple(readers), name in caller.outputs, _bytes(caller.declared.get(name)))


def _attribute(scope: Scope, node: onnx.NodeProto, attr: onnx.AttributeProto) -> Hashable:
    if not attr.ref_attr_name:
        return _bytes(attr)
    return _hashable(attribute(scope, node, attr.name))


def _hashable(value: object) -> Hashable:
    """An attribute's value as a key: a proto's bytes, a list's items, else its repr
    (NaN is then equal to itself)."""
    if isinstance(value, Message):
        return _bytes(value)
    if isinstance(value, list):
        return tuple(_hashable(item) for item in value)
    return repr(value)


def _bytes(proto: Message | None) -> bytes:
    data: bytes = proto.SerializeToString(deterministic=True) if proto is not None else b""
    return data
