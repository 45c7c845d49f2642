"""`SQLiteMemoryStore`: traces, vectors and graph edges in the agentos SQLite database.

Built on `agentos.storage.sqlite` (DESIGN.md §5.9, §6); its tables and migrations are in
`agentos.memory.sqlite_schema`.

**At open** the store reads the vectors and the filter columns into a `TraceCatalog` (a numpy
`VectorIndex` and column arrays), not the traces: a search ranks in numpy and then loads only
the hits' rows by id. Every write commits before its call returns, and the catalog changes only
after the commit. A process that opens the same file later sees the same traces, vectors and
edges; the similarities it computes are the same numbers (see `VectorIndex`). Two processes
writing the same memory at once are not supported: each keeps its own catalog.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from agentos.memory.edge import EdgeType, MemoryEdge, edge_key
from agentos.memory.sqlite_schema import MEMORY_MIGRATIONS, MEMORY_STORE
from agentos.memory.store import TraceFilter, Vector, VectorHit
from agentos.memory.trace import (
    EmotionalContext,
    MemoryScope,
    MemoryTrace,
    MemoryType,
    Provenance,
    SourceType,
)
from agentos.memory.trace_catalog import CatalogStore, TraceCatalog
from agentos.storage.sqlite import Database, StorageError, open_store_database

__all__ = ["SQLiteMemoryStore"]

_VECTOR_DTYPE = np.dtype("<f4")
_COLUMNS = "seq, id, type, scope, scope_id, is_active, created_at, confidence, body"
_ROW_FIELDS = frozenset({"id", "type", "scope", "scope_id", "is_active", "created_at"})
_TRACE_FIELDS = tuple(f.name for f in dataclasses.fields(MemoryTrace))
_EMOTION_FIELDS = tuple(f.name for f in dataclasses.fields(EmotionalContext))
_PROVENANCE_FIELDS = tuple(f.name for f in dataclasses.fields(Provenance))
_KNOWN_TRACE = frozenset(_TRACE_FIELDS)
_KNOWN_EMOTION = frozenset(_EMOTION_FIELDS)
_KNOWN_PROVENANCE = frozenset(_PROVENANCE_FIELDS)
# SQLite's limit on bound parameters is 32766 since 3.32; stay far below it in IN (...) lists.
_CHUNK = 500


class SQLiteMemoryStore(CatalogStore):
    """A `MemoryStore` in the agentos SQLite database: memories survive the process.

    Give it an open `Database` (shared with other stores; the caller closes it) or a ``path``
    (default: ``AGENTOS_HOME``'s database) to open one it owns and closes in `close()`. Its
    migrations run and its catalog loads when it is made. Adding an id already stored is a
    `ValueError`, updating one not stored a `KeyError`, any call after `close()` a
    `StorageError`. Returned traces are new objects built from the rows: changing one changes
    nothing stored until `update()`.
    """

    def __init__(
        self, database: Database | None = None, *, path: str | os.PathLike[str] | None = None
    ) -> None:
        self._database, self._owns_database = open_store_database(
            "SQLiteMemoryStore", database, path, MEMORY_STORE, MEMORY_MIGRATIONS
        )
        self._closed = False
        try:
            self._catalog = self._load_catalog()
        except BaseException:
            if self._owns_database:
                self._database.close()
            raise

    @property
    def database(self) -> Database:
        """The database the memory lives in."""
        return self._database

    @property
    def dimension(self) -> int | None:
        """The vector length, fixed by the first vector ever added (``None`` while empty)."""
        return self._catalog.index.dimension

    async def add(self, trace: MemoryTrace, embedding: Sequence[float] | Vector) -> None:
        """Insert a new trace, its unit vector and its tags in one committed transaction."""
        self._check_open()
        if trace.id in self._catalog:
            raise ValueError(f"trace {trace.id!r} is already stored; change it with update()")
        unit = self._catalog.index.unit(embedding)
        with self._database.transaction() as connection:
            cursor = connection.execute(
                "INSERT INTO memory_traces (type, scope, scope_id, is_active, created_at, "
                "confidence, body, id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                _row(trace),
            )
            seq = cursor.lastrowid
            assert seq is not None
            connection.execute(
                "INSERT INTO memory_vectors (seq, vector) VALUES (?, ?)",
                (seq, unit.astype(_VECTOR_DTYPE).tobytes()),
            )
            connection.executemany(
                "INSERT OR IGNORE INTO memory_trace_tags (seq, tag) VALUES (?, ?)",
                [(seq, tag) for tag in trace.tags],
            )
        self._catalog.add(trace, unit, seq)

    async def update(self, traces: Iterable[MemoryTrace]) -> None:
        """Rewrite the rows of ``traces`` in one committed transaction (`KeyError` if unknown)."""
        self._check_open()
        batch = list(traces)
        for trace in batch:
            if trace.id not in self._catalog:
                raise KeyError(f"trace {trace.id!r} is not stored; add() it first")
        with self._database.transaction() as connection:
            connection.executemany(
                "UPDATE memory_traces SET type = ?, scope = ?, scope_id = ?, is_active = ?, "
                "created_at = ?, confidence = ?, body = ? WHERE id = ?",
                [_row(trace) for trace in batch],
            )
            for trace in batch:
                # Tags change rarely; rewrite them only when they did.
                if frozenset(trace.tags) != self._catalog.tags_of(trace.id):
                    seq = self._catalog.seq_of(trace.id)
                    connection.execute("DELETE FROM memory_trace_tags WHERE seq = ?", (seq,))
                    connection.executemany(
                        "INSERT OR IGNORE INTO memory_trace_tags (seq, tag) VALUES (?, ?)",
                        [(seq, tag) for tag in trace.tags],
                    )
        for trace in batch:
            self._catalog.refresh(trace)

    async def get(self, ids: Sequence[str]) -> list[MemoryTrace]:
        """The traces with these ids that exist, in the order given, read from their rows."""
        self._check_open()
        return self._load(ids)

    async def search(
        self, query: Sequence[float] | Vector, k: int, where: TraceFilter
    ) -> list[VectorHit]:
        """The ``k`` traces passing ``where`` most similar to ``query``; only they are read."""
        self._check_open()
        found = self._catalog.search(query, k, where)
        traces = {trace.id: trace for trace in self._load([trace_id for trace_id, _ in found])}
        return [VectorHit(traces[trace_id], similarity) for trace_id, similarity in found]

    async def list_traces(self, where: TraceFilter, limit: int | None = None) -> list[MemoryTrace]:
        """The traces passing ``where``, oldest first, at most ``limit``."""
        self._check_open()
        return self._load(self._catalog.ordered(where, limit))

    async def save_edges(self, edges: Iterable[MemoryEdge]) -> None:
        """Insert or replace edges by key in one committed transaction."""
        self._check_open()
        rows = [(e.source, e.target, str(e.type), e.weight, e.created_at) for e in edges]
        with self._database.transaction() as connection:
            # REPLACE deletes the row holding the key and inserts a new one at the end, so a
            # replaced edge moves to the end of load_edges() as in the in-memory store.
            connection.executemany(
                "INSERT OR REPLACE INTO memory_edges (source, target, type, weight, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                rows,
            )

    async def delete_edges(self, keys: Iterable[tuple[str, str, str]]) -> None:
        """Remove the edges with these keys (either end first); absent keys are ignored."""
        self._check_open()
        rows = [(low, high, str(kind)) for low, high, kind in map(edge_key, keys)]
        with self._database.transaction() as connection:
            connection.executemany(
                "DELETE FROM memory_edges WHERE min(source, target) = ? "
                "AND max(source, target) = ? AND type = ?",
                rows,
            )

    async def load_edges(self) -> list[MemoryEdge]:
        """Every stored edge, in the order they were (last) saved."""
        self._check_open()
        rows = self._database.fetchall(
            "SELECT source, target, type, weight, created_at FROM memory_edges ORDER BY rowid"
        )
        return [
            MemoryEdge(row[0], row[1], EdgeType(row[2]), float(row[3]), float(row[4]))
            for row in rows
        ]

    async def close(self) -> None:
        """Release the catalog and close the database if this store opened it (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._catalog = TraceCatalog()
        if self._owns_database:
            self._database.close()

    def _check_open(self) -> None:
        if self._closed:
            raise StorageError("the SQLite memory store is closed")

    def _load_catalog(self) -> TraceCatalog:
        catalog = TraceCatalog()
        # One transaction, so the traces and the tags are read from the same snapshot.
        with self._database.transaction() as connection:
            cursor = connection.execute(
                "SELECT t.seq, t.id, t.type, t.scope, t.scope_id, t.is_active, t.created_at, "
                "t.confidence, v.vector FROM memory_traces t "
                "JOIN memory_vectors v ON v.seq = t.seq ORDER BY t.seq"
            )
            cursor.row_factory = None  # plain tuples: 100k rows load measurably faster
            rows = cursor.fetchall()
            cursor = connection.execute(
                "SELECT t.id, g.tag FROM memory_trace_tags g JOIN memory_traces t ON t.seq = g.seq"
            )
            cursor.row_factory = None
            tags = cursor.fetchall()
        if not rows:
            return catalog
        seqs, ids, types, scopes, scope_ids, actives, created, confidence, blobs = zip(
            *rows, strict=True
        )
        vectors = np.frombuffer(b"".join(blobs), dtype=_VECTOR_DTYPE)
        vectors = vectors.reshape(len(rows), -1).astype(np.float32)
        catalog.load(
            ids,
            seqs,
            (types, scopes, scope_ids, [bool(a) for a in actives]),
            created,
            confidence,
            vectors,
            tags,
        )
        return catalog

    def _load(self, ids: Sequence[str]) -> list[MemoryTrace]:
        # By seq, the rowid: one B-tree lookup per row instead of the id index and then the row.
        seqs = [self._catalog.seq_of(i) for i in dict.fromkeys(ids) if i in self._catalog]
        rows: dict[str, Sequence[Any]] = {}
        for start in range(0, len(seqs), _CHUNK):
            chunk = seqs[start : start + _CHUNK]
            marks = ", ".join("?" * len(chunk))
            sql = f"SELECT {_COLUMNS} FROM memory_traces WHERE seq IN ({marks})"
            for row in self._database.fetchall(sql, chunk):
                rows[row[1]] = row
        # Decoded per request, so an id asked for twice gives two objects (as copies would).
        return [_trace(rows[i]) for i in ids if i in rows]


def _row(trace: MemoryTrace) -> tuple[Any, ...]:
    """The column values of ``trace``, in the order add() and update() bind them (id last)."""
    body = {
        name: getattr(trace, name)
        for name in _TRACE_FIELDS
        if name not in _ROW_FIELDS and name not in ("emotional_context", "provenance")
    }
    # The nested records hold only JSON values and lists of them: no asdict() deep copy needed.
    emotion, provenance = trace.emotional_context, trace.provenance
    body["emotional_context"] = {name: getattr(emotion, name) for name in _EMOTION_FIELDS}
    body["provenance"] = {name: getattr(provenance, name) for name in _PROVENANCE_FIELDS}
    return (
        str(trace.type),
        str(trace.scope),
        trace.scope_id,
        int(bool(trace.is_active)),
        float(trace.created_at),
        float(trace.provenance.confidence),
        json.dumps(body, separators=(",", ":"), ensure_ascii=False, default=_plain),
        trace.id,
    )


def _plain(value: object) -> object:
    # numpy scalars and arrays a mechanism may leave in metadata become plain JSON values.
    if isinstance(value, np.generic | np.ndarray):
        return value.tolist()
    raise TypeError(f"a memory trace field holds {type(value).__name__}, which JSON cannot hold")


def _trace(row: Sequence[Any]) -> MemoryTrace:
    body: dict[str, Any] = json.loads(row[8])
    emotion = body.pop("emotional_context", {})
    provenance = body.pop("provenance", {})
    provenance["source_type"] = SourceType(provenance.get("source_type", SourceType.USER_STATEMENT))
    return MemoryTrace(
        id=row[1],
        type=MemoryType(row[2]),
        scope=MemoryScope(row[3]),
        scope_id=row[4],
        is_active=bool(row[5]),
        created_at=float(row[6]),
        emotional_context=EmotionalContext(
            **{k: v for k, v in emotion.items() if k in _KNOWN_EMOTION}
        ),
        provenance=Provenance(**{k: v for k, v in provenance.items() if k in _KNOWN_PROVENANCE}),
        # A field a newer agentos wrote and this one does not know is left out.
        **{k: v for k, v in body.items() if k in _KNOWN_TRACE},
    )
