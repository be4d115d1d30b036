"""Distinct work only: which checks really run, in which cell, in which order.

Every (cell, case, check) of a plan has a result key (compat/state/cache.py): the
versions of the packages the check depends on, the case's content and the
in-cell code. Results already known for a key (the cache) are not computed;
each remaining key is computed once, in one of the cells that need it, chosen
so the cells' shares even out; the shares become work units, longest first, a
long share split so that every core stays busy to the end.
"""

from __future__ import annotations

from dataclasses import dataclass

from compat.cell.checks import BY_NAME
from compat.cell.parts import SEPARATOR
from compat.corpus.discover import CaseFiles

#: A worker process costs this much before its first check (imports, session setup).
UNIT_OVERHEAD = 0.6
#: A share is split only when it alone would take longer than the whole work divided
#: among the cores (and than this): each extra process costs UNIT_OVERHEAD.
MIN_UNIT_SECONDS = 3.0


@dataclass(frozen=True)
class Job:
    """One check of one case in one cell, and the key of its result."""

    cell: str
    files: CaseFiles
    check: str
    key: str


@dataclass(frozen=True)
class Unit:
    """Checks computed by one worker process in one cell."""

    cell: str
    jobs: tuple[Job, ...]
    cost: float  # estimated seconds

    @property
    def label(self) -> str:
        return f"{self.cell} ({len(self.jobs)} checks)"


def cost(job: Job, seconds: dict[str, float]) -> float:
    """Estimated seconds: the last measured time for this key, else the check's typical."""
    if job.key in seconds:
        return seconds[job.key]
    whole, _, part = job.check.partition(SEPARATOR)
    check = BY_NAME.get(whole)
    if check is None:
        return 0.005
    return check.cost / len(check.parts) if part else check.cost


def assign(jobs: list[Job], seconds: dict[str, float]) -> dict[str, Job]:
    """One owner per distinct key: the cell with the smallest share so far, keys taken
    costliest first (greedy list scheduling), ties broken by plan order."""
    candidates: dict[str, list[Job]] = {}
    for job in jobs:
        candidates.setdefault(job.key, []).append(job)
    order = {job.cell: i for i, job in reversed(list(enumerate(jobs)))}
    load: dict[str, float] = dict.fromkeys(order, 0.0)
    owners: dict[str, Job] = {}
    for key in sorted(candidates, key=lambda k: -cost(candidates[k][0], seconds)):
        owner = min(candidates[key], key=lambda j: (load[j.cell], order[j.cell]))
        owners[key] = owner
        load[owner.cell] += cost(owner, seconds)
    return owners


def units(owners: dict[str, Job], seconds: dict[str, float], cores: int) -> list[Unit]:
    """Each cell's share as work units, longest first; a share longer than the whole
    work divided among the cores (and than MIN_UNIT_SECONDS) is split in pieces, so no
    core idles while one long share runs to the end."""
    shares: dict[str, list[Job]] = {}
    for job in owners.values():
        shares.setdefault(job.cell, []).append(job)
    total = sum(cost(j, seconds) for j in owners.values()) + UNIT_OVERHEAD * len(shares)
    limit = max(MIN_UNIT_SECONDS, total / max(1, cores))
    out: list[Unit] = []
    for cell, share in shares.items():
        share.sort(key=lambda j: (j.files.case.id, j.check))  # a case's checks together
        pieces: list[list[Job]] = [[]]
        spent = 0.0
        for job in share:
            if pieces[-1] and spent + cost(job, seconds) > limit:
                pieces.append([])
                spent = 0.0
            pieces[-1].append(job)
            spent += cost(job, seconds)
        for piece in pieces:
            estimate = UNIT_OVERHEAD + sum(cost(j, seconds) for j in piece)
            out.append(Unit(cell, tuple(piece), estimate))
    out.sort(key=lambda u: -u.cost)
    return out
