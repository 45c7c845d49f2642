"""`InMemoryMemoryStore`, the library's default `MemoryStore`, and the `TraceCatalog` it searches.

A `TraceCatalog` is what a search needs in numpy: the `VectorIndex` and, row for row beside it,
the columns a `TraceFilter` reads (scope, type, active flag, creation time, confidence and the
insertion order), plus a tag → ids map. A filter becomes one vectorised bool mask over the rows;
tags, which a row may hold several of, become a mask from the ids carrying them. Both stores
keep one: the in-memory store next to its traces, the SQLite store loaded from its tables at open
(so neither builds Python objects for traces a query does not return).

**Stores hold copies.** `InMemoryMemoryStore` copies a trace when it is added or updated and
hands out copies (`get`, `search`, `list_traces`), so a change to a trace persists only through
`MemoryStore.update()`, exactly as with the SQLite store, whose traces are rebuilt from their
rows. Copying a returned trace costs a few microseconds; sharing would let a caller's edit reach
one store and not the other.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from agentos.memory.edge import EdgeType, MemoryEdge
from agentos.memory.store import TraceFilter, Vector, VectorHit
from agentos.memory.trace import EmotionalContext, MemoryTrace, MemoryType, Provenance
from agentos.memory.vector_index import VectorIndex
from agentos.storage.sqlite import StorageError

__all__ = ["InMemoryMemoryStore", "TraceCatalog", "copy_trace", "edge_key"]

_BoolArray = npt.NDArray[np.bool_]
_TYPE_CODES = {member: code for code, member in enumerate(MemoryType)}


_PLAIN = (str, int, float, bool, type(None))
_new = object.__new__


def copy_trace(trace: MemoryTrace) -> MemoryTrace:
    """A copy of ``trace`` sharing nothing mutable with it (lists, nested records, metadata).

    Written out slot by slot, without ``__init__``: a search copies each hit, and this is about
    three times as fast as constructing the dataclasses and twenty times `copy.deepcopy`. A
    field added to `MemoryTrace` must be added here; until it is, reading it from a copy raises
    `AttributeError` (an unset slot), so the omission cannot pass silently.
    """
    copied = _new(MemoryTrace)
    copied.id = trace.id
    copied.type = trace.type
    copied.scope = trace.scope
    copied.scope_id = trace.scope_id
    copied.content = trace.content
    copied.created_at = trace.created_at
    copied.encoding_strength = trace.encoding_strength
    copied.stability = trace.stability
    source = trace.emotional_context
    emotion = copied.emotional_context = _new(EmotionalContext)
    emotion.valence = source.valence
    emotion.arousal = source.arousal
    emotion.dominance = source.dominance
    emotion.intensity = source.intensity
    emotion.gmi_mood = source.gmi_mood
    origin = trace.provenance
    provenance = copied.provenance = _new(Provenance)
    provenance.source_type = origin.source_type
    provenance.source_id = origin.source_id
    provenance.source_timestamp = origin.source_timestamp
    provenance.confidence = origin.confidence
    provenance.verification_count = origin.verification_count
    provenance.last_verified_at = origin.last_verified_at
    provenance.contradicted_by = list(origin.contradicted_by)
    copied.entities = list(trace.entities)
    copied.tags = list(trace.tags)
    copied.importance = trace.importance
    copied.retrieval_count = trace.retrieval_count
    copied.access_count = trace.access_count
    copied.last_accessed_at = trace.last_accessed_at
    copied.reinforcement_interval = trace.reinforcement_interval
    copied.next_reinforcement_at = trace.next_reinforcement_at
    copied.associated_trace_ids = list(trace.associated_trace_ids)
    copied.structured_data = _copy_value(trace.structured_data)
    copied.updated_at = trace.updated_at
    copied.consolidated_at = trace.consolidated_at
    copied.is_active = trace.is_active
    copied.metadata = _copy_value(trace.metadata)
    return copied


def _copy_value(value: Any) -> Any:
    # JSON-shaped metadata (dicts, lists, scalars) copied directly: deepcopy's memo is slow.
    if isinstance(value, _PLAIN):
        return value
    if type(value) is dict:
        return {key: _copy_value(item) for key, item in value.items()}
    if type(value) is list:
        return [_copy_value(item) for item in value]
    return copy.deepcopy(value)


def edge_key(key: Sequence[str]) -> tuple[str, str, EdgeType]:
    """An edge key in `MemoryEdge.key` form: the two ends sorted, the type an `EdgeType`."""
    source, target, kind = key
    low, high = sorted((source, target))
    return low, high, EdgeType(kind)


class TraceCatalog:
    """The vector index and the per-row filter columns of a store's traces.

    Rows are the index's rows; every column is written when a trace is added (`add`, `load`)
    and rewritten by `refresh`, so the mask a `TraceFilter` builds always lines up with the
    index. ``seq`` is the insertion order (list order breaks creation-time ties by it).
    """

    def __init__(self) -> None:
        self.index = VectorIndex()
        self._capacity = 0
        self._scope = np.zeros(0, dtype=np.int32)
        self._type = np.zeros(0, dtype=np.int8)
        self._active = np.zeros(0, dtype=np.bool_)
        self._created = np.zeros(0, dtype=np.float64)
        self._confidence = np.zeros(0, dtype=np.float64)
        self._seq = np.zeros(0, dtype=np.int64)
        # (scope, scope_id) interned to one int, so a scope filter is an integer comparison.
        self._scope_codes: dict[tuple[str, str], int] = {}
        self._tag_ids: dict[str, set[str]] = {}
        self._tags_of: dict[str, frozenset[str]] = {}
        self.next_seq = 0
        """The ``seq`` the next added trace gets by default (one past the largest seen)."""

    def __len__(self) -> int:
        return len(self.index)

    def __contains__(self, trace_id: object) -> bool:
        return trace_id in self.index

    def add(self, trace: MemoryTrace, unit: Vector, seq: int | None = None) -> None:
        """Add ``trace`` with its unit vector (from ``index.unit()``) as the last row."""
        seq = self.next_seq if seq is None else seq
        self.index.add_many([trace.id], unit.reshape(1, -1), normalized=True)
        self._reserve(len(self.index))
        row = len(self.index) - 1
        self._seq[row] = seq
        self.next_seq = max(self.next_seq, seq + 1)
        self._write(row, trace)

    def load(
        self,
        ids: Sequence[str],
        seqs: Sequence[int],
        columns: tuple[Sequence[str], Sequence[str], Sequence[str], Sequence[bool]],
        created: Sequence[float],
        confidence: Sequence[float],
        vectors: npt.NDArray[np.float32],
        tags: Iterable[tuple[str, str]],
    ) -> None:
        """Bulk-load stored rows into an empty catalog, vectors taken bit for bit.

        ``columns`` is ``(types, scopes, scope_ids, actives)``; ``tags`` holds
        ``(trace_id, tag)`` pairs.
        """
        if len(self.index):
            raise ValueError("TraceCatalog.load needs an empty catalog")
        types, scopes, scope_ids, actives = columns
        self.index.add_many(ids, vectors, normalized=True)
        count = len(ids)
        self._reserve(count)
        self._seq[:count] = seqs
        self._type[:count] = [_TYPE_CODES[MemoryType(t)] for t in types]
        pairs = zip(scopes, scope_ids, strict=True)
        self._scope[:count] = [self._scope_code(scope, scope_id) for scope, scope_id in pairs]
        self._active[:count] = actives
        self._created[:count] = created
        self._confidence[:count] = confidence
        self.next_seq = int(self._seq[:count].max()) + 1 if count else 0
        grouped: dict[str, set[str]] = {}
        for trace_id, tag in tags:
            grouped.setdefault(trace_id, set()).add(tag)
        for trace_id, tag_set in grouped.items():
            self._set_tags(trace_id, frozenset(tag_set))

    def refresh(self, trace: MemoryTrace) -> None:
        """Rewrite the columns of a trace already present from its current fields."""
        self._write(self.index.row(trace.id), trace)

    def tags_of(self, trace_id: str) -> frozenset[str]:
        """The tags the catalog holds for ``trace_id``."""
        return self._tags_of.get(trace_id, frozenset())

    def seq_of(self, trace_id: str) -> int:
        """The insertion order number of ``trace_id``."""
        return int(self._seq[self.index.row(trace_id)])

    def mask(self, where: TraceFilter) -> _BoolArray | None:
        """The rows passing ``where`` as bools, or ``None`` when it leaves every row in."""
        size = len(self.index)
        mask: _BoolArray | None = None

        def narrow(part: _BoolArray) -> None:
            nonlocal mask
            if mask is None:
                mask = part
            else:
                np.logical_and(mask, part, out=mask)

        if where.active_only:
            narrow(self._active[:size].copy())
        if where.scopes is not None:
            codes = [
                self._scope_codes[(s, i)] for s, i in where.scopes if (s, i) in self._scope_codes
            ]
            column = self._scope[:size]
            if len(codes) == 1:
                narrow(column == codes[0])
            else:
                narrow(np.isin(column, codes))
        if where.types is not None:
            allowed = np.zeros(len(_TYPE_CODES), dtype=np.bool_)
            allowed[[_TYPE_CODES[MemoryType(t)] for t in where.types]] = True
            narrow(allowed[self._type[:size]])
        if where.min_confidence is not None:
            narrow(self._confidence[:size] >= where.min_confidence)
        if where.created_after is not None:
            narrow(self._created[:size] >= where.created_after)
        if where.created_before is not None:
            narrow(self._created[:size] <= where.created_before)
        if where.tags is not None:
            tagged = np.zeros(size, dtype=np.bool_)
            ids: set[str] = set()
            for tag in where.tags:
                ids.update(self._tag_ids.get(tag, ()))
            tagged[self.index.rows(ids)] = True
            narrow(tagged)
        return mask

    def search(
        self, query: Sequence[float] | Vector, k: int, where: TraceFilter
    ) -> list[tuple[str, float]]:
        """The ``k`` ids passing ``where`` most similar to ``query``, best first, with cosines."""
        ids, sims = self.index.top_k(query, k, self.mask(where))
        return list(zip(ids, sims.tolist(), strict=True))

    def ordered(self, where: TraceFilter, limit: int | None = None) -> list[str]:
        """The ids passing ``where``, oldest ``created_at`` first (insertion order on ties)."""
        if limit is not None and limit < 0:
            raise ValueError(f"limit must be >= 0, got {limit}")
        size = len(self.index)
        mask = self.mask(where)
        rows = np.arange(size) if mask is None else np.flatnonzero(mask)
        rows = rows[np.lexsort((self._seq[rows], self._created[rows]))]
        if limit is not None:
            rows = rows[:limit]
        ids = self.index.ids
        return [ids[row] for row in rows.tolist()]

    def embeddings(self, ids: Sequence[str]) -> dict[str, Vector]:
        """Copies of the unit vectors of the ``ids`` present."""
        present = [i for i in dict.fromkeys(ids) if i in self.index]
        vectors = self.index.vectors(present)
        return {trace_id: vectors[n] for n, trace_id in enumerate(present)}

    def count(self, where: TraceFilter) -> int:
        """How many rows pass ``where``."""
        mask = self.mask(where)
        return len(self.index) if mask is None else int(np.count_nonzero(mask))

    def _write(self, row: int, trace: MemoryTrace) -> None:
        self._scope[row] = self._scope_code(trace.scope, trace.scope_id)
        self._type[row] = _TYPE_CODES[MemoryType(trace.type)]
        self._active[row] = bool(trace.is_active)
        self._created[row] = trace.created_at
        self._confidence[row] = trace.provenance.confidence
        self._set_tags(trace.id, frozenset(trace.tags))

    def _set_tags(self, trace_id: str, tags: frozenset[str]) -> None:
        old = self._tags_of.get(trace_id, frozenset())
        if old == tags:
            return
        for tag in old - tags:
            holders = self._tag_ids[tag]
            holders.discard(trace_id)
            if not holders:
                del self._tag_ids[tag]
        for tag in tags - old:
            self._tag_ids.setdefault(tag, set()).add(trace_id)
        if tags:
            self._tags_of[trace_id] = tags
        else:
            self._tags_of.pop(trace_id, None)

    def _scope_code(self, scope: str, scope_id: str) -> int:
        key = (str(scope), scope_id)
        code = self._scope_codes.get(key)
        if code is None:
            code = self._scope_codes[key] = len(self._scope_codes)
        return code

    def _reserve(self, needed: int) -> None:
        if needed <= self._capacity:
            return
        capacity = max(64, self._capacity)
        while capacity < needed:
            capacity *= 2
        for name in ("_scope", "_type", "_active", "_created", "_confidence", "_seq"):
            old = getattr(self, name)
            grown = np.zeros(capacity, dtype=old.dtype)
            grown[: old.shape[0]] = old
            setattr(self, name, grown)
        self._capacity = capacity


class CatalogStore:
    """What both stores answer from their `TraceCatalog` alone (no trace is read)."""

    _catalog: TraceCatalog

    def _check_open(self) -> None:
        raise NotImplementedError

    async def similarities(
        self, query: Sequence[float] | Vector, ids: Sequence[str]
    ) -> dict[str, float]:
        """The cosine similarity of ``query`` to each stored trace of ``ids``."""
        self._check_open()
        return self._catalog.index.similarities(query, ids)

    async def embeddings(self, ids: Sequence[str]) -> dict[str, Vector]:
        """Copies of the stored unit vectors of the ``ids`` that are stored."""
        self._check_open()
        return self._catalog.embeddings(ids)

    async def count(self, where: TraceFilter) -> int:
        """How many traces pass ``where``."""
        self._check_open()
        return self._catalog.count(where)


class InMemoryMemoryStore(CatalogStore):
    """A `MemoryStore` in process memory: everything ends with the process or `close()`.

    Traces are copied in and out (see the module's note), so only `update()` changes what is
    stored. Adding an id already stored is a `ValueError`; updating one not stored a `KeyError`;
    any call after `close()` a `StorageError`.
    """

    def __init__(self) -> None:
        self._catalog = TraceCatalog()
        self._traces: dict[str, MemoryTrace] = {}
        self._edges: dict[tuple[str, str, EdgeType], MemoryEdge] = {}
        self._closed = False

    @property
    def dimension(self) -> int | None:
        """The vector length, fixed by the first vector added (``None`` while empty)."""
        return self._catalog.index.dimension

    async def add(self, trace: MemoryTrace, embedding: Sequence[float] | Vector) -> None:
        """Store a copy of a new trace and its embedding (normalised; see `VectorIndex`)."""
        self._check_open()
        if trace.id in self._traces:
            raise ValueError(f"trace {trace.id!r} is already stored; change it with update()")
        unit = self._catalog.index.unit(embedding)
        stored = copy_trace(trace)
        self._catalog.add(stored, unit)
        self._traces[trace.id] = stored

    async def update(self, traces: Iterable[MemoryTrace]) -> None:
        """Replace the stored copies of ``traces`` (all must be stored: `KeyError` otherwise)."""
        self._check_open()
        batch = list(traces)
        for trace in batch:
            if trace.id not in self._traces:
                raise KeyError(f"trace {trace.id!r} is not stored; add() it first")
        for trace in batch:
            stored = copy_trace(trace)
            self._catalog.refresh(stored)
            self._traces[trace.id] = stored

    async def get(self, ids: Sequence[str]) -> list[MemoryTrace]:
        """Copies of the traces with these ids that exist, in the order given."""
        self._check_open()
        return [copy_trace(self._traces[i]) for i in ids if i in self._traces]

    async def search(
        self, query: Sequence[float] | Vector, k: int, where: TraceFilter
    ) -> list[VectorHit]:
        """The ``k`` traces passing ``where`` most similar to ``query``, best first."""
        self._check_open()
        return [
            VectorHit(copy_trace(self._traces[trace_id]), similarity)
            for trace_id, similarity in self._catalog.search(query, k, where)
        ]

    async def list_traces(self, where: TraceFilter, limit: int | None = None) -> list[MemoryTrace]:
        """Copies of the traces passing ``where``, oldest first, at most ``limit``."""
        self._check_open()
        return [copy_trace(self._traces[i]) for i in self._catalog.ordered(where, limit)]

    async def save_edges(self, edges: Iterable[MemoryEdge]) -> None:
        """Insert or replace edges by key; a replaced edge moves to the end of `load_edges`."""
        self._check_open()
        for edge in edges:
            key = edge.key()
            self._edges.pop(key, None)
            self._edges[key] = edge

    async def delete_edges(self, keys: Iterable[tuple[str, str, str]]) -> None:
        """Remove the edges with these keys (either end first); absent keys are ignored."""
        self._check_open()
        for key in keys:
            self._edges.pop(edge_key(key), None)

    async def load_edges(self) -> list[MemoryEdge]:
        """Every stored edge, in the order they were (last) saved."""
        self._check_open()
        return list(self._edges.values())

    async def close(self) -> None:
        """Drop everything held (idempotent)."""
        if not self._closed:
            self._closed = True
            self._traces.clear()
            self._edges.clear()
            self._catalog = TraceCatalog()

    def _check_open(self) -> None:
        if self._closed:
            raise StorageError("the in-memory memory store is closed")
