"""Pictures: the family × release summary as a heatmap (summary.svg) and the backend
scoreboard's pass rate by release (scoreboard.svg).

Standalone SVG 1.1 on a white ground, drawn on whole pixels with crisp edges, text
sized to be read where the docs and the README embed it. Every square and point carries
a <title> (a tooltip when the file is opened itself). Text widths are estimated, not
measured: CHAR is wide enough for DejaVu Sans, the widest of the fonts listed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from compat.core.axis_names import axis_row
from compat.core.report import Report
from compat.core.squares import NOT_RUN_OR_NO_WHEEL, SQUARES
from compat.core.vocabulary import NOT_RUN
from compat.render.axes import no_wheel_cells, python_title, pythons
from compat.render.scoreboard import COLUMNS, scoreboard_rows
from compat.render.summary import Square, Summary, bands, summarize
from compat.render.text import xml_text

FONT = "Helvetica, Arial, 'DejaVu Sans', 'Liberation Sans', sans-serif"
CHAR = 0.62  # an average character's width, in ems
INK, MUTED, RULE, LINE = "#1f2328", "#59636e", "#d1d9e0", "#1a7f37"

SQUARE, GAP, GROUP_GAP, PAD = 24, 2, 16, 16


def width_of(text: str, size: float) -> int:
    """An estimate of the width of `text` at font size `size`, in pixels."""
    return math.ceil(len(text) * size * CHAR)


def _text(x: float, y: float, text: str, size: float = 12, **attrs: str) -> str:
    extra = "".join(f' {k.rstrip("_").replace("_", "-")}="{v}"' for k, v in attrs.items())
    return f'<text x="{x:g}" y="{y:g}" font-size="{size:g}"{extra}>{xml_text(text)}</text>'


def _svg(width: int, height: int, title: str, body: list[str]) -> str:
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="{FONT}" fill="{INK}" role="img">'
    )
    return "\n".join(
        [
            head,
            f"<title>{xml_text(title)}</title>",
            f'<rect class="background" width="{width}" height="{height}" fill="#ffffff"/>',
            *body,
            "</svg>",
            "",
        ]
    )


def _held(summary: Summary, axis: str) -> str:
    other = axis_row(axis).other
    if not other:
        return ""
    versions = sorted({getattr(c.cell, other) for c in summary.columns if c.axis == axis} - {""})
    return f" ({other} {versions[0]})" if len(versions) == 1 else ""


def _legend(x0: int, y0: int, width: int, no_wheel: bool = False) -> tuple[list[str], int]:
    """The states' swatches and names, wrapped to `width`; returns the elements and the
    height used. Where some cell has no wheel for its Python, n/a says so."""
    body, x, y = [], x0, y0
    for state, square in SQUARES.items():
        fill, _ = square.picture
        name, meaning = square.name, square.meaning
        if no_wheel and state == NOT_RUN:
            name, meaning = "not run / no wheel", NOT_RUN_OR_NO_WHEEL
        item = 14 + 6 + width_of(name, 12) + 18
        if x > x0 and x + item > x0 + width:
            x, y = x0, y + 22
        body.append(
            f'<g class="legend-entry" data-state="{state}">'
            f"<title>{xml_text(meaning)}</title>"
            f'<rect class="swatch" x="{x}" y="{y}" width="14" height="14" fill="{fill}" '
            f'stroke="{RULE}" shape-rendering="crispEdges"/>'
            + _text(x + 20, y + 11.5, name, 12)
            + "</g>"
        )
        x += item
    note = "n in a square: the unexpected results, or the known bugs, behind its colour"
    body.append(_text(x0, y + 36, note, 11, fill=MUTED, class_="note"))
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
    title_h, axis_h, labels_h = 30, 22, math.ceil(longest * 11 * CHAR) + 10
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
    body.append(_text(PAD, PAD + 16, title, 16, font_weight="bold", class_="title"))
    for (name, _), spot in zip(groups, spots, strict=True):
        left = xs[spot[0]]
        right = max(xs[spot[-1]] + SQUARE, left + width_of(name, 12))
        y = PAD + title_h + 12
        body.append(_text(left, y, name, 12, font_weight="bold", class_="axis-title"))
        body.append(
            f'<path d="M{left} {y + 5}H{right}" stroke="{MUTED}" stroke-width="1" '
            'shape-rendering="crispEdges"/>'
        )
    labels = [label for _, group in groups for label in group]
    for position, label in enumerate(labels):
        cx, cy = xs[position] + SQUARE / 2 + 4, top - 6
        body.append(
            _text(
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
            body.append(_text(PAD, y + 16, band.title, 12, font_weight="bold", class_="band"))
            y += BAND_H
        for family, squares in band.rows:
            body += _row(family, squares, xs, y, label_w)
            y += pitch
    grid_bottom = y - GAP
    width = max(grid_right + PAD, 520, *(PAD + width_of(b.title, 12) + PAD for b in drawn))
    legend, legend_h = _legend(PAD, grid_bottom + 20, width - 2 * PAD, no_wheel)
    body += legend
    height = grid_bottom + 20 + legend_h + PAD
    return _svg(width, height, f"{title}: families × releases", body)


def _row(
    family: str, squares: tuple[tuple[Square, str], ...], xs: list[int], y: int, label_w: int
) -> list[str]:
    """One family's squares, each with its tooltip and the number behind its colour."""
    body = [f'<g class="row" data-family="{xml_text(family)}" shape-rendering="crispEdges">']
    body.append(_text(PAD + label_w - 10, y + 16.5, family, 13, text_anchor="end", class_="family"))
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
                _text(
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


def _ticks(low: float) -> list[int]:
    step = 5 if 100 - low <= 30 else 10 if 100 - low <= 60 else 25
    return list(range(int(low), 101, step))


def _rates(report: Report) -> list[tuple[str, float | None, str]]:
    """Per onnxruntime release: its label, its pass rate of what was attempted (None when
    nothing was), and a tooltip; from the scoreboard's rows."""
    out: list[tuple[str, float | None, str]] = []
    for row in scoreboard_rows(report):
        release, counts, state = row[0], dict(zip(COLUMNS, row[1:], strict=False)), row[-1]
        if counts["passed"] == "—":  # the environment could not be built
            out.append((release, None, f"onnxruntime {release}: {state}"))
            continue
        skipped = int(counts["skipped"])
        attempted = sum(int(counts[c]) for c in COLUMNS) - skipped
        if not attempted:
            out.append((release, None, f"onnxruntime {release}: nothing attempted"))
            continue
        rate = 100 * int(counts["passed"]) / attempted
        tip = f"onnxruntime {release}: {rate:.1f}% ({counts['passed']} of {attempted} attempted"
        out.append((release, rate, tip + f"; {skipped} skipped)"))
    return out


def _label_place(before: float | None, rate: float, after: float | None) -> tuple[int, int, str]:
    """Where a point's value goes, clear of the line: above a peak, below a valley,
    above and to the free side on a slope. Rates grow upwards; returns dx, dy, anchor."""
    lower = [n is None or n <= rate for n in (before, after)]
    if all(lower):
        return 0, -9, "middle"
    if not any(lower):
        return 0, 17, "middle"
    return (-6, -7, "end") if lower[0] else (6, -7, "start")


def passrate_svg(report: Report) -> str:
    """The backend scoreboard's pass rate (passed / attempted) per onnxruntime release,
    a line over the releases; a release that could not run is a hollow mark."""
    rates = _rates(report)
    known = [rate for _, rate, _ in rates if rate is not None]
    low = min(90, 5 * math.floor((min(known) - 2) / 5)) if known else 0
    ticks = _ticks(max(0, low))
    low = ticks[0]
    pitch, plot_h = 40, 240
    left, top = PAD + 44, PAD + 52
    plot_w, bottom = max(len(rates), 1) * pitch, top + plot_h
    labels_h = math.ceil(max([len(r[0]) for r in rates] + [4]) * 11 * CHAR) + 12

    def y_of(rate: float) -> float:
        return round(bottom - (rate - low) / (100 - low) * plot_h, 1)

    body: list[str] = []
    title = "ONNX backend node tests: pass rate by onnxruntime release"
    subtitle = (
        f"passed / attempted: tests newer than a release supports are skipped and left out; "
        f"generated by onnx {report.run.get('generator_onnx', '?')}"
    )
    body.append(_text(PAD, PAD + 16, title, 16, font_weight="bold", class_="title"))
    body.append(_text(PAD, PAD + 35, subtitle, 12, fill=MUTED, class_="subtitle"))
    for tick in ticks:
        y = y_of(tick)
        body.append(
            f'<path class="grid" d="M{left} {y:g}H{left + plot_w}" stroke="{RULE}" '
            'stroke-width="1" shape-rendering="crispEdges"/>'
        )
        body.append(
            _text(left - 6, y + 4, f"{tick}%", 11, text_anchor="end", fill=MUTED, class_="tick")
        )
    xs = [left + k * pitch + pitch / 2 for k in range(len(rates))]
    segments: list[list[str]] = [[]]
    for x, (_, rate, _) in zip(xs, rates, strict=True):
        if rate is None:
            segments.append([])
        else:
            segments[-1].append(f"{x:g} {y_of(rate):g}")
    for segment in segments:
        if len(segment) > 1:
            body.append(
                f'<path class="line" d="M{"L".join(segment)}" fill="none" '
                f'stroke="{LINE}" stroke-width="2" stroke-linejoin="round"/>'
            )
    for k, (x, (release, rate, tip)) in enumerate(zip(xs, rates, strict=True)):
        ly = bottom + 8
        body.append(
            _text(
                x + 4,
                ly,
                release,
                11,
                transform=f"rotate(-90 {x + 4:g} {ly:g})",
                text_anchor="end",
                fill=INK if rate is not None else MUTED,
                class_="release",
            )
        )
        if rate is None:
            body.append(
                f'<g class="missing"><title>{xml_text(tip)}</title><circle cx="{x:g}" '
                f'cy="{bottom - 8}" r="4.5" fill="#ffffff" stroke="{MUTED}" '
                'stroke-width="1.5"/></g>'
            )
            continue
        before = rates[k - 1][1] if k else None
        after = rates[k + 1][1] if k + 1 < len(rates) else None
        dx, dy, anchor = _label_place(before, rate, after)
        y = y_of(rate)
        body.append(
            f'<g class="point"><title>{xml_text(tip)}</title><circle cx="{x:g}" '
            f'cy="{y:g}" r="4" fill="{LINE}" stroke="#ffffff" stroke-width="1.5"/>'
            + _text(x + dx, y + dy, f"{rate:.1f}", 10, text_anchor=anchor, class_="value")
            + "</g>"
        )
    body.append(
        f'<path class="axis" d="M{left} {top}V{bottom}H{left + plot_w}" fill="none" '
        f'stroke="{MUTED}" stroke-width="1" shape-rendering="crispEdges"/>'
    )
    body.append(
        _text(
            left + plot_w / 2,
            bottom + labels_h + 14,
            "onnxruntime release",
            12,
            text_anchor="middle",
            font_weight="bold",
            class_="axis-title",
        )
    )
    legend_y = bottom + labels_h + 38
    entries = [("pass rate, % of attempted", LINE, LINE), ("could not run", "#ffffff", MUTED)]
    x = left
    for words, fill, stroke in entries:
        body.append(
            f'<g class="legend-entry"><circle cx="{x + 5}" cy="{legend_y - 4}" r="4.5" '
            f'fill="{fill}" stroke="{stroke}" stroke-width="1.5"/>'
            + _text(x + 16, legend_y, words, 12)
            + "</g>"
        )
        x += 16 + width_of(words, 12) + 24
    width = max(left + plot_w + PAD, x + PAD, PAD + width_of(subtitle, 12) + PAD)
    return _svg(width, legend_y + PAD, title, body)
