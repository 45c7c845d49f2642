"""Each of the eight mechanisms on and off through the manager's public calls: the change in a
retrieval, a prompt's memory context or a stored field is the amount the defaults and the
personality scaling give (issue 6, item 3; reference §1.18)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from agentos.memory.config import CognitiveMemoryConfig, RetrievalOptions
from agentos.memory.graph import GraphConfig
from agentos.memory.manager import CognitiveMemoryManager
from agentos.memory.trace import DAY, PAD, MemoryScope, MemoryTrace, SourceType
from agentos.testing import FakeClock, HashEmbedder

U1 = [(MemoryScope.USER, "u1")]


def manager(clock: FakeClock, mechanisms: Any, **config: Any) -> CognitiveMemoryManager:
    return CognitiveMemoryManager(
        CognitiveMemoryConfig(
            embedder=HashEmbedder(384),
            clock=clock,
            mechanisms=mechanisms,
            graph=config.pop("graph", GraphConfig(disabled=True)),
            **config,
        )
    )


async def stored(memory: CognitiveMemoryManager, trace: MemoryTrace) -> MemoryTrace:
    [found] = await memory.store.get([trace.id])
    return found


def off(name: str) -> dict[str, Any]:
    return {name: {"enabled": False}}


# -- reconsolidation ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mechanisms", "traits", "valence"),
    [
        ({}, None, 0.05 * 0.5),  # drift 0.05 of the way to the mood's valence 0.5
        ({}, {"emotionality": 1.0}, 0.05 * 1.5 * 0.5),  # times (0.5 + emotionality)
        (off("reconsolidation"), None, 0.0),
    ],
)
async def test_reconsolidation_drifts_a_recalled_memory_toward_the_mood(
    mechanisms: Any, traits: dict[str, float] | None, valence: float
) -> None:
    memory = manager(FakeClock(), mechanisms, traits=traits)
    trace = await memory.encode("The table is by the door.", scope_id="u1", content_sentiment=0.0)
    await memory.retrieve("table", pad=PAD(0.5, 0.0, 0.0), options=RetrievalOptions(scopes=U1))
    assert (await stored(memory, trace)).emotional_context.valence == pytest.approx(valence)


# -- retrieval-induced forgetting ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("mechanisms", "traits", "factor"),
    [
        ({}, None, 0.88),
        ({}, {"conscientiousness": 1.0}, 1 - 0.12 * 1.3),
        (off("retrieval_induced_forgetting"), None, 1.0),
    ],
)
async def test_rif_weakens_the_near_miss_a_retrieval_passed_over(
    mechanisms: Any, traits: dict[str, float] | None, factor: float
) -> None:
    memory = manager(FakeClock(), mechanisms, traits=traits)
    await memory.encode("my sister lives in paris near the river", scope_id="u1")
    rival = await memory.encode("my sister lives in paris near the park", scope_id="u1")
    before = rival.stability
    result = await memory.retrieve(
        "my sister lives in paris near the river", options=RetrievalOptions(scopes=U1, top_k=1)
    )
    assert result.retrieved[0].trace.id != rival.id
    assert (await stored(memory, rival)).stability == pytest.approx(before * factor)


# -- involuntary recall -------------------------------------------------------------------------


class _Lucky(random.Random):
    def random(self) -> float:
        return 0.0  # always under the recall probability


@pytest.mark.parametrize(
    ("mechanisms", "recalled"), [({}, True), (off("involuntary_recall"), False)]
)
async def test_involuntary_recall_surfaces_an_old_memory_in_the_prompt(
    mechanisms: Any, recalled: bool
) -> None:
    clock = FakeClock()
    memory = manager(clock, mechanisms, rng=_Lucky())
    old = await memory.encode(
        "We climbed Mont Blanc together at dawn!", scope_id="u1", pad=PAD(0.9, 0.0, 0.0)
    )
    clock.advance(30 * DAY)
    await memory.encode("The invoice number is 4471.", scope_id="u1")
    context = await memory.assemble_for_prompt(
        "invoice number", options=RetrievalOptions(scopes=U1, top_k=1)
    )
    assert ("## Something This Reminds Me Of" in context.context_text) is recalled
    assert (old.id in context.included_memory_ids) is recalled


# -- feeling of knowing -------------------------------------------------------------------------


@pytest.mark.parametrize(("mechanisms", "signals"), [({}, True), (off("metacognitive_fok"), False)])
async def test_feeling_of_knowing_signals_near_misses(mechanisms: Any, signals: bool) -> None:
    memory = manager(FakeClock(), mechanisms)
    for text in (
        "my sister lives in paris",
        "my sister works in paris",
        "my brother lives in rome",
    ):
        await memory.encode(text, scope_id="u1")
    result = await memory.retrieve(
        "my sister lives in paris", options=RetrievalOptions(scopes=U1, top_k=1)
    )
    cutoff = result.retrieved[0].score
    assert bool(result.feeling_of_knowing) is signals
    for signal in result.feeling_of_knowing:
        assert signal.trace_id != result.retrieved[0].trace.id
        assert 0.0 < signal.fok <= 1.0
    assert cutoff > 0.3


# -- temporal gist, source-confidence decay, emotion regulation (consolidation) -----------------


@pytest.mark.parametrize(("mechanisms", "gisted"), [({}, True), (off("temporal_gist"), False)])
async def test_temporal_gist_at_consolidation(mechanisms: Any, gisted: bool) -> None:
    clock = FakeClock()
    memory = manager(clock, mechanisms)
    long = " ".join(f"word{i}" for i in range(40))
    trace = await memory.encode(long, scope_id="u1", content_sentiment=0.0)
    trace.retrieval_count = 2  # retrieved twice, and so kept well: it is not pruned
    trace.stability = 365 * DAY
    await memory.store.update([trace])
    clock.advance(61 * DAY)
    await memory.run_consolidation()
    after = await stored(memory, trace)
    if gisted:
        assert after.content == " ".join(f"word{i}" for i in range(30)) + "..."
        assert after.metadata["gisted"]
    else:
        assert after.content == long


@pytest.mark.parametrize(
    ("mechanisms", "traits", "factor"),
    [({}, None, 0.80), ({}, {"honesty": 1.0}, 0.65), (off("source_confidence_decay"), None, 1.0)],
)
async def test_source_confidence_decay_at_consolidation(
    mechanisms: Any, traits: dict[str, float] | None, factor: float
) -> None:
    clock = FakeClock()
    memory = manager(clock, mechanisms, traits=traits)
    inference = await memory.encode(
        "The user probably prefers tea.", scope_id="u1", source_type=SourceType.AGENT_INFERENCE
    )
    clock.advance(60)  # before its first spaced repetition is due (an hour)
    await memory.run_consolidation()
    assert (await stored(memory, inference)).stability == pytest.approx(
        inference.stability * factor
    )


@pytest.mark.parametrize(("mechanisms", "scale"), [({}, 0.85), (off("emotion_regulation"), 1.0)])
async def test_emotion_regulation_reappraises_an_intense_memory(
    mechanisms: Any, scale: float
) -> None:
    clock = FakeClock()
    memory = manager(clock, mechanisms)
    trace = await memory.encode(
        "It went well.", scope_id="u1", content_sentiment=1.0, pad=PAD(1.0, 0.4, 0.0)
    )
    emotion = trace.emotional_context
    assert (emotion.valence, emotion.arousal) == pytest.approx((1.0, 0.7))
    clock.advance(60)
    await memory.run_consolidation()
    after = (await stored(memory, trace)).emotional_context
    assert (after.valence, after.arousal) == pytest.approx((1.0 * scale, 0.7 * scale))


# -- schema encoding ----------------------------------------------------------------------------


@pytest.mark.parametrize(("mechanisms", "ratio"), [({}, 0.85), (off("schema_encoding"), 1.0)])
async def test_schema_encoding_discounts_a_memory_that_fits_a_known_cluster(
    mechanisms: Any, ratio: float
) -> None:
    clock = FakeClock()
    memory = manager(clock, mechanisms, graph=GraphConfig())
    reference = manager(FakeClock(), None)
    for day in range(5):
        await memory.encode(f"We walked around Paris on day {day} of the trip.", scope_id="u1")
        clock.advance(60)
    await memory.run_consolidation()  # links the Paris memories and sets the cluster's centroid
    text = "We walked around Paris on day 9 of the trip."
    fitted = await memory.encode(text, scope_id="u1")
    plain = await reference.encode(text, scope_id="u1")
    assert fitted.encoding_strength == pytest.approx(plain.encoding_strength * ratio)
