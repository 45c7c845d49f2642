"""The consolidation pipeline and its loop (reference §1.20, §3 case 29; DESIGN.md §5.10).

Times are seconds on a `FakeClock`; the store is the in-memory one and the graph the default
backend, kept in step as the memory manager keeps them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from agentos.memory.consolidation import (
    SCHEMA_SYSTEM_PROMPT,
    ConsolidationConfig,
    ConsolidationPipeline,
    ConsolidationResult,
)
from agentos.memory.consolidation_loop import ConsolidationLoop
from agentos.memory.edge import EdgeType, MemoryEdge
from agentos.memory.graph_dict import KnowledgeGraphMemoryGraph
from agentos.memory.in_memory_store import InMemoryMemoryStore
from agentos.memory.mechanisms import CognitiveMechanismsEngine, resolve_mechanisms_config
from agentos.memory.store import TraceFilter
from agentos.memory.trace import (
    DAY,
    HOUR,
    MINUTE,
    EmotionalContext,
    MemoryScope,
    MemoryTrace,
    MemoryType,
    Provenance,
    SourceType,
)
from agentos.testing import FakeClock

DIM = 4


class Memory:
    """A store, a graph and a clock, as a memory manager holds them."""

    def __init__(self) -> None:
        self.clock = FakeClock()
        self.store = InMemoryMemoryStore()
        self.graph = KnowledgeGraphMemoryGraph()
        self.count = 0

    @property
    def now(self) -> float:
        return self.clock.timestamp()

    async def add(
        self,
        *,
        age: float = HOUR,
        entities: Sequence[str] = (),
        confidence: float = 0.8,
        scope: MemoryScope = MemoryScope.USER,
        scope_id: str = "u1",
        vector: Sequence[float] | None = None,
        **fields: Any,
    ) -> MemoryTrace:
        self.count += 1
        values: dict[str, Any] = {
            "id": f"t{self.count:02d}",
            "type": MemoryType.EPISODIC,
            "scope": scope,
            "scope_id": scope_id,
            "content": f"memory number {self.count}",
            "created_at": self.now - age,
            "encoding_strength": 0.8,
            "stability": 365 * DAY,  # nothing fades unless a test says so
            "provenance": Provenance(confidence=confidence),
            "entities": list(entities),
        }
        values.update(fields)
        trace = MemoryTrace(**values)
        if vector is None:
            vector = [1.0 if i == self.count % DIM else 0.1 for i in range(DIM)]
        await self.store.add(trace, vector)
        self.graph.add_node(trace.id)
        return trace

    async def contradict(self, a: MemoryTrace, b: MemoryTrace) -> None:
        edge = MemoryEdge(a.id, b.id, EdgeType.CONTRADICTS, 1.0, self.now)
        await self.store.save_edges(self.graph.upsert_edge(edge))

    def pipeline(self, **kwargs: Any) -> ConsolidationPipeline:
        return ConsolidationPipeline(self.store, self.graph, clock=self.clock, **kwargs)

    async def get(self, trace_id: str) -> MemoryTrace:
        [trace] = await self.store.get([trace_id])
        return trace

    async def stored_edges(self, edge_type: EdgeType | None = None) -> set[tuple[Any, ...]]:
        return {
            (*e.key(), e.weight)
            for e in await self.store.load_edges()
            if edge_type is None or e.type == edge_type
        }


def engine() -> CognitiveMechanismsEngine:
    config = resolve_mechanisms_config({})
    assert config is not None
    return CognitiveMechanismsEngine(config)


class FakeModel:
    """A model invoker: counts calls, answers a fixed summary, optionally waits to be released."""

    def __init__(self, reply: str = "The user travels to Paris often.") -> None:
        self.reply = reply
        self.calls: list[tuple[str, str]] = []
        self.release: asyncio.Event | None = None

    async def __call__(self, system: str, user: str) -> str:
        self.calls.append((system, user))
        if self.release is not None:
            await self.release.wait()
        return self.reply


async def fake_embed(text: str) -> list[float]:
    return [0.5, 0.5, 0.5, 0.5]


async def paris_cluster(memory: Memory, size: int = 5) -> list[MemoryTrace]:
    # An hour apart: linked by the shared entity only (a chain of size - 1 edges).
    return [
        await memory.add(age=(10 - i) * HOUR, entities=["Paris"], content=f"Paris trip {i}")
        for i in range(size)
    ]


# -- case 29 -------------------------------------------------------------------------------------


async def test_case_29_replay_links_shared_entity_and_temporal_sequence() -> None:
    memory = Memory()
    a = await memory.add(age=2 * HOUR, entities=["Paris"])
    b = await memory.add(age=2 * HOUR - 2 * MINUTE, entities=["paris"])
    result = await memory.pipeline().run()
    assert result.edges_created == 2
    low, high = sorted((a.id, b.id))
    expected = {
        (low, high, EdgeType.SHARED_ENTITY, 0.5),
        (low, high, EdgeType.TEMPORAL_SEQUENCE, 0.3),
    }
    assert await memory.stored_edges() == expected
    assert {(*e.key(), e.weight) for e in memory.graph.edges()} == expected


async def test_replay_ignores_old_traces_and_wide_gaps() -> None:
    memory = Memory()
    await memory.add(age=25 * HOUR, entities=["Paris"])  # outside the 24 h window
    await memory.add(age=25 * HOUR - MINUTE, entities=["Paris"])
    await memory.add(age=3 * HOUR)
    await memory.add(age=3 * HOUR - 5 * MINUTE)  # exactly 300 s apart: not < 300 s
    result = await memory.pipeline().run()
    assert result.edges_created == 0
    assert await memory.store.load_edges() == []


@pytest.mark.parametrize(
    ("honesty", "older_conf", "newer_conf", "deleted"),
    [
        (0.5, 0.9, 0.6, "newer"),  # the lower confidence loses (gap 0.3 > 0.2)
        (0.5, 0.6, 0.9, "older"),
        (0.5, 0.8, 0.7, None),  # gap 0.1: both stay
        (0.8, 0.9, 0.6, "older"),  # honesty > 0.6: the newer wins whatever the confidences
        (0.8, 0.8, 0.7, "older"),
    ],
)
async def test_case_29_conflicts(
    honesty: float, older_conf: float, newer_conf: float, deleted: str | None
) -> None:
    memory = Memory()
    older = await memory.add(age=10 * HOUR, confidence=older_conf)
    newer = await memory.add(age=5 * HOUR, confidence=newer_conf)
    await memory.contradict(older, newer)
    result = await memory.pipeline(traits={"honesty": honesty}).run()
    stored = {"older": await memory.get(older.id), "newer": await memory.get(newer.id)}
    if deleted is None:
        assert result.conflicts_resolved == 0
        assert all(t.is_active for t in stored.values())
        assert all(t.provenance.contradicted_by == [] for t in stored.values())
        assert await memory.stored_edges(EdgeType.CONTRADICTS)
        return
    kept = "newer" if deleted == "older" else "older"
    assert result.conflicts_resolved == 1
    assert not stored[deleted].is_active
    assert stored[kept].is_active
    assert stored[deleted].provenance.contradicted_by == [stored[kept].id]
    assert stored[kept].provenance.contradicted_by == [stored[deleted].id]
    assert not memory.graph.has_node(stored[deleted].id)
    assert await memory.store.load_edges() == []


# -- pruning -------------------------------------------------------------------------------------


async def test_decay_sweep_soft_deletes_faint_traces_and_their_edges() -> None:
    memory = Memory()
    faint = await memory.add(age=2 * DAY, encoding_strength=0.5, stability=HOUR)
    vivid = await memory.add(
        age=2 * DAY,
        encoding_strength=0.5,
        stability=HOUR,
        emotional_context=EmotionalContext(intensity=0.5),  # emotional: never pruned
    )
    kept = await memory.add(age=2 * DAY)
    for other in (vivid, kept):
        edge = MemoryEdge(faint.id, other.id, EdgeType.CO_ACTIVATED, 0.4)
        await memory.store.save_edges(memory.graph.upsert_edge(edge))
    result = await memory.pipeline().run()
    assert result.pruned_count == 1
    assert result.total_processed == 3
    assert not (await memory.get(faint.id)).is_active
    assert (await memory.get(vivid.id)).is_active
    assert await memory.store.count(TraceFilter()) == 2
    assert not memory.graph.has_node(faint.id)
    assert await memory.store.load_edges() == []


# -- schema integration --------------------------------------------------------------------------


async def test_schema_centroids_without_invoker_and_no_summary() -> None:
    memory = Memory()
    members = await paris_cluster(memory)
    mechanisms = engine()
    result = await memory.pipeline(engine=mechanisms, embed=fake_embed).run()
    assert result.clusters == 1
    assert result.schemas_created == 0
    centroids = mechanisms.cluster_centroids
    assert len(centroids) == 1
    vectors = await memory.store.embeddings([t.id for t in members])
    mean = np.mean(np.vstack(list(vectors.values())), axis=0)
    nearest = centroids.nearest(mean)
    assert nearest is not None
    assert nearest[1] == pytest.approx(1.0)
    assert await memory.store.count(TraceFilter(tags=frozenset({"schema"}))) == 0


async def test_four_traces_are_no_cluster_and_clear_the_centroids() -> None:
    memory = Memory()
    await paris_cluster(memory, size=4)
    mechanisms = engine()
    mechanisms.set_cluster_centroids({"stale": [1.0, 0.0, 0.0, 0.0]})
    result = await memory.pipeline(engine=mechanisms).run()
    assert result.clusters == 0
    assert len(mechanisms.cluster_centroids) == 0


async def test_schema_summary_with_invoker_and_embed_once() -> None:
    memory = Memory()
    members = await paris_cluster(memory)
    model = FakeModel()
    pipeline = memory.pipeline(engine=engine(), invoker=model, embed=fake_embed)
    first = await pipeline.run()
    assert first.schemas_created == 1
    assert first.edges_created == 4 + 5  # the entity chain, then one instance link per member
    [schema] = await memory.store.list_traces(TraceFilter(tags=frozenset({"schema"})))
    assert schema.content == "The user travels to Paris often."
    assert schema.type is MemoryType.SEMANTIC
    assert (schema.scope, schema.scope_id) == (MemoryScope.USER, "u1")
    assert schema.encoding_strength == 0.7
    assert schema.stability == 7200.0
    assert schema.provenance.source_type is SourceType.REFLECTION
    assert schema.provenance.confidence == 0.8
    assert schema.tags == ["schema", "consolidated"]
    assert schema.entities == ["Paris"]
    instances = await memory.stored_edges(EdgeType.SCHEMA_INSTANCE)
    assert instances == {
        (*sorted((schema.id, m.id)), EdgeType.SCHEMA_INSTANCE, 0.6) for m in members
    }
    assert len(model.calls) == 1
    system, user = model.calls[0]
    assert system == SCHEMA_SYSTEM_PROMPT
    assert all(f"Paris trip {i}" in user for i in range(5))

    second = await pipeline.run()
    assert second.schemas_created == 0
    assert second.edges_created == 0
    assert len(model.calls) == 1
    assert await memory.store.count(TraceFilter(tags=frozenset({"schema"}))) == 1


async def test_a_grown_cluster_gets_a_new_schema_that_supersedes_the_old() -> None:
    memory = Memory()
    await paris_cluster(memory)
    model = FakeModel()
    pipeline = memory.pipeline(invoker=model, embed=fake_embed)
    await pipeline.run()
    [old] = await memory.store.list_traces(TraceFilter(tags=frozenset({"schema"})))
    await memory.add(age=MINUTE, entities=["Paris"])
    result = await pipeline.run()
    assert result.schemas_created == 1
    [new] = await memory.store.list_traces(TraceFilter(tags=frozenset({"schema"})))
    assert new.id != old.id
    retired = await memory.get(old.id)
    assert not retired.is_active
    assert retired.metadata["superseded_by"] == new.id
    assert len(await memory.stored_edges(EdgeType.SCHEMA_INSTANCE)) == 6


async def test_a_failing_model_writes_no_schema() -> None:
    memory = Memory()
    await paris_cluster(memory)

    async def broken(system: str, user: str) -> str:
        raise RuntimeError("model down")

    result = await memory.pipeline(invoker=broken, embed=fake_embed).run()
    assert result.schemas_created == 0
    assert result.edges_created == 4  # the rest of the cycle ran and was persisted
    assert len(await memory.store.load_edges()) == 4


# -- spaced repetition, mechanisms ---------------------------------------------------------------


async def test_spaced_repetition_reinforces_due_traces() -> None:
    memory = Memory()
    now = memory.now
    due = await memory.add(age=2 * DAY, next_reinforcement_at=now - 1.0, stability=10 * DAY)
    later = await memory.add(age=2 * DAY, next_reinforcement_at=now + 1.0)
    result = await memory.pipeline().run()
    assert result.reinforced_count == 1
    stored = await memory.get(due.id)
    assert stored.retrieval_count == 1
    assert stored.reinforcement_interval == 2 * HOUR
    assert stored.next_reinforcement_at == now + 2 * HOUR
    assert stored.encoding_strength == pytest.approx(0.9)
    assert (await memory.get(later.id)).retrieval_count == 0


async def test_mechanisms_gist_an_old_twice_retrieved_trace() -> None:
    memory = Memory()
    words = " ".join(f"w{i}" for i in range(40))
    old = await memory.add(
        age=61 * DAY,
        content=words,
        retrieval_count=2,
        encoding_strength=0.5,
        last_accessed_at=memory.now - DAY,
    )
    once = await memory.add(age=61 * DAY, content=words, retrieval_count=1)
    result = await memory.pipeline(engine=engine()).run()
    assert result.gisted == 1
    stored = await memory.get(old.id)
    assert stored.content == " ".join(f"w{i}" for i in range(30)) + "..."
    assert stored.encoding_strength == pytest.approx(0.4)
    assert stored.metadata["gisted"] is True
    assert (await memory.get(once.id)).content == words


async def test_without_an_engine_no_mechanism_runs() -> None:
    memory = Memory()
    trace = await memory.add(age=61 * DAY, content="a b c", retrieval_count=2)
    result = await memory.pipeline().run()
    assert (result.gisted, result.source_decayed, result.regulated) == (0, 0, 0)
    assert (await memory.get(trace.id)).content == "a b c"


# -- scopes, batching, idempotence ---------------------------------------------------------------


@pytest.mark.parametrize(
    "other",
    [(MemoryScope.USER, "u2"), (MemoryScope.THREAD, "u1")],
)
async def test_replay_links_only_within_one_scope(other: tuple[MemoryScope, str]) -> None:
    memory = Memory()
    await memory.add(age=HOUR, entities=["Paris"])
    await memory.add(age=HOUR - MINUTE, entities=["Paris"], scope=other[0], scope_id=other[1])
    result = await memory.pipeline().run()
    assert result.edges_created == 0
    assert await memory.store.load_edges() == []


async def test_consolidation_covers_every_scope() -> None:
    memory = Memory()
    for scope_id in ("session-1", "session-2"):
        await memory.add(age=HOUR, entities=["Rome"], scope=MemoryScope.THREAD, scope_id=scope_id)
        await memory.add(
            age=HOUR - MINUTE, entities=["Rome"], scope=MemoryScope.THREAD, scope_id=scope_id
        )
    result = await memory.pipeline().run()
    assert result.total_processed == 4
    assert result.edges_created == 4


async def test_large_stores_are_covered_over_several_cycles() -> None:
    memory = Memory()
    now = memory.now
    for i in range(3):
        await memory.add(age=(10 - i) * DAY, next_reinforcement_at=now - 1.0)
    pipeline = memory.pipeline(config=ConsolidationConfig(max_traces_per_cycle=2))
    first = await pipeline.run()
    second = await pipeline.run()
    assert (first.total_processed, first.reinforced_count) == (2, 2)
    assert second.reinforced_count == 1
    assert all(t.retrieval_count == 1 for t in await memory.store.list_traces(TraceFilter()))


async def test_conflicts_outside_the_cycles_page_are_resolved() -> None:
    memory = Memory()
    await memory.add(age=10 * DAY)
    older = await memory.add(age=9 * DAY, confidence=0.9)
    newer = await memory.add(age=8 * DAY, confidence=0.5)
    await memory.contradict(older, newer)
    pipeline = memory.pipeline(config=ConsolidationConfig(max_traces_per_cycle=1))
    result = await pipeline.run()
    assert result.total_processed == 1
    assert result.conflicts_resolved == 1
    assert not (await memory.get(newer.id)).is_active
    assert (await memory.get(older.id)).provenance.contradicted_by == [newer.id]


async def test_a_second_run_creates_no_new_edges() -> None:
    memory = Memory()
    await paris_cluster(memory)
    a = await memory.add(age=HOUR, entities=["Oslo"])
    await memory.add(age=HOUR - MINUTE, entities=["Oslo"])
    older = await memory.add(age=20 * HOUR, confidence=0.8)
    await memory.contradict(older, a)  # both stay: confidences 0.8 / 0.8
    pipeline = memory.pipeline(engine=engine())
    first = await pipeline.run()
    edges = await memory.stored_edges()
    traces = await memory.store.list_traces(TraceFilter(active_only=False))
    second = await pipeline.run()
    assert first.edges_created == 4 + 2
    assert second == ConsolidationResult(total_processed=first.total_processed, clusters=1)
    assert await memory.stored_edges() == edges
    assert await memory.store.list_traces(TraceFilter(active_only=False)) == traces


async def test_a_disabled_pipeline_does_nothing() -> None:
    memory = Memory()
    await paris_cluster(memory)
    pipeline = memory.pipeline(config=ConsolidationConfig(enabled=False))
    assert await pipeline.run() == ConsolidationResult()
    loop = ConsolidationLoop(pipeline, memory.clock)
    loop.start()
    assert not loop.running


def test_config_rejects_values_out_of_range() -> None:
    with pytest.raises(ValueError, match="interval"):
        ConsolidationConfig(interval=0)
    with pytest.raises(ValueError, match="min_cluster_size"):
        ConsolidationConfig(min_cluster_size=1)
    with pytest.raises(ValueError, match="schema_weight"):
        ConsolidationConfig(schema_weight=1.5)


# -- the loop ------------------------------------------------------------------------------------


async def settle(clock: FakeClock, seconds: float) -> None:
    await clock.advance_and_settle(seconds)
    for _ in range(10):
        await asyncio.sleep(0)


async def test_loop_runs_a_cycle_every_interval_on_the_clock() -> None:
    memory = Memory()
    loop = ConsolidationLoop(memory.pipeline(), memory.clock, HOUR)
    loop.start()
    try:
        await settle(memory.clock, HOUR - 1)
        assert loop.cycles == 0
        await settle(memory.clock, 1)
        await settle(memory.clock, HOUR)
        await settle(memory.clock, HOUR)
        assert loop.cycles == 3
        assert loop.last_result is not None
    finally:
        await loop.stop()
    assert not loop.running
    assert memory.clock.sleepers == 0


async def test_loop_runs_a_cycle_for_each_interval_of_a_jump() -> None:
    memory = Memory()
    loop = ConsolidationLoop(memory.pipeline(), memory.clock, HOUR)
    loop.start()
    try:
        await settle(memory.clock, 3 * HOUR)
        assert loop.cycles == 3
        await settle(memory.clock, HOUR - 1)
        assert loop.cycles == 3  # the fourth is due at 4 h
    finally:
        await loop.stop()


async def test_loop_interval_defaults_to_the_config() -> None:
    memory = Memory()
    pipeline = memory.pipeline(config=ConsolidationConfig(interval=10 * MINUTE))
    loop = ConsolidationLoop(pipeline, memory.clock)
    assert loop.interval == 10 * MINUTE
    with pytest.raises(ValueError, match="interval"):
        ConsolidationLoop(pipeline, memory.clock, 0)


async def test_a_failing_cycle_is_logged_and_the_loop_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    memory = Memory()
    store = memory.store
    failures = [RuntimeError("disk on fire")]
    list_traces = store.list_traces

    async def flaky(where: TraceFilter, limit: int | None = None) -> list[MemoryTrace]:
        if failures:
            raise failures.pop()
        return await list_traces(where, limit)

    store.list_traces = flaky  # type: ignore[method-assign]
    loop = ConsolidationLoop(memory.pipeline(), memory.clock, HOUR)
    loop.start()
    try:
        with caplog.at_level(logging.ERROR, logger="agentos.memory.consolidation_loop"):
            await settle(memory.clock, HOUR)
        assert "consolidation cycle failed" in caplog.text
        assert loop.cycles == 0
        assert loop.running
        await settle(memory.clock, HOUR)
        assert loop.cycles == 1
    finally:
        await loop.stop()


async def test_stop_while_a_cycle_waits_persists_nothing() -> None:
    memory = Memory()
    await paris_cluster(memory)
    model = FakeModel()
    model.release = asyncio.Event()  # never set: the model never answers
    loop = ConsolidationLoop(memory.pipeline(invoker=model, embed=fake_embed), memory.clock, HOUR)
    loop.start()
    await settle(memory.clock, HOUR)
    assert len(model.calls) == 1  # the cycle is waiting on the model
    assert memory.graph.edges()  # the replay's links exist in the graph only
    await loop.stop()
    assert not loop.running
    assert loop.cycles == 0
    assert await memory.store.load_edges() == []
    assert memory.graph.edges() == []  # reloaded from the store
    assert await memory.store.count(TraceFilter(tags=frozenset({"schema"}))) == 0
    await loop.stop()  # idempotent


async def test_run_now_never_overlaps_a_cycle() -> None:
    memory = Memory()
    await paris_cluster(memory)
    model = FakeModel()
    model.release = asyncio.Event()
    loop = ConsolidationLoop(memory.pipeline(invoker=model, embed=fake_embed), memory.clock)
    first = asyncio.create_task(loop.run_now())
    second = asyncio.create_task(loop.run_now())
    for _ in range(10):
        await asyncio.sleep(0)
    assert len(model.calls) == 1  # the second cycle waits for the first
    model.release.set()
    results = await asyncio.gather(first, second)
    assert [r.schemas_created for r in results] == [1, 0]
    assert len(model.calls) == 1
    assert loop.cycles == 2
