"""What every picture is drawn with: the document, text, its estimated width, the
palette. The pictures are compat.render.heatmap (summary.svg) and
compat.render.passrate (scoreboard.svg).

Standalone SVG 1.1 on a white ground, drawn on whole pixels with crisp edges, text
sized to be read where the docs and the README embed it. Every square and point carries
a <title> (a tooltip when the file is opened itself). Text widths are estimated, not
measured: CHAR is wide enough for DejaVu Sans, the widest of the fonts listed.
"""

from __future__ import annotations

import math

from compat.render.text import xml_text

FONT = "Helvetica, Arial, 'DejaVu Sans', 'Liberation Sans', sans-serif"
CHAR = 0.62  # an average character's width, in ems
INK = "#1f2328"
MUTED = "#59636e"
RULE = "#d1d9e0"
LINE = "#1a7f37"

PAD = 16


def width_of(text: str, size: float) -> int:
    """An estimate of the width of `text` at font size `size`, in pixels."""
    return math.ceil(len(text) * size * CHAR)


def text_at(x: float, y: float, text: str, size: float = 12, **attrs: str) -> str:
    extra = "".join(f' {k.rstrip("_").replace("_", "-")}="{v}"' for k, v in attrs.items())
    return f'<text x="{x:g}" y="{y:g}" font-size="{size:g}"{extra}>{xml_text(text)}</text>'


def document(width: int, height: int, title: str, body: list[str]) -> str:
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
