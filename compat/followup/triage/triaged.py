"""What one triage found out about one finding: what each phase added to it, and what
the report (report.py, finding_report.py) writes of it."""

from __future__ import annotations

from dataclasses import dataclass, field

from compat.followup.triage.findings import Finding
from compat.followup.triage.minimal import Minimal
from compat.followup.triage.workaround import Spelling


@dataclass
class Triaged:
    """Everything the report says about one finding."""

    finding: Finding
    original_nodes: int
    minimal: Minimal | None = None
    minimal_note: str = ""  # why there is no minimal model
    spellings: list[Spelling] = field(default_factory=list)
    #: (rewrite, release, result): the original, with a rewrite that fixes the minimal
    #: model, fails another way there: a second failure hidden behind this one
    hidden: list[tuple[str, str, str]] = field(default_factory=list)
    #: known bugs of the corpus like this one: (reason, link)
    known: list[tuple[str, str]] = field(default_factory=list)
    #: how it came to light when not in the model as given ("once finding 1 is …")
    behind: str = ""
    #: the findings triaged from the failure hiding behind this one
    followed: list[int] = field(default_factory=list)
