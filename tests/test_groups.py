"""compat/core/groups.py: PEP 735 dependency groups resolved by PyPA's
`dependency-groups`, and each table it refuses as one line naming the file and the fix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compat.core.errors import UsageError
from compat.core.groups import resolve_groups

PATH = Path("proj/pyproject.toml")


def _names(table: dict[str, Any], *groups: str) -> list[str]:
    return [str(r) for r in resolve_groups(table, groups, PATH, "cfg")]


def test_includes_are_followed_names_normalised_and_each_requirement_kept_once() -> None:
    table = {
        "Test_Deps": ["pytest>=8", {"include-group": "Typing"}],
        "typing": ["mypy", "pytest>=8"],
        "docs": ["sphinx; python_version >= '3.10'"],
    }
    assert _names(table, "test-deps") == ["pytest>=8", "mypy"]
    assert _names(table, "docs", "TYPING") == [
        'sphinx; python_version >= "3.10"',
        "mypy",
        "pytest>=8",
    ]
    assert _names(table) == []


def test_a_group_not_in_the_table_names_the_asker_and_the_groups_it_has() -> None:
    with pytest.raises(UsageError) as caught:
        _names({"test": ["pytest"], "docs": []}, "tests")
    assert str(caught.value) == (
        "cfg: groups: 'tests' is not in proj/pyproject.toml's [dependency-groups] "
        "(it has: docs, test)"
    )


FIX = "fix the table as PEP 735 defines it (pip and uv cannot read it either)"


@pytest.mark.parametrize(
    ("table", "said"),
    [
        (
            {"test": [{"include-group": "test"}]},
            "group 'test' cannot be resolved: Cyclic dependency group include while "
            "resolving test: test includes itself (it has: test)",
        ),
        (
            {"test": [{"include-group": "lint"}], "lint-x": []},
            "group 'test' cannot be resolved: Dependency group 'lint' not found "
            "(it has: lint-x, test)",
        ),
        (
            {"test": ["pytest >=8 x"]},
            "group 'test' cannot be resolved: Expected comma (within version specifier), "
            "semicolon (after version specifier) or end: pytest >=8 x (it has: test)",
        ),
        (
            {"test": [3]},
            "group 'test' cannot be resolved: Invalid dependency group item: 3 (it has: test)",
        ),
        (
            {"Test": ["a"], "test": ["b"]},
            "cannot be resolved: Duplicate dependency group names: test (Test, test) "
            "(it has: Test, test)",
        ),
    ],
)
def test_a_table_pep_735_refuses_is_one_line_naming_the_file(
    table: dict[str, Any], said: str
) -> None:
    with pytest.raises(UsageError) as caught:
        _names(table, "test")
    assert str(caught.value) == f"proj/pyproject.toml: [dependency-groups] {said}: {FIX}"
