"""Distinct work only (compat/execute/schedule.py): one owner per key, its cell's share cut
into work units; properties over random plans, each what a docstring promises."""

from __future__ import annotations

from collections import Counter
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compat.cell.checks import BY_NAME, PARTS
from compat.corpus.discover import CaseFiles
from compat.execute.schedule import (
    MIN_UNIT_SECONDS,
    UNIT_OVERHEAD,
    Job,
    Unit,
    assign,
    cost,
    units,
)
from tests.helpers import add_one_case

CELLS = tuple(f"onnx1.{n}.0-ort1.20.1" for n in range(14, 20))
#: Case folders are never read: the schedule only looks at a case's id.
FILES = {i: CaseFiles(add_one_case(id=i), Path(i), "", "") for i in ("a.one", "a.two", "b.one")}
CHECKS = (*BY_NAME, *PARTS, "my_custom_check")  # a custom check has no typical cost


@st.composite
def plans(draw: st.DrawFn) -> tuple[list[Job], dict[str, float]]:
    """Jobs as the engine lists them (cell by cell, in plan order), each distinct key
    needed by some of the cells; measured seconds for some keys."""
    cells = draw(st.lists(st.sampled_from(CELLS), min_size=1, max_size=5, unique=True))
    pairs = st.tuples(st.sampled_from(sorted(FILES)), st.sampled_from(CHECKS))
    needs = []  # a key is one check of one case (in cells of the same versions)
    for k, (case, check) in enumerate(draw(st.lists(pairs, min_size=1, max_size=25, unique=True))):
        who = draw(st.lists(st.sampled_from(cells), min_size=1, unique=True))
        needs.append((f"key{k}", FILES[case], check, set(who)))
    jobs = [
        Job(cell, files, check, key)
        for cell in cells
        for key, files, check, who in needs
        if cell in who
    ]
    measured = draw(
        st.dictionaries(st.sampled_from([n[0] for n in needs]), st.floats(0, 20, allow_nan=False))
    )
    return jobs, measured


def ids(jobs: tuple[Job, ...] | list[Job]) -> list[tuple[str, str, str, str]]:
    return [(j.cell, j.files.case.id, j.check, j.key) for j in jobs]


def spent(jobs: tuple[Job, ...] | list[Job], seconds: dict[str, float]) -> float:
    return sum(cost(j, seconds) for j in jobs)


@settings(max_examples=40, deadline=None)
@given(plan=plans())
def test_every_key_has_one_owner_among_the_cells_that_need_it(
    plan: tuple[list[Job], dict[str, float]],
) -> None:
    jobs, seconds = plan
    owners = assign(jobs, seconds)
    assert set(owners) == {j.key for j in jobs}
    for key, owner in owners.items():
        assert owner.key == key
        assert ids([owner])[0] in ids([j for j in jobs if j.key == key])
    assert ids(list(assign(jobs, seconds).values())) == ids(list(owners.values()))


@settings(max_examples=40, deadline=None)
@given(plan=plans())
def test_a_key_needed_everywhere_evens_the_shares_out(
    plan: tuple[list[Job], dict[str, float]],
) -> None:
    """Greedy list scheduling, costliest first: when every cell needs every key, the
    cell with the most work got its last key while it had the least, so no share
    exceeds another by more than one key's cost."""
    jobs, seconds = plan
    cells = list(dict.fromkeys(j.cell for j in jobs))
    keys = {j.key: j for j in jobs}
    everywhere = [Job(c, j.files, j.check, j.key) for c in cells for j in keys.values()]
    owners = assign(everywhere, seconds)
    load = {c: spent([j for j in owners.values() if j.cell == c], seconds) for c in cells}
    largest = max(cost(j, seconds) for j in everywhere)
    assert max(load.values()) - min(load.values()) <= largest + 1e-9


def test_the_costliest_keys_are_placed_first() -> None:
    """Two cells, keys of 1, 1 and 2 seconds: placed in the order given, the 2 s key would
    land on a share of 1 s (3 s against 1 s); costliest first, the shares are 2 s each."""
    seconds = {"k1": 1.0, "k2": 1.0, "k3": 2.0}
    jobs = [Job(cell, FILES["a.one"], "checker", k) for cell in CELLS[:2] for k in seconds]
    owners = assign(jobs, seconds)
    shares = dict.fromkeys(CELLS[:2], 0.0)
    for key, owner in owners.items():
        shares[owner.cell] += seconds[key]
    assert sorted(shares.values()) == [2.0, 2.0]


def test_ties_go_to_the_first_cell_in_plan_order() -> None:
    files = FILES["a.one"]
    jobs = [Job(cell, files, "checker", "k") for cell in (CELLS[3], CELLS[1], CELLS[2])]
    assert assign(jobs, {})["k"].cell == CELLS[3]
    # and a second key of the same cost goes to the next one with nothing yet
    jobs += [Job(cell, files, "checker", "k2") for cell in (CELLS[3], CELLS[1], CELLS[2])]
    assert assign(jobs, {})["k2"].cell == CELLS[1]


@settings(max_examples=40, deadline=None)
@given(plan=plans(), cores=st.integers(0, 8))
def test_units_hold_every_owned_job_once_each_in_its_own_cell(
    plan: tuple[list[Job], dict[str, float]], cores: int
) -> None:
    jobs, seconds = plan
    owners = assign(jobs, seconds)
    made = units(owners, seconds, cores)
    assert Counter(i for u in made for i in ids(u.jobs)) == Counter(ids(list(owners.values())))
    assert all(u.jobs and {j.cell for j in u.jobs} == {u.cell} for u in made)
    shares = {j.cell for j in owners.values()}
    assert len(shares) <= len(made) <= len(owners)
    assert ids([j for u in units(owners, seconds, cores) for j in u.jobs]) == ids(
        [j for u in made for j in u.jobs]
    )


@settings(max_examples=40, deadline=None)
@given(plan=plans(), cores=st.integers(0, 8))
def test_units_come_longest_first_and_a_share_is_split_only_past_the_limit(
    plan: tuple[list[Job], dict[str, float]], cores: int
) -> None:
    """The limit is the whole work (with a worker's overhead per share) divided among the
    cores, and at least MIN_UNIT_SECONDS; a share within it is one unit, a longer one is
    cut where the next job would pass it, a case's checks kept together in order."""
    jobs, seconds = plan
    owners = assign(jobs, seconds)
    made = units(owners, seconds, cores)
    assert [u.cost for u in made] == sorted((u.cost for u in made), reverse=True)
    for u in made:
        assert u.cost == pytest.approx(UNIT_OVERHEAD + spent(u.jobs, seconds))
    shares: dict[str, list[Unit]] = {}
    for u in made:
        shares.setdefault(u.cell, []).append(u)
    total = spent(list(owners.values()), seconds) + UNIT_OVERHEAD * len(shares)
    limit = max(MIN_UNIT_SECONDS, total / max(1, cores))
    for cell, pieces in shares.items():
        share = [j for j in owners.values() if j.cell == cell]
        if spent(share, seconds) <= limit - 1e-9:
            assert len(pieces) == 1
        for piece in pieces:  # over the limit only when one job alone is
            assert len(piece.jobs) == 1 or spent(piece.jobs, seconds) <= limit + 1e-9
        # in (case, check) order, each piece as long as the next job allowed
        ordered = sorted(pieces, key=lambda u: (u.jobs[0].files.case.id, u.jobs[0].check))
        flat = [j for u in ordered for j in u.jobs]
        assert [(j.files.case.id, j.check) for j in flat] == sorted(
            (j.files.case.id, j.check) for j in flat
        )
        for piece, after in pairwise(ordered):
            assert spent(piece.jobs, seconds) + cost(after.jobs[0], seconds) > limit - 1e-9


def test_cost_is_the_measured_time_else_the_checks_typical() -> None:
    job = Job(CELLS[0], FILES["a.one"], "annotations:ort", "k")
    assert cost(job, {"k": 4.5}) == 4.5
    assert cost(job, {}) == BY_NAME["annotations"].cost / len(BY_NAME["annotations"].parts)
    assert cost(Job(CELLS[0], FILES["a.one"], "ort_run", "k"), {}) == BY_NAME["ort_run"].cost
