"""The lists of checks the host keeps are read from the one table (compat/cell/checks.py),
and read as they were written out by hand before."""

from __future__ import annotations

import dataclasses

from compat.cell.checks import BY_NAME, CHECKS
from compat.core import suite
from compat.core.case import NEEDS, Case
from compat.corpus import dropin
from tests.helpers import add_one_case


def test_the_backend_suite_runs_its_checks_in_its_scoreboards_order() -> None:
    assert suite.CHECKS == ("ort_run", "reference", "shape_inference", "inferred_annotations")
    ranks = sorted(c.suite for c in CHECKS if c.suite)
    assert ranks == list(range(1, len(ranks) + 1))  # one column each, none skipped


def test_a_dropin_model_gets_the_default_checks_that_need_nothing_declared() -> None:
    assert dropin.CHECKS == (
        "checker",
        "shape_inference",
        "reference",
        "ort_run",
        "annotations",
        "inferred_annotations",
        "annotations_builtin",
    )


def test_a_check_that_needs_a_declaration_is_listed_only_with_it() -> None:
    assert NEEDS == {"ort_optimized": "optimized", "version_converter": "convert_to"}
    fields = {f.name for f in dataclasses.fields(Case)}
    assert set(NEEDS.values()) <= fields
    bare = add_one_case(optimized=None)
    assert "ort_optimized" not in bare.checks and "version_converter" not in bare.checks
    full = add_one_case(convert_to=13)
    assert {"ort_optimized", "version_converter"} <= set(full.checks)
    assert all(BY_NAME[name].default for name in NEEDS)  # else `needs` would never matter
