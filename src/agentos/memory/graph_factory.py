"""`create_memory_graph`: a memory graph of the configured backend (reference §1.16).

The one module that knows both backends, so the graph's protocol (`agentos.memory.graph`) and
the backends' shared base (`agentos.memory.graph_base`) import neither.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentos.memory.edge import MemoryEdge
from agentos.memory.graph import GraphConfig, MemoryGraph

__all__ = ["create_memory_graph"]


def create_memory_graph(
    config: GraphConfig | None = None, edges: Iterable[MemoryEdge] = ()
) -> MemoryGraph:
    """A new graph of ``config.backend`` holding ``edges``.

    ``config.disabled`` is not consulted: whether a memory has a graph is its caller's decision.
    Raises ImportError (naming ``pip install 'agentos[graph]'``) for the networkx backend
    without networkx.
    """
    cfg = config if config is not None else GraphConfig()
    if cfg.backend == "networkx":
        # Imported here so the default backend never needs networkx.
        from agentos.memory.graph_networkx import NetworkXMemoryGraph

        return NetworkXMemoryGraph(edges)
    from agentos.memory.graph_dict import KnowledgeGraphMemoryGraph

    return KnowledgeGraphMemoryGraph(edges)
