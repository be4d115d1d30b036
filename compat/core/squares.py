"""A summary square's state (`unexpected`, `known`, `pass`): one family on one release,
its worst result shown, with the same words, marks and colours in the terminal's
summary, the docs index, summary.svg and the HTML page."""

from __future__ import annotations

from dataclasses import dataclass

from compat.core.outcomes import CellState, Outcome
from compat.core.vocabulary import CELL_STATES, NOT_RUN, NOT_RUN_ROW, OUTCOMES


@dataclass(frozen=True)
class SquareRow:
    """A summary square's state: one family on one release, worst result shown."""

    #: the docs index's text form of the picture: 🐞
    mark: str
    #: the same in plain text (`--ascii`)
    ascii: str
    #: the terminal's summary grid: x
    letter: str
    #: its ANSI colour there ("" for none)
    ansi: str
    #: the terminal's legend ("" for no entry in it)
    said: str
    #: the picture's legend and tooltips
    name: str
    #: every legend's explanation (docs, picture, page)
    meaning: str
    #: on the page: the colours of the outcome it stands for
    colours: tuple[str, str]
    #: in the picture (summary.svg): (fill, number)
    picture: tuple[str, str]
    #: the page: the outcome filter a click on the square sets ("" for none)
    filter: str


#: A square's state, worst first: what a reader must see before anything else.
SQUARES: dict[str, SquareRow] = {
    "broken": SquareRow(
        mark="📦",
        ascii="BROKEN",
        letter="B",
        ansi="1;35",
        said="environment broken",
        name="environment broken",
        meaning="the environment could not be built or imported",
        colours=CELL_STATES[CellState.INSTALL_ERROR].colours,
        picture=("#6b7785", "#ffffff"),
        filter="unexpected",
    ),
    "unexpected": SquareRow(
        mark="❌",
        ascii="UNEXPECTED",
        letter="!",
        ansi="1;31",
        said="N unexpected",
        name="unexpected results",
        meaning="unexpected results: failures, errors, crashes, flaky, xpass, unsupported",
        colours=OUTCOMES[Outcome.FAIL].colours,
        picture=("#d33a2c", "#ffffff"),
        filter="unexpected",
    ),
    "known": SquareRow(
        mark="🐞",
        ascii="known",
        letter="x",
        ansi="33",
        said="known upstream bugs only",
        name="only known bugs",
        meaning="only known upstream bugs (xfail) besides passes",
        colours=OUTCOMES[Outcome.XFAIL].colours,
        picture=("#e8a33d", "#2b1d00"),
        filter="xfail",
    ),
    "pass": SquareRow(
        mark="✅",
        ascii="ok",
        letter=".",
        ansi="32",
        said="all pass",
        name="passes",
        meaning="every check that applies passes",
        colours=OUTCOMES[Outcome.PASS].colours,
        picture=("#8fd3a1", "#1f2328"),
        filter="",
    ),
    "skip": SquareRow(
        mark="⏭️",
        ascii="skip",
        letter="s",
        ansi="90",
        said="skipped",
        name="skipped",
        meaning="nothing applies to this release (skipped)",
        colours=OUTCOMES[Outcome.SKIP].colours,
        picture=("#b9c2cc", "#1f2328"),
        filter="",
    ),
    NOT_RUN: SquareRow(
        mark="—",
        ascii="n/a",
        letter=" ",
        ansi="",
        said="",
        name="not run",
        meaning="not run",
        colours=NOT_RUN_ROW.colours,
        picture=("#f3f5f7", "#59636e"),
        filter="",
    ),
}

#: The summary square a cell shows that has no wheel for its Python: not applicable, as
#: a cell that ran nothing; where a report has such cells, the legends say so.
NOT_RUN_OR_NO_WHEEL = "not run, or no wheel of that release for that Python"
