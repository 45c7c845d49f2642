"""The encoding- and consolidation-time mechanisms, and each mechanism on and off via the engine.

Reference §3 cases 23 (schema encoding) and 24 (source decay), temporal gist as the spec words it
(retrieved at least twice, DESIGN.md §5.2) and emotion regulation. Times are seconds.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentos.memory.mechanisms import (
    ClusterCentroids,
    CognitiveMechanismsEngine,
    EmotionRegulationConfig,
    MechanismsConfig,
    SchemaEncodingConfig,
    ScoredCandidate,
    SourceConfidenceDecayConfig,
    TemporalGistConfig,
    apply_emotion_regulation,
    apply_schema_encoding,
    apply_source_confidence_decay,
    apply_temporal_gist,
    resolve_mechanisms_config,
)
from agentos.memory.mechanisms.temporal_gist import GIST_SYSTEM_PROMPT
from agentos.memory.trace import (
    DAY,
    HOUR,
    PAD,
    EmotionalContext,
    MemoryScope,
    MemoryTrace,
    MemoryType,
    Provenance,
    SourceType,
)

NOW = 1_800_000_000.0
FORTY_WORDS = " ".join(f"w{i}" for i in range(40))


def make_trace(trace_id: str = "t1", **fields: Any) -> MemoryTrace:
    base: dict[str, Any] = {
        "type": MemoryType.EPISODIC,
        "scope": MemoryScope.USER,
        "scope_id": "u1",
        "content": "a memory",
        "created_at": NOW,
        "encoding_strength": 0.5,
        "stability": HOUR,
    }
    base.update(fields)
    return MemoryTrace(id=trace_id, **base)


class FakeInvoker:
    """An async model invoker that records its prompts and answers from a script."""

    def __init__(self, reply: str | Exception = "Alice moved to Paris.") -> None:
        self.reply = reply
        self.calls: list[tuple[str, str]] = []

    async def __call__(self, system: str, user: str) -> str:
        self.calls.append((system, user))
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply


# --- temporal gist ----------------------------------------------------------------------------


def _due(trace_id: str = "old", **fields: Any) -> MemoryTrace:
    values: dict[str, Any] = {
        "created_at": NOW - 61 * DAY,
        "retrieval_count": 2,
        "content": FORTY_WORDS,
        "entities": ["Alice", "Paris"],
        "emotional_context": EmotionalContext(valence=0.6, arousal=0.7, gmi_mood="nostalgic"),
    }
    values.update(fields)
    return make_trace(trace_id, **values)


async def test_gist_without_an_invoker_keeps_the_first_thirty_words() -> None:
    trace = _due()
    gisted = await apply_temporal_gist([trace], TemporalGistConfig(), NOW)
    assert gisted == [trace]
    first_thirty = " ".join(f"w{i}" for i in range(30))
    assert trace.content == f"{first_thirty}... [nostalgic]"
    assert trace.encoding_strength == pytest.approx(0.4)
    assert trace.entities == ["Alice", "Paris"]
    assert trace.emotional_context.valence == 0.6
    assert trace.metadata["gisted"] is True
    assert (
        trace.metadata["original_content_sha256"]
        == hashlib.sha256(FORTY_WORDS.encode()).hexdigest()
    )
    assert trace.metadata["gisted_at"] == NOW
    assert trace.updated_at == NOW
    # A gist is made once.
    assert await apply_temporal_gist([trace], TemporalGistConfig(), NOW + DAY) == []


async def test_gist_with_an_invoker_asks_for_core_assertions() -> None:
    trace = _due()
    invoker = FakeInvoker("  Alice moved to Paris.  ")
    await apply_temporal_gist([trace], TemporalGistConfig(), NOW, invoker)
    assert trace.content == "Alice moved to Paris. [nostalgic]"
    ((system, user),) = invoker.calls
    assert system == GIST_SYSTEM_PROMPT
    assert user == (
        "Extract 2-3 core assertions from this memory. Keep it under 50 words.\n"
        "Entities: Alice, Paris.\n"
        "Preserve entity names.\n"
        f'Memory: "{FORTY_WORDS}"'
    )


@pytest.mark.parametrize("reply", [RuntimeError("model down"), "   "])
async def test_a_failed_or_empty_model_answer_falls_back_to_the_words(
    reply: str | Exception,
) -> None:
    trace = _due(content="short memory", emotional_context=EmotionalContext())
    await apply_temporal_gist([trace], TemporalGistConfig(), NOW, FakeInvoker(reply))
    assert trace.content == "short memory"  # no "..." when nothing was cut, no mood to keep
    assert trace.metadata["gisted"] is True


@pytest.mark.parametrize(
    "fields",
    [
        {"retrieval_count": 1},  # the spec's "retrieved at least twice" (the reference inverts it)
        {"created_at": NOW - 59 * DAY},
        {"type": MemoryType.PROCEDURAL},
        {"encoding_strength": 0.9},
        {"is_active": False},
        {"metadata": {"gisted": True}},
    ],
)
async def test_gist_leaves_traces_that_are_not_due(fields: dict[str, Any]) -> None:
    trace = _due(**fields)
    assert await apply_temporal_gist([trace], TemporalGistConfig(), NOW) == []
    assert trace.content == FORTY_WORDS


async def test_gist_off_and_without_preserving() -> None:
    trace = _due()
    assert await apply_temporal_gist([trace], TemporalGistConfig(enabled=False), NOW) == []
    assert trace.content == FORTY_WORDS
    bare = TemporalGistConfig(preserve_entities=False, preserve_emotional_context=False)
    invoker = FakeInvoker()
    await apply_temporal_gist([trace], bare, NOW, invoker)
    assert trace.content == "Alice moved to Paris."
    assert trace.entities == []
    assert trace.emotional_context == EmotionalContext()
    assert "Entities" not in invoker.calls[0][1]


async def test_gist_writes_at_most_twenty_per_cycle_oldest_first() -> None:
    traces = [_due(f"t{i}", created_at=NOW - (61 + i) * DAY) for i in range(25)]
    gisted = await apply_temporal_gist(traces, TemporalGistConfig(), NOW)
    assert [t.id for t in gisted] == [f"t{i}" for i in range(24, 4, -1)]


async def test_gist_is_not_scaled_by_personality() -> None:
    traits = dict.fromkeys(("openness", "emotionality", "honesty"), 1.0)
    engine = CognitiveMechanismsEngine(MechanismsConfig(), traits=traits)
    assert engine.config.temporal_gist == TemporalGistConfig()


# --- schema encoding (case 23) ----------------------------------------------------------------


def test_schema_congruent_trace_is_discounted_and_its_cluster_recorded() -> None:
    centroids = ClusterCentroids({"travel": [1.0, 0.0, 0.0], "food": [0.0, 0.0, 1.0]})
    trace = make_trace(encoding_strength=0.6)
    match = apply_schema_encoding(trace, [0.9, 0.1, 0.0], centroids, SchemaEncodingConfig())
    assert match is not None
    assert match.congruent
    assert match.cluster_id == "travel"
    assert trace.encoding_strength == pytest.approx(0.51)
    assert trace.metadata["schema_cluster_id"] == "travel"
    assert trace.metadata["schema_congruent"] is True


def test_schema_novel_trace_is_boosted_up_to_one() -> None:
    centroids = ClusterCentroids({"travel": [1.0, 0.0]})
    novel = make_trace(encoding_strength=0.5)
    match = apply_schema_encoding(novel, np.array([0.0, 1.0]), centroids, SchemaEncodingConfig())
    assert match is not None
    assert not match.congruent
    assert match.cluster_id is None
    assert novel.encoding_strength == pytest.approx(0.65)
    strong = make_trace(encoding_strength=0.9)
    apply_schema_encoding(strong, [0.0, 1.0], centroids, SchemaEncodingConfig())
    assert strong.encoding_strength == 1.0
    assert strong.metadata["schema_cluster_id"] is None


def test_schema_encoding_through_the_engine_off_and_with_openness() -> None:
    engine = CognitiveMechanismsEngine(MechanismsConfig(), traits={"openness": 1.0})
    trace = make_trace()
    assert engine.on_encoding(trace, [0.0, 1.0], NOW) is None  # no centroids yet
    assert trace.encoding_strength == 0.5
    engine.set_cluster_centroids({"travel": np.array([1.0, 0.0])})
    assert len(engine.cluster_centroids) == 1
    engine.on_encoding(trace, [0.0, 1.0], NOW)
    assert trace.encoding_strength == pytest.approx(0.5 * 1.3 * 1.2)
    assert trace.metadata["schema_encoded_at"] == NOW
    off = CognitiveMechanismsEngine(MechanismsConfig(schema_encoding=SchemaEncodingConfig(False)))
    off.set_cluster_centroids({"travel": [1.0, 0.0]})
    untouched = make_trace()
    assert off.on_encoding(untouched, [0.0, 1.0], NOW) is None
    assert untouched.encoding_strength == 0.5


def test_cluster_centroids_refuse_mixed_dimensions() -> None:
    with pytest.raises(ValueError, match="same dimension"):
        ClusterCentroids({"a": [1.0, 0.0], "b": [1.0, 0.0, 0.0]})
    with pytest.raises(ValueError, match="dimension 3"):
        ClusterCentroids({"a": [1.0, 0.0]}).nearest([1.0, 0.0, 0.0])
    assert ClusterCentroids({"zero": [0.0, 0.0]}).nearest([1.0, 0.0]) is None


# --- source-confidence decay (case 24) --------------------------------------------------------


def _sourced(trace_id: str, source: SourceType, **fields: Any) -> MemoryTrace:
    return make_trace(
        trace_id, stability=100.0, provenance=Provenance(source_type=source), **fields
    )


def test_source_decay_by_source_type() -> None:
    reflection = _sourced("r", SourceType.REFLECTION)
    user = _sourced("u", SourceType.USER_STATEMENT)
    strong = _sourced("s", SourceType.REFLECTION, encoding_strength=0.8)
    decayed = apply_source_confidence_decay(
        [reflection, user, strong], SourceConfidenceDecayConfig(), NOW
    )
    assert decayed == [reflection, strong]
    assert reflection.stability == pytest.approx(75.0)
    assert user.stability == 100.0
    assert strong.stability == pytest.approx(90.0)
    assert reflection.metadata["last_source_decay_at"] == NOW
    assert "last_source_decay_at" not in user.metadata


def test_source_decay_runs_at_most_once_an_hour() -> None:
    trace = _sourced("r", SourceType.REFLECTION)
    config = SourceConfidenceDecayConfig()
    apply_source_confidence_decay([trace], config, NOW)
    assert apply_source_confidence_decay([trace], config, NOW + HOUR - 1) == []
    assert trace.stability == pytest.approx(75.0)
    apply_source_confidence_decay([trace], config, NOW + HOUR)
    assert trace.stability == pytest.approx(56.25)


def test_source_decay_off_inactive_and_with_honesty() -> None:
    off_trace = _sourced("r", SourceType.REFLECTION)
    assert apply_source_confidence_decay([off_trace], SourceConfidenceDecayConfig(False), NOW) == []
    inactive = _sourced("i", SourceType.REFLECTION, is_active=False)
    assert apply_source_confidence_decay([inactive], SourceConfidenceDecayConfig(), NOW) == []
    assert off_trace.stability == inactive.stability == 100.0
    inference = _sourced("a", SourceType.AGENT_INFERENCE)
    honest = CognitiveMechanismsEngine(MechanismsConfig(), traits={"honesty": 1.0})
    config = honest.config.source_confidence_decay
    apply_source_confidence_decay([inference], config, NOW)
    assert inference.stability == pytest.approx(65.0)


@pytest.mark.parametrize(
    ("source", "stability"),
    [
        (SourceType.OBSERVATION, 95.0),
        (SourceType.EXTERNAL, 90.0),
        (SourceType.AGENT_INFERENCE, 80.0),
        (SourceType.FACT_GRAPH, 85.0),
        (SourceType.TYPED_NETWORK, 85.0),
        (SourceType.RETRIEVED_DOCUMENT, 95.0),
        (SourceType.EXTERNAL_API, 90.0),
        (SourceType.MEMORY_SUMMARY, 75.0),
        (SourceType.TOOL_RESULT, 100.0),
        (SourceType.HUMAN_APPROVAL, 100.0),
        (SourceType.IDENTITY_PROVIDER, 100.0),
        (SourceType.SYSTEM_CONFIG, 100.0),
    ],
)
def test_source_decay_multipliers(source: SourceType, stability: float) -> None:
    trace = _sourced("t", source)
    apply_source_confidence_decay([trace], SourceConfidenceDecayConfig(), NOW)
    assert trace.stability == pytest.approx(stability)


# --- emotion regulation -----------------------------------------------------------------------


def _intense(trace_id: str, valence: float, arousal: float, **fields: Any) -> MemoryTrace:
    emotion = EmotionalContext(valence=valence, arousal=arousal)
    return make_trace(trace_id, emotional_context=emotion, **fields)


def test_regulation_reappraises_then_suppresses_what_stays_intense() -> None:
    mild = _intense("mild", 0.9, 0.8)
    fierce = _intense("fierce", -1.0, 0.9)
    regulation = apply_emotion_regulation([mild, fierce], EmotionRegulationConfig(), NOW)
    assert regulation.reappraised == (fierce, mild)  # most aroused first
    assert (mild.emotional_context.valence, mild.emotional_context.arousal) == pytest.approx(
        (0.765, 0.68)
    )
    assert mild.encoding_strength == 0.5  # 0.765 is no longer above 0.8
    assert (fierce.emotional_context.valence, fierce.emotional_context.arousal) == pytest.approx(
        (-0.85, 0.765)
    )
    assert regulation.suppressed == (fierce,)
    assert fierce.encoding_strength == pytest.approx(0.45)
    assert fierce.emotional_context.intensity == pytest.approx(0.85 * 0.765)
    kinds = [entry["kind"] for entry in fierce.metadata["regulation_history"]]
    assert kinds == ["reappraisal", "suppression"]
    assert fierce.metadata["regulation_history"][0]["previous_valence"] == -1.0


def test_regulation_caps_reappraisals_and_suppresses_the_rest() -> None:
    traces = [_intense(f"t{i}", 0.9, 0.61 + 0.03 * i) for i in range(12)]
    regulation = apply_emotion_regulation(traces, EmotionRegulationConfig(), NOW)
    assert [t.id for t in regulation.reappraised] == [f"t{i}" for i in range(11, 1, -1)]
    # t0 and t1 were not reappraised and are still over both bounds; reappraised ones are not.
    assert {t.id for t in regulation.suppressed} == {"t0", "t1"}


@pytest.mark.parametrize(
    "trace",
    [
        _intense("flashbulb", 0.95, 0.9, encoding_strength=0.9),
        _intense("calm", 0.95, 0.6),
        _intense("mild", 0.8, 0.9),
        _intense("gone", 0.95, 0.9, is_active=False),
    ],
)
def test_regulation_leaves_traces_out_of_bounds(trace: MemoryTrace) -> None:
    before = (trace.emotional_context.valence, trace.emotional_context.arousal)
    assert apply_emotion_regulation([trace], EmotionRegulationConfig(), NOW).reappraised == ()
    assert (trace.emotional_context.valence, trace.emotional_context.arousal) == before


def test_regulation_off_and_with_agreeableness() -> None:
    trace = _intense("t", 0.9, 0.8)
    off = apply_emotion_regulation([trace], EmotionRegulationConfig(enabled=False), NOW)
    assert off.reappraised == off.suppressed == ()
    assert trace.emotional_context.valence == 0.9
    agreeable = CognitiveMechanismsEngine(MechanismsConfig(), traits={"agreeableness": 1.0})
    apply_emotion_regulation([trace], agreeable.config.emotion_regulation, NOW)
    assert trace.emotional_context.valence == pytest.approx(0.9 * (1 - 0.195))


@settings(max_examples=60, deadline=None)
@given(
    affects=st.lists(st.tuples(st.floats(-1, 1), st.floats(0, 1)), max_size=20),
    rate=st.floats(0, 1),
)
def test_regulation_never_raises_valence_or_arousal(
    affects: list[tuple[float, float]], rate: float
) -> None:
    traces = [_intense(f"t{i}", v, a) for i, (v, a) in enumerate(affects)]
    apply_emotion_regulation(traces, EmotionRegulationConfig(reappraisal_rate=rate), NOW)
    for trace, (valence, arousal) in zip(traces, affects, strict=True):
        assert abs(trace.emotional_context.valence) <= abs(valence)
        assert trace.emotional_context.arousal <= arousal
        assert trace.encoding_strength <= 0.5


# --- the engine: every mechanism on and off ---------------------------------------------------


async def test_on_consolidation_runs_gist_decay_and_regulation() -> None:
    gist = _due("gist", provenance=Provenance(source_type=SourceType.REFLECTION))
    intense = _intense("intense", -1.0, 0.9)
    plain = make_trace("plain")
    engine = CognitiveMechanismsEngine(MechanismsConfig())
    effects = await engine.on_consolidation([gist, intense, plain], NOW, FakeInvoker())
    assert effects.gisted == (gist,)
    assert effects.source_decayed == (gist,)
    assert effects.reappraised == effects.suppressed == (intense,)
    assert effects.changed == (gist, intense)
    assert gist.content == "Alice moved to Paris. [nostalgic]"


async def _observe(engine: CognitiveMechanismsEngine) -> dict[str, object]:
    """Run every hook once on fresh traces and report what each mechanism changed."""
    engine.set_cluster_centroids({"c": [1.0, 0.0]})
    encoded = make_trace("new")
    engine.on_encoding(encoded, [0.0, 1.0], NOW)
    hit = ScoredCandidate(make_trace("hit"), 0.7, 0.9)
    rival = ScoredCandidate(make_trace("rival", stability=100.0), 0.5, 0.8)
    retrieval = engine.on_retrieval([hit], [hit, rival], 0.7, NOW)
    accessed = make_trace("accessed")
    engine.on_access(accessed, PAD(1.0, 0.0, 0.0), NOW)
    old = make_trace("old", created_at=NOW - 30 * DAY)
    recalled = engine.on_prompt_assembly([old], set(), NOW)
    reflection = _sourced("reflection", SourceType.REFLECTION)
    effects = await engine.on_consolidation(
        [_due("due"), reflection, _intense("intense", -1.0, 0.9)], NOW
    )
    return {
        "schema_encoding": encoded.encoding_strength,
        "retrieval_induced_forgetting": rival.trace.stability,
        "metacognitive_fok": len(retrieval.signals),
        "reconsolidation": accessed.emotional_context.valence,
        "involuntary_recall": recalled is not None,
        "temporal_gist": len(effects.gisted),
        "source_confidence_decay": reflection.stability,
        "emotion_regulation": len(effects.reappraised),
    }


ON = {
    "schema_encoding": pytest.approx(0.65),
    "retrieval_induced_forgetting": pytest.approx(88.0),
    "metacognitive_fok": 1,
    "reconsolidation": pytest.approx(0.05),
    "involuntary_recall": True,
    "temporal_gist": 1,
    "source_confidence_decay": pytest.approx(75.0),
    "emotion_regulation": 1,
}
OFF = {
    "schema_encoding": 0.5,
    "retrieval_induced_forgetting": 100.0,
    "metacognitive_fok": 0,
    "reconsolidation": 0.0,
    "involuntary_recall": False,
    "temporal_gist": 0,
    "source_confidence_decay": 100.0,
    "emotion_regulation": 0,
}


def _certain_recall(disabled: str | None = None) -> MechanismsConfig:
    # Involuntary recall at probability 1, so its effect shows without a lucky draw.
    overrides: dict[str, object] = {"involuntary_recall": {"probability": 1.0}}
    if disabled is not None:
        overrides[disabled] = False
    config = resolve_mechanisms_config(overrides)
    assert config is not None
    return config


async def test_every_mechanism_at_its_defaults() -> None:
    engine = CognitiveMechanismsEngine(_certain_recall(), rng=random.Random(3))
    assert await _observe(engine) == ON


@pytest.mark.parametrize("name", sorted(OFF))
async def test_turning_one_mechanism_off_changes_only_its_effect(name: str) -> None:
    engine = CognitiveMechanismsEngine(_certain_recall(disabled=name), rng=random.Random(3))
    assert await _observe(engine) == {**ON, name: OFF[name]}
