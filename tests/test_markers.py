"""compat/core/markers.py: a Requires-Dist marker with its `extra` fixed, rule by rule
as PEP 508 evaluates markers (`and` binds tighter than `or`, parentheses group)."""

from __future__ import annotations

import pytest
from packaging.markers import Marker

from compat.core.markers import for_extra

OR_MARKER = 'extra == "test" or python_version < "3.10"'


def test_an_or_marker_is_a_base_dependency_below_3_10_and_the_extra_s_everywhere() -> None:
    assert for_extra(OR_MARKER, "") == 'python_version < "3.10"'
    assert for_extra(OR_MARKER, "test") == ""
    assert for_extra(OR_MARKER, "docs") == 'python_version < "3.10"'


@pytest.mark.parametrize(
    ("marker", "extra", "left"),
    [
        ("", "", ""),  # no marker: a base dependency everywhere
        ('python_version < "3.12"', "", 'python_version < "3.12"'),
        ('extra == "test"', "", None),
        ('extra == "test"', "test", ""),
        ('python_version >= "3.9" and extra == "test"', "test", 'python_version >= "3.9"'),
        ('python_version >= "3.9" and extra == "test"', "docs", None),
        ('"test" == extra', "test", ""),  # the variable on the right
        ('extra != "test"', "test", None),
        # `and` binds tighter: the test extra's dependency only on Windows below 3.10
        (
            'extra == "test" and os_name == "nt" or python_version < "3.10"',
            "test",
            'os_name == "nt" or python_version < "3.10"',
        ),
        (
            '(extra == "test" or python_version < "3.10") and os_name == "nt"',
            "",
            'python_version < "3.10" and os_name == "nt"',
        ),
        (
            'extra == "test" and (os_name == "nt" or sys_platform == "linux")',
            "test",
            'os_name == "nt" or sys_platform == "linux"',
        ),
        ('platform_release == "extra"', "", 'platform_release == "extra"'),  # a value, not it
    ],
)
def test_each_extra_clause_is_replaced_by_its_value(
    marker: str, extra: str, left: str | None
) -> None:
    assert for_extra(marker, extra) == left


@pytest.mark.parametrize("extra", ["", "test"])
@pytest.mark.parametrize("python", ["3.9", "3.13"])
@pytest.mark.parametrize("os_name", ["nt", "posix"])
@pytest.mark.parametrize(
    "marker",
    [
        OR_MARKER,
        '(extra == "test" or python_version < "3.10") and os_name == "nt"',
        'extra == "test" and os_name == "nt" or python_version < "3.10"',
        'os_name == "nt" and (extra != "test" or python_version >= "3.10")',
    ],
)
def test_what_is_left_evaluates_as_the_whole_marker_does(
    marker: str, extra: str, python: str, os_name: str
) -> None:
    environment = {"extra": extra, "python_version": python, "os_name": os_name}
    left = for_extra(marker, extra)
    whole = Marker(marker).evaluate(environment)
    assert (left is not None and (left == "" or Marker(left).evaluate(environment))) == whole
