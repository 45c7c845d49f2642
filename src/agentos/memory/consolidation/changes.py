"""`CycleChanges`: one consolidation cycle's working set and the writes it will persist.

Every step of a cycle records here instead of writing to the store, so a cycle that fails
part-way persists nothing (`agentos.memory.consolidation.pipeline`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from agentos.memory.edge import MemoryEdge
from agentos.memory.graph import EdgeKey, MemoryGraph
from agentos.memory.store import MemoryStore, Vector
from agentos.memory.trace import MemoryTrace

__all__ = ["CycleChanges"]


class CycleChanges:
    """One cycle's state: the traces it read, and what it will persist.

    ``known`` holds every trace the cycle has read, by id, so each trace is one object however
    many steps touch it (two copies would persist whichever was recorded last). ``added`` are
    new traces with their vectors, ``traces`` the changed ones, ``saved`` and ``deleted`` the
    edges to write and remove, ``edges_created`` the count the cycle reports.
    """

    def __init__(self, known: dict[str, MemoryTrace]) -> None:
        self.known = known
        self.added: list[tuple[MemoryTrace, Sequence[float] | Vector]] = []
        self.traces: dict[str, MemoryTrace] = {}
        self.saved: dict[EdgeKey, MemoryEdge] = {}
        self.deleted: set[EdgeKey] = set()
        self.edges_created = 0

    def trace(self, trace: MemoryTrace) -> None:
        """Record ``trace`` as changed."""
        self.traces[trace.id] = trace

    async def load(self, store: MemoryStore, ids: Sequence[str]) -> list[MemoryTrace]:
        """The traces of ``ids`` that exist, read from the store only when not read yet."""
        missing = [i for i in dict.fromkeys(ids) if i not in self.known]
        for trace in await store.get(missing):
            self.known[trace.id] = trace
        return [self.known[i] for i in ids if i in self.known]

    def save(self, edges: Iterable[MemoryEdge]) -> None:
        """Record ``edges`` as created or updated (undoing an earlier delete of their keys)."""
        for edge in edges:
            self.deleted.discard(edge.key())
            self.saved[edge.key()] = edge

    def delete(self, keys: Iterable[EdgeKey]) -> None:
        """Record the edges of ``keys`` as removed (undoing an earlier save of them)."""
        for key in keys:
            self.saved.pop(key, None)
            self.deleted.add(key)

    def link(self, graph: MemoryGraph, edge: MemoryEdge) -> None:
        """Create ``edge`` unless an edge of its type already links its ends (kept as is)."""
        if graph.edge(edge.source, edge.target, edge.type) is not None:
            return
        created = graph.upsert_edge(edge)
        self.save(created)
        self.edges_created += len(created)

    def retire(
        self, trace: MemoryTrace, now: float, graph: MemoryGraph | None, *, reason: str
    ) -> None:
        """Soft-delete ``trace`` and take it out of ``graph`` (if any)."""
        trace.is_active = False
        trace.updated_at = now
        trace.metadata["retired_at"] = now
        trace.metadata["retired_because"] = reason
        self.trace(trace)
        if graph is not None:
            self.delete(graph.remove_node(trace.id))

    async def persist(self, store: MemoryStore) -> None:
        """Write everything recorded: new traces, one update, one edge save, one edge delete."""
        new_ids = {trace.id for trace, _ in self.added}
        for trace, vector in self.added:
            await store.add(trace, vector)
        updated = [t for t in self.traces.values() if t.id not in new_ids]
        if updated:
            await store.update(updated)
        if self.saved:
            await store.save_edges(list(self.saved.values()))
        if self.deleted:
            await store.delete_edges(sorted(self.deleted))
