"""compat.corpus.make's data and shape helpers: what the family modules build their cases with."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from compat.corpus.make import model, randn, rng, tensor, unknown


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (1, 3, 4, 5), (0, 4)])
def test_randn_is_float32_of_the_asked_shape(shape: tuple[int, ...]) -> None:
    data = randn(7, *shape)
    assert data.dtype == np.float32
    assert data.shape == shape


def test_randn_is_the_same_per_seed_and_differs_between_seeds() -> None:
    assert randn(3, 4, 5).tobytes() == randn(3, 4, 5).tobytes()
    assert randn(3, 4, 5).tobytes() != randn(4, 4, 5).tobytes()


@pytest.mark.parametrize("seed", [0, 1, 11, 17, 41])
@pytest.mark.parametrize("shape", [(3,), (2, 3), (1, 2, 3), (1, 3, 6, 6)])
def test_randn_equals_the_spelling_it_replaces(seed: int, shape: tuple[int, ...]) -> None:
    """Bit for bit, so the case files (and the result-cache keys) did not change."""
    old = rng(seed).standard_normal(shape).astype(np.float32)
    assert randn(seed, *shape).tobytes() == old.tobytes()


def test_randn_continues_a_generator_as_consecutive_draws_would() -> None:
    gen, reference = rng(7), rng(7)
    drawn = [randn(gen, 4), randn(gen, 4, 1, 1), randn(gen, 2, 3)]
    expected = [reference.standard_normal(s).astype(np.float32) for s in [(4,), (4, 1, 1), (2, 3)]]
    assert [d.tobytes() for d in drawn] == [e.tobytes() for e in expected]
    assert drawn[0].tobytes() != drawn[1].reshape(4).tobytes()  # the stream moved on


@pytest.mark.parametrize("rank", [0, 1, 2, 4])
def test_unknown_declares_the_rank_and_no_size(rank: int) -> None:
    assert unknown(rank) == [None] * rank
    info = tensor("y", np.float32, unknown(rank))
    shape = info.type.tensor_type
    assert shape.HasField("shape")  # the checker needs the field, even for rank 0
    assert len(shape.shape.dim) == rank
    assert all(d.WhichOneof("value") is None for d in shape.shape.dim)


def test_unknown_builds_the_same_model_bytes_as_the_old_spelling() -> None:
    def build(dims: list[None]) -> bytes:
        node = onnx.helper.make_node("Relu", ["x"], ["y"])
        built = model([node], [tensor("x", np.float32, [2, 3])], [tensor("y", np.float32, dims)])
        return built.SerializeToString(deterministic=True)

    assert build(unknown(2)) == build([None, None])
    assert build(unknown(2)) != build(unknown(3))
