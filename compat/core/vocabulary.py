"""The words, marks and colours of every report's entries, one table per concept:
outcomes and cell states here; summary squares in compat.core.squares, axes in
compat.core.axis_names.

An outcome (`fail`) and a cell's state (`install-error`) read the same in the terminal,
the docs, the HTML page (which gets these tables in its JSON), the SVG picture,
matrix.md, junit.xml and the scoreboard, because each renderer reads its row here: a
new outcome is one row, and every table, sentence and legend shows it. A field is here
only because some renderer reads it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from compat.core.outcomes import UNEXPECTED, CellState, Outcome


@dataclass(frozen=True)
class EntryRow:
    """How one entry of a grid reads: an outcome, a broken cell's state, or "not run"."""

    #: the docs' mark: ✅
    mark: str
    #: the docs' mark in plain text (`--ascii`): ok
    ascii: str
    #: one character in the terminal's grid: F
    letter: str
    #: what the page's grid square says over its colour ("" where the colour says it all)
    page: str
    #: in a sentence: "fails ≤ 1.20.1"
    word: str
    #: the docs' legend; its part before ":" closes a family page
    meaning: str
    #: matrix.md's legend: the words in brackets after the name ("" for none)
    note: str
    #: on the page: (background, text), all distinct, the text at WCAG AA on its background
    colours: tuple[str, str]


@dataclass(frozen=True)
class OutcomeRow(EntryRow):
    """An outcome's entry, and where the counting renderers put it."""

    #: the terminal's closing line: "3 failed"
    counted: str
    #: in a verdict: the check works (True), is broken (False, a known bug included), or
    #: did not run (None, a skip)
    works: bool | None
    #: the backend scoreboard's column that counts it
    bucket: str
    #: its junit.xml element: failure, error, skipped, or "" (a passing testcase)
    junit: str


#: Every outcome, in the order of the docs' and the page's legends (the enum's order is
#: the terminal's and matrix.md's).
OUTCOMES: dict[Outcome, OutcomeRow] = {
    Outcome.PASS: OutcomeRow(
        mark="✅",
        ascii="ok",
        letter=".",
        page="",
        word="passes",
        meaning="works",
        note="",
        colours=("#9fdcae", "#0b3a1c"),
        counted="passed",
        works=True,
        bucket="passed",
        junit="",
    ),
    Outcome.FAIL: OutcomeRow(
        mark="❌",
        ascii="FAIL",
        letter="F",
        page="F",
        word="fails",
        meaning="fails: the result differs from the spec (unexpected)",
        note="ran, result differs from the spec",
        colours=("#c62828", "#ffffff"),
        counted="failed",
        works=False,
        bucket="failed",
        junit="failure",
    ),
    Outcome.XFAIL: OutcomeRow(
        mark="🐞",
        ascii="xfail",
        letter="x",
        page="x",
        word="fails (known)",
        meaning="fails as a reported upstream bug says (linked in the verdict)",
        note="a known upstream bug, link below",
        colours=("#f7c95c", "#3d2800"),
        counted="xfailed",
        works=False,
        bucket="failed",
        junit="skipped",
    ),
    Outcome.XPASS: OutcomeRow(
        mark="🎉",
        ascii="XPASS",
        letter="X",
        page="X",
        word="passes (known bug looks fixed)",
        meaning="passes although a bug is recorded for this release: it looks fixed",
        note="known bug no longer reproduces",
        colours=("#6a3fc8", "#ffffff"),
        counted="xpassed",
        works=True,
        bucket="passed",
        junit="failure",
    ),
    Outcome.FLAKY: OutcomeRow(
        mark="🎲",
        ascii="FLAKY",
        letter="~",
        page="~",
        word="flaky",
        meaning="identical runs disagree: nondeterministic (counts in the detail)",
        note="identical runs disagree",
        colours=("#f4a6d7", "#4a0d33"),
        counted="flaky",
        works=False,
        bucket="failed",
        junit="failure",
    ),
    Outcome.ERROR: OutcomeRow(
        mark="💥",
        ascii="ERROR",
        letter="E",
        page="E",
        word="errors",
        meaning="raised an unexpected exception",
        note="an exception, with its phase",
        colours=("#b0127a", "#ffffff"),
        counted="errors",
        works=False,
        bucket="errors",
        junit="error",
    ),
    Outcome.CRASH: OutcomeRow(
        mark="💀",
        ascii="CRASH",
        letter="C",
        page="C",
        word="crashes",
        meaning="the process died (segfault, abort)",
        note="the worker died",
        colours=("#2b0a0a", "#ffffff"),
        counted="crashed",
        works=False,
        bucket="crashes",
        junit="error",
    ),
    Outcome.TIMEOUT: OutcomeRow(
        mark="⏱️",
        ascii="TIMEOUT",
        letter="T",
        page="T",
        word="times out",
        meaning="ran past the time limit",
        note="",
        colours=("#e8853a", "#2b1400"),
        counted="timed out",
        works=False,
        bucket="timeouts",
        junit="error",
    ),
    Outcome.UNSUPPORTED: OutcomeRow(
        mark="🚧",
        ascii="UNREADABLE",
        letter="U",
        page="U",
        word="cannot read the model",
        meaning="this release cannot read your model (an IR version or opset newer than it knows)",
        note="the release cannot read the model",
        colours=("#7a4a00", "#ffffff"),
        counted="cannot read it",
        works=False,
        bucket="failed",
        junit="failure",
    ),
    Outcome.SKIP: OutcomeRow(
        mark="⏭️",
        ascii="skip",
        letter="s",
        page="s",
        word="skipped",
        meaning="does not apply to this release (an opset or API it lacks)",
        note="does not apply to this release",
        colours=("#c8d0d9", "#1d2733"),
        counted="skipped",
        works=None,
        bucket="skipped",
        junit="skipped",
    ),
}

#: What no check ran in shows: the entry of a result that is missing.
NOT_RUN = "n/a"
NOT_RUN_ROW = EntryRow(
    mark="—",
    ascii="n/a",
    letter=" ",
    page="",
    word="not run",
    meaning="not run",
    note="",
    colours=("#f4f6f8", "#4a5663"),
)

#: Why a broken environment ran nothing: one note for both, so matrix.md says it once.
_NO_ENVIRONMENT = "the cell's environment could not be built or imported; no check ran"
#: Every cell state. A ready cell's entries are its results, so READY has words only.
CELL_STATES: dict[CellState, EntryRow] = {
    CellState.READY: EntryRow(
        mark="",
        ascii="",
        letter="",
        page="",
        word="ready",
        meaning="the environment was built and imports: its checks ran",
        note="",
        colours=("", ""),
    ),
    CellState.INSTALL_ERROR: EntryRow(
        mark="📦",
        ascii="no-install",
        letter="I",
        page="I",
        word="cannot install",
        meaning="this release could not be installed (the installer's reason is in the cell)",
        note=_NO_ENVIRONMENT,
        colours=("#4b5563", "#ffffff"),
    ),
    CellState.IMPORT_ERROR: EntryRow(
        mark="🚫",
        ascii="no-import",
        letter="M",
        page="M",
        word="cannot import",
        meaning="installed, but could not be imported",
        note=_NO_ENVIRONMENT,
        colours=("#1e56b0", "#ffffff"),
    ),
    CellState.NO_WHEEL: EntryRow(
        mark="n/a",
        ascii="no-wheel",
        letter="-",
        page="-",
        word="no wheel",
        meaning="no wheel of this release for this Python: not applicable, not a failure",
        note="the index has no wheel of a release for this Python: nothing to install or run",
        colours=("#9e9a91", "#1f2328"),
    ),
}
#: The states of a cell that ran nothing because something went wrong: its entries are
#: the state itself, and each is unexpected. A release with no wheel for the Python is
#: not among them: it is not applicable (NOT_APPLICABLE), like a skip.
BROKEN = tuple(s for s in CellState if s not in (CellState.READY, CellState.NO_WHEEL))
NOT_APPLICABLE = (CellState.NO_WHEEL,)

#: Every entry a grid can hold, by its value, in the docs' and the page's legend order.
ENTRIES: dict[str, EntryRow] = {
    **{outcome.value: row for outcome, row in OUTCOMES.items()},
    NOT_RUN: NOT_RUN_ROW,
    **{state.value: CELL_STATES[state] for state in (*BROKEN, *NOT_APPLICABLE)},
}
#: The terminal's and matrix.md's legend order: the enum's outcomes, then the cell states.
ENUM_ORDER: tuple[str, ...] = (
    *(o.value for o in Outcome),
    *(s.value for s in (*BROKEN, *NOT_APPLICABLE)),
)
#: Entries a legend lists only when the report holds one: a run of one Python never has
#: a release without a wheel, a run of the corpus alone no model a release cannot read,
#: and their legends read as they always did.
ON_DEMAND = frozenset({*(state.value for state in NOT_APPLICABLE), Outcome.UNSUPPORTED.value})


def listed(keys: Iterable[str], present: Collection[str]) -> list[str]:
    """`keys` (a legend's entries) without the on-demand ones absent from `present`."""
    return [key for key in keys if key not in ON_DEMAND or key in present]


#: The entries that make `nox -s matrix` exit 1: unexpected outcomes and broken cells.
UNEXPECTED_ENTRIES = frozenset({*(o.value for o in UNEXPECTED), *(s.value for s in BROKEN)})

#: Outcomes where the check works on that release, and where it is broken (a known bug
#: included); a skip is neither.
WORKS = frozenset(o for o, row in OUTCOMES.items() if row.works is True)
BREAKS = frozenset(o for o, row in OUTCOMES.items() if row.works is False)
