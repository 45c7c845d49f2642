"""The memory graph and spreading activation (reference §1.16; spec: Retrieval, item 3).

Traces are nodes. A `MemoryEdge` links two of them with a type and a weight in 0..1, at most one
edge per pair and type. Retrieval seeds `spread_activation` with its top results and scores the
memories it reaches (DESIGN.md §5.6); memories recalled together link more strongly
(`MemoryGraph.record_co_activation`, Hebbian learning); consolidation adds SHARED_ENTITY,
TEMPORAL_SEQUENCE, SCHEMA_INSTANCE and CONTRADICTS edges and summarises `detect_clusters`.

This module holds the protocol and the types every backend shares and imports no backend. Two
backends implement `MemoryGraph` with the same semantics, on the shared logic of
`agentos.memory.graph_base.MemoryGraphBase`: `agentos.memory.graph_dict.KnowledgeGraphMemoryGraph`
(the default: a dict adjacency) and `agentos.memory.graph_networkx.NetworkXMemoryGraph` (extra
``graph``); `agentos.memory.graph_factory.create_memory_graph` picks one by
`GraphConfig.backend`; ``'graphology'``, the spec's name for the second backend, is an alias of
``'networkx'``.

A graph lives in process memory; its edges persist in the `MemoryStore`. Every mutator returns
what it changed, the edges it created or updated (for ``store.save_edges``) or the keys it removed
(for ``store.delete_edges``), and `MemoryGraph.load` rebuilds a graph from ``store.load_edges()``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from agentos.memory.edge import EdgeType, MemoryEdge

__all__ = [
    "ACTIVATION_TOLERANCE",
    "ActivatedNode",
    "EdgeKey",
    "GraphConfig",
    "MemoryGraph",
    "sort_clusters",
    "spread_activation",
]

EdgeKey = tuple[str, str, EdgeType]
"""An edge's identity, `MemoryEdge.key`: its two ends in sorted order and its type."""

ACTIVATION_TOLERANCE = 1e-9
"""How far below `GraphConfig.activation_threshold` a value may fall and still count as reaching it.

Hebbian weights are sums of learning rates, and float sums drift by an ulp either way (ten
additions of 0.02 give 0.19999999999999998, three of 0.1 give 0.30000000000000004); without the
tolerance a link that reaches the threshold exactly on paper could miss it by 1e-17.
"""

_BACKENDS = {"knowledge-graph": "knowledge-graph", "networkx": "networkx", "graphology": "networkx"}


@dataclass(frozen=True, slots=True)
class GraphConfig:
    """The memory graph's settings (reference ``DEFAULT_GRAPH_CONFIG``; spec: ``graph``).

    ``backend`` is ``'knowledge-graph'`` (default) or ``'networkx'``; ``'graphology'`` is accepted
    and stored as ``'networkx'``. ``max_depth`` bounds the hops from a seed, ``decay_per_hop`` is
    the factor every hop applies, ``activation_threshold`` the least activation (and the least
    single contribution) that counts, ``hebbian_learning_rate`` what one co-activation adds to a
    link, ``max_results`` how many activated nodes a spread returns. ``disabled`` turns the graph
    off for the memory that reads this config. Raises ValueError on an unknown backend or a value
    out of range.
    """

    backend: Literal["knowledge-graph", "networkx", "graphology"] = "knowledge-graph"
    max_depth: int = 3
    decay_per_hop: float = 0.5
    activation_threshold: float = 0.1
    hebbian_learning_rate: float = 0.1
    max_results: int = 20
    disabled: bool = False

    def __post_init__(self) -> None:
        backend = _BACKENDS.get(self.backend)
        if backend is None:
            raise ValueError(
                f"unknown memory graph backend {self.backend!r}: "
                "use 'knowledge-graph', 'networkx' or 'graphology'"
            )
        object.__setattr__(self, "backend", backend)
        if self.max_depth < 0:
            raise ValueError(f"max_depth must be >= 0, got {self.max_depth}")
        if not 0.0 < self.decay_per_hop <= 1.0:
            raise ValueError(f"decay_per_hop must be in (0, 1], got {self.decay_per_hop}")
        if not 0.0 < self.activation_threshold <= 1.0:
            raise ValueError(
                f"activation_threshold must be in (0, 1], got {self.activation_threshold}"
            )
        if not 0.0 <= self.hebbian_learning_rate <= 1.0:
            raise ValueError(
                f"hebbian_learning_rate must be in [0, 1], got {self.hebbian_learning_rate}"
            )
        if self.max_results < 0:
            raise ValueError(f"max_results must be >= 0, got {self.max_results}")


@dataclass(frozen=True, slots=True)
class ActivatedNode:
    """A node a spread reached.

    ``activation`` lies in (0, 1], ``depth`` is its fewest hops from a seed and ``activated_by``
    holds the seeds whose spread reached it.
    """

    id: str
    activation: float
    depth: int
    activated_by: frozenset[str]


def spread_activation(
    seed_ids: Iterable[str],
    neighbors: Callable[[str], Iterable[tuple[str, float]]],
    config: GraphConfig | None = None,
) -> list[ActivatedNode]:
    """Spread activation from ``seed_ids`` over the graph ``neighbors`` describes (reference §1.16).

    Seeds start at 1.0 (duplicates count once). Nodes are expanded breadth-first, in the order
    they are first reached, down to ``config.max_depth`` hops. Expanding node ``n`` sends each
    neighbour the contribution ``activation(n) * weight * decay_per_hop``; a contribution below
    ``activation_threshold`` (less `ACTIVATION_TOLERANCE`) is dropped, so one exactly at the
    threshold counts. A node reached for the first time takes the contribution (capped at 1) and
    is queued; a node reached again adds it (``min(1, a + contribution)``), keeps its shallowest
    depth, unions the seeds that reached it, and is not expanded again, so what it receives after
    its own expansion does not travel on (the reference's single pass). An expansion also sends
    to nodes already reached, seeds and the node it came from included: on a weight-1 chain
    s-a-b, b's expansion gives a 0.125 more (0.625 in all); a seed stays at 1.

    The decay compounds along a path: a node first reached ``k`` hops out along edges of weight
    1 gets ``decay_per_hop ** k``. No ``decay_per_hop ** depth`` factor is applied on top (the
    reference computes one and never uses it; its trap 12, §5, is about the manager ignoring
    activated nodes, which this package's manager does not).

    Each node's neighbours are visited in id order, so the result depends on the graph and the
    order of the seeds, not on how a backend stores its adjacency. Weights are expected in
    0..1. Returns the non-seed nodes at or above the threshold, by activation (highest first)
    then id, at most ``config.max_results``.
    """
    cfg = config if config is not None else GraphConfig()
    floor = cfg.activation_threshold - ACTIVATION_TOLERANCE
    seeds = list(dict.fromkeys(seed_ids))
    activation = dict.fromkeys(seeds, 1.0)
    depth = dict.fromkeys(seeds, 0)
    reached_by = {seed: {seed} for seed in seeds}
    queue = deque(seeds)
    while queue:
        node = queue.popleft()
        hops = depth[node]
        if hops >= cfg.max_depth:
            continue
        # Read when the node's turn comes: everything it received before then travels on.
        source = activation[node]
        for other, weight in sorted(neighbors(node)):
            # The reference's order of the factors, so its values are reproduced to the bit.
            contribution = source * weight * cfg.decay_per_hop
            if contribution < floor:
                continue
            if other in activation:
                activation[other] = min(1.0, activation[other] + contribution)
                depth[other] = min(depth[other], hops + 1)
                reached_by[other] |= reached_by[node]
            else:
                activation[other] = min(1.0, contribution)
                depth[other] = hops + 1
                reached_by[other] = set(reached_by[node])
                queue.append(other)
    return _ranked(seeds, activation, depth, reached_by, floor)[: cfg.max_results]


def _ranked(
    seeds: list[str],
    activation: dict[str, float],
    depth: dict[str, int],
    reached_by: dict[str, set[str]],
    floor: float,
) -> list[ActivatedNode]:
    """The non-seed nodes at or above ``floor``, by activation (highest first) then id."""
    seed_set = set(seeds)
    activated = [
        ActivatedNode(node, value, depth[node], frozenset(reached_by[node]))
        for node, value in activation.items()
        if node not in seed_set and value >= floor
    ]
    activated.sort(key=lambda item: (-item.activation, item.id))
    return activated


@runtime_checkable
class MemoryGraph(Protocol):
    """The memory graph: trace ids as nodes, at most one `MemoryEdge` per pair and type.

    Edges are undirected and stored with their ends in key order (``source < target``), weights
    clamped to [0, 1]. Mutators return what they changed so the caller can persist it: the edges
    created or updated, or the keys removed. Lists come back sorted (nodes by id, edges by key).
    """

    def __len__(self) -> int:
        """The number of nodes."""
        ...

    def add_node(self, node_id: str) -> None:
        """Add ``node_id`` if absent (edges add their ends themselves)."""
        ...

    def has_node(self, node_id: str) -> bool:
        """Whether ``node_id`` is a node."""
        ...

    def nodes(self) -> list[str]:
        """Every node id, sorted."""
        ...

    def remove_node(self, node_id: str) -> list[EdgeKey]:
        """Remove ``node_id`` and its edges; returns the removed edges' keys (none if absent)."""
        ...

    def upsert_edge(self, edge: MemoryEdge) -> list[MemoryEdge]:
        """Store ``edge`` (weight clamped to [0, 1]), adding its ends as nodes.

        An existing edge of the same pair and type takes the new weight and keeps its
        ``created_at``. Returns ``[stored edge]``, or ``[]`` when that edge was already stored
        with that weight. Raises ValueError for a self-loop or a NaN weight.
        """
        ...

    def remove_edge(self, a: str, b: str, edge_type: EdgeType) -> list[EdgeKey]:
        """Remove the ``edge_type`` edge between ``a`` and ``b``; returns its key, or ``[]``."""
        ...

    def edge(self, a: str, b: str, edge_type: EdgeType) -> MemoryEdge | None:
        """The ``edge_type`` edge between ``a`` and ``b`` (either order), or None."""
        ...

    def edges(self, edge_type: EdgeType | None = None) -> list[MemoryEdge]:
        """Every edge (of ``edge_type`` only, if given), sorted by key."""
        ...

    def neighbors(self, node_id: str) -> list[tuple[str, float]]:
        """``(neighbour, weight)`` for each node linked to ``node_id``, in no particular order.

        A pair linked by several types counts once, with its strongest weight. ``[]`` for an
        unknown node.
        """
        ...

    def spreading_activation(
        self, seed_ids: Iterable[str], config: GraphConfig | None = None
    ) -> list[ActivatedNode]:
        """`spread_activation` over this graph."""
        ...

    def record_co_activation(
        self, node_ids: Iterable[str], learning_rate: float, now: float
    ) -> list[MemoryEdge]:
        """Hebbian learning: link every pair of ``node_ids`` more strongly (reference §1.16).

        Each pair's CO_ACTIVATED edge goes to ``min(1, weight + learning_rate)``; a pair without
        one gets a CO_ACTIVATED edge of weight ``learning_rate`` created at ``now``. The ids
        become nodes; duplicates count once. Returns the edges created or changed (an edge
        already at 1 is unchanged; a rate of 0 changes nothing). Raises ValueError for a rate
        outside [0, 1].
        """
        ...

    def detect_clusters(
        self, min_size: int = 3, edge_types: Iterable[EdgeType] | None = None
    ) -> list[set[str]]:
        """The connected components of at least ``min_size`` nodes, largest first.

        Ties go by smallest id. Only edges of ``edge_types`` connect (every type if None).

        Limits: a component is connectivity, not a topic. Any edge of any weight joins two
        components, so one bridging link merges two themes and a chain of weak links makes one
        long cluster; a component has no size cap (the reference stops at depth 5 and 100
        nodes), so a caller that summarises clusters should bound what it reads.
        """
        ...

    def load(self, edges: Iterable[MemoryEdge]) -> None:
        """Replace the whole graph (nodes included) with ``edges``, e.g. ``store.load_edges()``."""
        ...


def sort_clusters(clusters: Iterable[set[str]]) -> list[set[str]]:
    """``clusters`` largest first, ties by their smallest id (the order `detect_clusters` gives)."""
    return sorted(clusters, key=lambda cluster: (-len(cluster), min(cluster)))
