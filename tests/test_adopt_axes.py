"""compat/adopt/axes.py: the axes `init` writes, from the declared ranges and the index."""

from __future__ import annotations

import tomllib

import pytest

from compat.adopt.axes import FALLBACK, choose_axes
from compat.core.errors import CompatError

INDEX = {
    "onnx": ["1.12.0", "1.13.0", "1.13.1", "1.14.1", "1.16.2", "1.17.0", "1.18.0rc1"],
    "onnxruntime": ["1.16.3", "1.17.1", "1.17.3", "1.20.1", "1.24.4"],
}


def _index(package: str) -> list[str]:
    return INDEX[package]


def test_a_declared_range_is_followed_and_paired_with_the_newest_release() -> None:
    axes, said = choose_axes({"onnx": ">=1.13", "onnxruntime": "<1.21"}, _index)
    onnx, ort = axes
    assert (onnx.follows, onnx.versions, onnx.pair) == (">=1.13", (), "1.20.1")
    assert (ort.follows, ort.pair) == ("<1.21", "1.17.0")  # no pre-release as a pair
    assert said[0] == (
        "onnx axis: >=1.13 (declared; today 1.13.1 … 1.17.0, 4 releases), with onnxruntime 1.20.1"
    )
    table = tomllib.loads(onnx.toml())
    assert table == {"versions": ">=1.13", "pair": "1.20.1"}


def test_no_declared_range_gives_the_default_ranges() -> None:
    axes, said = choose_axes({"onnx": ""}, _index)
    assert [a.follows for a in axes] == [">=1.14", ">=1.17"]
    assert "default range" in said[0] and "default range" in axes[1].toml()


def test_an_unreachable_index_writes_fixed_lists_and_says_so() -> None:
    def offline(package: str) -> list[str]:
        raise CompatError("cannot list onnx releases from the package index: no network")

    axes, said = choose_axes({"onnx": ">=1.18"}, offline)
    assert axes[0].versions == tuple(v for v in FALLBACK["onnx"] if v >= "1.18")
    assert axes[0].pair == FALLBACK["onnxruntime"][-1]
    assert tomllib.loads(axes[0].toml())["versions"] == list(axes[0].versions)
    assert "no network: wrote fixed release lists" in said[0]
    assert 'versions = ">=1.18"` follows it' in said[0]


def test_a_range_without_any_release_for_the_pair_is_an_error() -> None:
    with pytest.raises(CompatError, match="onnxruntime>=9: no release"):
        choose_axes({"onnxruntime": ">=9"}, _index)
