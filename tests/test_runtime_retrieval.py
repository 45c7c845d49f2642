"""`agentos.runtime.retrieval`: the retrieval augmentor the full runtime ships (issue 13, item 5).

Through the public API: the chunker on known text, ingestion and replacement, data-source
filters, each strategy's exact ranking on a small corpus with the hashing embedder, BM25 finding
what the vectors miss, full-text queries built safely from hostile text, a SQLite file reopened,
the GMI's `RetrievalAugmentor` seam, refusals before any write, and a hypothesis property.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.tokens import estimate_tokens
from agentos.runtime.retrieval import (
    CONTEXT_SEPARATOR,
    MMR_LAMBDA,
    RETRIEVAL_STORE,
    RRF_K,
    ChunkingOptions,
    SQLiteRetrievalAugmentor,
    candidate_count,
    chunk_text,
)
from agentos.storage import StorageError, open_database
from agentos.substrate.collaborators import (
    IngestedDocument,
    RagRetrievalOptions,
    RetrievalAugmentor,
    RetrievalResult,
)
from agentos.testing import HashEmbedder

CORPUS = {
    "build": "The deploy pipeline builds the image and runs the unit tests.",
    "slow": "Our deploy pipeline failed twice when the registry was slow.",
    "rollback": "A failed deploy pipeline rolls back to the previous release.",
    "release": (
        "Release notes: version 4.2 adds dark mode, faster search, offline drafts and the fix "
        "for bug QX7734 in the exporter."
    ),
    "cats": "Cats purr softly when they nap on warm blankets.",
    "cats-again": "Cats purr softly when they nap on warm blankets!",
    "weather": "Rain and wind are expected in Zürich tomorrow morning.",
}


def documents(source: str | None = "docs") -> list[IngestedDocument]:
    return [IngestedDocument(key, text, source, {"title": key}) for key, text in CORPUS.items()]


async def corpus_augmentor() -> SQLiteRetrievalAugmentor:
    augmentor = SQLiteRetrievalAugmentor(HashEmbedder())
    await augmentor.ingest_documents(documents())
    return augmentor


def options(top_k: int, strategy: str, *sources: str) -> RagRetrievalOptions:
    return RagRetrievalOptions(top_k=top_k, target_data_source_ids=sources, strategy=strategy)


def ids(result: RetrievalResult) -> list[str]:
    return [chunk.id for chunk in result.chunks]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / math.sqrt(
        sum(x * x for x in a) * sum(y * y for y in b)
    )


# --- the chunker -------------------------------------------------------------------------------

TEXT = 'Alpha one. Beta two! Gamma "three." Delta four?\n\n  \nNew para here. And more.'


def test_chunks_pack_sentences_to_the_budget_with_overlap() -> None:
    assert chunk_text(TEXT, ChunkingOptions(max_tokens=8, overlap_tokens=4)) == [
        "Alpha one. Beta two!",
        'Beta two! Gamma "three."',
        'Gamma "three." Delta four?',
        "Delta four?\n\nNew para here.",
        "New para here. And more.",
    ]


def test_chunks_without_overlap_and_under_the_default_budget() -> None:
    assert chunk_text(TEXT, ChunkingOptions(max_tokens=8, overlap_tokens=0)) == [
        "Alpha one. Beta two!",
        'Gamma "three." Delta four?',
        "New para here. And more.",
    ]
    assert chunk_text(TEXT) == [
        'Alpha one. Beta two! Gamma "three." Delta four?\n\nNew para here. And more.'
    ]


def test_an_oversized_sentence_is_cut_at_words_and_a_long_word_into_slices() -> None:
    text = "aaaa bbbb cccc dddd " + "x" * 10
    assert chunk_text(text, ChunkingOptions(max_tokens=3, overlap_tokens=0)) == [
        "aaaa bbbb",
        "cccc dddd",
        "xxxxxxxxxx",
    ]
    assert chunk_text("y" * 9, ChunkingOptions(max_tokens=1, overlap_tokens=0)) == [
        "yyyy",
        "yyyy",
        "y",
    ]


def test_blank_text_has_no_chunks_and_other_values_are_refused() -> None:
    assert chunk_text("") == []
    assert chunk_text(" \n\n \t ") == []
    with pytest.raises(GMIError) as caught:
        chunk_text(b"bytes")  # type: ignore[arg-type]
    assert caught.value.details == {"option": "text"}


@settings(max_examples=80, deadline=None)
@given(
    text=st.text(st.sampled_from('ab .!?\n"é'), max_size=200),
    max_tokens=st.integers(min_value=1, max_value=12),
    overlap=st.integers(min_value=0, max_value=11),
)
def test_every_chunk_fits_and_no_word_is_lost(text: str, max_tokens: int, overlap: int) -> None:
    chunking = ChunkingOptions(max_tokens, min(overlap, max_tokens - 1))
    chunks = chunk_text(text, chunking)
    assert all(chunk and estimate_tokens(chunk) <= max_tokens for chunk in chunks)
    # Without overlap, the chunks hold the text's characters in order, only whitespace changed.
    plain = chunk_text(text, ChunkingOptions(max_tokens, 0))
    assert "".join("".join(plain).split()) == "".join(text.split())


@pytest.mark.parametrize(
    ("settings_", "option"),
    [
        ({"max_tokens": 0}, "chunking.max_tokens"),
        ({"max_tokens": 2.5}, "chunking.max_tokens"),
        ({"overlap_tokens": -1}, "chunking.overlap_tokens"),
        ({"max_tokens": 8, "overlap_tokens": 8}, "chunking.overlap_tokens"),
        ({"overlap_tokens": True}, "chunking.overlap_tokens"),
    ],
)
def test_bad_chunking_options_are_refused(settings_: dict[str, object], option: str) -> None:
    with pytest.raises(GMIError) as caught:
        ChunkingOptions(**settings_)  # type: ignore[arg-type]
    assert caught.value.code is GMIErrorCode.INVALID_ARGUMENT
    assert caught.value.details == {"option": option}


# --- ingestion -----------------------------------------------------------------------------------


async def test_ingested_chunks_keep_their_document_source_and_metadata() -> None:
    augmentor = SQLiteRetrievalAugmentor(
        HashEmbedder(), chunking=ChunkingOptions(max_tokens=8, overlap_tokens=4)
    )
    await augmentor.ingest_documents([IngestedDocument("notes", TEXT, "kb", {"lang": "en"})])
    chunks = await augmentor.document_chunks("notes")
    assert augmentor.chunk_count == 5
    assert [chunk.id for chunk in chunks] == [f"notes#{n}" for n in range(5)]
    assert [chunk.content for chunk in chunks] == chunk_text(TEXT, ChunkingOptions(8, 4))
    assert {chunk.data_source_id for chunk in chunks} == {"kb"}
    assert chunks[3].metadata == {"lang": "en", "document_id": "notes", "chunk_index": 3}
    assert chunks[3].score is None
    assert await augmentor.document_chunks("unknown") == []


async def test_ingesting_a_document_id_again_replaces_its_chunks() -> None:
    augmentor = SQLiteRetrievalAugmentor(
        HashEmbedder(), chunking=ChunkingOptions(max_tokens=8, overlap_tokens=0)
    )
    await augmentor.ingest_documents(
        [IngestedDocument("a", TEXT, "kb"), IngestedDocument("b", "Other text.")]
    )
    assert augmentor.chunk_count == 4
    await augmentor.ingest_documents([IngestedDocument("a", "Zebra crossing ahead.", "maps")])
    assert augmentor.chunk_count == 2
    [chunk] = await augmentor.document_chunks("a")
    assert (chunk.content, chunk.data_source_id) == ("Zebra crossing ahead.", "maps")
    # The full-text index forgot the old text: its words find nothing by BM25 any more.
    found = await augmentor.retrieve_context("Gamma Delta", options(5, "hybrid"))
    assert "Gamma" not in found.augmented_context
    await augmentor.ingest_documents([IngestedDocument("a", "  \n ")])
    assert augmentor.chunk_count == 1
    assert await augmentor.document_chunks("a") == []


# --- the strategies on a hand-built corpus -----------------------------------------------------


async def test_similarity_ranks_by_cosine_ties_by_ingestion_order() -> None:
    augmentor = await corpus_augmentor()
    result = await augmentor.retrieve_context("cats nap on warm blankets", options(3, "similarity"))
    assert ids(result) == ["cats#0", "cats-again#0", "build#0"]
    # The same order and numbers a brute-force cosine over the corpus gives.
    embedder = HashEmbedder()
    query = embedder.embed_one("cats nap on warm blankets")
    order = sorted(
        enumerate(CORPUS.items()),
        key=lambda item: (-cosine(query, embedder.embed_one(item[1][1])), item[0]),
    )
    assert ids(result) == [f"{key}#0" for _, (key, _) in order[:3]]
    for chunk in result.chunks:
        expected = cosine(query, embedder.embed_one(CORPUS[chunk.metadata["document_id"]]))
        assert chunk.score == pytest.approx(expected, abs=1e-6)
    assert result.augmented_context == CONTEXT_SEPARATOR.join(
        [CORPUS["cats"], CORPUS["cats-again"], CORPUS["build"]]
    )


async def test_hybrid_fuses_bm25_and_vector_ranks_and_finds_the_keyword() -> None:
    augmentor = await corpus_augmentor()
    query = "QX7734 deploy pipeline"
    vectors = await augmentor.retrieve_context(query, options(3, "similarity"))
    # The vectors rank the three pipeline chunks first; the keyword's chunk is fourth.
    assert ids(vectors) == ["slow#0", "rollback#0", "build#0"]
    hybrid = await augmentor.retrieve_context(query, options(3, "hybrid"))
    assert ids(hybrid) == ["slow#0", "release#0", "rollback#0"]
    # BM25 ranks the rare keyword first: release (vector 4, BM25 1) beats rollback (2, 3).
    assert [chunk.score for chunk in hybrid.chunks] == [
        1 / (RRF_K + 1) + 1 / (RRF_K + 2),
        1 / (RRF_K + 4) + 1 / (RRF_K + 1),
        1 / (RRF_K + 2) + 1 / (RRF_K + 3),
    ]


async def test_bm25_finds_a_keyword_the_vectors_miss_entirely() -> None:
    augmentor = await corpus_augmentor()
    # The hashing embedder sees "zurich" and "Zürich" as different words (every cosine is 0);
    # the full-text index folds the diacritic.
    vectors = await augmentor.retrieve_context("zurich", options(7, "similarity"))
    assert {chunk.score for chunk in vectors.chunks} == {0.0}
    hybrid = await augmentor.retrieve_context("ZURICH", options(2, "hybrid"))
    assert ids(hybrid)[0] == "weather#0"
    assert hybrid.chunks[0].score == 1 / (RRF_K + 7) + 1 / (RRF_K + 1)


async def test_mmr_drops_the_near_duplicate_the_similarity_ranking_keeps() -> None:
    augmentor = await corpus_augmentor()
    query = "cats nap on warm blankets"
    result = await augmentor.retrieve_context(query, options(3, "mmr"))
    assert ids(result) == ["cats#0", "release#0", "weather#0"]
    # The same picks as MMR computed here from the embedder's vectors.
    embedder = HashEmbedder()
    q = embedder.embed_one(query)
    keys = sorted(CORPUS, key=lambda k: (-cosine(q, embedder.embed_one(CORPUS[k])), k))
    vectors = {key: embedder.embed_one(CORPUS[key]) for key in keys}
    picked: list[str] = []
    while len(picked) < 3:
        best = max(
            (k for k in keys if k not in picked),
            key=lambda k: (
                MMR_LAMBDA * cosine(q, vectors[k])
                - (1 - MMR_LAMBDA)
                * max((cosine(vectors[k], vectors[p]) for p in picked), default=0)
            ),
        )
        picked.append(best)
    assert ids(result) == [f"{key}#0" for key in picked]
    assert result.chunks[0].score == pytest.approx(cosine(q, vectors["cats"]), abs=1e-6)


async def test_every_strategy_names_its_chunks_and_joins_the_context_in_rank_order() -> None:
    augmentor = await corpus_augmentor()
    for strategy in ("similarity", "hybrid", "mmr"):
        result = await augmentor.retrieve_context("deploy pipeline", options(2, strategy))
        assert len(result.chunks) == 2
        assert result.augmented_context == CONTEXT_SEPARATOR.join(c.content for c in result.chunks)
        for chunk in result.chunks:
            key = chunk.metadata["document_id"]
            assert chunk.id == f"{key}#0"
            assert chunk.metadata == {"title": key, "document_id": key, "chunk_index": 0}
            assert chunk.data_source_id == "docs"


async def test_a_blank_query_or_an_empty_store_finds_nothing() -> None:
    augmentor = SQLiteRetrievalAugmentor(HashEmbedder())
    assert await augmentor.retrieve_context("deploy", options(3, "hybrid")) == RetrievalResult()
    await augmentor.ingest_documents(documents())
    assert await augmentor.retrieve_context("  ", options(3, "hybrid")) == RetrievalResult()


# --- data sources ------------------------------------------------------------------------------


async def sourced_augmentor(**settings_: object) -> SQLiteRetrievalAugmentor:
    augmentor = SQLiteRetrievalAugmentor(HashEmbedder(), **settings_)  # type: ignore[arg-type]
    await augmentor.ingest_documents(
        [
            IngestedDocument("a", "Deploy pipeline runbook for the API.", "runbooks"),
            IngestedDocument("b", "Deploy pipeline notes from the wiki.", "wiki"),
            IngestedDocument("c", "Deploy pipeline ticket: pipeline stuck.", "tickets"),
            IngestedDocument("d", "Deploy pipeline summary of a turn.", None),
        ]
    )
    return augmentor


@pytest.mark.parametrize("strategy", ["similarity", "hybrid", "mmr"])
async def test_retrieval_keeps_to_the_target_data_sources(strategy: str) -> None:
    augmentor = await sourced_augmentor()
    found = await augmentor.retrieve_context("deploy pipeline", options(5, strategy, "wiki"))
    assert ids(found) == ["b#0"]
    found = await augmentor.retrieve_context(
        "deploy pipeline", options(5, strategy, "wiki", "tickets")
    )
    assert sorted(ids(found)) == ["b#0", "c#0"]
    everything = await augmentor.retrieve_context("deploy pipeline", options(5, strategy))
    assert sorted(ids(everything)) == ["a#0", "b#0", "c#0", "d#0"]
    unknown = await augmentor.retrieve_context("deploy pipeline", options(5, strategy, "nope"))
    assert unknown == RetrievalResult()


async def test_no_targets_means_the_default_data_sources() -> None:
    augmentor = await sourced_augmentor(default_data_source_ids=("runbooks",))
    found = await augmentor.retrieve_context("deploy pipeline", options(5, "hybrid"))
    assert ids(found) == ["a#0"]
    found = await augmentor.retrieve_context("deploy pipeline", options(5, "hybrid", "tickets"))
    assert ids(found) == ["c#0"]


# --- full-text queries built from hostile text -------------------------------------------------

HOSTILE = [
    '"',
    '""',
    "'",
    "*",
    "deploy*",
    "NEAR",
    "NEAR(deploy pipeline, 2)",
    "deploy -pipeline",
    "-",
    "deploy AND",
    "OR",
    "NOT deploy",
    "^deploy",
    "content:deploy",
    "(((",
    '"unbalanced deploy',
    "zürich ü ß",
    "🙂 émoji",
    "中文 查询",
    "\x00",
    "deploy " * 2_000,
    "'; DROP TABLE retrieval_chunks; --",
]


@pytest.mark.parametrize("query", HOSTILE)
async def test_hostile_queries_never_raise(query: str) -> None:
    augmentor = await corpus_augmentor()
    for strategy in ("similarity", "hybrid", "mmr"):
        result = await augmentor.retrieve_context(query, options(3, strategy))
        assert len(result.chunks) == 3
    assert augmentor.chunk_count == len(CORPUS)


async def test_a_query_of_punctuation_alone_ranks_by_the_vectors() -> None:
    augmentor = await corpus_augmentor()
    query = '?!*"() - ^:'
    hybrid = await augmentor.retrieve_context(query, options(4, "hybrid"))
    vectors = await augmentor.retrieve_context(query, options(4, "similarity"))
    assert ids(hybrid) == ids(vectors)
    assert [chunk.score for chunk in hybrid.chunks] == [1 / (RRF_K + n) for n in range(1, 5)]


async def test_operator_words_are_plain_words() -> None:
    augmentor = await corpus_augmentor()
    await augmentor.ingest_documents([IngestedDocument("near", "The office is NEAR the station.")])
    found = await augmentor.retrieve_context("near", options(1, "hybrid"))
    assert ids(found) == ["near#0"]


# --- SQLite -------------------------------------------------------------------------------------


async def test_a_reopened_file_keeps_the_documents_and_their_index(tmp_path: Path) -> None:
    path = tmp_path / "retrieval.db"
    first = SQLiteRetrievalAugmentor(HashEmbedder(), path=path)
    await first.ingest_documents(documents())
    before = await first.retrieve_context("QX7734 deploy pipeline", options(3, "hybrid"))
    first.close()
    assert first.closed
    again = SQLiteRetrievalAugmentor(HashEmbedder(), path=path)
    assert again.chunk_count == len(CORPUS)
    assert again.database.schema_version(RETRIEVAL_STORE) == 1
    assert again.database.journal_mode == "wal"
    after = await again.retrieve_context("QX7734 deploy pipeline", options(3, "hybrid"))
    assert after == before
    await again.ingest_documents([IngestedDocument("cats", "Replaced after the reopen.")])
    assert [c.content for c in await again.document_chunks("cats")] == [
        "Replaced after the reopen."
    ]
    again.close()


async def test_a_store_refuses_another_embedder(tmp_path: Path) -> None:
    path = tmp_path / "retrieval.db"
    SQLiteRetrievalAugmentor(HashEmbedder(), path=path).close()
    for embedder in (HashEmbedder(128), HashEmbedder(model_id="other")):
        with pytest.raises(GMIError) as caught:
            SQLiteRetrievalAugmentor(embedder, path=path)
        assert caught.value.code is GMIErrorCode.CONFIGURATION_ERROR
        assert caught.value.details["option"] == "embedder"


async def test_a_shared_database_stays_open_and_a_closed_augmentor_refuses() -> None:
    database = open_database(":memory:")
    augmentor = SQLiteRetrievalAugmentor(HashEmbedder(), database)
    await augmentor.ingest_documents(documents())
    augmentor.close()
    assert not database.closed
    with pytest.raises(StorageError):
        await augmentor.retrieve_context("deploy", options(1, "hybrid"))
    with pytest.raises(StorageError):
        await augmentor.ingest_documents(documents())
    # Reopened on the same database, the chunks are there.
    assert SQLiteRetrievalAugmentor(HashEmbedder(), database).chunk_count == len(CORPUS)
    database.close()


# --- the GMI's seam and bad input ---------------------------------------------------------------


def test_it_is_the_gmis_retrieval_augmentor() -> None:
    assert isinstance(SQLiteRetrievalAugmentor(HashEmbedder()), RetrievalAugmentor)
    assert candidate_count(3) == 20
    assert candidate_count(10) == 40


@pytest.mark.parametrize(
    ("query", "bad", "option"),
    [
        ("q", RagRetrievalOptions(top_k=0), "top_k"),
        ("q", RagRetrievalOptions(top_k=True), "top_k"),
        ("q", RagRetrievalOptions(top_k="3"), "top_k"),  # type: ignore[arg-type]
        ("q", RagRetrievalOptions(strategy="hybrid_search"), "strategy"),
        ("q", RagRetrievalOptions(target_data_source_ids="wiki"), "target_data_source_ids"),  # type: ignore[arg-type]
        ("q", RagRetrievalOptions(target_data_source_ids=(1,)), "target_data_source_ids"),  # type: ignore[arg-type]
        (5, RagRetrievalOptions(), "query"),
        ("\ud800", RagRetrievalOptions(), "query"),
        ("q", {"top_k": 3}, "options"),
    ],
)
async def test_bad_retrievals_are_refused_naming_the_field(
    query: object, bad: object, option: str
) -> None:
    augmentor = await corpus_augmentor()
    with pytest.raises(GMIError) as caught:
        await augmentor.retrieve_context(query, bad)  # type: ignore[arg-type]
    assert caught.value.code is GMIErrorCode.INVALID_ARGUMENT
    assert caught.value.details == {"option": option}


def test_an_unknown_strategy_gets_a_suggestion() -> None:
    augmentor = SQLiteRetrievalAugmentor(HashEmbedder())
    with pytest.raises(GMIError, match=r"did you mean 'hybrid'\?"):
        asyncio.run(augmentor.retrieve_context("q", RagRetrievalOptions(strategy="hybrd")))


GOOD = IngestedDocument("good", "Good text.", "kb")


@pytest.mark.parametrize(
    ("batch", "option"),
    [
        ([GOOD, IngestedDocument("", "text")], "documents[1].id"),
        ([IngestedDocument("  ", "text")], "documents[0].id"),
        ([IngestedDocument(7, "text")], "documents[0].id"),  # type: ignore[arg-type]
        ([GOOD, IngestedDocument("x", b"bytes")], "documents[1].content"),  # type: ignore[arg-type]
        ([IngestedDocument("x", None)], "documents[0].content"),  # type: ignore[arg-type]
        ([IngestedDocument("x", "bad \udcff")], "documents[0].content"),
        ([IngestedDocument("x", "t", "")], "documents[0].data_source_id"),
        ([IngestedDocument("x", "t", metadata={"f": object()})], "documents[0].metadata"),
        ([IngestedDocument("x", "t", metadata=[1])], "documents[0].metadata"),  # type: ignore[arg-type]
        ([GOOD, GOOD], "documents[1].id"),
        ([{"id": "x", "content": "t"}], "documents[0]"),
        ("not a batch", "documents"),
    ],
)
async def test_bad_documents_are_refused_before_any_write(batch: object, option: str) -> None:
    augmentor = await corpus_augmentor()
    with pytest.raises(GMIError) as caught:
        await augmentor.ingest_documents(batch)  # type: ignore[arg-type]
    assert caught.value.code is GMIErrorCode.INVALID_ARGUMENT
    assert caught.value.details == {"option": option}
    assert augmentor.chunk_count == len(CORPUS)
    assert await augmentor.document_chunks("good") == []


class BrokenEmbedder(HashEmbedder):
    """Embeds the first call, then fails (or answers with too few vectors)."""

    def __init__(self, short: bool) -> None:
        super().__init__()
        self.short = short

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = await super().embed(texts)
        if self.calls == 1:
            return vectors
        if self.short:
            return vectors[:-1]
        raise RuntimeError("embedding service down")


@pytest.mark.parametrize("short", [False, True])
async def test_a_failing_embedder_leaves_the_store_as_it_was(short: bool) -> None:
    augmentor = SQLiteRetrievalAugmentor(BrokenEmbedder(short))
    await augmentor.ingest_documents(documents())
    with pytest.raises((RuntimeError, GMIError)) as caught:
        await augmentor.ingest_documents([IngestedDocument("cats", "New cats text.")])
    if short:
        assert isinstance(caught.value, GMIError)
        assert caught.value.details == {"option": "embedder"}
    assert [c.content for c in await augmentor.document_chunks("cats")] == [CORPUS["cats"]]
    assert augmentor.chunk_count == len(CORPUS)


@pytest.mark.parametrize(
    ("settings_", "option"),
    [
        ({"embedder": "hash"}, "embedder"),
        ({"chunking": {"max_tokens": 10}}, "chunking"),
        ({"default_data_source_ids": "wiki"}, "default_data_source_ids"),
        ({"default_data_source_ids": ("",)}, "default_data_source_ids"),
    ],
)
def test_bad_settings_are_refused(settings_: dict[str, object], option: str) -> None:
    arguments: dict[str, object] = {"embedder": HashEmbedder(), **settings_}
    with pytest.raises(GMIError) as caught:
        SQLiteRetrievalAugmentor(**arguments)  # type: ignore[arg-type]
    assert caught.value.details == {"option": option}


# --- a property ---------------------------------------------------------------------------------

WORDS = ["deploy", "pipeline", "cats", "rain", "invoice", "error", "QX7734", "zürich", "the"]
SOURCE_IDS = ["wiki", "runbooks", "tickets", None]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    docs=st.lists(
        st.tuples(
            st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(" ".join),
            st.sampled_from(SOURCE_IDS),
        ),
        min_size=1,
        max_size=12,
    ),
    targets=st.lists(st.sampled_from(SOURCE_IDS[:3]), max_size=3, unique=True),
    top_k=st.integers(min_value=1, max_value=8),
    strategy=st.sampled_from(["similarity", "hybrid", "mmr"]),
    query=st.text(st.characters(codec="utf-8"), max_size=30),
)
def test_results_stay_in_the_targets_and_fill_top_k(
    docs: list[tuple[str, str | None]],
    targets: list[str],
    top_k: int,
    strategy: str,
    query: str,
) -> None:
    async def scenario() -> RetrievalResult:
        augmentor = SQLiteRetrievalAugmentor(HashEmbedder(dimension=32))
        await augmentor.ingest_documents(
            [IngestedDocument(f"d{n}", text, source) for n, (text, source) in enumerate(docs)]
        )
        return await augmentor.retrieve_context(
            query, RagRetrievalOptions(top_k, tuple(targets), strategy)
        )

    result = asyncio.run(scenario())
    eligible = [source for _, source in docs if not targets or source in targets]
    expected = 0 if not query.strip() else min(top_k, len(eligible))
    assert len(result.chunks) == expected
    assert len({chunk.id for chunk in result.chunks}) == expected
    if targets:
        assert all(chunk.data_source_id in targets for chunk in result.chunks)
    scores = [chunk.score for chunk in result.chunks]
    if strategy != "mmr":
        assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]
