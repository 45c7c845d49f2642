"""The seam between a cognitive memory and where its traces live (DESIGN.md §6).

A `MemoryStore` holds traces, one embedding per trace (an exact cosine index: see
`agentos.memory.vector_index`) and the memory graph's edges. Two implement it:
`InMemoryMemoryStore` (the library's default: everything ends with the process) and
`SQLiteMemoryStore` (on `agentos.storage`, so a process that restarts with the same file recalls
the same memories). A search ranks vectors in numpy and loads only the hits as traces.

Every method is async, so a store may wait on I/O; a trace's mutable fields reach the store only
through `MemoryStore.update()`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from agentos.memory.edge import MemoryEdge
from agentos.memory.trace import MemoryScope, MemoryTrace, MemoryType

__all__ = ["MemoryStore", "TraceFilter", "Vector", "VectorHit"]

Vector = npt.NDArray[np.float32]
"""One embedding (1-D float32)."""


@dataclass(frozen=True, slots=True)
class TraceFilter:
    """Which traces a search or listing considers; ``None`` fields do not filter.

    ``scopes`` lists ``(scope, scope_id)`` pairs (a trace matches one of them); ``tags`` matches a
    trace carrying any of them; ``created_after`` / ``created_before`` bound ``created_at``
    (inclusive); ``active_only`` leaves out soft-deleted traces.
    """

    scopes: Sequence[tuple[MemoryScope, str]] | None = None
    types: frozenset[MemoryType] | None = None
    tags: frozenset[str] | None = None
    min_confidence: float | None = None
    created_after: float | None = None
    created_before: float | None = None
    active_only: bool = True

    def matches(self, trace: MemoryTrace) -> bool:
        """Whether ``trace`` passes this filter."""
        if self.active_only and not trace.is_active:
            return False
        if self.scopes is not None and (trace.scope, trace.scope_id) not in set(self.scopes):
            return False
        if self.types is not None and trace.type not in self.types:
            return False
        if self.tags is not None and not self.tags.intersection(trace.tags):
            return False
        if self.min_confidence is not None and trace.provenance.confidence < self.min_confidence:
            return False
        if self.created_after is not None and trace.created_at < self.created_after:
            return False
        return not (self.created_before is not None and trace.created_at > self.created_before)


@dataclass(frozen=True, slots=True)
class VectorHit:
    """A trace a search found and the cosine similarity (-1..1) of its vector to the query."""

    trace: MemoryTrace
    similarity: float


@runtime_checkable
class MemoryStore(Protocol):
    """Traces, their vectors and the graph's edges."""

    @property
    def dimension(self) -> int | None:
        """The vector length, fixed by the first vector added (``None`` while empty)."""
        ...

    async def add(self, trace: MemoryTrace, embedding: Sequence[float] | Vector) -> None:
        """Store a new trace and its embedding (a vector of another length is a `ValueError`)."""
        ...

    async def update(self, traces: Iterable[MemoryTrace]) -> None:
        """Persist the current fields of traces already stored."""
        ...

    async def get(self, ids: Sequence[str]) -> list[MemoryTrace]:
        """The traces with these ids that exist, in the order given."""
        ...

    async def search(
        self, query: Sequence[float] | Vector, k: int, where: TraceFilter
    ) -> list[VectorHit]:
        """The ``k`` traces passing ``where`` whose vectors are most similar to ``query``."""
        ...

    async def similarities(
        self, query: Sequence[float] | Vector, ids: Sequence[str]
    ) -> dict[str, float]:
        """The cosine similarity of ``query`` to each stored trace of ``ids``."""
        ...

    async def embeddings(self, ids: Sequence[str]) -> dict[str, Vector]:
        """The stored (unit-length) vectors of ``ids``."""
        ...

    async def list_traces(self, where: TraceFilter, limit: int | None = None) -> list[MemoryTrace]:
        """The traces passing ``where``, oldest first, at most ``limit``."""
        ...

    async def count(self, where: TraceFilter) -> int:
        """How many traces pass ``where``."""
        ...

    async def save_edges(self, edges: Iterable[MemoryEdge]) -> None:
        """Insert or replace edges (by `MemoryEdge.key`)."""
        ...

    async def delete_edges(self, keys: Iterable[tuple[str, str, str]]) -> None:
        """Remove the edges with these keys."""
        ...

    async def load_edges(self) -> list[MemoryEdge]:
        """Every stored edge."""
        ...

    async def close(self) -> None:
        """Release the store (idempotent)."""
        ...
