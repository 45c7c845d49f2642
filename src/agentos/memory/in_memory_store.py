"""`InMemoryMemoryStore`, the library's default `MemoryStore`.

It answers searches from a `agentos.memory.trace_catalog.TraceCatalog` kept next to its traces.

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

from agentos.memory.edge import EdgeType, MemoryEdge, edge_key
from agentos.memory.store import TraceFilter, Vector, VectorHit
from agentos.memory.trace import EmotionalContext, MemoryTrace, Provenance
from agentos.memory.trace_catalog import CatalogStore, TraceCatalog
from agentos.storage.sqlite import StorageError

__all__ = ["InMemoryMemoryStore", "copy_trace"]


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
