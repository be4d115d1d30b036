"""The terminal's family × release grid, within one screen.

A run of one Python is one block: a row per family, a column per release of each axis.
A run of several shares the columns (per axis, every release any Python has) and gives
each Python a block under a title naming the releases its axes hold the other package
at. The Python that ran the most cells shows every family; the others only the families
whose squares say something its block does not (another state on a release both ran,
trouble on a release only they ran; a release with no wheel for a Python is blank,
n/a), about MAX_DIFFERING rows in all, so five Pythons of two dozen families still fit
a screen.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from compat.core.axis_names import axis_row
from compat.core.squares import SQUARES
from compat.core.vocabulary import NOT_RUN
from compat.render.summary import Square, Summary, bands
from compat.render.text import one_line, printable

#: Rows of differing families shown in all the blocks but the reference's.
MAX_DIFFERING = 8


@dataclass(frozen=True)
class Block:
    """Rows under a title ("" for none): each a family and its square per column, None
    where there is no square to show (blank)."""

    title: str
    rows: tuple[tuple[str, tuple[Square | None, ...]], ...]


def short_labels(labels: list[str]) -> tuple[str, list[str]]:
    """("1.", ["14", "15", ...]) when the releases differ after a shared prefix and the
    rests are unique, so a column is two characters; else the full labels."""
    if not labels:
        return "", []
    parts = [label.split(".") for label in labels]
    if all(len(p) >= 2 for p in parts) and len({p[0] for p in parts}) == 1:
        minors = [p[1] for p in parts]
        if len(set(minors)) == len(minors) and all(len(m) <= 2 for m in minors):
            return f"{parts[0][0]}.", minors
    return "", labels


def _paint(text: str, code: str, colour: bool) -> str:
    return f"\033[{code}m{text}\033[0m" if colour and code else text


def grid_lines(
    groups: list[tuple[str, list[str]]], blocks: list[Block], colour: bool, width: int
) -> list[str]:
    """The axis titles, the release header, then each block: its title, its rows."""
    names = [name for block in blocks for name, _ in block.rows]
    name_width = max(len("family"), *(len(printable(name)) for name in names))
    shown: list[str] = []
    spans: list[range] = []
    titles = []
    for axis, labels in groups:
        prefix, short = short_labels(labels)
        column = max(len(s) for s in short)
        spans.append(range(len(shown), len(shown) + len(short)))
        shown += [label.rjust(column) for label in short]
        name = axis_row(axis).short
        titles.append(f"{name} {prefix}x" if prefix else name)
    widths = [
        max(len(title), len(" ".join(shown[i] for i in span)))
        for title, span in zip(titles, spans, strict=True)
    ]

    def row(name: str, cells: Callable[[int], str]) -> str:
        parts = []
        for span, group_width in zip(spans, widths, strict=True):
            plain = " ".join(shown[i] for i in span)
            parts.append(" ".join(cells(i) for i in span) + " " * (group_width - len(plain)))
        return f"{name.ljust(name_width)}  " + "   ".join(parts).rstrip()

    line = " " * (name_width + 2) + "   ".join(
        title.ljust(group_width) for title, group_width in zip(titles, widths, strict=True)
    )
    lines = [line.rstrip(), printable(row("family", lambda i: shown[i]))]
    for block in blocks:
        if block.title:
            title = one_line(block.title)
            lines.append(title if len(title) <= width else title[: width - 1] + "…")
        for name, squares in block.rows:

            def mark(i: int, squares: tuple[Square | None, ...] = squares) -> str:
                square = squares[i]
                state = square.state if square else NOT_RUN
                text = SQUARES[state].letter
                code = SQUARES[state].ansi
                if square and state == "unexpected" and square.number < 10:
                    text = str(square.number)
                return _paint(text.rjust(len(shown[i])), code, colour)

            lines.append(row(printable(name), mark))
    return lines


def summary_grid(summary: Summary, titles: dict[str, str], colour: bool, width: int) -> list[str]:
    """The grid of a summary; `titles`: each Python's block title, on a run of several."""
    if not titles:
        axes = list(dict.fromkeys(c.axis for c in summary.columns))
        groups = [(a, [c.label for c in summary.columns if c.axis == a]) for a in axes]
        order = [i for a in axes for i, c in enumerate(summary.columns) if c.axis == a]
        rows = tuple(
            (family, tuple(summary.squares[(family, i)] for i in order))
            for family in summary.families
        )
        return grid_lines(groups, [Block("", rows)], colour, width)
    laid = bands(summary)
    groups = [(axis, list(labels)) for axis, labels in laid.groups]
    squares = {
        python: {
            family: tuple(None if i is None else summary.squares[(family, i)] for i in columns)
            for family in summary.families
        }
        for python, columns in laid.bands.items()
    }
    return grid_lines(groups, _blocks(summary, squares, titles), colour, width)


def _ran(squares: tuple[Square | None, ...]) -> int:
    return sum(1 for s in squares if s is not None and s.state != NOT_RUN)


def _blocks(
    summary: Summary,
    squares: dict[str, dict[str, tuple[Square | None, ...]]],
    titles: dict[str, str],
) -> list[Block]:
    """A block per Python: the one that ran the most squares (the newest of equals) in
    full, the others' families that show something it does not: another state on a
    release both ran, or trouble on a release only they ran; the worst first, a fair
    share of MAX_DIFFERING rows each."""
    pythons = list(squares)
    reference = max(reversed(pythons), key=lambda p: sum(_ran(row) for row in squares[p].values()))
    share = max(2, MAX_DIFFERING // max(1, len(pythons) - 1))
    blocks = []
    for python in pythons:
        mine = squares[python]
        if python == reference:
            blocks.append(Block(titles[python], tuple((f, mine[f]) for f in summary.families)))
            continue
        differ = [f for f in summary.families if _news(mine[f], squares[reference][f])]
        worst = sorted(differ, key=lambda f: min(_RANK.get(s.state, 9) for s in mine[f] if s))
        shown = set(worst[:share])
        same = len(summary.families) - len(differ)
        said = []
        if same:
            said.append(f"{same} {'family' if same == 1 else 'families'} as on Python {reference}")
        if len(differ) > len(shown):
            said.append(f"{len(differ) - len(shown)} more differ: see matrix.md")
        if not _ran(tuple(s for row in mine.values() for s in row)):
            said = ["no release has a wheel for it"]
        rows = tuple((f, mine[f]) for f in summary.families if f in shown)
        blocks.append(Block(titles[python] + (f": {', '.join(said)}" if said else ""), rows))
    return blocks


#: The states a block of another Python shows first, and those it shows on a release
#: only it ran (a pass or a skip there is what one expects).
_RANK = {state: i for i, state in enumerate(SQUARES)}
_TROUBLE = frozenset({"broken", "unexpected", "known"})


def _news(mine: tuple[Square | None, ...], theirs: tuple[Square | None, ...]) -> bool:
    """A square of mine says what the reference's do not: another state on a release
    both ran, or trouble on one the reference did not run."""
    for a, b in zip(mine, theirs, strict=True):
        if a is None or a.state == NOT_RUN:
            continue
        if b is None or b.state == NOT_RUN:
            if a.state in _TROUBLE:
                return True
        elif a.state != b.state:
            return True
    return False
