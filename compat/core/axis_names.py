"""The axes of a matrix (`onnx`, `onnxruntime`, `cell`, `python`) and how every report
names them: a table's header, a cell id's label, a family page's heading, and the order
the axes of several Pythons come in."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class AxisRow:
    """An axis of the matrix: the releases of one package, the other held at one."""

    #: table headers and sentences: onnxruntime
    name: str
    #: narrow places (the terminal's summary, a column's title): ort
    short: str
    #: the picture's group title: onnxruntime releases
    releases: str
    #: a family page's heading over its tables
    heading: str
    #: the package held at one release along it ("" for the cells of a cross product)
    other: str

    def label(self, release: str) -> str:
        """How a cell id names its release along this axis: `ort1.24.4`."""
        return f"{self.short}{release}"


#: The axes of a matrix: each package's releases, or every cell of a cross product.
AXES: dict[str, AxisRow] = {
    "onnx": AxisRow(
        name="onnx",
        short="onnx",
        releases="onnx releases",
        heading="On onnx releases",
        other="onnxruntime",
    ),
    "onnxruntime": AxisRow(
        name="onnxruntime",
        short="ort",
        releases="onnxruntime releases",
        heading="On onnxruntime releases",
        other="onnx",
    ),
    "cell": AxisRow(
        name="cell",
        short="cell",
        releases="cells",
        heading="On each environment",
        other="",
    ),
    # the interpreter: it multiplies the other axes (their keys become `onnx@3.12`) and
    # names itself first in a cell id (`py3.12-onnx1.18.0-ort1.24.4`)
    "python": AxisRow(
        name="Python",
        short="py",
        releases="Python versions",
        heading="On Python versions",
        other="",
    ),
}


def split_axis(key: str) -> tuple[str, str]:
    """`onnx@3.12` -> ("onnx", "3.12"): an axis of a plan of several Pythons is one
    package's releases on one of them; ("onnx", "") otherwise."""
    axis, _, python = key.partition("@")
    return axis, python


def axis_row(key: str) -> AxisRow:
    """An axis's row; an axis this table does not know is called by its key everywhere.
    On one Python of several (`onnx@3.12`), its titles say which."""
    axis, python = split_axis(key)
    row = AXES.get(axis) or AxisRow(axis, axis, axis, axis, "")
    if not python:
        return row
    return AxisRow(
        row.name,
        row.short,
        f"{row.releases} on Python {python}",
        f"{row.heading}, Python {python}",
        row.other,
    )


def python_key(python: str) -> tuple[int, ...]:
    """`3.9` sorts before `3.13`."""
    return tuple(int(part) for part in python.split(".") if part.isdigit())


def ordered_axes(keys: Iterable[str]) -> list[str]:
    """Axis keys in the reports' order: by Python (3.9 before 3.13), then onnx before
    onnxruntime (AXES' order); keys of one Python keep the order they came in."""
    keys = list(keys)
    rank = {axis: i for i, axis in enumerate(AXES)}

    def order(item: tuple[int, str]) -> tuple[tuple[int, ...], int, int]:
        axis, python = split_axis(item[1])
        if not python:
            return (), 0, item[0]
        return python_key(python), rank.get(axis, len(rank)), item[0]

    return [key for _, key in sorted(enumerate(keys), key=order)]
