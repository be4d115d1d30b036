"""The backend scoreboard's pass rate by onnxruntime release (scoreboard.svg): a line over
the releases, a hollow mark where a release could not run."""

from __future__ import annotations

import math
from dataclasses import dataclass

from compat.core.report import Report
from compat.render.scoreboard import COLUMNS, scoreboard_rows
from compat.render.svg import CHAR, INK, LINE, MUTED, PAD, RULE, document, text_at, width_of
from compat.render.text import xml_text


def _ticks(low: float) -> list[int]:
    step = 5 if 100 - low <= 30 else 10 if 100 - low <= 60 else 25
    return list(range(int(low), 101, step))


def _rates(report: Report) -> list[tuple[str, float | None, str]]:
    """Per onnxruntime release: its label, its pass rate of what was attempted (None when
    nothing was), and a tooltip; from the scoreboard's rows."""
    out: list[tuple[str, float | None, str]] = []
    for row in scoreboard_rows(report):
        release = row[0]
        counts = dict(zip(COLUMNS, row[1:], strict=False))
        state = row[-1]
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


@dataclass(frozen=True)
class _Plot:
    """Where the plot area lies, and the rate at its floor."""

    left: int
    top: int
    width: int
    height: int
    low: float
    pitch: int = 40

    @property
    def bottom(self) -> int:
        return self.top + self.height

    def x_of(self, k: int) -> float:
        return self.left + k * self.pitch + self.pitch / 2

    def y_of(self, rate: float) -> float:
        return round(self.bottom - (rate - self.low) / (100 - self.low) * self.height, 1)


def _grid(plot: _Plot, ticks: list[int]) -> list[str]:
    body: list[str] = []
    for tick in ticks:
        y = plot.y_of(tick)
        body.append(
            f'<path class="grid" d="M{plot.left} {y:g}H{plot.left + plot.width}" '
            f'stroke="{RULE}" stroke-width="1" shape-rendering="crispEdges"/>'
        )
        body.append(
            text_at(
                plot.left - 6, y + 4, f"{tick}%", 11, text_anchor="end", fill=MUTED, class_="tick"
            )
        )
    return body


def _line(plot: _Plot, rates: list[tuple[str, float | None, str]]) -> list[str]:
    """The line through the rates, broken where a release could not run."""
    segments: list[list[str]] = [[]]
    for k, (_, rate, _) in enumerate(rates):
        if rate is None:
            segments.append([])
        else:
            segments[-1].append(f"{plot.x_of(k):g} {plot.y_of(rate):g}")
    return [
        f'<path class="line" d="M{"L".join(segment)}" fill="none" '
        f'stroke="{LINE}" stroke-width="2" stroke-linejoin="round"/>'
        for segment in segments
        if len(segment) > 1
    ]


def _points(plot: _Plot, rates: list[tuple[str, float | None, str]]) -> list[str]:
    """Each release's label under the axis, and its point (hollow where it could not run)."""
    body: list[str] = []
    for k, (release, rate, tip) in enumerate(rates):
        x = plot.x_of(k)
        ly = plot.bottom + 8
        body.append(
            text_at(
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
                f'cy="{plot.bottom - 8}" r="4.5" fill="#ffffff" stroke="{MUTED}" '
                'stroke-width="1.5"/></g>'
            )
            continue
        before = rates[k - 1][1] if k else None
        after = rates[k + 1][1] if k + 1 < len(rates) else None
        dx, dy, anchor = _label_place(before, rate, after)
        y = plot.y_of(rate)
        body.append(
            f'<g class="point"><title>{xml_text(tip)}</title><circle cx="{x:g}" '
            f'cy="{y:g}" r="4" fill="{LINE}" stroke="#ffffff" stroke-width="1.5"/>'
            + text_at(x + dx, y + dy, f"{rate:.1f}", 10, text_anchor=anchor, class_="value")
            + "</g>"
        )
    return body


def _legend(x: int, y: int) -> tuple[list[str], int]:
    """The legend's entries from `x` along baseline `y`, and where they end."""
    body: list[str] = []
    entries = [("pass rate, % of attempted", LINE, LINE), ("could not run", "#ffffff", MUTED)]
    for words, fill, stroke in entries:
        body.append(
            f'<g class="legend-entry"><circle cx="{x + 5}" cy="{y - 4}" r="4.5" '
            f'fill="{fill}" stroke="{stroke}" stroke-width="1.5"/>'
            + text_at(x + 16, y, words, 12)
            + "</g>"
        )
        x += 16 + width_of(words, 12) + 24
    return body, x


def passrate_svg(report: Report) -> str:
    """The backend scoreboard's pass rate (passed / attempted) per onnxruntime release,
    a line over the releases; a release that could not run is a hollow mark."""
    rates = _rates(report)
    known = [rate for _, rate, _ in rates if rate is not None]
    low = min(90, 5 * math.floor((min(known) - 2) / 5)) if known else 0
    ticks = _ticks(max(0, low))
    plot = _Plot(PAD + 44, PAD + 52, max(len(rates), 1) * 40, 240, ticks[0])
    labels_h = math.ceil(max([len(r[0]) for r in rates] + [4]) * 11 * CHAR) + 12
    title = "ONNX backend node tests: pass rate by onnxruntime release"
    subtitle = (
        f"passed / attempted: tests newer than a release supports are skipped and left out; "
        f"generated by onnx {report.run.get('generator_onnx', '?')}"
    )
    body = [
        text_at(PAD, PAD + 16, title, 16, font_weight="bold", class_="title"),
        text_at(PAD, PAD + 35, subtitle, 12, fill=MUTED, class_="subtitle"),
        *_grid(plot, ticks),
        *_line(plot, rates),
        *_points(plot, rates),
        f'<path class="axis" d="M{plot.left} {plot.top}V{plot.bottom}H{plot.left + plot.width}" '
        f'fill="none" stroke="{MUTED}" stroke-width="1" shape-rendering="crispEdges"/>',
        text_at(
            plot.left + plot.width / 2,
            plot.bottom + labels_h + 14,
            "onnxruntime release",
            12,
            text_anchor="middle",
            font_weight="bold",
            class_="axis-title",
        ),
    ]
    legend_y = plot.bottom + labels_h + 38
    legend, legend_end = _legend(plot.left, legend_y)
    body.extend(legend)
    width = max(plot.left + plot.width + PAD, legend_end + PAD, PAD + width_of(subtitle, 12) + PAD)
    return document(width, legend_y + PAD, title, body)
