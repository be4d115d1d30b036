"""The Python axis `init` writes: of the CPythons installed here that the project's
`requires-python` allows, when there are two or more (with one, the sessions' own
interpreter is the whole story), the oldest, the newest and the one init runs on, as
`[tool.compat.python] versions = [...]`: one of them runs every release, the others
their newest pair (compat/plan/matrix.py). A project
that declares no requires-python gets no axis: nothing says which Pythons it supports.
`init --python 3.10,3.12` names them instead; `--python none` writes none."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from compat.adopt.files import toml_list
from compat.core.errors import UsageError
from compat.core.versions import version_key
from compat.plan.pythons import is_version_list

#: the oldest Python a cell runs on (compat/cell/ is Python 3.9-valid)
OLDEST = "3.9"


@dataclass(frozen=True)
class PythonAxis:
    """The axis as written: minor versions (or the range `--python` gave), and the
    line `init` says of it."""

    value: str  # the TOML value: `["3.10", "3.12"]` or `">=3.10"`; "" for none
    said: str = ""

    def toml(self) -> str:
        """`[tool.compat.python]` and its versions, a blank line after; "" for none."""
        if not self.value:
            return ""
        return (
            "[tool.compat.python]\n"
            f"versions = {self.value}  # one Python runs every release, each other its newest "
            "pair\n\n"
        )


#: no Python axis: the cells run on the sessions' interpreter
NO_AXIS = PythonAxis("")


def choose_python_axis(
    requires_python: str, given: str | None, installed: Callable[[], tuple[str, ...]]
) -> PythonAxis:
    """The axis of `--python` (`given`, `none` for none), else of the installed CPythons
    (3.9 or newer: the cells' oldest) that `requires_python` allows, when two or more."""
    if given is not None:
        return _given(given.strip())
    try:
        allowed = SpecifierSet(requires_python.strip())
    except InvalidSpecifier:
        return NO_AXIS
    if not requires_python.strip():
        return NO_AXIS
    found = [
        v
        for v in installed()
        if version_key(v) >= version_key(OLDEST)
        and any(allowed.contains(f"{v}.{micro}") for micro in (0, 99))
    ]
    if len(found) < 2:
        return NO_AXIS
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    chosen = [v for v in found if v in (found[0], found[-1], running)]
    said = (
        f"python: {', '.join(chosen)}: the oldest and newest CPython installed here that "
        f"requires-python {requires_python.strip()} allows"
        + (f", and {running}, this one" if running in chosen[1:-1] else "")
        + ": every release runs on the one with wheels for the most releases, each other "
        'runs its newest pair (`releases = "all"`: every release on each; list more '
        "versions for more Pythons)"
    )
    return PythonAxis(f"[{toml_list(chosen)}]", said)


def _given(text: str) -> PythonAxis:
    """`--python 3.10,3.12` (or a range, `>=3.10`) as written, or none."""
    if text == "none":
        return NO_AXIS
    if not is_version_list(text):
        raise UsageError(
            f"--python {text}: give minor versions, like --python 3.10,3.12, a range "
            "('>=3.10'), or none"
        )
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if all(p[:1].isdigit() for p in parts):
        said = (
            f"python: {', '.join(parts)} (--python): every release runs on one, each other "
            "runs its newest pair"
        )
        return PythonAxis(f"[{toml_list(parts)}]", said)
    said = (
        f"python: {text} (--python): every installed Python in that range; every release "
        "runs on one, each other runs its newest pair"
    )
    return PythonAxis(toml_list([text]), said)
