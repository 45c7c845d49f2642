"""`KnowledgeGraphMemoryGraph`: the memory graph's default backend, plain dicts.

Same semantics as every `agentos.memory.graph.MemoryGraph` (the shared logic is in
`MemoryGraphBase`); needs nothing beyond Python.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentos.memory.edge import EdgeType, MemoryEdge
from agentos.memory.graph import EdgeKey, sort_clusters
from agentos.memory.graph_base import MemoryGraphBase

__all__ = ["KnowledgeGraphMemoryGraph"]


class KnowledgeGraphMemoryGraph(MemoryGraphBase):
    """The default backend: a dict adjacency, ``node -> neighbour -> type -> edge``.

    Both ends of a pair share one ``type -> edge`` dict, so an update is seen from either side.
    Named after the reference's in-memory KnowledgeGraph backend; needs nothing beyond Python.
    """

    def __init__(self, edges: Iterable[MemoryEdge] = ()) -> None:
        self._adjacency: dict[str, dict[str, dict[EdgeType, MemoryEdge]]] = {}
        # node -> neighbour -> strongest weight over the pair's types: what spreading activation
        # reads at every hop, kept in step by _store/_discard rather than recomputed per call.
        self._strongest: dict[str, dict[str, float]] = {}
        self.load(edges)

    def __len__(self) -> int:
        return len(self._adjacency)

    def add_node(self, node_id: str) -> None:
        """See `MemoryGraph.add_node`."""
        self._adjacency.setdefault(node_id, {})
        self._strongest.setdefault(node_id, {})

    def has_node(self, node_id: str) -> bool:
        """See `MemoryGraph.has_node`."""
        return node_id in self._adjacency

    def nodes(self) -> list[str]:
        """See `MemoryGraph.nodes`."""
        return sorted(self._adjacency)

    def remove_node(self, node_id: str) -> list[EdgeKey]:
        """See `MemoryGraph.remove_node`."""
        links = self._adjacency.pop(node_id, {})
        self._strongest.pop(node_id, None)
        removed: list[EdgeKey] = []
        for other, by_type in links.items():
            del self._adjacency[other][node_id]
            del self._strongest[other][node_id]
            removed.extend(edge.key() for edge in by_type.values())
        return sorted(removed)

    def _get(self, key: EdgeKey) -> MemoryEdge | None:
        a, b, edge_type = key
        return self._adjacency.get(a, {}).get(b, {}).get(edge_type)

    def edges(self, edge_type: EdgeType | None = None) -> list[MemoryEdge]:
        """See `MemoryGraph.edges`."""
        found = [
            edge
            for node, links in self._adjacency.items()
            for other, by_type in links.items()
            if node < other  # each pair once
            for edge in by_type.values()
            if edge_type is None or edge.type == edge_type
        ]
        return sorted(found, key=MemoryEdge.key)

    def neighbors(self, node_id: str) -> list[tuple[str, float]]:
        """See `MemoryGraph.neighbors`."""
        return list(self._strongest.get(node_id, {}).items())

    def detect_clusters(
        self, min_size: int = 3, edge_types: Iterable[EdgeType] | None = None
    ) -> list[set[str]]:
        """See `MemoryGraph.detect_clusters`."""
        wanted = None if edge_types is None else frozenset(edge_types)
        seen: set[str] = set()
        clusters: list[set[str]] = []
        for start in self._adjacency:
            if start in seen:
                continue
            component = {start}
            pending = [start]
            while pending:
                node = pending.pop()
                for other, by_type in self._adjacency[node].items():
                    if other in component:
                        continue
                    if wanted is None or not wanted.isdisjoint(by_type):
                        component.add(other)
                        pending.append(other)
            seen |= component
            if len(component) >= min_size:
                clusters.append(component)
        return sort_clusters(clusters)

    def _store(self, edge: MemoryEdge) -> None:
        links = self._adjacency.setdefault(edge.source, {})
        by_type = links.get(edge.target)
        if by_type is None:
            by_type = links[edge.target] = {}
            self._adjacency.setdefault(edge.target, {})[edge.source] = by_type
        by_type[edge.type] = edge
        self._restrength(edge.source, edge.target, by_type)

    def _discard(self, key: EdgeKey) -> bool:
        a, b, edge_type = key
        by_type = self._adjacency.get(a, {}).get(b)
        if by_type is None or edge_type not in by_type:
            return False
        del by_type[edge_type]
        if not by_type:  # no link left: the two are no longer neighbours
            del self._adjacency[a][b]
            del self._adjacency[b][a]
            del self._strongest[a][b]
            del self._strongest[b][a]
        else:
            self._restrength(a, b, by_type)
        return True

    def _restrength(self, a: str, b: str, by_type: dict[EdgeType, MemoryEdge]) -> None:
        weight = max(edge.weight for edge in by_type.values())
        self._strongest.setdefault(a, {})[b] = weight
        self._strongest.setdefault(b, {})[a] = weight

    def _clear(self) -> None:
        self._adjacency.clear()
        self._strongest.clear()
