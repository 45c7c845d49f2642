"""The composite score (reference §1.15): §3 memory-math cases 8, 9, 11, 12, 16 and more."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentos.memory.scoring import (
    DEFAULT_SCORING_WEIGHTS,
    Candidate,
    PartialRetrieval,
    ScoredTrace,
    ScoringWeights,
    blend_reranker,
    detect_partially_retrieved,
    score_candidate,
    score_candidates,
)
from agentos.memory.trace import (
    DAY,
    PAD,
    EmotionalContext,
    MemoryScope,
    MemoryTrace,
    MemoryType,
    Provenance,
)

NOW = 1_700_000_000.0
NEUTRAL = PAD(0.0, 0.0, 0.0)


def make_trace(
    trace_id: str = "t",
    *,
    strength: float = 0.8,
    stability: float = DAY,
    last_accessed: float = NOW,
    confidence: float = 0.8,
    valence: float = 0.0,
    content: str = "a memory",
    tags: list[str] | None = None,
) -> MemoryTrace:
    return MemoryTrace(
        id=trace_id,
        type=MemoryType.EPISODIC,
        scope=MemoryScope.USER,
        scope_id="u",
        content=content,
        created_at=last_accessed,
        encoding_strength=strength,
        stability=stability,
        emotional_context=EmotionalContext(valence=valence),
        provenance=Provenance(confidence=confidence),
        tags=tags or [],
    )


# --- §3 cases 8 and 9: the composite -----------------------------------------------------------


def test_case8_composite_with_neutral_mood() -> None:
    # 0.25·0.8 + 0.35·0.9 + 0.10·1 + 0 + 0 + 0.05·0.9 = 0.66
    [scored] = score_candidates([Candidate(make_trace(), 0.9)], now=NOW, mood=NEUTRAL)
    assert scored.score == pytest.approx(0.66, abs=1e-6)
    b = scored.breakdown
    assert (b.similarity, b.strength, b.recency) == pytest.approx((0.9, 0.8, 1.0))
    assert (b.emotional_congruence, b.graph_activation) == (0.0, 0.0)
    assert b.importance == pytest.approx(0.9)
    assert scored.vector_similarity == 0.9
    assert scored.graph_activation == 0.0
    assert scored.reranker_score is None


def test_case9_emotional_congruence_and_graph() -> None:
    trace = make_trace(valence=0.6)
    mood = PAD(0.5, 0.2, 0.1)
    congruent = score_candidate(Candidate(trace, 0.9), now=NOW, mood=mood)
    assert congruent.breakdown.emotional_congruence == pytest.approx(0.30, abs=1e-6)
    assert congruent.score == pytest.approx(0.705, abs=1e-6)
    neutral = score_candidate(Candidate(trace, 0.9), now=NOW, mood=mood, neutral_mood=True)
    assert neutral.score == pytest.approx(0.66, abs=1e-6)
    graph = score_candidate(Candidate(trace, 0.9, 0.25), now=NOW, mood=mood, neutral_mood=True)
    assert graph.score == pytest.approx(0.685, abs=1e-6)
    assert graph.graph_activation == 0.25


def test_incongruent_mood_adds_nothing() -> None:
    trace = make_trace(valence=-0.6)
    scored = score_candidate(Candidate(trace, 0.9), now=NOW, mood=PAD(0.5, 0.0, 0.0))
    assert scored.breakdown.emotional_congruence == 0.0
    assert scored.score == pytest.approx(0.66, abs=1e-6)
    # Two negative valences agree: 0.15·(-0.5·-0.6) = 0.045 → 0.705.
    sad = score_candidate(Candidate(trace, 0.9), now=NOW, mood=PAD(-0.5, 0.0, 0.0))
    assert sad.score == pytest.approx(0.705, abs=1e-6)
    assert score_candidate(Candidate(trace, 0.9), now=NOW, mood=None).score == pytest.approx(0.66)


def test_a_day_old_memory() -> None:
    # strength 1, stability 1 day, last accessed 1 day ago, similarity 0.5, confidence 0.6:
    #   strength = e^-1 = 0.367879, recency = e^-1, importance = 0.5 + 0.3 = 0.8
    #   score = 0.35·0.5 + 0.25·0.367879 + 0.10·0.367879 + 0.05·0.8 = 0.343758
    trace = make_trace(strength=1.0, last_accessed=NOW - DAY, confidence=0.6)
    scored = score_candidate(Candidate(trace, 0.5), now=NOW, mood=None)
    assert scored.breakdown.recency == pytest.approx(math.exp(-1), abs=1e-6)
    assert scored.breakdown.strength == pytest.approx(0.367879, abs=1e-6)
    assert scored.score == pytest.approx(0.343758, abs=1e-6)


def test_future_access_counts_as_now() -> None:
    trace = make_trace(last_accessed=NOW + 100.0)
    scored = score_candidate(Candidate(trace, 0.9), now=NOW, mood=None)
    assert scored.breakdown.recency == 1.0
    assert scored.score == pytest.approx(0.66, abs=1e-6)


# --- §3 case 11: clamping, sorting, overrides --------------------------------------------------


def test_case11_composite_clamps_and_sorts() -> None:
    heavy = {name: 2.0 for name in ("similarity", "strength", "recency", "importance")}
    [scored] = score_candidates([Candidate(make_trace(), 0.9)], now=NOW, mood=None, weights=heavy)
    assert scored.score == 1.0

    traces = [make_trace(f"t{i}") for i in range(3)]
    candidates = [Candidate(t, sim) for t, sim in zip(traces, (0.2, 0.9, 0.5), strict=True)]
    ranked = score_candidates(candidates, now=NOW, mood=None)
    assert [s.trace.id for s in ranked] == ["t1", "t2", "t0"]
    assert [s.score for s in ranked] == sorted((s.score for s in ranked), reverse=True)


def test_case11_zero_similarity_weight_removes_the_term() -> None:
    # 0.25·0.8 + 0.10·1 + 0.05·0.9 = 0.345, whatever the similarity.
    candidates = [Candidate(make_trace("a"), 0.1), Candidate(make_trace("b"), 0.99)]
    ranked = score_candidates(candidates, now=NOW, mood=None, weights={"similarity": 0})
    assert [s.score for s in ranked] == pytest.approx([0.345, 0.345], abs=1e-6)
    assert [s.trace.id for s in ranked] == ["a", "b"]  # ties keep their order


def test_weight_overrides() -> None:
    merged = DEFAULT_SCORING_WEIGHTS.merged({"emotionalCongruence": 0.5, "graph_activation": 0})
    assert merged.emotional_congruence == 0.5
    assert merged.graph_activation == 0.0
    assert merged.similarity == 0.35
    assert DEFAULT_SCORING_WEIGHTS.merged(None) is DEFAULT_SCORING_WEIGHTS
    assert ScoringWeights().merged({"graphActivation": 0.2}).graph_activation == 0.2
    with pytest.raises(ValueError, match=r"bogus, novelty"):
        DEFAULT_SCORING_WEIGHTS.merged({"novelty": 1.0, "bogus": 1.0, "recency": 0.1})
    with pytest.raises(ValueError, match="recency"):
        DEFAULT_SCORING_WEIGHTS.merged({"recency": -0.1})
    with pytest.raises(ValueError, match="strength"):
        ScoringWeights(strength=math.nan)
    with pytest.raises(ValueError, match="bogus"):
        score_candidates([], now=NOW, mood=None, weights={"bogus": 1.0})


def test_weights_sum_to_one_by_default() -> None:
    w = DEFAULT_SCORING_WEIGHTS
    assert (w.similarity, w.strength, w.emotional_congruence) == (0.35, 0.25, 0.15)
    assert (w.recency, w.graph_activation, w.importance) == (0.10, 0.10, 0.05)


def test_nan_similarity_counts_as_zero() -> None:
    # 0.25·0.8 + 0.10·1 + 0.05·0.9 = 0.345
    scored = score_candidate(Candidate(make_trace(), math.nan), now=NOW, mood=None)
    assert scored.score == pytest.approx(0.345, abs=1e-6)


# --- §3 case 12: tip of the tongue -------------------------------------------------------------


def test_case12_tip_of_the_tongue() -> None:
    # S0 0.2 accessed now → strength 0.2 < 0.3; confidence min(0.8, 0.5·0.8) = 0.4.
    faint = make_trace("faint", strength=0.2, tags=["paris", "trip", "2019", "photos"])
    distant = make_trace("distant", strength=0.2)
    partials = detect_partially_retrieved(
        [Candidate(faint, 0.8), Candidate(distant, 0.5)], now=NOW, mood=None
    )
    assert len(partials) == 1
    assert partials[0].confidence == pytest.approx(0.4, abs=1e-6)
    assert partials[0] == PartialRetrieval(
        "faint", partials[0].confidence, "a memory...", ("paris", "trip", "2019")
    )


def test_tip_of_the_tongue_hand_derived() -> None:
    # Strong but doubtful: strength 0.9, confidence 0.3 < 0.4 → min(0.3, 0.45) = 0.3.
    doubtful = make_trace("doubtful", strength=0.9, confidence=0.3, content="x" * 150)
    # Strong and trusted: not partial.
    known = make_trace("known", strength=0.9)
    # Faint, similarity exactly 0.6: not partial (strictly above 0.6 required).
    edge = make_trace("edge", strength=0.1)
    # Faint, mood 0.5 and valence 0.6: 0.4·(1 + 0.25·0.3) = 0.43.
    moody = make_trace("moody", strength=0.2, valence=0.6)
    candidates = [
        Candidate(doubtful, 0.9),
        Candidate(known, 0.9),
        Candidate(edge, 0.6),
        Candidate(moody, 0.8),
    ]
    partials = detect_partially_retrieved(candidates, now=NOW, mood=PAD(0.5, 0.0, 0.0))
    assert [p.trace_id for p in partials] == ["moody", "doubtful"]
    assert partials[0].confidence == pytest.approx(0.43, abs=1e-6)
    assert partials[1].confidence == pytest.approx(0.3, abs=1e-6)
    assert partials[1].partial_content == "x" * 100 + "..."
    assert partials[1].suggested_cues == ()
    # neutral_mood drops the mood factor: moody back to 0.4.
    neutral = detect_partially_retrieved(
        candidates, now=NOW, mood=PAD(0.5, 0.0, 0.0), neutral_mood=True
    )
    assert neutral[0].confidence == pytest.approx(0.4, abs=1e-6)
    # Two days later the trusted trace has decayed to 0.9·e^-2 = 0.122 < 0.3: now partial,
    # with confidence min(0.8, 0.5·0.9) = 0.45.
    later = detect_partially_retrieved([Candidate(known, 0.9)], now=NOW + 2 * DAY, mood=None)
    assert [p.trace_id for p in later] == ["known"]
    assert later[0].confidence == pytest.approx(0.45, abs=1e-6)


# --- §3 case 16: reranker blend ----------------------------------------------------------------


def _scored(trace_id: str, score: float) -> ScoredTrace:
    base = score_candidate(Candidate(make_trace(trace_id), 0.5), now=NOW, mood=None)
    return ScoredTrace(base.trace, score, base.breakdown, 0.5, 0.0)


def test_case16_reranker_blend() -> None:
    # a: 0.7·0.6 + 0.3·0.9 = 0.69; b: 0.7·0.65 + 0.3·0.1 = 0.485; c unscored keeps 0.62.
    scored = [_scored("b", 0.65), _scored("c", 0.62), _scored("a", 0.6)]
    blended = blend_reranker(scored, {"a": 0.9, "b": 0.1})
    assert [s.trace.id for s in blended] == ["a", "c", "b"]
    assert [s.score for s in blended] == pytest.approx([0.69, 0.62, 0.485], abs=1e-6)
    assert [s.reranker_score for s in blended] == [0.9, None, 0.1]
    # The inputs are untouched.
    assert scored[2].score == 0.6
    # Cognitive weight 1 keeps the cognitive ranking; out of range is refused.
    assert [s.score for s in blend_reranker(scored, {"a": 0.9}, 1.0)] == [0.65, 0.62, 0.6]
    with pytest.raises(ValueError, match="cognitive_weight"):
        blend_reranker(scored, {}, 1.5)


# --- properties --------------------------------------------------------------------------------

_finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6)
_weight = st.floats(min_value=0.0, max_value=100.0)
_weights = st.builds(ScoringWeights, _weight, _weight, _weight, _weight, _weight, _weight)
_traces = st.builds(
    make_trace,
    strength=st.floats(min_value=0.0, max_value=1.0),
    stability=st.floats(min_value=1.0, max_value=1e9),
    last_accessed=st.floats(min_value=NOW - 1e8, max_value=NOW + 1e6),
    confidence=st.floats(min_value=0.0, max_value=1.0),
    valence=st.floats(min_value=-1.0, max_value=1.0),
)
_candidates = st.lists(
    st.builds(
        Candidate,
        _traces,
        st.floats(allow_infinity=True, allow_nan=True),
        _finite,
    ),
    max_size=8,
)


@given(
    candidates=_candidates,
    weights=_weights,
    mood=st.none() | st.builds(PAD, _finite, _finite, _finite),
    neutral=st.booleans(),
)
def test_composite_in_unit_interval_and_sorted(
    candidates: list[Candidate], weights: ScoringWeights, mood: PAD | None, neutral: bool
) -> None:
    ranked = score_candidates(candidates, now=NOW, mood=mood, weights=weights, neutral_mood=neutral)
    assert len(ranked) == len(candidates)
    assert all(0.0 <= s.score <= 1.0 for s in ranked)
    assert all(a.score >= b.score for a, b in itertools.pairwise(ranked))
    for s in ranked:
        assert 0.0 <= s.breakdown.recency <= 1.0
        assert 0.0 <= s.breakdown.strength <= 1.0
        assert 0.5 <= s.breakdown.importance <= 1.0
        assert 0.0 <= s.breakdown.emotional_congruence <= 1.0


@given(
    scores=st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=8),
    rerank=st.floats(min_value=0.0, max_value=1.0),
    weight=st.floats(min_value=0.0, max_value=1.0),
)
def test_blend_is_a_convex_combination(scores: list[float], rerank: float, weight: float) -> None:
    scored = [_scored(f"t{i}", score) for i, score in enumerate(scores)]
    blended = blend_reranker(scored, {s.trace.id: rerank for s in scored}, weight)
    by_id = {s.trace.id: s.score for s in blended}
    for original in scored:
        expected = weight * original.score + (1 - weight) * rerank
        assert by_id[original.trace.id] == pytest.approx(expected, abs=1e-9)
    assert all(a.score >= b.score for a, b in itertools.pairwise(blended))


_cosine_candidates = st.lists(
    st.builds(Candidate, _traces, st.floats(min_value=-1.0, max_value=1.0) | st.just(math.nan)),
    max_size=8,
)


@given(candidates=_cosine_candidates, mood=st.none() | st.builds(PAD, _finite, _finite, _finite))
def test_partial_confidence_bounded(candidates: list[Candidate], mood: PAD | None) -> None:
    for partial in detect_partially_retrieved(candidates, now=NOW, mood=mood):
        assert 0.0 <= partial.confidence <= 0.625
        assert partial.partial_content.endswith("...")
        assert len(partial.suggested_cues) <= 3
