"""The pair `init` writes installs beside the project's own requirements.

A project that pins what onnx or onnxruntime depend on (`protobuf==3.20.2`) excludes
their newer releases: paired with one of those, every cell of an axis is an
install-error and the axis tells nothing. So the pair is the newest release that uv's
resolver can install together with the project's declared ranges of other packages;
`init` says which releases it passed over and why.
"""

from __future__ import annotations

from collections.abc import Callable

from packaging.version import Version

#: requirements -> why uv finds no solution for them together ("" when it finds one)
Clash = Callable[[list[str]], str]
#: a package and its candidate releases -> the newest that fits, and why newer did not
Fits = Callable[[str, list[str]], tuple[str | None, str]]
#: at most this many releases (the newest of each minor) are tried, newest first
TRIED = 12


def fitting_pair(
    package: str, candidates: list[str], pins: dict[str, str], clash: Clash
) -> tuple[str | None, str]:
    """The newest of `candidates` that installs beside `pins`, and what was said of the
    newer ones passed over ("" when the newest fits)."""
    newest = sorted(candidates, key=Version, reverse=True)[:TRIED]
    passed: list[str] = []
    first = ""
    for release in newest:
        why = clash([f"{package}=={release}", *(f"{n}{s}" for n, s in pins.items())])
        if not why:
            said = f"{', '.join(passed)}: {first}" if passed else ""
            return release, said
        first = first or why
        passed.append(release)
    return None, f"no {package} release from {newest[-1]} on installs beside it: {first}"


def pair_fits(declared: dict[str, str], clash: Clash | None) -> Fits | None:
    """What `choose_axes` asks of a pair, for a project that declares a range of some
    other package (onnx's and onnxruntime's own ranges aside); None when it declares
    none, or nothing can be asked: then the newest release is the pair."""
    pins = {n: s for n, s in declared.items() if s and n not in ("onnx", "onnxruntime")}
    if not pins or clash is None:
        return None
    return lambda package, candidates: fitting_pair(package, candidates, pins, clash)
