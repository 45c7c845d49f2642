"""The eight mechanisms: configuration, personality, and the retrieval-time mechanisms.

Reference §3 cases 17, 19, 20, 26 and the two reconsolidation fixes (§5 trap 9). Times are
seconds; the reference's ms figures are divided by 1000 (case 20's 100 000 ms → 100 s).
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentos.memory.mechanisms import (
    DEFAULT_DECAY_MULTIPLIERS,
    CognitiveMechanismsEngine,
    FeelingOfKnowing,
    InvoluntaryRecallConfig,
    MechanismsConfig,
    MetacognitiveFOKConfig,
    ReconsolidationConfig,
    RetrievalInducedForgettingConfig,
    ScoredCandidate,
    apply_personality,
    apply_reconsolidation,
    apply_retrieval_induced_forgetting,
    detect_feeling_of_knowing,
    resolve_mechanisms_config,
    select_involuntary_memory,
)
from agentos.memory.trace import (
    DAY,
    HOUR,
    PAD,
    EmotionalContext,
    MemoryScope,
    MemoryTrace,
    MemoryType,
    SourceType,
)

NOW = 1_800_000_000.0
ALL_ONE = dict.fromkeys(
    ("honesty", "emotionality", "extraversion", "agreeableness", "conscientiousness", "openness"),
    1.0,
)
ALL_ZERO = dict.fromkeys(ALL_ONE, 0.0)


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


class ScriptedRandom(random.Random):
    """A random source that returns the given draws in order."""

    def __init__(self, *draws: float) -> None:
        super().__init__(0)
        self.draws = list(draws)

    def random(self) -> float:
        return self.draws.pop(0)


# --- configuration (case 17) ---------------------------------------------------------------


def test_none_builds_no_engine_config() -> None:
    assert resolve_mechanisms_config(None) is None


def test_empty_mapping_is_all_eight_at_the_defaults() -> None:
    config = resolve_mechanisms_config({})
    assert config == MechanismsConfig()
    assert config is not None
    assert (
        config.reconsolidation.drift_rate,
        config.reconsolidation.max_drift_per_trace,
        config.reconsolidation.immune_above_importance,
    ) == (0.05, 0.4, 0.9)
    rif = config.retrieval_induced_forgetting
    assert (rif.similarity_threshold, rif.suppression_factor, rif.max_suppressions_per_query) == (
        0.7,
        0.12,
        5,
    )
    recall = config.involuntary_recall
    assert (recall.probability, recall.min_age_days, recall.min_strength) == (0.08, 14, 0.15)
    fok = config.metacognitive_fok
    assert (fok.partial_activation_threshold, fok.surface_tip_of_tongue) == (0.3, True)
    gist = config.temporal_gist
    assert (gist.age_threshold_days, gist.min_retrieval_count) == (60, 2)
    assert gist.preserve_entities
    assert gist.preserve_emotional_context
    schema = config.schema_encoding
    assert (
        schema.cluster_similarity_threshold,
        schema.novelty_boost,
        schema.congruency_discount,
    ) == (0.75, 1.3, 0.85)
    assert dict(config.source_confidence_decay.decay_multipliers) == {
        "user_statement": 1.0,
        "tool_result": 1.0,
        "observation": 0.95,
        "external": 0.90,
        "agent_inference": 0.80,
        "reflection": 0.75,
        "fact_graph": 0.85,
        "typed_network": 0.85,
        "retrieved_document": 0.95,
        "human_approval": 1.0,
        "identity_provider": 1.0,
        "system_config": 1.0,
        "external_api": 0.90,
        "memory_summary": 0.75,
    }
    assert set(DEFAULT_DECAY_MULTIPLIERS) == {s.value for s in SourceType}
    regulation = config.emotion_regulation
    assert (
        regulation.reappraisal_rate,
        regulation.suppression_threshold,
        regulation.max_regulation_per_cycle,
    ) == (0.15, 0.8, 10)
    assert all(
        getattr(config, name).enabled
        for name in (
            "reconsolidation",
            "retrieval_induced_forgetting",
            "involuntary_recall",
            "metacognitive_fok",
            "temporal_gist",
            "schema_encoding",
            "source_confidence_decay",
            "emotion_regulation",
        )
    )


def test_snake_case_overrides_field_by_field() -> None:
    config = resolve_mechanisms_config({"reconsolidation": {"drift_rate": 0.1}})
    assert config is not None
    assert config.reconsolidation == ReconsolidationConfig(drift_rate=0.1)
    assert config.retrieval_induced_forgetting == RetrievalInducedForgettingConfig()


def test_camel_case_keys_as_the_typescript_config_writes_them() -> None:
    config = resolve_mechanisms_config(
        {
            "retrievalInducedForgetting": {"suppressionFactor": 0.2, "maxSuppressionsPerQuery": 3},
            "metacognitiveFOK": {"partialActivationThreshold": 0.4},
            "emotionRegulation": {"enabled": False},
            "sourceConfidenceDecay": {"decayMultipliers": {"reflection": 0.5}},
        }
    )
    assert config is not None
    rif = config.retrieval_induced_forgetting
    assert (rif.suppression_factor, rif.max_suppressions_per_query) == (0.2, 3)
    assert rif.similarity_threshold == 0.7
    assert config.metacognitive_fok.partial_activation_threshold == 0.4
    assert config.emotion_regulation.enabled is False
    multipliers = config.source_confidence_decay.decay_multipliers
    assert multipliers["reflection"] == 0.5
    assert multipliers["observation"] == 0.95  # merged key by key over the defaults
    assert len(multipliers) == 14


def test_a_boolean_switches_a_mechanism_and_a_config_passes_through() -> None:
    config = resolve_mechanisms_config({"involuntary_recall": False, "temporalGist": True})
    assert config is not None
    assert config.involuntary_recall == InvoluntaryRecallConfig(enabled=False)
    assert config.temporal_gist.enabled
    assert resolve_mechanisms_config(config) is config


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"bogus": {}}, "unknown mechanism 'bogus'"),
        ({"reconsolidation": {"driftSpeed": 0.1}}, "unknown field 'driftSpeed'"),
        (
            {"source_confidence_decay": {"decay_multipliers": {"rumour": 0.5}}},
            "unknown source type 'rumour'",
        ),
        ({"involuntaryRecall": {"probability": 1.5}}, "involuntary_recall.probability"),
        ({"reconsolidation": 0.5}, "cognitive_mechanisms.reconsolidation must be a mapping"),
        ({"reconsolidation": {}, "Reconsolidation": {}}, "given twice"),
        ({"emotion_regulation": {"max_regulation_per_cycle": 2.5}}, "max_regulation_per_cycle"),
    ],
)
def test_bad_configuration_is_refused_naming_it(value: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        resolve_mechanisms_config(value)


# --- personality (case 19) -------------------------------------------------------------------


def _scaled(config: MechanismsConfig) -> tuple[float, ...]:
    multipliers = config.source_confidence_decay.decay_multipliers
    return (
        config.reconsolidation.drift_rate,
        config.retrieval_induced_forgetting.suppression_factor,
        config.involuntary_recall.probability,
        config.metacognitive_fok.partial_activation_threshold,
        config.schema_encoding.novelty_boost,
        multipliers["agent_inference"],
        multipliers["reflection"],
        config.emotion_regulation.reappraisal_rate,
    )


def test_personality_all_traits_one() -> None:
    scaled = _scaled(apply_personality(MechanismsConfig(), ALL_ONE))
    assert scaled == pytest.approx((0.075, 0.156, 0.12, 0.21, 1.56, 0.65, 0.60, 0.195))


def test_personality_all_traits_zero() -> None:
    scaled = _scaled(apply_personality(MechanismsConfig(), ALL_ZERO))
    assert scaled == pytest.approx((0.025, 0.084, 0.04, 0.39, 1.04, 0.80, 0.75, 0.105))


def test_no_traits_leaves_the_defaults_and_gist_is_never_scaled() -> None:
    config = MechanismsConfig()
    assert apply_personality(config, None) is config
    assert apply_personality(config, ALL_ONE).temporal_gist == config.temporal_gist
    assert apply_personality(config, ALL_ZERO).temporal_gist == config.temporal_gist


def test_empty_traits_are_neutral_except_for_honesty() -> None:
    scaled = _scaled(apply_personality(MechanismsConfig(), {}))
    assert scaled == pytest.approx((0.05, 0.12, 0.08, 0.3, 1.3, 0.725, 0.675, 0.15))


def test_traits_are_clamped_and_non_numeric_entries_count_as_neutral() -> None:
    clamped = apply_personality(MechanismsConfig(), dict.fromkeys(ALL_ONE, 2.0))
    assert clamped == apply_personality(MechanismsConfig(), ALL_ONE)
    odd = apply_personality(
        MechanismsConfig(), {"emotionality": "high", "openness": True, "tone": "dry"}
    )
    assert _scaled(odd) == _scaled(apply_personality(MechanismsConfig(), {}))


def test_involuntary_probability_is_capped_at_one() -> None:
    config = resolve_mechanisms_config({"involuntary_recall": {"probability": 0.9}})
    assert config is not None
    assert apply_personality(config, ALL_ONE).involuntary_recall.probability == 1.0


def test_the_engine_applies_personality_at_construction() -> None:
    engine = CognitiveMechanismsEngine(MechanismsConfig(), traits=ALL_ONE)
    assert engine.config == apply_personality(MechanismsConfig(), ALL_ONE)
    assert CognitiveMechanismsEngine(MechanismsConfig()).config == MechanismsConfig()


# --- reconsolidation ----------------------------------------------------------------------------


def test_reconsolidation_drifts_toward_the_mood_by_the_drift_rate() -> None:
    trace = make_trace()  # valence 0, arousal 0.5 (0..1), dominance 0
    drift = apply_reconsolidation(trace, PAD(1.0, 1.0, -1.0), ReconsolidationConfig(), NOW)
    assert drift is not None
    # The mood's arousal 1.0 on -1..1 is 1.0 on 0..1: 0.05 * (1.0 - 0.5) = 0.025.
    assert (drift.valence, drift.arousal, drift.dominance) == pytest.approx((0.05, 0.025, -0.05))
    emotion = trace.emotional_context
    assert (emotion.valence, emotion.arousal, emotion.dominance) == pytest.approx(
        (0.05, 0.525, -0.05)
    )
    assert emotion.intensity == pytest.approx(0.05 * 0.525)
    assert trace.metadata["cumulative_drift"] == pytest.approx(0.125)
    (entry,) = trace.metadata["drift_history"]
    assert entry["at"] == NOW
    assert entry["before"] == {"valence": 0.0, "arousal": 0.5, "dominance": 0.0}
    assert entry["after"]["arousal"] == pytest.approx(0.525)


def test_reconsolidation_fix_rescales_the_mood_arousal() -> None:
    # The reference drifted 0.5 toward -1 (→ 0.425); on one scale the target is 0.0 (→ 0.475).
    calm = make_trace()
    apply_reconsolidation(calm, PAD(0.0, -1.0, 0.0), ReconsolidationConfig(), NOW)
    assert calm.emotional_context.arousal == pytest.approx(0.475)
    # A neutral mood's arousal 0 is the middle of 0..1: a trace at 0.5 does not move.
    assert apply_reconsolidation(make_trace(), PAD(), ReconsolidationConfig(), NOW) is None


def test_reconsolidation_is_scaled_down_to_the_remaining_budget() -> None:
    trace = make_trace(metadata={"cumulative_drift": 0.35})
    drift = apply_reconsolidation(trace, PAD(1.0, 1.0, -1.0), ReconsolidationConfig(), NOW)
    assert drift is not None
    # The raw 0.125 is scaled to the 0.05 left: x 0.4.
    assert (drift.valence, drift.arousal, drift.dominance) == pytest.approx((0.02, 0.01, -0.02))
    assert trace.metadata["cumulative_drift"] == pytest.approx(0.4)
    assert apply_reconsolidation(trace, PAD(1.0, 1.0, -1.0), ReconsolidationConfig(), NOW) is None


def test_reconsolidation_fix_immunity_reads_importance_on_its_0_to_1_scale() -> None:
    mood = PAD(1.0, 1.0, 1.0)
    important = make_trace(importance=0.95)
    assert apply_reconsolidation(important, mood, ReconsolidationConfig(), NOW) is None
    assert important.emotional_context == EmotionalContext()
    assert apply_reconsolidation(make_trace(importance=0.89), mood, ReconsolidationConfig(), NOW)
    # Without an importance the encoding strength stands in.
    strong = make_trace(encoding_strength=0.95)
    assert apply_reconsolidation(strong, mood, ReconsolidationConfig(), NOW) is None
    lenient = ReconsolidationConfig(immune_above_importance=1.0)
    assert apply_reconsolidation(important, mood, lenient, NOW) is not None


def test_reconsolidation_off_and_with_emotionality() -> None:
    mood = PAD(1.0, 0.0, 0.0)
    off = make_trace()
    assert apply_reconsolidation(off, mood, ReconsolidationConfig(enabled=False), NOW) is None
    assert off.emotional_context == EmotionalContext()
    emotional = CognitiveMechanismsEngine(MechanismsConfig(), traits={"emotionality": 1.0})
    trace = make_trace()
    emotional.on_access(trace, mood, NOW)
    assert trace.emotional_context.valence == pytest.approx(0.075)
    flat = CognitiveMechanismsEngine(MechanismsConfig(), traits={"emotionality": 0.0})
    trace = make_trace()
    flat.on_access(trace, mood, NOW)
    assert trace.emotional_context.valence == pytest.approx(0.025)


def test_a_perspective_encoded_trace_drifts_at_half_rate() -> None:
    trace = make_trace(metadata={"perspective_encoded": True})
    apply_reconsolidation(trace, PAD(1.0, 0.0, 0.0), ReconsolidationConfig(), NOW)
    assert trace.emotional_context.valence == pytest.approx(0.025)


pads = st.builds(
    PAD,
    st.floats(-1, 1),
    st.floats(-1, 1),
    st.floats(-1, 1),
)


@settings(max_examples=60, deadline=None)
@given(
    moods=st.lists(pads, min_size=1, max_size=40),
    rate=st.floats(0.0, 1.0),
    budget=st.floats(0.0, 1.0),
)
def test_total_drift_never_exceeds_the_budget(moods: list[PAD], rate: float, budget: float) -> None:
    config = ReconsolidationConfig(drift_rate=rate, max_drift_per_trace=budget)
    trace = make_trace(emotional_context=EmotionalContext(valence=0.3, arousal=0.2))
    total = 0.0
    for mood in moods:
        drift = apply_reconsolidation(trace, mood, config, NOW)
        total += drift.total if drift else 0.0
    assert total <= budget + 1e-9
    assert trace.metadata.get("cumulative_drift", 0.0) <= budget
    emotion = trace.emotional_context
    assert -1 <= emotion.valence <= 1
    assert 0 <= emotion.arousal <= 1
    assert -1 <= emotion.dominance <= 1


# --- retrieval-induced forgetting (case 20) ---------------------------------------------------


def _candidate(trace: MemoryTrace, similarity: float, score: float = 0.5) -> ScoredCandidate:
    return ScoredCandidate(trace, score, similarity)


def test_rif_suppresses_a_similar_competitor() -> None:
    hit = make_trace("hit")
    competitor = make_trace("c", stability=100.0)
    suppressed = apply_retrieval_induced_forgetting(
        [_candidate(hit, 0.9), _candidate(competitor, 0.8)],
        {"hit"},
        RetrievalInducedForgettingConfig(),
    )
    assert suppressed == [competitor]
    assert competitor.stability == pytest.approx(88.0)
    assert hit.stability == HOUR


def test_rif_spares_flashbulb_and_nearly_dead_competitors() -> None:
    strong = make_trace("strong", encoding_strength=0.95, stability=100.0)
    weak = make_trace("weak", encoding_strength=0.05, stability=100.0)
    suppressed = apply_retrieval_induced_forgetting(
        [_candidate(strong, 0.8), _candidate(weak, 0.8)],
        {"hit"},
        RetrievalInducedForgettingConfig(),
    )
    assert suppressed == []
    assert strong.stability == weak.stability == 100.0


def test_rif_suppresses_at_most_five_most_similar_first() -> None:
    competitors = [make_trace(f"c{i}", stability=100.0) for i in range(10)]
    candidates = [_candidate(t, 0.71 + 0.02 * i) for i, t in enumerate(competitors)]
    suppressed = apply_retrieval_induced_forgetting(
        candidates, {"hit"}, RetrievalInducedForgettingConfig()
    )
    assert [t.id for t in suppressed] == ["c9", "c8", "c7", "c6", "c5"]
    assert [t.stability for t in competitors[:5]] == [100.0] * 5


def test_rif_fix_uses_its_similarity_threshold() -> None:
    unrelated = make_trace("u", stability=100.0)
    suppressed = apply_retrieval_induced_forgetting(
        [_candidate(unrelated, 0.69)], {"hit"}, RetrievalInducedForgettingConfig()
    )
    assert suppressed == []
    assert unrelated.stability == 100.0


def test_rif_off_with_nothing_retrieved_and_with_conscientiousness() -> None:
    trace = make_trace("c", stability=100.0)
    off = RetrievalInducedForgettingConfig(enabled=False)
    assert apply_retrieval_induced_forgetting([_candidate(trace, 0.9)], {"hit"}, off) == []
    on = RetrievalInducedForgettingConfig()
    assert apply_retrieval_induced_forgetting([_candidate(trace, 0.9)], set(), on) == []
    assert trace.stability == 100.0
    engine = CognitiveMechanismsEngine(MechanismsConfig(), traits={"conscientiousness": 1.0})
    hit = make_trace("hit")
    effects = engine.on_retrieval([_candidate(hit, 0.9, 0.8)], [_candidate(trace, 0.9)], 0.8, NOW)
    assert effects.suppressed_ids == ("c",)
    assert trace.stability == pytest.approx(100.0 * (1 - 0.156))


@settings(max_examples=60, deadline=None)
@given(
    similarities=st.lists(st.floats(0.0, 1.0), max_size=30),
    limit=st.integers(0, 8),
    threshold=st.floats(0.0, 1.0),
)
def test_rif_never_suppresses_more_than_its_limit_nor_a_dissimilar_trace(
    similarities: list[float], limit: int, threshold: float
) -> None:
    config = RetrievalInducedForgettingConfig(
        similarity_threshold=threshold, max_suppressions_per_query=limit
    )
    candidates = [_candidate(make_trace(f"c{i}"), s) for i, s in enumerate(similarities)]
    suppressed = apply_retrieval_induced_forgetting(candidates, {"hit"}, config)
    assert len(suppressed) <= limit
    by_id = {c.trace.id: c.vector_similarity for c in candidates}
    assert all(by_id[t.id] >= threshold for t in suppressed)
    assert all(t.stability == pytest.approx(HOUR * 0.88) for t in suppressed)


# --- involuntary recall (case 26) -------------------------------------------------------------


def _old(trace_id: str = "old", days: float = 30, **fields: Any) -> MemoryTrace:
    return make_trace(trace_id, created_at=NOW - days * DAY, **fields)


def test_involuntary_recall_probability_zero_and_one() -> None:
    pool = [_old()]
    never = InvoluntaryRecallConfig(probability=0.0)
    always = InvoluntaryRecallConfig(probability=1.0)
    assert select_involuntary_memory(pool, set(), never, random.Random(1), NOW) is None
    assert select_involuntary_memory(pool, set(), always, random.Random(1), NOW) is pool[0]


@pytest.mark.parametrize(
    ("trace", "retrieved"),
    [
        (_old(), {"old"}),
        (_old(days=13), set()),
        (_old(days=14), set()),  # strictly older than 14 days
        (_old(encoding_strength=0.1), set()),
        (_old(is_active=False), set()),
    ],
)
def test_involuntary_recall_exclusions(trace: MemoryTrace, retrieved: set[str]) -> None:
    always = InvoluntaryRecallConfig(probability=1.0)
    assert select_involuntary_memory([trace], retrieved, always, random.Random(1), NOW) is None


def test_involuntary_recall_weighs_vivid_memories() -> None:
    mild = _old("mild", emotional_context=EmotionalContext(valence=0.5, arousal=0.5))  # 0.25
    vivid = _old("vivid", emotional_context=EmotionalContext(valence=-1.0, arousal=0.75))  # 0.75
    config = InvoluntaryRecallConfig()
    # Draw 1 is the gate (< 0.08 passes); draw 2 x total weight 1.0 picks along the weights.
    picked = select_involuntary_memory([mild, vivid], set(), config, ScriptedRandom(0.07, 0.2), NOW)
    assert picked is mild
    picked = select_involuntary_memory([mild, vivid], set(), config, ScriptedRandom(0.0, 0.7), NOW)
    assert picked is vivid
    assert select_involuntary_memory([mild], set(), config, ScriptedRandom(0.08), NOW) is None


def test_involuntary_recall_off_and_with_openness() -> None:
    pool = [_old()]
    off = CognitiveMechanismsEngine(
        MechanismsConfig(involuntary_recall=InvoluntaryRecallConfig(enabled=False)),
        rng=ScriptedRandom(0.0, 0.0),
    )
    assert off.on_prompt_assembly(pool, set(), NOW) is None
    # Openness 1 makes the probability 0.12: a draw of 0.1 passes; openness 0 makes it 0.04.
    open_engine = CognitiveMechanismsEngine(
        MechanismsConfig(), traits={"openness": 1.0}, rng=ScriptedRandom(0.1, 0.5)
    )
    assert open_engine.on_prompt_assembly(pool, set(), NOW) is pool[0]
    closed = CognitiveMechanismsEngine(
        MechanismsConfig(), traits={"openness": 0.0}, rng=ScriptedRandom(0.05)
    )
    assert closed.on_prompt_assembly(pool, set(), NOW) is None


def test_involuntary_recall_with_a_seeded_random_source_is_reproducible() -> None:
    pool = [
        _old(f"t{i}", emotional_context=EmotionalContext(valence=i / 10, arousal=0.8))
        for i in range(5)
    ]

    def run(seed: int) -> list[str | None]:
        engine = CognitiveMechanismsEngine(MechanismsConfig(), rng=random.Random(seed))
        picks = [engine.on_prompt_assembly(pool, set(), NOW) for _ in range(1000)]
        return [p.id if p else None for p in picks]

    first = run(42)
    assert first == run(42)
    hits = [p for p in first if p is not None]
    assert 40 <= len(hits) <= 120  # about 8 % of 1000
    assert "t4" in hits
    # The engine's draws are exactly those of the injected source.
    expected_rng = random.Random(42)
    expected: list[str | None] = []
    for _ in range(1000):
        chosen = select_involuntary_memory(
            pool, set(), InvoluntaryRecallConfig(), expected_rng, NOW
        )
        expected.append(chosen.id if chosen else None)
    assert first == expected


# --- feeling of knowing ---------------------------------------------------------------------


def _fok_trace(trace_id: str = "near", **fields: Any) -> MemoryTrace:
    return make_trace(
        trace_id,
        created_at=NOW - 12.5 * DAY,
        entities=["Paris", "Lyon", "Nice", "Metz"],
        emotional_context=EmotionalContext(gmi_mood="nostalgic"),
        **fields,
    )


def test_feeling_of_knowing_signal_and_partial_info() -> None:
    near = _fok_trace()
    signals = detect_feeling_of_knowing(
        [_candidate(near, similarity=0.5, score=0.45)],
        set(),
        0.6,
        MetacognitiveFOKConfig(),
        NOW,
        query_entities=["paris"],
    )
    # gap (0.45-0.3)/(0.6-0.3) = 0.5 -> 0.2; similarity 0.3*0.5; entities 1/max(1, 4) -> 0.075.
    (signal,) = signals
    assert signal == FeelingOfKnowing(
        "near", "tip_of_tongue", signal.fok, "Paris, Lyon, Nice | mood: nostalgic | ~12 days ago"
    )
    assert signal.fok == pytest.approx(0.425)


def test_feeling_of_knowing_high_confidence_and_the_zone_bounds() -> None:
    close = make_trace("close", entities=["Paris"])
    below = make_trace("below")
    at_cutoff = make_trace("at")
    retrieved = make_trace("hit")
    signals = detect_feeling_of_knowing(
        [
            _candidate(close, similarity=0.9, score=0.57),
            _candidate(below, similarity=0.9, score=0.29),
            _candidate(at_cutoff, similarity=0.9, score=0.6),
            _candidate(retrieved, similarity=0.9, score=0.5),
        ],
        {"hit"},
        0.6,
        MetacognitiveFOKConfig(),
        NOW,
        query_entities=["PARIS"],
    )
    # 0.4 * 0.9 + 0.3 * 0.9 + 0.3 * 1 = 0.93
    assert [(s.trace_id, s.level) for s in signals] == [("close", "high_confidence")]
    assert signals[0].fok == pytest.approx(0.93)
    assert signals[0].partial_info == "Paris"


def test_feeling_of_knowing_off_without_tip_of_tongue_and_with_extraversion() -> None:
    near = _candidate(make_trace("near"), similarity=0.5, score=0.25)
    assert detect_feeling_of_knowing([near], set(), 0.6, MetacognitiveFOKConfig(), NOW) == []
    off = MetacognitiveFOKConfig(enabled=False)
    assert detect_feeling_of_knowing([near], set(), 0.6, off, NOW) == []
    quiet = MetacognitiveFOKConfig(partial_activation_threshold=0.2, surface_tip_of_tongue=False)
    assert detect_feeling_of_knowing([near], set(), 0.6, quiet, NOW) == []
    # Extraversion 1 lowers the threshold to 0.21, so the 0.25 near miss now surfaces.
    engine = CognitiveMechanismsEngine(MechanismsConfig(), traits={"extraversion": 1.0})
    hit = _candidate(make_trace("hit"), similarity=0.9, score=0.6)
    effects = engine.on_retrieval([hit], [hit, near], 0.6, NOW)
    (signal,) = effects.signals
    assert signal.trace_id == "near"
    assert signal.fok == pytest.approx(0.4 * (0.04 / 0.39) + 0.15)
    introvert = CognitiveMechanismsEngine(MechanismsConfig(), traits={"extraversion": 0.0})
    assert introvert.on_retrieval([hit], [hit, near], 0.6, NOW).signals == ()


def test_on_retrieval_without_results_treats_cutoff_as_one() -> None:
    engine = CognitiveMechanismsEngine(MechanismsConfig())
    near = _candidate(make_trace("near", stability=100.0), similarity=0.9, score=0.65)
    effects = engine.on_retrieval([], [near], None, NOW)
    assert [s.trace_id for s in effects.signals] == ["near"]
    assert effects.suppressed == ()  # nothing was retrieved, so nothing is suppressed
    assert near.trace.stability == 100.0


def test_on_retrieval_returns_both_rif_and_fok_effects() -> None:
    engine = CognitiveMechanismsEngine(MechanismsConfig())
    hit = _candidate(make_trace("hit"), similarity=0.9, score=0.7)
    rival = _candidate(make_trace("rival", stability=100.0), similarity=0.8, score=0.5)
    effects = engine.on_retrieval([hit], [hit, rival], 0.7, NOW)
    assert effects.suppressed_ids == ("rival",)
    assert [s.trace_id for s in effects.signals] == ["rival"]
    assert rival.trace.stability == pytest.approx(88.0)


def test_a_config_with_replace_keeps_validation() -> None:
    with pytest.raises(ValueError, match="drift_rate"):
        replace(ReconsolidationConfig(), drift_rate=-0.1)
