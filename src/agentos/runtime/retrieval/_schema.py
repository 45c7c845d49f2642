"""The retrieval store's tables and migrations, on the SQLite foundation (DESIGN.md §6).

Kept under the store name ``"retrieval"`` in ``schema_version``. Tables:

- ``retrieval_chunks``: one row per chunk. ``seq`` (the rowid) is the chunk's key in the
  full-text index and in the in-memory vector matrix; ``(document_id, chunk_index)`` is unique;
  ``data_source_id`` is ``NULL`` for a document ingested without one; ``metadata`` is the
  document's metadata as JSON; ``vector`` the chunk's unit embedding, little-endian float32.
- ``retrieval_chunks_fts``: an FTS5 index over ``content`` (an external-content table kept in
  step with ``retrieval_chunks`` by triggers), tokenizer ``unicode61 remove_diacritics 2``: case
  and diacritics folded, no stemming, so it treats every language alike.
- ``retrieval_chunks_vocab``: the index's ``fts5vocab`` row view (a term's document count),
  which tells the query builder which terms BM25 gives no weight.
- ``retrieval_meta``: the embedder the vectors were made with (``embedder_model_id``,
  ``embedder_dimension``), so a store is never searched with vectors of another model.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentos.storage.sqlite import Migration

__all__ = ["RETRIEVAL_MIGRATIONS", "RETRIEVAL_STORE"]

RETRIEVAL_STORE = "retrieval"
"""The retrieval store's name in ``schema_version``."""

RETRIEVAL_MIGRATIONS: Sequence[Migration] = (
    Migration(
        1,
        """
        CREATE TABLE retrieval_chunks (
            seq INTEGER PRIMARY KEY,
            document_id TEXT NOT NULL,
            chunk_index INTEGER NOT NULL CHECK (chunk_index >= 0),
            data_source_id TEXT,
            content TEXT NOT NULL,
            metadata TEXT NOT NULL,
            vector BLOB NOT NULL,
            UNIQUE (document_id, chunk_index)
        );
        CREATE INDEX retrieval_chunks_by_source ON retrieval_chunks (data_source_id);
        CREATE VIRTUAL TABLE retrieval_chunks_fts USING fts5(
            content,
            content = 'retrieval_chunks',
            content_rowid = 'seq',
            tokenize = 'unicode61 remove_diacritics 2'
        );
        CREATE VIRTUAL TABLE retrieval_chunks_vocab USING fts5vocab(retrieval_chunks_fts, 'row');
        CREATE TRIGGER retrieval_chunks_fts_insert AFTER INSERT ON retrieval_chunks BEGIN
            INSERT INTO retrieval_chunks_fts (rowid, content) VALUES (new.seq, new.content);
        END;
        CREATE TRIGGER retrieval_chunks_fts_delete AFTER DELETE ON retrieval_chunks BEGIN
            INSERT INTO retrieval_chunks_fts (retrieval_chunks_fts, rowid, content)
                VALUES ('delete', old.seq, old.content);
        END;
        CREATE TRIGGER retrieval_chunks_fts_update AFTER UPDATE OF content ON retrieval_chunks
        BEGIN
            INSERT INTO retrieval_chunks_fts (retrieval_chunks_fts, rowid, content)
                VALUES ('delete', old.seq, old.content);
            INSERT INTO retrieval_chunks_fts (rowid, content) VALUES (new.seq, new.content);
        END;
        CREATE TABLE retrieval_meta (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
        """,
    ),
)
