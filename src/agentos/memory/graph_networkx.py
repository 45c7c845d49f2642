"""The networkx backend of the memory graph (the spec's 'graphology' backend; extra ``graph``).

Same semantics as `agentos.memory.graph_dict.KnowledgeGraphMemoryGraph`, on a ``networkx.Graph`` a
caller can hand to networkx's algorithms (`NetworkXMemoryGraph.nx_graph`). Importing this module
without networkx raises ImportError naming ``pip install 'agentos[graph]'``; nothing else in
agentos imports it unless that backend is asked for.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agentos.memory.edge import EdgeType, MemoryEdge
from agentos.memory.graph import EdgeKey, sort_clusters
from agentos.memory.graph_base import MemoryGraphBase

try:
    import networkx as nx
except ImportError as exc:  # pragma: no cover - exercised with a patched import
    raise ImportError(
        "the networkx memory graph backend needs networkx: pip install 'agentos[graph]'"
    ) from exc

__all__ = ["NetworkXMemoryGraph"]

_WEIGHT = "weight"
_TYPES = tuple(EdgeType)


class NetworkXMemoryGraph(MemoryGraphBase):
    """The memory graph on a ``networkx.Graph``.

    One networkx edge per linked pair. Its attributes: one per `EdgeType` linking the pair, named
    by the type's value and holding that type's `MemoryEdge`, and ``weight``, the strongest of
    them, which is what spreading activation and networkx's weighted algorithms read.
    """

    def __init__(self, edges: Iterable[MemoryEdge] = ()) -> None:
        self._graph: Any = nx.Graph()
        self.load(edges)

    @property
    def nx_graph(self) -> Any:
        """The underlying ``networkx.Graph``.

        Read it freely; change it only through this class, which keeps ``weight`` and the
        per-type attributes in step.
        """
        return self._graph

    def __len__(self) -> int:
        return int(self._graph.number_of_nodes())

    def add_node(self, node_id: str) -> None:
        """See `MemoryGraph.add_node`."""
        self._graph.add_node(node_id)

    def has_node(self, node_id: str) -> bool:
        """See `MemoryGraph.has_node`."""
        return bool(self._graph.has_node(node_id))

    def nodes(self) -> list[str]:
        """See `MemoryGraph.nodes`."""
        return sorted(self._graph.nodes)

    def remove_node(self, node_id: str) -> list[EdgeKey]:
        """See `MemoryGraph.remove_node`."""
        if not self._graph.has_node(node_id):
            return []
        removed = [
            edge.key()
            for _, _, data in self._graph.edges(node_id, data=True)
            for edge in _typed(data)
        ]
        self._graph.remove_node(node_id)
        return sorted(removed)

    def _get(self, key: EdgeKey) -> MemoryEdge | None:
        a, b, edge_type = key
        data = self._graph.get_edge_data(a, b)
        if data is None:
            return None
        found: MemoryEdge | None = data.get(edge_type.value)
        return found

    def edges(self, edge_type: EdgeType | None = None) -> list[MemoryEdge]:
        """See `MemoryGraph.edges`."""
        found = [
            edge
            for _, _, data in self._graph.edges(data=True)
            for edge in _typed(data)
            if edge_type is None or edge.type == edge_type
        ]
        return sorted(found, key=MemoryEdge.key)

    def neighbors(self, node_id: str) -> list[tuple[str, float]]:
        """See `MemoryGraph.neighbors`."""
        if not self._graph.has_node(node_id):
            return []
        return [(other, data[_WEIGHT]) for other, data in self._graph.adj[node_id].items()]

    def detect_clusters(
        self, min_size: int = 3, edge_types: Iterable[EdgeType] | None = None
    ) -> list[set[str]]:
        """See `MemoryGraph.detect_clusters`."""
        graph = full = self._graph
        if edge_types is not None:
            wanted = frozenset(edge_type.value for edge_type in edge_types)

            def keep(a: str, b: str) -> bool:
                return not wanted.isdisjoint(full[a][b])

            graph = nx.subgraph_view(full, filter_edge=keep)
        components = (set(c) for c in nx.connected_components(graph))
        return sort_clusters(c for c in components if len(c) >= min_size)

    def _store(self, edge: MemoryEdge) -> None:
        data = self._graph.get_edge_data(edge.source, edge.target)
        if data is None:
            self._graph.add_edge(edge.source, edge.target, **{edge.type.value: edge})
            data = self._graph[edge.source][edge.target]
        else:
            data[edge.type.value] = edge
        data[_WEIGHT] = max(e.weight for e in _typed(data))

    def _discard(self, key: EdgeKey) -> bool:
        a, b, edge_type = key
        data = self._graph.get_edge_data(a, b)
        if data is None or edge_type.value not in data:
            return False
        del data[edge_type.value]
        remaining = _typed(data)
        if remaining:
            data[_WEIGHT] = max(e.weight for e in remaining)
        else:  # no link left: the two are no longer neighbours
            self._graph.remove_edge(a, b)
        return True

    def _clear(self) -> None:
        self._graph.clear()


def _typed(data: dict[str, Any]) -> list[MemoryEdge]:
    """The `MemoryEdge` attributes of one networkx edge, in `EdgeType` order."""
    return [data[t.value] for t in _TYPES if t.value in data]
