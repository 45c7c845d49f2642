"""The memory graph and spreading activation (reference §1.16), on both backends.

Values are derived by hand: a hop contributes ``activation * weight * decay_per_hop`` (0.5), so a
seed's neighbour over weight 1.0 gets 0.5 and the next node over weight 0.8 gets 0.2.
"""

from __future__ import annotations

import importlib
import math
import subprocess
import sys
from collections.abc import Callable, Iterable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentos.memory.edge import EdgeType, MemoryEdge
from agentos.memory.graph import (
    ACTIVATION_TOLERANCE,
    ActivatedNode,
    GraphConfig,
    MemoryGraph,
    spread_activation,
)
from agentos.memory.graph_dict import KnowledgeGraphMemoryGraph
from agentos.memory.graph_factory import create_memory_graph
from agentos.memory.graph_networkx import NetworkXMemoryGraph

BACKENDS = ("knowledge-graph", "networkx")
SE = EdgeType.SHARED_ENTITY
CO = EdgeType.CO_ACTIVATED

MakeGraph = Callable[..., MemoryGraph]


def build(backend: str, edges: Iterable[MemoryEdge] = ()) -> MemoryGraph:
    config = GraphConfig(backend="networkx" if backend == "networkx" else "knowledge-graph")
    return create_memory_graph(config, edges)


@pytest.fixture(params=BACKENDS)
def make(request: pytest.FixtureRequest) -> MakeGraph:
    backend: str = request.param

    def factory(edges: Iterable[MemoryEdge] = ()) -> MemoryGraph:
        return build(backend, edges)

    return factory


def edge(a: str, b: str, weight: float, kind: EdgeType = SE, at: float = 0.0) -> MemoryEdge:
    return MemoryEdge(a, b, kind, weight, at)


def by_id(nodes: list[ActivatedNode]) -> dict[str, ActivatedNode]:
    return {node.id: node for node in nodes}


# --- spreading activation: exact values ---------------------------------------------------------


def test_one_hop_then_two_hops(make: MakeGraph) -> None:
    graph = make([edge("s", "a", 1.0), edge("a", "b", 0.8)])
    result = graph.spreading_activation(["s"])
    assert result == [
        ActivatedNode("a", 0.5, 1, frozenset({"s"})),
        ActivatedNode("b", 0.2, 2, frozenset({"s"})),
    ]


def test_decay_compounds_along_the_path_and_echoes_back(make: MakeGraph) -> None:
    # Weight-1 chain s-a-b-c, a low threshold: the k-th node gets 0.5**k. Edges are undirected,
    # so b's expansion also sends 0.25 * 0.5 back to a (a node reached again accumulates):
    # a = 0.5 + 0.125. c, at max_depth, is not expanded and sends nothing back.
    graph = make([edge("s", "a", 1.0), edge("a", "b", 1.0), edge("b", "c", 1.0)])
    config = GraphConfig(activation_threshold=0.01)
    values = {node.id: node.activation for node in graph.spreading_activation(["s"], config)}
    assert values == {"a": 0.625, "b": 0.25, "c": 0.125}


def test_decay_compounds_on_a_directed_neighbour_function() -> None:
    chain = {"s": [("a", 1.0)], "a": [("b", 1.0)], "b": [("c", 1.0)], "c": []}
    result = spread_activation(
        ["s"], lambda node: chain[node], GraphConfig(activation_threshold=0.01)
    )
    assert [(node.id, node.activation, node.depth) for node in result] == [
        ("a", 0.5, 1),
        ("b", 0.25, 2),
        ("c", 0.125, 3),
    ]


def test_below_the_threshold_nothing_activates(make: MakeGraph) -> None:
    graph = make([edge("s", "a", 0.19)])  # 0.095 < 0.1
    assert graph.spreading_activation(["s"]) == []


def test_a_cut_off_stops_the_spread_beyond_it(make: MakeGraph) -> None:
    # a gets 0.5; b would get 0.5 * 0.3 * 0.5 = 0.075 < 0.1, so b and what lies past it stay dark.
    graph = make([edge("s", "a", 1.0), edge("a", "b", 0.3), edge("b", "c", 1.0)])
    assert [node.id for node in graph.spreading_activation(["s"])] == ["a"]


def test_a_custom_threshold(make: MakeGraph) -> None:
    graph = make([edge("s", "a", 0.5), edge("s", "b", 0.7)])  # 0.25 and 0.35
    result = graph.spreading_activation(["s"], GraphConfig(activation_threshold=0.3))
    assert [(node.id, node.activation) for node in result] == [("b", 0.35)]


def test_a_contribution_exactly_at_the_threshold_counts(make: MakeGraph) -> None:
    graph = make([edge("s", "a", 0.2)])  # 1.0 * 0.2 * 0.5 == 0.1
    assert [(node.id, node.activation) for node in graph.spreading_activation(["s"])] == [
        ("a", 0.1)
    ]


def test_two_seeds_accumulate(make: MakeGraph) -> None:
    graph = make([edge("s1", "x", 0.6), edge("s2", "x", 0.4)])
    [x] = graph.spreading_activation(["s1", "s2"])
    assert x.activation == pytest.approx(0.3 + 0.2)
    assert x.depth == 1
    assert x.activated_by == frozenset({"s1", "s2"})


def test_accumulation_is_capped_at_one(make: MakeGraph) -> None:
    graph = make([edge("s1", "x", 1.0), edge("s2", "x", 1.0), edge("s3", "x", 1.0)])
    [x] = graph.spreading_activation(["s1", "s2", "s3"])
    assert x.activation == 1.0
    assert x.activated_by == frozenset({"s1", "s2", "s3"})


def test_a_node_reached_again_is_not_expanded_again(make: MakeGraph) -> None:
    # Triangle s-a-b, all weight 1. a and b start at 0.5 (depth 1). a expands first (id order)
    # and gives b 0.25 -> 0.75 before b's turn; b then gives a 0.375 -> 0.875, which a, already
    # expanded, keeps without passing on. The seed stays out of the result.
    graph = make([edge("s", "a", 1.0), edge("s", "b", 1.0), edge("a", "b", 1.0)])
    assert graph.spreading_activation(["s"]) == [
        ActivatedNode("a", 0.875, 1, frozenset({"s"})),
        ActivatedNode("b", 0.75, 1, frozenset({"s"})),
    ]


def test_max_depth(make: MakeGraph) -> None:
    chain = [edge(f"n{i}", f"n{i + 1}", 1.0) for i in range(5)]
    graph = make(chain)
    low = GraphConfig(activation_threshold=0.01)
    assert [node.id for node in graph.spreading_activation(["n0"], low)] == ["n1", "n2", "n3"]
    deeper = GraphConfig(activation_threshold=0.01, max_depth=4)
    result = graph.spreading_activation(["n0"], deeper)
    assert [(node.id, node.depth) for node in result] == [
        ("n1", 1),
        ("n2", 2),
        ("n3", 3),
        ("n4", 4),
    ]
    assert result[-1].activation == 0.0625
    assert graph.spreading_activation(["n0"], GraphConfig(max_depth=0)) == []


def test_max_results_keeps_the_strongest_then_by_id(make: MakeGraph) -> None:
    graph = make(
        [
            edge("s", "e", 0.6),
            edge("s", "d", 0.8),
            edge("s", "c", 0.8),
            edge("s", "b", 1.0),
            edge("s", "a", 0.3),
        ]
    )
    result = graph.spreading_activation(["s"], GraphConfig(max_results=3))
    assert [(node.id, node.activation) for node in result] == [("b", 0.5), ("c", 0.4), ("d", 0.4)]


def test_seeds_are_never_results_but_still_spread(make: MakeGraph) -> None:
    # s2 is a seed (1.0, not 1.5) and expands; s1 reached it first, so x counts both as sources.
    graph = make([edge("s1", "s2", 1.0), edge("s2", "x", 1.0)])
    result = graph.spreading_activation(["s1", "s2", "s1"])
    assert [(node.id, node.activation, node.activated_by) for node in result] == [
        ("x", 0.5, frozenset({"s1", "s2"}))
    ]


def test_unknown_seeds_activate_nothing(make: MakeGraph) -> None:
    assert make([edge("a", "b", 1.0)]).spreading_activation(["nowhere"]) == []


def test_several_types_count_with_the_strongest_weight(make: MakeGraph) -> None:
    graph = make([edge("s", "a", 0.2, CO), edge("s", "a", 0.6, SE)])
    assert graph.neighbors("s") == [("a", 0.6)]
    assert [node.activation for node in graph.spreading_activation(["s"])] == [0.3]


def test_the_pure_function_takes_any_neighbour_source() -> None:
    adjacency = {"s": [("b", 1.0), ("a", 0.4)], "a": [], "b": []}
    result = spread_activation(["s"], lambda node: adjacency[node])
    assert [(node.id, node.activation) for node in result] == [("b", 0.5), ("a", 0.2)]


# --- Hebbian co-activation ----------------------------------------------------------------------


def test_one_co_activation_activates_nothing_two_reach_the_threshold(make: MakeGraph) -> None:
    graph = make()
    graph.record_co_activation(["s", "x"], 0.1, now=10.0)
    assert graph.spreading_activation(["s"]) == []  # 0.1 * 0.5 = 0.05 < 0.1
    graph.record_co_activation(["s", "x"], 0.1, now=20.0)
    assert graph.spreading_activation(["s"]) == [ActivatedNode("x", 0.1, 1, frozenset({"s"}))]


def test_hebbian_float_drift_does_not_miss_the_threshold(make: MakeGraph) -> None:
    # Ten co-activations at 0.02 sum to 0.19999999999999998, not 0.2; its 0.09999999999999999
    # reaches the threshold within ACTIVATION_TOLERANCE, as 0.2 on paper does.
    graph = make()
    for _ in range(10):
        graph.record_co_activation(["s", "x"], 0.02, now=0.0)
    stored = graph.edge("s", "x", CO)
    assert stored is not None
    assert stored.weight < 0.2
    [x] = graph.spreading_activation(["s"])
    assert x.id == "x"
    assert x.activation == pytest.approx(0.1, abs=ACTIVATION_TOLERANCE)


def test_record_co_activation_links_every_pair(make: MakeGraph) -> None:
    graph = make()
    created = graph.record_co_activation(["c", "a", "b", "a"], 0.1, now=5.0)
    assert created == [
        MemoryEdge("a", "c", CO, 0.1, 5.0),
        MemoryEdge("b", "c", CO, 0.1, 5.0),
        MemoryEdge("a", "b", CO, 0.1, 5.0),
    ]
    assert graph.nodes() == ["a", "b", "c"]
    changed = graph.record_co_activation(["a", "b"], 0.1, now=9.0)
    assert changed == [MemoryEdge("a", "b", CO, 0.2, 5.0)]  # keeps when the link was made
    assert graph.edges() == sorted(
        [*changed, *created[:2]], key=lambda e: (e.source, e.target, e.type)
    )


def test_co_activation_is_its_own_edge_type_and_saturates(make: MakeGraph) -> None:
    graph = make([edge("a", "b", 0.5)])
    graph.record_co_activation(["a", "b"], 0.3, now=1.0)
    assert graph.edge("a", "b", SE) == edge("a", "b", 0.5)
    for _ in range(3):
        graph.record_co_activation(["b", "a"], 0.3, now=1.0)
    stored = graph.edge("b", "a", CO)
    assert stored is not None
    assert stored.weight == 1.0
    assert graph.record_co_activation(["a", "b"], 0.3, now=2.0) == []
    assert graph.record_co_activation(["a", "z"], 0.0, now=2.0) == []
    assert graph.has_node("z")
    with pytest.raises(ValueError, match="learning_rate"):
        graph.record_co_activation(["a", "b"], 1.5, now=2.0)


# --- edges and nodes ----------------------------------------------------------------------------


def test_upsert_normalises_and_reports_changes(make: MakeGraph) -> None:
    graph = make()
    assert graph.upsert_edge(edge("b", "a", 1.5, at=3.0)) == [edge("a", "b", 1.0, at=3.0)]
    assert graph.upsert_edge(edge("a", "b", 1.0, at=7.0)) == []  # already so
    assert graph.upsert_edge(edge("a", "b", -0.2, at=7.0)) == [edge("a", "b", 0.0, at=3.0)]
    assert graph.edge("b", "a", SE) == edge("a", "b", 0.0, at=3.0)
    assert graph.edge("a", "b", CO) is None
    assert graph.nodes() == ["a", "b"]
    assert len(graph) == 2
    with pytest.raises(ValueError, match="two different traces"):
        graph.upsert_edge(edge("a", "a", 0.5))
    with pytest.raises(ValueError, match="NaN"):
        graph.upsert_edge(edge("a", "c", math.nan))


def test_edges_filter_by_type(make: MakeGraph) -> None:
    graph = make([edge("a", "b", 0.5), edge("a", "b", 0.9, EdgeType.CONTRADICTS)])
    graph.upsert_edge(edge("c", "b", 0.3, EdgeType.TEMPORAL_SEQUENCE))
    assert graph.edges(EdgeType.CONTRADICTS) == [edge("a", "b", 0.9, EdgeType.CONTRADICTS)]
    assert [e.key() for e in graph.edges()] == [  # types sort by name
        ("a", "b", EdgeType.CONTRADICTS),
        ("a", "b", SE),
        ("b", "c", EdgeType.TEMPORAL_SEQUENCE),
    ]


def test_remove_edge(make: MakeGraph) -> None:
    graph = make([edge("a", "b", 0.5), edge("a", "b", 0.9, CO)])
    assert graph.remove_edge("b", "a", CO) == [("a", "b", CO)]
    assert graph.neighbors("a") == [("b", 0.5)]  # the strongest remaining type
    assert graph.remove_edge("a", "b", CO) == []
    assert graph.remove_edge("a", "b", SE) == [("a", "b", SE)]
    assert graph.neighbors("a") == []
    assert graph.has_node("a")


def test_remove_node_drops_its_edges(make: MakeGraph) -> None:
    graph = make([edge("a", "b", 0.5), edge("a", "c", 0.5, CO), edge("b", "c", 0.4)])
    assert graph.remove_node("a") == [("a", "b", SE), ("a", "c", CO)]
    assert not graph.has_node("a")
    assert graph.neighbors("b") == [("c", 0.4)]
    assert graph.edges() == [edge("b", "c", 0.4)]
    assert graph.remove_node("a") == []
    assert graph.neighbors("a") == []


def test_load_round_trip_and_replace(make: MakeGraph) -> None:
    original = make(
        [edge("a", "b", 0.5, at=1.0), edge("c", "b", 0.3, EdgeType.TEMPORAL_SEQUENCE, 2.0)]
    )
    original.record_co_activation(["a", "c"], 0.1, now=3.0)
    saved = original.edges()
    for backend in BACKENDS:
        copy = build(backend, [edge("old", "other", 1.0)])
        copy.load(saved)
        assert copy.edges() == saved
        assert copy.nodes() == ["a", "b", "c"]
        assert copy.spreading_activation(["a"]) == original.spreading_activation(["a"])


def test_load_accepts_a_plain_string_type(make: MakeGraph) -> None:
    raw = MemoryEdge("b", "a", "SHARED_ENTITY", 0.5)  # type: ignore[arg-type]
    [stored] = make([raw]).edges()
    assert stored.type is EdgeType.SHARED_ENTITY
    assert (stored.source, stored.target) == ("a", "b")


# --- clusters -----------------------------------------------------------------------------------


def test_detect_clusters(make: MakeGraph) -> None:
    graph = make(
        [
            edge("a", "b", 0.5),
            edge("b", "c", 0.1, CO),
            edge("d", "e", 0.5),
            edge("e", "f", 0.5),
            edge("f", "g", 0.5),
            edge("x", "y", 0.5),
        ]
    )
    graph.add_node("lonely")
    assert graph.detect_clusters() == [{"d", "e", "f", "g"}, {"a", "b", "c"}]
    assert graph.detect_clusters(min_size=2) == [
        {"d", "e", "f", "g"},
        {"a", "b", "c"},
        {"x", "y"},
    ]
    assert {"lonely"} in graph.detect_clusters(min_size=1)
    assert graph.detect_clusters(min_size=2, edge_types=[SE]) == [
        {"d", "e", "f", "g"},
        {"a", "b"},
        {"x", "y"},
    ]


# --- configuration and backends -----------------------------------------------------------------


def test_config_defaults_and_the_graphology_alias() -> None:
    config = GraphConfig()
    assert (config.backend, config.max_depth, config.decay_per_hop) == ("knowledge-graph", 3, 0.5)
    assert (config.activation_threshold, config.hebbian_learning_rate) == (0.1, 0.1)
    assert (config.max_results, config.disabled) == (20, False)
    assert GraphConfig(backend="graphology").backend == "networkx"
    assert isinstance(create_memory_graph(GraphConfig(backend="graphology")), NetworkXMemoryGraph)
    assert isinstance(create_memory_graph(), KnowledgeGraphMemoryGraph)


@pytest.mark.parametrize(
    "bad",
    [
        {"backend": "neo4j"},
        {"max_depth": -1},
        {"decay_per_hop": 0.0},
        {"activation_threshold": 1.5},
        {"hebbian_learning_rate": -0.1},
        {"max_results": -1},
    ],
)
def test_config_rejects_values_out_of_range(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError, match=next(iter(bad))):
        GraphConfig(**bad)  # type: ignore[arg-type]


def test_both_backends_satisfy_the_protocol(make: MakeGraph) -> None:
    assert isinstance(make(), MemoryGraph)


def test_the_networkx_graph_is_readable() -> None:
    graph = NetworkXMemoryGraph([edge("a", "b", 0.5), edge("a", "b", 0.7, CO)])
    data = graph.nx_graph["a"]["b"]
    assert data["weight"] == 0.7
    assert data["SHARED_ENTITY"] == edge("a", "b", 0.5)


def test_without_networkx_the_backend_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "networkx", None)  # makes `import networkx` fail
    monkeypatch.delitem(sys.modules, "agentos.memory.graph_networkx")
    with pytest.raises(ImportError, match=r"pip install 'agentos\[graph\]'"):
        importlib.import_module("agentos.memory.graph_networkx")
    with pytest.raises(ImportError, match=r"pip install 'agentos\[graph\]'"):
        create_memory_graph(GraphConfig(backend="networkx"))
    assert create_memory_graph().spreading_activation(["a"]) == []  # the default needs nothing


def test_the_default_backend_does_not_import_networkx() -> None:
    code = (
        "import sys, agentos.memory.graph_factory as g; g.create_memory_graph(); "
        "assert 'networkx' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- properties ---------------------------------------------------------------------------------

NODES = [f"n{i}" for i in range(8)]


@st.composite
def graphs(draw: st.DrawFn) -> list[MemoryEdge]:
    """Edges among eight nodes, one per key (weights on a 0.05 grid or arbitrary)."""
    raw = draw(
        st.lists(
            st.tuples(
                st.sampled_from(NODES),
                st.sampled_from(NODES),
                st.sampled_from(list(EdgeType)),
                st.one_of(st.integers(0, 20).map(lambda k: k * 0.05), st.floats(0.0, 1.0)),
            ),
            max_size=30,
        )
    )
    unique = {
        MemoryEdge(a, b, kind, w).key(): MemoryEdge(a, b, kind, w)
        for a, b, kind, w in raw
        if a != b
    }
    return list(unique.values())


configs = st.builds(
    GraphConfig,
    max_depth=st.integers(0, 4),
    activation_threshold=st.sampled_from([0.01, 0.05, 0.1, 0.2]),
    max_results=st.integers(0, 10),
)
seed_lists = st.lists(st.sampled_from(NODES), min_size=1, max_size=4)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edges=graphs(), seeds=seed_lists, config=configs)
def test_spread_properties_and_backend_agreement(
    edges: list[MemoryEdge], seeds: list[str], config: GraphConfig
) -> None:
    knowledge = build("knowledge-graph", edges)
    result = knowledge.spreading_activation(seeds, config)
    assert len(result) <= config.max_results
    for node in result:
        assert 0.0 < node.activation <= 1.0
        assert node.id not in seeds
        assert 1 <= node.depth <= config.max_depth
        assert node.activated_by
        assert node.activated_by <= set(seeds)
    assert result == sorted(result, key=lambda node: (-node.activation, node.id))
    assert build("networkx", edges).spreading_activation(seeds, config) == result
    # Independent of the order the edges were added in.
    assert build("knowledge-graph", reversed(edges)).spreading_activation(seeds, config) == result


operations = st.lists(
    st.one_of(
        st.tuples(st.just("upsert"), graphs()),
        st.tuples(st.just("co"), st.lists(st.sampled_from(NODES), max_size=4)),
        st.tuples(st.just("remove_node"), st.sampled_from(NODES)),
        st.tuples(
            st.just("remove_edge"),
            st.tuples(
                st.sampled_from(NODES), st.sampled_from(NODES), st.sampled_from(list(EdgeType))
            ),
        ),
    ),
    max_size=12,
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=operations)
def test_backends_agree_under_any_sequence_of_changes(ops: list[tuple[str, object]]) -> None:
    graphs_ = [build(backend) for backend in BACKENDS]
    for name, arg in ops:
        outcomes: list[object] = []
        for graph in graphs_:
            if name == "upsert":
                assert isinstance(arg, list)
                outcomes.append([graph.upsert_edge(e) for e in arg])
            elif name == "co":
                assert isinstance(arg, list)
                outcomes.append(graph.record_co_activation(arg, 0.3, now=1.0))
            elif name == "remove_node":
                assert isinstance(arg, str)
                outcomes.append(graph.remove_node(arg))
            else:
                assert isinstance(arg, tuple)
                a, b, kind = arg
                outcomes.append(graph.remove_edge(a, b, kind) if a != b else [])
        assert outcomes[0] == outcomes[1]
    first, second = graphs_
    assert first.nodes() == second.nodes()
    assert first.edges() == second.edges()
    for node in NODES:
        assert sorted(first.neighbors(node)) == sorted(second.neighbors(node))
    assert first.detect_clusters(min_size=1) == second.detect_clusters(min_size=1)
