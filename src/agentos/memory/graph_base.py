"""`MemoryGraphBase`: the behaviour both memory graph backends share (reference §1.16).

A backend (`agentos.memory.graph_dict`, `agentos.memory.graph_networkx`) subclasses it and
implements a handful of storage primitives; normalisation, edge lookup, Hebbian learning,
spreading and loading live here once, so the backends cannot drift apart.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import replace

from agentos.memory.edge import EdgeType, MemoryEdge
from agentos.memory.graph import ActivatedNode, EdgeKey, GraphConfig, spread_activation

__all__ = ["MemoryGraphBase"]


class MemoryGraphBase(ABC):
    """The behaviour both backends share, on top of a handful of storage primitives.

    A backend implements the node methods, `edges`, `neighbors`, `detect_clusters` and the
    primitives ``_get``, ``_store`` (put a normalised edge, adding its ends), ``_discard`` and
    ``_clear``; normalisation, edge lookup, Hebbian learning, spreading and loading live here so
    the backends cannot drift apart.
    """

    @abstractmethod
    def add_node(self, node_id: str) -> None:
        """See `MemoryGraph.add_node`."""

    @abstractmethod
    def neighbors(self, node_id: str) -> list[tuple[str, float]]:
        """See `MemoryGraph.neighbors`."""

    @abstractmethod
    def _get(self, key: EdgeKey) -> MemoryEdge | None:
        """The edge with ``key``, or None."""

    @abstractmethod
    def _store(self, edge: MemoryEdge) -> None:
        """Put ``edge`` (normalised), replacing the one of the same key, adding its ends."""

    @abstractmethod
    def _discard(self, key: EdgeKey) -> bool:
        """Remove the edge with ``key``; whether there was one."""

    @abstractmethod
    def _clear(self) -> None:
        """Remove every node and edge."""

    def edge(self, a: str, b: str, edge_type: EdgeType) -> MemoryEdge | None:
        """See `MemoryGraph.edge`."""
        return self._get(_key(a, b, edge_type))

    def upsert_edge(self, edge: MemoryEdge) -> list[MemoryEdge]:
        """See `MemoryGraph.upsert_edge`."""
        stored = _normalised(edge)
        current = self.edge(stored.source, stored.target, stored.type)
        if current is not None:
            if current.weight == stored.weight:
                return []
            stored = replace(current, weight=stored.weight)
        self._store(stored)
        return [stored]

    def remove_edge(self, a: str, b: str, edge_type: EdgeType) -> list[EdgeKey]:
        """See `MemoryGraph.remove_edge`."""
        key = _key(a, b, edge_type)
        return [key] if self._discard(key) else []

    def spreading_activation(
        self, seed_ids: Iterable[str], config: GraphConfig | None = None
    ) -> list[ActivatedNode]:
        """See `MemoryGraph.spreading_activation`."""
        return spread_activation(seed_ids, self.neighbors, config)

    def record_co_activation(
        self, node_ids: Iterable[str], learning_rate: float, now: float
    ) -> list[MemoryEdge]:
        """See `MemoryGraph.record_co_activation`."""
        if not 0.0 <= learning_rate <= 1.0:
            raise ValueError(f"learning_rate must be in [0, 1], got {learning_rate}")
        ids = list(dict.fromkeys(node_ids))
        for node_id in ids:
            self.add_node(node_id)
        changed: list[MemoryEdge] = []
        if learning_rate == 0.0:
            return changed
        for i, a in enumerate(ids):
            for b in ids[i + 1 :]:
                current = self.edge(a, b, EdgeType.CO_ACTIVATED)
                if current is None:
                    low, high = sorted((a, b))
                    updated = MemoryEdge(low, high, EdgeType.CO_ACTIVATED, learning_rate, now)
                else:
                    weight = min(1.0, current.weight + learning_rate)
                    if weight == current.weight:
                        continue
                    updated = replace(current, weight=weight)
                self._store(updated)
                changed.append(updated)
        return changed

    def load(self, edges: Iterable[MemoryEdge]) -> None:
        """See `MemoryGraph.load`."""
        self._clear()
        for edge in edges:
            self._store(_normalised(edge))


def _key(a: str, b: str, edge_type: EdgeType) -> EdgeKey:
    low, high = sorted((a, b))
    return low, high, edge_type


def _normalised(edge: MemoryEdge) -> MemoryEdge:
    """``edge`` with its ends in key order and its weight clamped to [0, 1]."""
    if edge.source == edge.target:
        raise ValueError(f"a memory edge links two different traces, got {edge.source!r} twice")
    if math.isnan(edge.weight):
        raise ValueError(f"edge weight is NaN: {edge!r}")
    weight = min(1.0, max(0.0, float(edge.weight)))
    low, high = sorted((edge.source, edge.target))
    edge_type = EdgeType(edge.type)  # a store may hand back the plain string
    if (low, high, weight) == (edge.source, edge.target, edge.weight) and edge.type is edge_type:
        return edge
    return replace(edge, source=low, target=high, weight=weight, type=edge_type)
