"""A project's PEP 735 dependency groups, resolved by PyPA's `dependency-groups` (the
resolver pip and other tools use): `{include-group = "x"}` followed, names normalised
(`Test_Deps` is `test-deps`), a cycle refused. What it refuses is one line naming the
file, the group and the fix, never a traceback.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from dependency_groups import DependencyGroupResolver
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from compat.core.errors import UsageError


def _unresolved(path: Path, group: str, exc: Exception, have: str) -> UsageError:
    # packaging's message has the requirement's text and a caret line below it
    said = ": ".join(line.strip() for line in str(exc).splitlines() if line.strip(" ^~"))
    asked = f" group {group!r}" if group else ""
    return UsageError(
        f"{path}: [dependency-groups]{asked} cannot be resolved: {said} (it has: {have}): "
        "fix the table as PEP 735 defines it (pip and uv cannot read it either)"
    )


def resolve_groups(
    table: Mapping[str, Sequence[str | Mapping[str, str]]],
    groups: Sequence[str],
    path: Path,
    where: str,
) -> tuple[Requirement, ...]:
    """The requirements of `groups` in `table`, the `[dependency-groups]` of `path`, in
    order, each once.

    Args:
        table: the parsed `[dependency-groups]` table.
        groups: the groups asked for, as the user spelled them.
        path: the pyproject.toml the table is from, named in every error.
        where: who asked for the groups (`pyproject.toml [tool.compat]`), named when
            one of them is not in the table.

    Raises:
        UsageError: a group asked for is not in the table (the error lists the ones it
            has), or the table cannot be resolved (a missing include, a cycle, a
            requirement that is not PEP 508).
    """
    if not isinstance(table, Mapping):
        raise UsageError(
            f"{path}: [dependency-groups] is not a table ({table!r:.40}): write it as a "
            "[dependency-groups] table, as PEP 735 defines it"
        )
    have = ", ".join(sorted(table)) or "none"
    known = {canonicalize_name(name) for name in table}
    for group in groups:
        if canonicalize_name(group) not in known:
            raise UsageError(
                f"{where}: groups: {group!r} is not in {path}'s [dependency-groups] "
                f"(it has: {have})"
            )
    found: list[Requirement] = []
    try:
        resolver = DependencyGroupResolver(table)
    except (TypeError, ValueError) as exc:  # two names that normalise alike
        raise _unresolved(path, "", exc, have) from None
    for group in groups:
        try:
            found += resolver.resolve(group)
        except (LookupError, TypeError, ValueError) as exc:  # ValueError: cycles, PEP 508
            raise _unresolved(path, group, exc, have) from None
    return tuple({str(r): r for r in found}.values())
