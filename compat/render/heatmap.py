"""The family × release summary as a heatmap (summary.svg): one square per family and
release, its worst result's colour, every square with a <title> tooltip, a legend that
names only the states the picture holds."""

from __future__ import annotations

import math
from dataclasses import dataclass

from compat.core.axis_names import axis_row
from compat.core.report import Report
from compat.core.squares import NOT_RUN_OR_NO_WHEEL, SQUARES
from compat.core.vocabulary import NOT_RUN
from compat.render.axes import no_wheel_cells, python_title, pythons
from compat.render.summary import Square, Summary, bands, summarize
from compat.render.svg import CHAR, MUTED, PAD, RULE, document, text_at, width_of
from compat.render.text import xml_text

SQUARE = 24
GAP = 2
GROUP_GAP = 16


def _held(summary: Summary, axis: str) -> str:
    other = axis_row(axis).other
    if not other:
        return ""
    versions = sorted({getattr(c.cell, other) for c in summary.columns if c.axis == axis} - {""})
    return f" ({other} {versions[0]})" if len(versions) == 1 else ""


def _legend(x0: int, y0: int, width: int, no_wheel: bool = False) -> tuple[list[str], int]:
    """The states' swatches and names, wrapped to `width`; returns the elements and the
    height used. Where some cell has no wheel for its Python, n/a says so."""
    body = []
    x = x0
    y = y0
    for state, square in SQUARES.items():
        fill, _ = square.picture
        name = square.name
        meaning = square.meaning
        if no_wheel and state == NOT_RUN:
            name = "not run / no wheel"
            meaning = NOT_RUN_OR_NO_WHEEL
        item = 14 + 6 + width_of(name, 12) + 18
        if x > x0 and x + item > x0 + width:
            x = x0
            y = y + 22
        body.append(
            f'<g class="legend-entry" data-state="{state}">'
            f"<title>{xml_text(meaning)}</title>"
            f'<rect class="swatch" x="{x}" y="{y}" width="14" height="14" fill="{fill}" '
            f'stroke="{RULE}" shape-rendering="crispEdges"/>'
            + text_at(x + 20, y + 11.5, name, 12)
            + "</g>"
        )
        x += item
    note = "n in a square: the unexpected results, or the known bugs, behind its colour"
    body.append(text_at(x0, y + 36, note, 11, fill=MUTED, class_="note"))
    return body, y + 40 - y0


@dataclass(frozen=True)
class _Band:
    """Rows of squares under a title ("" for none): each a family and, per column, its
    square and the column's title for the tooltip."""

    title: str
    rows: tuple[tuple[str, tuple[tuple[Square, str], ...]], ...]


#: A band's title above its rows, on a picture of several Pythons.
BAND_H = 24


def heatmap_svg(report: Report) -> str:
    """The summary grid: families as rows, releases as columns grouped by axis; on a run
    of several Pythons, a band of rows per Python under columns they share."""
    summary = summarize(report)
    if not pythons(report):
        axes = list(dict.fromkeys(column.axis for column in summary.columns))
        groups = [
            (
                axis_row(axis).releases + _held(summary, axis),
                [c.label for c in summary.columns if c.axis == axis],
            )
            for axis in axes
        ]
        order = [i for axis in axes for i, c in enumerate(summary.columns) if c.axis == axis]
        rows = tuple(
            (f, tuple((summary.squares[(f, i)], summary.columns[i].title) for i in order))
            for f in summary.families
        )
        return _heatmap(groups, [_Band("", rows)], summary.families, False)
    laid = bands(summary)
    groups = [(axis_row(axis).releases, list(labels)) for axis, labels in laid.groups]
    shared = [(axis, label) for axis, labels in laid.groups for label in labels]
    drawn = []
    for python, columns in laid.bands.items():
        tips = [f"{axis_row(a).short} {label} on Python {python}" for a, label in shared]
        rows = tuple(
            (
                f,
                tuple(
                    (Square(NOT_RUN, {}) if i is None else summary.squares[(f, i)], tip)
                    for i, tip in zip(columns, tips, strict=True)
                ),
            )
            for f in summary.families
        )
        drawn.append(_Band(python_title(report, python), rows))
    return _heatmap(groups, drawn, summary.families, bool(no_wheel_cells(report)))


def _heatmap(
    groups: list[tuple[str, list[str]]],
    drawn: list[_Band],
    families: tuple[str, ...],
    no_wheel: bool,
) -> str:
    label_w = max([width_of(f, 13) for f in families] + [60]) + 12
    longest = max([len(label) for _, labels in groups for label in labels] + [4])
    title_h = 30
    axis_h = 22
    labels_h = math.ceil(longest * 11 * CHAR) + 10
    top = PAD + title_h + axis_h + labels_h
    pitch = SQUARE + GAP
    xs: list[int] = []
    x = PAD + label_w
    spots = []
    for title, labels in groups:  # a group is as wide as its squares, or its title
        start = x
        spots.append(range(len(xs), len(xs) + len(labels)))
        for _ in labels:
            xs.append(x)
            x += pitch
        x = max(x - GAP, start + width_of(title, 12)) + GROUP_GAP
    grid_right = x - GROUP_GAP
    body: list[str] = []
    title = "Which ONNX constructs work on which release"
    body.append(text_at(PAD, PAD + 16, title, 16, font_weight="bold", class_="title"))
    for (name, _), spot in zip(groups, spots, strict=True):
        left = xs[spot[0]]
        right = max(xs[spot[-1]] + SQUARE, left + width_of(name, 12))
        y = PAD + title_h + 12
        body.append(text_at(left, y, name, 12, font_weight="bold", class_="axis-title"))
        body.append(
            f'<path d="M{left} {y + 5}H{right}" stroke="{MUTED}" stroke-width="1" '
            'shape-rendering="crispEdges"/>'
        )
    labels = [label for _, group in groups for label in group]
    for position, label in enumerate(labels):
        cx = xs[position] + SQUARE / 2 + 4
        cy = top - 6
        body.append(
            text_at(
                cx,
                cy,
                label,
                11,
                transform=f"rotate(-90 {cx:g} {cy:g})",
                fill=MUTED,
                class_="release",
            )
        )
    y = top
    for band in drawn:
        if band.title:
            body.append(text_at(PAD, y + 16, band.title, 12, font_weight="bold", class_="band"))
            y += BAND_H
        for family, squares in band.rows:
            body += _row(family, squares, xs, y, label_w)
            y += pitch
    grid_bottom = y - GAP
    width = max(grid_right + PAD, 520, *(PAD + width_of(b.title, 12) + PAD for b in drawn))
    legend, legend_h = _legend(PAD, grid_bottom + 20, width - 2 * PAD, no_wheel)
    body += legend
    height = grid_bottom + 20 + legend_h + PAD
    return document(width, height, f"{title}: families × releases", body)


def _row(
    family: str, squares: tuple[tuple[Square, str], ...], xs: list[int], y: int, label_w: int
) -> list[str]:
    """One family's squares, each with its tooltip and the number behind its colour."""
    body = [f'<g class="row" data-family="{xml_text(family)}" shape-rendering="crispEdges">']
    body.append(
        text_at(PAD + label_w - 10, y + 16.5, family, 13, text_anchor="end", class_="family")
    )
    for x, (square, column) in zip(xs, squares, strict=True):
        fill, ink = SQUARES[square.state].picture
        counts = ", ".join(f"{n} {o}" for o, n in sorted(square.counts.items()))
        tip = f"{family} · {column}: {SQUARES[square.state].name}"
        body.append(
            f"<g><title>{xml_text(tip)}{f' ({counts})' if counts else ''}</title>"
            f'<rect class="square {square.state}" x="{x}" y="{y}" '
            f'width="{SQUARE}" height="{SQUARE}" fill="{fill}"/>'
        )
        if square.number:
            body.append(
                text_at(
                    x + SQUARE / 2,
                    y + 16.5,
                    str(square.number),
                    11,
                    text_anchor="middle",
                    font_weight="bold",
                    fill=ink,
                    class_="number",
                )
            )
        body.append("</g>")
    body.append("</g>")
    return body
