"""A wheel's `Requires-Dist` markers with the `extra` fixed: which dependencies an extra
brings, and the rest of each one's marker for uv to judge against a cell's Python.

Splitting a marker on " and " loses what an `or` says: `extra == "test" or
python_version < "3.10"` is a base dependency below 3.10 and the test extra's
everywhere. Here each `extra` comparison is replaced by its value (packaging's own
evaluation) and the marker is simplified the way packaging evaluates it: `and` binds
tighter than `or`, a parenthesised group is one operand.
"""

from __future__ import annotations

from typing import Any

from packaging.markers import Marker

#: a decided part of a marker (True, False) or what is left of it, as marker text
_Part = bool | str


def _atom(atom: tuple[Any, Any, Any], extra: str) -> _Part:
    """One comparison: its value when it reads `extra` (a variable serialises bare, a
    string quoted), else its text."""
    sides = [side.serialize() for side in atom]
    text = " ".join(sides)
    return Marker(text).evaluate({"extra": extra}) if "extra" in sides[::2] else text


def _operand(node: object, extra: str) -> _Part:
    if isinstance(node, tuple):
        return _atom(node, extra)
    reduced = _reduce(node, extra)  # a parenthesised group stays one (Marker drops
    return reduced if isinstance(reduced, bool) else f"({reduced})"  # needless ones)


def _conjunction(operands: list[_Part]) -> _Part:
    if any(part is False for part in operands):
        return False
    left = [part for part in operands if isinstance(part, str)]
    return " and ".join(left) if left else True


def _reduce(markers: object, extra: str) -> _Part:
    """One level of packaging's parsed marker: operands joined by "and" and "or"."""
    groups: list[list[_Part]] = [[]]
    for node in markers if isinstance(markers, list) else [markers]:
        if node == "or":
            groups.append([])
        elif node != "and":
            groups[-1].append(_operand(node, extra))
    alternatives = [_conjunction(group) for group in groups]
    if any(part is True for part in alternatives):
        return True
    left = [part for part in alternatives if isinstance(part, str)]
    return " or ".join(left) if left else False


def for_extra(marker: str, extra: str) -> str | None:
    """What is left of a dependency's marker once `extra` is fixed ("" for the base
    dependencies): None when the dependency does not come with it, "" when it does on
    every environment, else the marker without its `extra` clauses.

    >>> for_extra('extra == "test" or python_version < "3.10"', "")
    'python_version < "3.10"'
    >>> for_extra('extra == "test" or python_version < "3.10"', "test")
    ''
    >>> for_extra('python_version >= "3.9" and extra == "test"', "docs") is None
    True
    """
    if not marker:
        return ""
    left = _reduce(Marker(marker)._markers, extra)
    if left is False:
        return None
    return "" if left is True else str(Marker(left))
