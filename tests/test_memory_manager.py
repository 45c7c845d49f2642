"""CognitiveMemoryManager through its public API: encoding, the four retrieval layers, scope
isolation, prompt assembly, observation, consolidation and a restart from SQLite (issue 6;
reference §1.12 and case 15)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentos.memory.config import CognitiveMemoryConfig, RetrievalOptions, RetrievalPolicy
from agentos.memory.edge import EdgeType, MemoryEdge
from agentos.memory.graph import GraphConfig
from agentos.memory.manager import CognitiveMemoryManager
from agentos.memory.sqlite_store import SQLiteMemoryStore
from agentos.memory.trace import DAY, PAD, MemoryScope, MemoryType, SourceType
from agentos.testing import FakeClock, HashEmbedder

START = FakeClock().timestamp()


def scopes(*ids: str) -> list[tuple[MemoryScope, str]]:
    return [(MemoryScope.USER, scope_id) for scope_id in ids]


def manager(clock: FakeClock | None = None, **config: Any) -> CognitiveMemoryManager:
    config.setdefault("embedder", HashEmbedder(384))
    return CognitiveMemoryManager(CognitiveMemoryConfig(clock=clock or FakeClock(), **config))


FACTS = [
    "My sister lives in Paris and works as a nurse.",
    "I am allergic to peanuts.",
    "The team meeting moved to Tuesday afternoon.",
    "I love hiking in the Alps every summer.",
    "My favourite food is sushi from the market.",
    "The quarterly report is due on Friday.",
]


async def filled(memory: CognitiveMemoryManager, scope_id: str = "u1") -> list[str]:
    return [(await memory.encode(text, scope_id=scope_id)).id for text in FACTS]


# -- encoding -----------------------------------------------------------------------------------


async def test_encode_stores_a_trace_with_the_encoding_models_values() -> None:
    memory = manager()
    trace = await memory.encode(
        "The table is in the room next to the door.", scope_id="u1", content_sentiment=0.0
    )
    # Neutral mood, no traits, no features: case 6 of the reference (3600 s base stability).
    assert trace.encoding_strength == pytest.approx(0.2875)
    assert trace.stability == pytest.approx(9810.0)
    assert trace.importance == pytest.approx(0.4025)
    assert (trace.scope, trace.scope_id, trace.created_at) == (MemoryScope.USER, "u1", START)
    assert trace.provenance.source_type is SourceType.USER_STATEMENT
    [stored] = await memory.store.get([trace.id])
    assert stored == trace
    assert (await memory.encode("Ada met Grace in London.", scope_id="u1")).entities == [
        "Ada",
        "Grace",
        "London",
    ]
    with pytest.raises(ValueError, match="content"):
        await memory.encode("   ")


async def test_a_contradicting_text_is_linked_to_the_memory_it_contradicts() -> None:
    memory = manager()
    old = await memory.encode("My sister lives in Paris.", scope_id="u1")
    new = await memory.encode("Actually my sister no longer lives in Paris.", scope_id="u1")
    assert memory.graph is not None
    edge = memory.graph.edge(old.id, new.id, EdgeType.CONTRADICTS)
    assert edge is not None
    assert [e.type for e in await memory.store.load_edges()] == [EdgeType.CONTRADICTS]


# -- retrieval (case 15) ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "graph", [GraphConfig(backend="knowledge-graph"), GraphConfig(backend="networkx")]
)
async def test_case_15_top_five_are_recalled_and_linked(graph: GraphConfig) -> None:
    clock = FakeClock()
    memory = manager(clock, graph=graph)
    await filled(memory)
    clock.advance(3600)
    result = await memory.retrieve(
        "Where does my sister live?", options=RetrievalOptions(scopes=scopes("u1"), top_k=6)
    )
    assert result.retrieved[0].trace.content == FACTS[0]
    assert len(result.retrieved) == 6
    top5 = {s.trace.id for s in result.retrieved[:5]}
    stored = {t.id: t for t in await memory.store.get([s.trace.id for s in result.retrieved])}
    assert {i for i, t in stored.items() if t.retrieval_count == 1} == top5
    assert stored[result.retrieved[5].trace.id].retrieval_count == 0
    assert memory.graph is not None
    co = memory.graph.edges(EdgeType.CO_ACTIVATED)
    assert len(co) == 10  # every pair among the top 5, at the learning rate
    assert {e.weight for e in co} == {0.1}
    assert len(await memory.store.load_edges()) == 10
    scores = [s.score for s in result.retrieved]
    assert scores == sorted(scores, reverse=True)


async def test_no_graph_no_links() -> None:
    memory = manager(graph=GraphConfig(disabled=True))
    await filled(memory)
    await memory.retrieve("sister", options=RetrievalOptions(scopes=scopes("u1")))
    assert memory.graph is None
    assert await memory.store.load_edges() == []


async def test_spreading_activation_adds_a_memory_the_vector_search_missed() -> None:
    memory = manager()
    ids = await filled(memory)
    assert memory.graph is not None
    # Link the sister fact to the report fact; the query shares nothing with the report.
    edge = MemoryEdge(ids[0], ids[5], EdgeType.SHARED_ENTITY, 1.0, START)
    await memory.store.save_edges(memory.graph.upsert_edge(edge))
    result = await memory.retrieve(
        "Where does my sister live?", options=RetrievalOptions(scopes=scopes("u1"), top_k=1)
    )
    assert result.diagnostics.vector_hits == 2
    assert result.diagnostics.graph_added >= 1
    assert result.retrieved[0].trace.id == ids[0]
    plain = manager(graph=GraphConfig(disabled=True))
    await filled(plain)
    baseline = await plain.retrieve(
        "Where does my sister live?", options=RetrievalOptions(scopes=scopes("u1"), top_k=1)
    )
    assert baseline.diagnostics.graph_added == 0


async def test_weights_override_and_neutral_mood() -> None:
    memory = manager()
    await filled(memory)
    options = RetrievalOptions(scopes=scopes("u1"), scoring_weights={"similarity": 0.0})
    result = await memory.retrieve("sister Paris", options=options)
    assert all(s.breakdown.similarity >= 0 for s in result.retrieved)
    assert all(
        s.score
        == pytest.approx(
            min(
                1.0,
                0.25 * s.breakdown.strength
                + 0.15 * s.breakdown.emotional_congruence
                + 0.10 * s.breakdown.recency
                + 0.10 * s.breakdown.graph_activation
                + 0.05 * s.breakdown.importance,
            )
        )
        for s in result.retrieved
    )
    with pytest.raises(ValueError, match="unknown"):
        await memory.retrieve("x", options=RetrievalOptions(scoring_weights={"nope": 1.0}))


async def test_hyde_searches_with_a_hypothesis_only_when_asked() -> None:
    asked: list[str] = []

    async def invoker(system: str, user: str) -> str:
        asked.append(user)
        return "I am allergic to peanuts."

    memory = manager(invoker=invoker)
    await filled(memory)
    plain = await memory.retrieve("food trouble", options=RetrievalOptions(scopes=scopes("u1")))
    assert not plain.diagnostics.hyde_used
    assert asked == []
    hyde = await memory.retrieve(
        "food trouble", options=RetrievalOptions(scopes=scopes("u1"), hyde=True)
    )
    assert hyde.diagnostics.hyde_used
    assert asked == ['Query: "food trouble"']
    assert hyde.retrieved[0].trace.content == FACTS[1]
    policy = await memory.retrieve(
        "food", options=RetrievalOptions(policy=RetrievalPolicy(hyde="always"))
    )
    assert policy.diagnostics.hyde_used


async def test_a_reranker_blends_seventy_thirty() -> None:
    async def reranker(query: str, texts: Sequence[str]) -> list[float]:
        return [1.0 if "report" in t else 0.0 for t in texts]

    memory = manager(reranker=reranker, graph=GraphConfig(disabled=True))
    await filled(memory)
    plain = manager(graph=GraphConfig(disabled=True))
    await filled(plain)
    options = RetrievalOptions(scopes=scopes("u1"), top_k=6)
    before = {
        s.trace.content: s.score
        for s in (await plain.retrieve("sister", options=options)).retrieved
    }
    after = await memory.retrieve("sister", options=options)
    assert after.diagnostics.reranked
    for item in after.retrieved:
        opinion = 1.0 if "report" in item.trace.content else 0.0
        assert item.score == pytest.approx(0.7 * before[item.trace.content] + 0.3 * opinion)


# -- scopes -------------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.sampled_from(["alice", "bob", "carol"]), st.sampled_from(FACTS)),
        min_size=1,
        max_size=12,
    ),
    st.sampled_from(["alice", "bob", "carol"]),
    st.sampled_from(FACTS),
)
def test_no_user_ever_recalls_another_users_memories(
    writes: list[tuple[str, str]], reader: str, query: str
) -> None:
    import asyncio

    async def scenario() -> None:
        memory = manager(mechanisms={})
        for user, text in writes:
            await memory.encode(text, scope_id=user)
        await memory.run_consolidation()  # links, clusters: nothing may cross users on recall
        result = await memory.retrieve(query, options=RetrievalOptions(scopes=scopes(reader)))
        assert all(s.trace.scope_id == reader for s in result.retrieved)
        context = await memory.assemble_for_prompt(
            query, options=RetrievalOptions(scopes=scopes(reader))
        )
        owned = {
            t.id
            for t in await memory.store.list_traces(
                __import__("agentos.memory.store", fromlist=["TraceFilter"]).TraceFilter(
                    scopes=scopes(reader)
                )
            )
        }
        assert set(context.included_memory_ids) <= owned

    asyncio.run(scenario())


# -- prompt assembly, observation, consolidation -------------------------------------------------


async def test_assemble_for_prompt_within_its_budget() -> None:
    memory = manager()
    await filled(memory)
    context = await memory.assemble_for_prompt(
        "What am I allergic to?", 1600, options=RetrievalOptions(scopes=scopes("u1"))
    )
    assert "## Recent Experiences" in context.context_text
    assert "I am allergic to peanuts." in context.context_text
    assert context.tokens_used <= 1600
    small = await memory.assemble_for_prompt(
        "What am I allergic to?", 60, options=RetrievalOptions(scopes=scopes("u1"))
    )
    assert small.tokens_used <= 60
    assert len(small.included_memory_ids) < len(context.included_memory_ids)
    empty = await memory.assemble_for_prompt(
        "anything", options=RetrievalOptions(scopes=scopes("x"))
    )
    assert empty.context_text == ""


async def test_observe_reflects_into_the_observing_scope() -> None:
    async def invoker(system: str, user: str) -> str:
        if "reflect" in system.lower() or "consolidat" in system.lower():
            return (
                '{"type": "semantic", "scope": "user", "content": "The user is allergic to '
                'peanuts.", "confidence": 0.9, "entities": [], "tags": ["health"], '
                '"consumed_notes": []}'
            )
        return '{"type": "factual", "content": "Allergic to peanuts", "importance": 0.8}'

    from agentos.memory.observer import ObserverConfig
    from agentos.memory.reflector import ReflectorConfig

    memory = manager(
        invoker=invoker,
        observer=ObserverConfig(activation_threshold_messages=1),
        reflector=ReflectorConfig(activation_threshold_notes=1),
    )
    encoded = await memory.observe("user", "I'm allergic to peanuts", scope_id="u1")
    assert [t.content for t in encoded] == ["The user is allergic to peanuts."]
    assert encoded[0].scope_id == "u1"
    assert encoded[0].provenance.source_type in (SourceType.REFLECTION, SourceType.OBSERVATION)
    assert await manager().observe("user", "no invoker: nothing observed") == []


async def test_consolidation_runs_on_demand_and_on_the_interval() -> None:
    clock = FakeClock()
    memory = manager(clock)
    await memory.encode("We visited Paris in May.", scope_id="u1")
    clock.advance(60)
    await memory.encode("Paris was rainy all week.", scope_id="u1")
    result = await memory.run_consolidation()
    assert result.edges_created >= 1
    assert memory.graph is not None
    assert memory.graph.edges(EdgeType.SHARED_ENTITY)
    memory.start()
    await clock.advance_and_settle(3600)
    assert (await memory.health())["consolidation_running"]
    await memory.shutdown()
    with pytest.raises(Exception, match="shut down"):
        await memory.retrieve("x")


# -- restart from SQLite ------------------------------------------------------------------------


async def test_a_restart_from_sqlite_answers_with_the_same_ranking_and_scores(
    tmp_path: Path,
) -> None:
    import sqlite3

    path, copy = tmp_path / "memory.db", tmp_path / "restarted.db"
    clock = FakeClock()
    old = manager(clock, store=SQLiteMemoryStore(path=path), mechanisms={})
    await filled(old)
    await old.retrieve("sister", options=RetrievalOptions(scopes=scopes("u1")))
    await old.run_consolidation()
    clock.advance(2 * DAY)
    # The new process starts from the file as the old one left it at this moment.
    with sqlite3.connect(path) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    options = RetrievalOptions(scopes=scopes("u1"), top_k=4)
    expected = await old.retrieve(
        "What does my sister do?", pad=PAD(0.3, 0.1, 0.0), options=options
    )
    new = manager(clock, store=SQLiteMemoryStore(path=copy), mechanisms={})
    answer = await new.retrieve("What does my sister do?", pad=PAD(0.3, 0.1, 0.0), options=options)
    assert [(s.trace.id, s.score) for s in answer.retrieved] == [
        (s.trace.id, s.score) for s in expected.retrieved
    ]
    assert answer.retrieved[0].trace.content == FACTS[0]
    assert new.graph is not None
    assert old.graph is not None
    assert {e.key() for e in new.graph.edges()} == {e.key() for e in old.graph.edges()}
    await old.shutdown()
    await new.shutdown()


async def test_mood_congruence_reaches_the_score() -> None:
    memory = manager(graph=GraphConfig(disabled=True))
    happy = await memory.encode(
        "I won the prize and I am so happy!", scope_id="u1", pad=PAD(0.8, 0.5, 0.0)
    )
    options = RetrievalOptions(scopes=scopes("u1"))
    glad = await memory.retrieve("prize", pad=PAD(0.9, 0.0, 0.0), options=options)
    neutral = await memory.retrieve(
        "prize",
        pad=PAD(0.9, 0.0, 0.0),
        options=RetrievalOptions(scopes=scopes("u1"), neutral_mood=True),
    )
    [with_mood] = [s for s in glad.retrieved if s.trace.id == happy.id]
    [without] = [s for s in neutral.retrieved if s.trace.id == happy.id]
    assert with_mood.breakdown.emotional_congruence > 0
    assert without.breakdown.emotional_congruence == 0
    assert happy.type is MemoryType.EPISODIC
