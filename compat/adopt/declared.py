"""What a project declares about itself in its pyproject.toml: its dependency ranges,
its test dependency groups and extras, and "claims vs reality", the one line that
sets a declared range against where the project's own tests pass."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from compat.core.groups import resolve_groups
from compat.core.versions import in_range

#: the names a project's test dependencies go by, as a dependency group or an extra
TEST_SETS = ("test", "tests", "testing", "dev")


def read_pyproject(path: Path) -> dict[str, Any]:
    """The parsed pyproject.toml, or {} when there is none."""
    return tomllib.loads(path.read_text()) if path.is_file() else {}


def _requirements(items: object) -> list[Requirement]:
    found = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, str):  # a group's {include-group = ...}
            continue
        try:
            found.append(Requirement(item))
        except InvalidRequirement:
            continue
    return found


def _applies(requirement: Requirement) -> bool:
    marker = requirement.marker
    return marker is None or marker.evaluate({"extra": ""})


def declared_ranges(pyproject_path: Path) -> dict[str, str]:
    """Every package the project depends on, with the range it declares: the project's
    `dependencies`, then its extras for packages not among them; `""` for a bare name.

    >>> declared_ranges(Path("pyproject.toml"))  # doctest: +SKIP
    {'onnx': '>=1.13', 'numpy': '', 'onnxruntime': '>=1.17,<2'}
    """
    return ranges_of(read_pyproject(pyproject_path))


def _table(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def ranges_of(pyproject: dict[str, Any]) -> dict[str, str]:
    """`declared_ranges` of a parsed pyproject.toml; a value of another type than PEP
    621's (`project = "x"`) declares nothing."""
    project = _table(pyproject.get("project"))
    extras = _table(project.get("optional-dependencies"))
    ranges: dict[str, str] = {}
    for source in (project.get("dependencies", []), *extras.values()):
        here: dict[str, list[str]] = {}
        for requirement in _requirements(source):
            if _applies(requirement):
                here.setdefault(canonicalize_name(requirement.name), []).append(
                    str(requirement.specifier)
                )
        for name, specs in here.items():
            ranges.setdefault(name, ",".join(sorted(s for s in specs if s)))
    return ranges


def declared_test_sets(pyproject: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The project's dependency groups and extras that hold its test dependencies:
    the first of TEST_SETS it has, as a group when it has one, else as an extra."""
    groups: dict[str, str] = {
        canonicalize_name(g): g for g in pyproject.get("dependency-groups", {})
    }
    extras = pyproject.get("project", {}).get("optional-dependencies", {})
    for name in TEST_SETS:
        if name in groups:  # PEP 735 normalises group names: `Test` is `test`
            return [groups[name]], []
    for name in TEST_SETS:
        if name in extras:
            return [], [name]
    return [], []


def set_requirements(pyproject: dict[str, Any], groups: list[str], extras: list[str]) -> set[str]:
    """The distribution names those groups (with the groups they include, resolved by
    PyPA's `dependency-groups`: compat/core/groups.py) and extras list; a group table
    that cannot be resolved is a one-line error."""
    all_groups = pyproject.get("dependency-groups", {})
    all_extras = pyproject.get("project", {}).get("optional-dependencies", {})
    found = resolve_groups(all_groups, groups, Path("pyproject.toml"), "pyproject.toml")
    names: set[str] = {canonicalize_name(r.name) for r in found}
    for extra in extras:
        names |= {canonicalize_name(r.name) for r in _requirements(all_extras.get(extra))}
    return names


def _span(versions: list[str]) -> str:
    return versions[0] if len(versions) == 1 else f"{versions[0]}–{versions[-1]}"


def _runs(tested: list[tuple[str, bool]]) -> list[list[str]]:
    """The maximal runs of neighbouring failing releases, in order."""
    runs: list[list[str]] = []
    previous = True
    for version, passed in tested:
        if not passed:
            if previous:
                runs.append([])
            runs[-1].append(version)
        previous = passed
    return runs


def _clause(package: str, spec: str, tested: list[tuple[str, bool]], what: str) -> str:
    said = f"pyproject says {package}{spec}" if spec else f"pyproject says any {package}"
    versions = [v for v, _ in tested]
    passing = [v for v, passed in tested if passed]
    if len(passing) == len(tested):
        return f"{said}; {what} pass on every release tested ({_span(versions)})"
    if not passing:
        return f"{said}; {what} fail on every release tested ({_span(versions)})"
    runs = _runs(tested)
    failing = [_span(run) for run in runs]
    listed = failing[0] if len(failing) == 1 else ", ".join(failing[:-1]) + " and " + failing[-1]
    if len(runs) > 1:
        return f"{said}; {what} fail on {listed} (passing on the other {len(passing)} tested)"
    (run,) = runs
    before = [v for v, _ in tested[: versions.index(run[0])]]
    after = [v for v, _ in tested[versions.index(run[-1]) + 1 :]]
    where = " and ".join(
        ([f"up to {before[-1]}"] if before else []) + ([f"from {after[0]}"] if after else [])
    )
    return f"{said}; {what} fail on {listed} (passing {where})"


def claims_line(
    ranges: dict[str, str],
    outcomes: list[tuple[str, str, bool]],
    what: str = "your tests",
) -> str | None:
    """Sets what the project declares against where its command passed: "pyproject says
    onnx>=1.13; your tests fail on 1.16.2–1.18.0 (passing from 1.19.0)".

    Args:
        ranges: the declared ranges, `declared_ranges(pyproject)`.
        outcomes: (package, version, passed) of one command on the cells of that
            package's axis; a release tested twice passes only when it passed every time.
        what: the subject of the sentence, plural ("your tests", "its checks").

    Returns:
        One clause per package that the project declares and that was tested within its
        range, joined by " · "; None when there is none. Releases outside the declared
        range make no claim false and are left out.
    """
    by_package: dict[str, dict[str, bool]] = {}
    for package, version, passed in outcomes:
        name = canonicalize_name(package)
        if name not in ranges:
            continue
        if ranges[name] and not in_range(version, ranges[name]):
            continue
        seen = by_package.setdefault(name, {})
        seen[version] = seen.get(version, True) and passed
    clauses = [
        _clause(name, ranges[name], sorted(seen.items(), key=lambda vp: Version(vp[0])), what)
        for name, seen in by_package.items()
    ]
    return " · ".join(clauses) or None


def partner_clause(package: str, spec: str, partner: str, passing: list[str], what: str) -> str:
    """The clause for an axis whose cells all run with a partner release (`partner`,
    `onnxruntime==1.32.0`) that fails the command itself on its own axis: the axis's
    failures say nothing of `package`, so no release of it is blamed. `passing`: the
    partner's releases that pass, to pair with instead."""
    said = f"pyproject says {package}{spec}" if spec else f"pyproject says any {package}"
    name = Requirement(partner).name
    instead = f"; pair the {package} axis with one that passes, like {passing[-1]}"
    judged = f"not judged: every {package} cell runs with {partner}"
    return f"{said}; {judged}, which fails {what} on the {name} axis too" + (
        instead if passing else ""
    )
