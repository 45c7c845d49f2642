"""`agentos.testing.HashEmbedder`: a deterministic, normalised embedder with no model."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentos.llm import Embedder
from agentos.testing import HashEmbedder


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two unit vectors: their dot product."""
    return sum(x * y for x, y in zip(a, b, strict=True))


def norm(vector: Sequence[float]) -> float:
    return math.sqrt(sum(x * x for x in vector))


# --- identity and shape ----------------------------------------------------------------------


def test_defaults() -> None:
    embedder = HashEmbedder()
    assert embedder.dimension == 256
    assert embedder.model_id == "hash-embedder"
    assert embedder.calls == 0


def test_model_id_can_be_set() -> None:
    assert HashEmbedder(model_id="fake-e5").model_id == "fake-e5"


def test_satisfies_the_embedder_protocol() -> None:
    embedder: Embedder = HashEmbedder()
    assert isinstance(embedder, Embedder)


@pytest.mark.parametrize("dimension", [2, 3, 64, 384, 1536])
async def test_dimension_is_honoured(dimension: int) -> None:
    embedder = HashEmbedder(dimension)
    assert embedder.dimension == dimension
    vectors = await embedder.embed(["one text", "", "another, longer text with more words"])
    assert [len(vector) for vector in vectors] == [dimension] * 3
    assert len(embedder.embed_one("sync")) == dimension


@pytest.mark.parametrize("dimension", [1, 0, -8])
def test_a_dimension_below_two_is_refused(dimension: int) -> None:
    with pytest.raises(ValueError, match=f"dimension must be an integer >= 2, got {dimension}"):
        HashEmbedder(dimension)


@pytest.mark.parametrize("dimension", [2.0, "256", None, True])
def test_a_dimension_that_is_not_an_integer_is_refused(dimension: object) -> None:
    with pytest.raises(ValueError, match="dimension must be an integer >= 2"):
        HashEmbedder(dimension)  # type: ignore[arg-type]


# --- embedding -------------------------------------------------------------------------------


async def test_embed_gives_one_vector_per_text_in_order() -> None:
    embedder = HashEmbedder(32)
    texts = ["alpha", "beta gamma", "alpha"]
    assert await embedder.embed(texts) == [embedder.embed_one(text) for text in texts]


async def test_embed_of_no_texts_is_empty() -> None:
    assert await HashEmbedder().embed([]) == []


async def test_calls_counts_embed_calls_not_texts() -> None:
    embedder = HashEmbedder()
    await embedder.embed(["a", "b", "c"])
    await embedder.embed([])
    embedder.embed_one("not counted")
    assert embedder.calls == 2


def test_vectors_are_the_same_across_instances() -> None:
    text = "The quick brown fox jumps over the lazy dog."
    assert HashEmbedder(128).embed_one(text) == HashEmbedder(128).embed_one(text)


def test_vectors_are_pinned_so_every_process_agrees() -> None:
    # BLAKE2b, not hash(): the same vector whatever PYTHONHASHSEED is.
    assert HashEmbedder(4).embed_one("hello world") == [
        -1 / math.sqrt(5),
        0.0,
        0.0,
        -2 / math.sqrt(5),
    ]
    assert HashEmbedder(4).embed_one("hello") == [0.0, 0.0, 0.0, -1.0]


def test_case_and_punctuation_do_not_matter() -> None:
    embedder = HashEmbedder()
    assert embedder.embed_one("Hello, World!") == embedder.embed_one("hello world")


def test_word_order_matters_a_little() -> None:
    embedder = HashEmbedder()
    forward = embedder.embed_one("dog bites man")
    backward = embedder.embed_one("man bites dog")
    assert forward != backward
    assert cosine(forward, backward) > 0.5


def test_empty_text_has_a_unit_vector() -> None:
    vector = HashEmbedder(16).embed_one("")
    assert norm(vector) == pytest.approx(1.0)
    assert vector == HashEmbedder(16).embed_one("  ...  ")


def test_similar_texts_are_closer_than_unrelated_ones() -> None:
    embedder = HashEmbedder()
    anchor = embedder.embed_one("the cat sat on the warm mat")
    similar = embedder.embed_one("a cat sat on the mat")
    unrelated = embedder.embed_one("quarterly revenue grew in europe")
    assert cosine(anchor, similar) > cosine(anchor, unrelated)
    assert cosine(anchor, similar) > 0.5
    assert cosine(anchor, anchor) == pytest.approx(1.0)


# --- properties ------------------------------------------------------------------------------

# On a cold Hypothesis cache the first text draw builds the Unicode tables (about a second).
TEXT_HEAVY = settings(suppress_health_check=[HealthCheck.too_slow])


@TEXT_HEAVY
@given(st.text(), st.integers(min_value=2, max_value=512))
def test_every_vector_has_unit_length(text: str, dimension: int) -> None:
    vector = HashEmbedder(dimension).embed_one(text)
    assert len(vector) == dimension
    assert all(math.isfinite(x) for x in vector)
    assert norm(vector) == pytest.approx(1.0, abs=1e-9)


@TEXT_HEAVY
@given(st.text())
def test_every_text_embeds_the_same_way_twice(text: str) -> None:
    assert HashEmbedder(64).embed_one(text) == HashEmbedder(64).embed_one(text)
