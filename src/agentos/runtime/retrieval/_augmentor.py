"""`SQLiteRetrievalAugmentor`: the retrieval augmentor the full runtime ships.

It implements the GMI's `RetrievalAugmentor` seam (spec: What a turn does, step 2, retrieval
for a user turn's first model call, and step 7, turn-summary ingestion). See the package's
docstring for what it stores and how each strategy ranks.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from agentos.api.call_checks import invalid
from agentos.core.errors import GMIError, GMIErrorCode
from agentos.llm import Embedder
from agentos.storage.sqlite import MEMORY, Database, StorageError, open_store_database
from agentos.substrate.collaborators import (
    IngestedDocument,
    RagRetrievalOptions,
    RetrievalResult,
    RetrievedChunk,
)

from ._catalog import ChunkCatalog
from ._checks import check_documents, check_retrieval
from ._chunking import ChunkingOptions, chunk_text
from ._keyword import bm25_candidates
from ._ranking import maximal_marginal_relevance, reciprocal_rank_fusion
from ._schema import RETRIEVAL_MIGRATIONS, RETRIEVAL_STORE

__all__ = ["CONTEXT_SEPARATOR", "EMBED_BATCH", "SQLiteRetrievalAugmentor", "candidate_count"]

CONTEXT_SEPARATOR = "\n\n"
"""What `RetrievalResult.augmented_context` puts between two chunks' texts (rank order)."""

EMBED_BATCH = 64
"""The most texts one ``embedder.embed()`` call receives during an ingestion."""

_VECTOR_DTYPE = np.dtype("<f4")
_SELECT_BATCH = 500  # ids per IN (...) list, far below SQLite's bound-parameter limit
_Unit = npt.NDArray[np.float32]


def candidate_count(top_k: int) -> int:
    """How many candidates each list gives ``hybrid`` and ``mmr``: ``max(4 * top_k, 20)``."""
    return max(4 * top_k, 20)


class SQLiteRetrievalAugmentor:
    """Documents chunked, embedded and stored in SQLite with an FTS5 index; three strategies.

    ``embedder`` embeds every chunk and every query. Give an open `Database` (shared; its caller
    closes it) or a ``path`` (a file this augmentor opens and closes); with neither, a private
    in-memory database. ``chunking`` sets the chunk budget and overlap (`ChunkingOptions`).
    ``default_data_source_ids`` is what a retrieval with no ``target_data_source_ids`` searches
    (empty: every chunk). A store made with one embedder is refused (``CONFIGURATION_ERROR``,
    option ``embedder``) when reopened with another model or dimension.

    The vectors are read into memory when the augmentor opens and kept in step with its own
    writes; two processes writing the same store at once are not supported (each would keep
    its own vectors), as with `agentos.memory.sqlite_store.SQLiteMemoryStore`.
    """

    def __init__(
        self,
        embedder: Embedder,
        database: Database | None = None,
        *,
        path: str | os.PathLike[str] | None = None,
        chunking: ChunkingOptions | None = None,
        default_data_source_ids: Sequence[str] = (),
    ) -> None:
        _check_settings(embedder, chunking, default_data_source_ids)
        self._embedder = embedder
        self._chunking = chunking or ChunkingOptions()
        self._default_sources = tuple(default_data_source_ids)
        target = MEMORY if database is None and path is None else path
        self._database, self._owns_database = open_store_database(
            "SQLiteRetrievalAugmentor", database, target, RETRIEVAL_STORE, RETRIEVAL_MIGRATIONS
        )
        self._closed = False
        try:
            self._check_embedder_matches()
            self._catalog = self._load_catalog()
        except BaseException:
            if self._owns_database:
                self._database.close()
            raise

    @property
    def database(self) -> Database:
        """The database the chunks live in."""
        return self._database

    @property
    def chunk_count(self) -> int:
        """How many chunks are stored."""
        return len(self._catalog)

    @property
    def closed(self) -> bool:
        """Whether `close()` has been called."""
        return self._closed

    async def retrieve_context(self, query: str, options: RagRetrievalOptions) -> RetrievalResult:
        """The ``options.top_k`` chunks best for ``query`` by ``options.strategy``.

        The chunks come from ``options.target_data_source_ids`` (empty: the default sources;
        none: every chunk). ``augmented_context`` is their texts in rank order joined by
        `CONTEXT_SEPARATOR`. A blank query or an empty store finds nothing.
        """
        check_retrieval(query, options)
        self._check_open()
        if not query.strip() or len(self._catalog) == 0:
            return RetrievalResult()
        [unit] = await self._embed([query])
        sources = options.target_data_source_ids or self._default_sources
        ranked = self._rank(options.strategy, query, unit, options.top_k, sources)
        chunks = self._load(ranked)
        return RetrievalResult(tuple(chunks), CONTEXT_SEPARATOR.join(c.content for c in chunks))

    async def ingest_documents(self, documents: Sequence[IngestedDocument]) -> None:
        """Chunk, embed and store ``documents``; a document id stored before is replaced.

        Every document is checked, chunked and embedded before the one transaction that writes
        them all, so a refused batch or a failing embedder leaves the store as it was. A
        document whose content is blank replaces the old chunks with none.
        """
        metadata = check_documents(documents)
        self._check_open()
        chunked = [chunk_text(document.content, self._chunking) for document in documents]
        units = await self._embed([text for texts in chunked for text in texts])
        self._check_open()
        rows = [
            (document.id, index, document.data_source_id, text, meta)
            for document, meta, texts in zip(documents, metadata, chunked, strict=True)
            for index, text in enumerate(texts)
        ]
        removed, added = self._write([document.id for document in documents], rows, units)
        # Removals first: SQLite may give a new chunk the seq of one deleted in this transaction.
        for seq in removed:
            self._catalog.remove(seq)
        if added:
            sources = [row[2] for row in rows]
            self._catalog.load(added, sources, np.stack(units))

    def _write(
        self,
        document_ids: Sequence[str],
        rows: Sequence[tuple[str, int, str | None, str, str]],
        units: Sequence[_Unit],
    ) -> tuple[list[int], list[int]]:
        """In one transaction, delete the documents' old chunks and insert ``rows``.

        Returns the deleted chunks' seqs and the new ones' (in the order of ``rows``).
        """
        removed: list[int] = []
        added: list[int] = []
        with self._database.transaction() as connection:
            for document_id in document_ids:
                old = connection.execute(
                    "DELETE FROM retrieval_chunks WHERE document_id = ? RETURNING seq",
                    (document_id,),
                ).fetchall()
                removed.extend(int(row[0]) for row in old)
            for row, unit in zip(rows, units, strict=True):
                cursor = connection.execute(
                    "INSERT INTO retrieval_chunks (document_id, chunk_index, data_source_id, "
                    "content, metadata, vector) VALUES (?, ?, ?, ?, ?, ?)",
                    (*row, unit.astype(_VECTOR_DTYPE).tobytes()),
                )
                assert cursor.lastrowid is not None
                added.append(cursor.lastrowid)
        return removed, added

    async def document_chunks(self, document_id: str) -> list[RetrievedChunk]:
        """The stored chunks of ``document_id`` in order (no score); ``[]`` when unknown."""
        self._check_open()
        rows = self._database.fetchall(
            "SELECT seq FROM retrieval_chunks WHERE document_id = ? ORDER BY chunk_index",
            (document_id,),
        )
        return self._load([(int(row[0]), None) for row in rows])

    def close(self) -> None:
        """Release the vectors and close the database if this augmentor opened it (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._catalog = ChunkCatalog(self._embedder.dimension)
        if self._owns_database:
            self._database.close()

    def _rank(
        self, strategy: str, query: str, unit: _Unit, top_k: int, sources: Collection[str]
    ) -> list[tuple[int, float | None]]:
        if strategy == "similarity":
            return list(self._catalog.search(unit, top_k, sources))
        candidates = self._catalog.search(unit, candidate_count(top_k), sources)
        if strategy == "mmr":
            seqs = [seq for seq, _ in candidates]
            relevance = np.array([score for _, score in candidates], dtype=np.float64)
            order = maximal_marginal_relevance(relevance, self._catalog.vectors(seqs), top_k)
            return [candidates[position] for position in order]
        keyword = bm25_candidates(
            self._database, query, candidate_count(top_k), len(self._catalog), sources
        )
        fused = reciprocal_rank_fusion([[seq for seq, _ in candidates], keyword])
        return list(fused[:top_k])

    async def _embed(self, texts: Sequence[str]) -> list[_Unit]:
        units: list[_Unit] = []
        for start in range(0, len(texts), EMBED_BATCH):
            batch = texts[start : start + EMBED_BATCH]
            vectors = await self._embedder.embed(batch)
            if len(vectors) != len(batch):
                raise _embedder_error(f"returned {len(vectors)} vectors for {len(batch)} texts")
            try:
                units.extend(self._catalog.unit(vector) for vector in vectors)
            except ValueError as error:
                raise _embedder_error(str(error)) from error
        return units

    def _load(self, ranked: Sequence[tuple[int, float | None]]) -> list[RetrievedChunk]:
        rows: dict[int, Any] = {}
        seqs = [seq for seq, _ in ranked]
        for start in range(0, len(seqs), _SELECT_BATCH):
            batch = seqs[start : start + _SELECT_BATCH]
            marks = ", ".join("?" * len(batch))
            for row in self._database.fetchall(
                "SELECT seq, document_id, chunk_index, data_source_id, content, metadata "
                f"FROM retrieval_chunks WHERE seq IN ({marks})",
                batch,
            ):
                rows[int(row[0])] = row
        return [_chunk(rows[seq], score) for seq, score in ranked if seq in rows]

    def _load_catalog(self) -> ChunkCatalog:
        catalog = ChunkCatalog(self._embedder.dimension)
        with self._database.transaction() as connection:
            cursor = connection.execute(
                "SELECT seq, data_source_id, vector FROM retrieval_chunks ORDER BY seq"
            )
            cursor.row_factory = None  # plain tuples load measurably faster
            rows = cursor.fetchall()
        if rows:
            seqs, sources, blobs = zip(*rows, strict=True)
            vectors = np.frombuffer(b"".join(blobs), dtype=_VECTOR_DTYPE)
            catalog.load(seqs, sources, vectors.reshape(len(rows), -1).astype(np.float32))
        return catalog

    def _check_embedder_matches(self) -> None:
        wanted = {
            "embedder_model_id": self._embedder.model_id,
            "embedder_dimension": str(self._embedder.dimension),
        }
        with self._database.transaction() as connection:
            stored = dict(connection.execute("SELECT key, value FROM retrieval_meta").fetchall())
            if not stored:
                connection.executemany(
                    "INSERT INTO retrieval_meta (key, value) VALUES (?, ?)", wanted.items()
                )
                return
        if stored != wanted:
            raise GMIError(
                f"embedder: this retrieval store was built with {stored.get('embedder_model_id')!r}"
                f" ({stored.get('embedder_dimension')} dimensions), not "
                f"{wanted['embedder_model_id']!r} ({wanted['embedder_dimension']}); open it with "
                "that embedder or give another database",
                GMIErrorCode.CONFIGURATION_ERROR,
                {"option": "embedder", "stored": stored},
            )

    def _check_open(self) -> None:
        if self._closed:
            raise StorageError("the retrieval augmentor is closed")


def _chunk(row: Any, score: float | None) -> RetrievedChunk:
    document_id, index = str(row[1]), int(row[2])
    metadata = {**json.loads(row[5]), "document_id": document_id, "chunk_index": index}
    return RetrievedChunk(f"{document_id}#{index}", str(row[4]), row[3], score, metadata)


def _embedder_error(why: str) -> GMIError:
    return GMIError(f"embedder: {why}", GMIErrorCode.PROCESSING_ERROR, {"option": "embedder"})


def _check_settings(embedder: object, chunking: object, default_data_source_ids: object) -> None:
    if not isinstance(embedder, Embedder):
        invalid("embedder", f"must be an Embedder, got {type(embedder).__name__}")
    dimension = embedder.dimension
    if not isinstance(dimension, int) or isinstance(dimension, bool) or dimension < 1:
        invalid("embedder", f"must have a positive integer dimension, got {dimension!r}")
    if chunking is not None and not isinstance(chunking, ChunkingOptions):
        invalid("chunking", f"must be ChunkingOptions, got {type(chunking).__name__}")
    sources = default_data_source_ids
    if isinstance(sources, str) or not isinstance(sources, Sequence):
        invalid("default_data_source_ids", "must be a sequence of data source ids")
    if not all(isinstance(source, str) and source.strip() for source in sources):
        invalid("default_data_source_ids", "must hold non-empty strings")
