"""`TraceCatalog`, what a memory store searches in numpy, and `CatalogStore`, the stores' base.

A `TraceCatalog` is the `VectorIndex` and, row for row beside it, the columns a `TraceFilter`
reads (scope, type, active flag, creation time, confidence and the insertion order), plus a
tag → ids map. A filter becomes one vectorised bool mask over the rows; tags, which a row may
hold several of, become a mask from the ids carrying them. Both stores keep one: the in-memory
store next to its traces, the SQLite store loaded from its tables at open (so neither builds
Python objects for traces a query does not return).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from agentos.memory.store import TraceFilter, Vector
from agentos.memory.trace import MemoryTrace, MemoryType
from agentos.memory.vector_index import VectorIndex

__all__ = ["CatalogStore", "TraceCatalog"]

_BoolArray = npt.NDArray[np.bool_]
_TYPE_CODES = {member: code for code, member in enumerate(MemoryType)}


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
