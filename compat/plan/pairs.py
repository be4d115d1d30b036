"""The pair follows the Python: each axis runs with the other package's newest release
that has a wheel for the cell's Python.

The configured pair (onnxruntime 1.24.4 for the onnx axis) may have no wheel for an older
or newer Python (onnxruntime 1.24 has none for 3.10): on that Python the onnx axis then
runs with the newest release of the onnxruntime axis that has one (1.23.2), and every
onnx cell there is a real environment, not a wall of no-wheel cells. Decided from the
package index; an index that cannot be asked keeps the configured pairs.

Which Python runs every release (the others run one cell each, their newest pair) is
decided from the index too: main_python.
"""

from __future__ import annotations

from compat.core.versions import version_key
from compat.plan.config import Config
from compat.plan.index import has_wheel
from compat.plan.index_config import AxisIndex


def follow_pairs(
    config: Config, pythons: tuple[str, ...], onnx: tuple[str, ...], ort: tuple[str, ...]
) -> dict[str, tuple[str, str]]:
    """Per Python: (the onnxruntime release the onnx axis runs with, the onnx release the
    onnxruntime axis runs with). `onnx`, `ort`: the axes' releases (the candidates)."""
    return {
        python: (
            _pair("onnxruntime", config.onnx.pair, ort, python, config.onnxruntime.index),
            _pair("onnx", config.onnxruntime.pair, onnx, python, config.onnx.index),
        )
        for python in pythons
    }


def _pair(
    package: str, pair: str, candidates: tuple[str, ...], python: str, index: AxisIndex
) -> str:
    """`pair` when it installs on `python` (or the index cannot say), else the newest of
    `candidates` that does, else `pair` (its cells are then no-wheel, and say so)."""
    if has_wheel(package, pair, python, index) is not False:
        return pair
    for release in sorted(candidates, key=version_key, reverse=True):
        if has_wheel(package, release, python, index):
            return release
    return pair


def main_python(
    config: Config,
    pythons: tuple[str, ...],
    onnx: tuple[str, ...],
    ort: tuple[str, ...],
    running: str,
) -> str:
    """The Python that runs every release of both axes (the others run one cell each):
    the one the index has wheels of the most of them for; of equals, the interpreter
    onnx-compat runs on (`running`), else the newest. An index that cannot be asked
    counts every release."""

    def wheels(python: str) -> int:
        asked = [("onnx", o, config.onnx.index) for o in onnx]
        asked += [("onnxruntime", r, config.onnxruntime.index) for r in ort]
        return sum(has_wheel(p, v, python, own) is not False for p, v, own in asked)

    return max(pythons, key=lambda p: (wheels(p), p == running, version_key(p)))
