"""The composite retrieval score (reference §1.15 ``RetrievalPriorityScorer``; spec: Retrieval).

Each candidate a search returns is scored on six terms, each in 0..1 for well-formed input::

    similarity = the candidate's vector similarity (cosine)
    strength   = trace.strength_at(now)                          (Ebbinghaus)
    emotional  = max(0, mood.valence·trace valence)              (0 with no mood or neutral_mood;
                                                                  valences clamped to -1..1)
    recency    = exp(-(now - last_accessed_at) / 1 day)
    graph      = the candidate's spreading activation
    importance = 0.5 + 0.5·provenance.confidence

and ``score = clamp01(Σ weight·term)`` with the weights of `ScoringWeights` (0.35, 0.25, 0.15,
0.10, 0.10, 0.05). The module also finds tip-of-the-tongue candidates
(`detect_partially_retrieved`) and blends a reranker's opinion into the ranking
(`blend_reranker`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace

from agentos.memory.trace import DAY, PAD, MemoryTrace

__all__ = [
    "DEFAULT_SCORING_WEIGHTS",
    "Candidate",
    "PartialRetrieval",
    "ScoreBreakdown",
    "ScoredTrace",
    "ScoringWeights",
    "blend_reranker",
    "detect_partially_retrieved",
    "score_candidate",
    "score_candidates",
]


@dataclass(frozen=True, slots=True)
class ScoringWeights:
    """The weight of each term of the composite score (spec defaults).

    Weights are finite and non-negative; they need not sum to 1 (the composite is clamped to
    0..1). `ScoringWeights.merged` lays an override mapping over a set of weights.
    """

    similarity: float = 0.35
    strength: float = 0.25
    emotional_congruence: float = 0.15
    recency: float = 0.10
    graph_activation: float = 0.10
    importance: float = 0.05

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or value < 0
            ):
                raise ValueError(
                    f"scoring weight {f.name} must be a finite number >= 0, got {value!r}"
                )

    def merged(self, overrides: Mapping[str, float] | None) -> ScoringWeights:
        """These weights with ``overrides`` laid over them.

        Keys are the field names or the reference's camelCase spellings (``emotionalCongruence``,
        ``graphActivation``); any other key raises `ValueError` naming it, as does a value that
        is not a finite number >= 0. ``{"similarity": 0}`` removes the similarity term.
        """
        if not overrides:
            return self
        changes: dict[str, float] = {}
        unknown: list[str] = []
        for key, value in overrides.items():
            name = _WEIGHT_NAMES.get(key)
            if name is None:
                unknown.append(str(key))
            else:
                changes[name] = value
        if unknown:
            raise ValueError(
                f"unknown scoring weight(s) {', '.join(sorted(unknown))}; "
                f"the weights are {', '.join(f.name for f in fields(ScoringWeights))}"
            )
        return replace(self, **changes)


_WEIGHT_NAMES: dict[str, str] = {f.name: f.name for f in fields(ScoringWeights)} | {
    "emotionalCongruence": "emotional_congruence",
    "graphActivation": "graph_activation",
}

DEFAULT_SCORING_WEIGHTS = ScoringWeights()
"""The spec's weights: similarity 0.35, strength 0.25, emotional congruence 0.15, recency 0.10,
graph activation 0.10, importance 0.05."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A trace up for ranking: its vector similarity to the query and its graph activation."""

    trace: MemoryTrace
    vector_similarity: float
    graph_activation: float = 0.0


@dataclass(frozen=True, slots=True)
class ScoreBreakdown:
    """The six terms of a composite score, before weighting."""

    similarity: float
    strength: float
    emotional_congruence: float
    recency: float
    graph_activation: float
    importance: float


@dataclass(frozen=True, slots=True)
class ScoredTrace:
    """A ranked trace: its composite ``score`` (0..1), the terms behind it and its inputs.

    ``reranker_score`` is set once `blend_reranker` has blended a reranker's score into
    ``score``.
    """

    trace: MemoryTrace
    score: float
    breakdown: ScoreBreakdown
    vector_similarity: float
    graph_activation: float
    reranker_score: float | None = None


def _finite(value: float) -> float:
    # A NaN from a broken vector must not poison the ranking: it counts as no signal.
    return value if math.isfinite(value) else 0.0


def _clamp01(value: float) -> float:
    if math.isnan(value):
        return 0.0
    return min(1.0, max(0.0, value))


def _unit(value: float) -> float:
    # Valences live in -1..1; clamping keeps the congruence term in 0..1 whatever is passed.
    return min(1.0, max(-1.0, _finite(value)))


def _congruence(mood: PAD | None, trace: MemoryTrace, neutral_mood: bool) -> float:
    if neutral_mood or mood is None:
        return 0.0
    return max(0.0, _unit(mood.valence) * _unit(trace.emotional_context.valence))


def score_candidate(
    candidate: Candidate,
    *,
    now: float,
    mood: PAD | None,
    weights: ScoringWeights = DEFAULT_SCORING_WEIGHTS,
    neutral_mood: bool = False,
    recency_scale: float = DAY,
) -> ScoredTrace:
    """Score one candidate at ``now`` under ``mood`` (the module docstring gives the terms).

    ``recency_scale`` (seconds) is the recency term's time constant (`DecayConfig`'s
    ``recency_half_life``); a last access after ``now`` counts as now, so recency is at most 1.
    """
    trace = candidate.trace
    similarity = _finite(candidate.vector_similarity)
    graph = _finite(candidate.graph_activation)
    elapsed = max(0.0, now - trace.last_accessed_at)
    breakdown = ScoreBreakdown(
        similarity=similarity,
        strength=trace.strength_at(now),
        emotional_congruence=_congruence(mood, trace, neutral_mood),
        recency=math.exp(-elapsed / recency_scale),
        graph_activation=graph,
        importance=0.5 + 0.5 * _finite(trace.provenance.confidence),
    )
    composite = (
        weights.similarity * breakdown.similarity
        + weights.strength * breakdown.strength
        + weights.emotional_congruence * breakdown.emotional_congruence
        + weights.recency * breakdown.recency
        + weights.graph_activation * breakdown.graph_activation
        + weights.importance * breakdown.importance
    )
    return ScoredTrace(
        trace=trace,
        score=_clamp01(composite),
        breakdown=breakdown,
        vector_similarity=candidate.vector_similarity,
        graph_activation=candidate.graph_activation,
    )


def score_candidates(
    candidates: Iterable[Candidate],
    *,
    now: float,
    mood: PAD | None,
    weights: ScoringWeights | Mapping[str, float] = DEFAULT_SCORING_WEIGHTS,
    neutral_mood: bool = False,
    recency_scale: float = DAY,
) -> list[ScoredTrace]:
    """Score every candidate (`score_candidate`) and rank them by score, highest first.

    ``weights`` may be a mapping of overrides, merged over the defaults
    (`ScoringWeights.merged`). Equal scores keep the candidates' order.
    """
    if not isinstance(weights, ScoringWeights):
        weights = DEFAULT_SCORING_WEIGHTS.merged(weights)
    scored = [
        score_candidate(
            candidate,
            now=now,
            mood=mood,
            weights=weights,
            neutral_mood=neutral_mood,
            recency_scale=recency_scale,
        )
        for candidate in candidates
    ]
    # sorted() is stable and reverse=True keeps equal items in their original order.
    return sorted(scored, key=lambda item: item.score, reverse=True)


@dataclass(frozen=True, slots=True)
class PartialRetrieval:
    """A tip-of-the-tongue memory: close to the query but too faint or doubtful to recall.

    ``confidence`` is how sure the memory is that it knows something (0..0.625 for a cosine
    similarity and a provenance confidence in 0..1);
    ``partial_content`` is the content's first 100 characters followed by ``...``;
    ``suggested_cues`` are the trace's first three tags.
    """

    trace_id: str
    confidence: float
    partial_content: str
    suggested_cues: tuple[str, ...]


_PARTIAL_MIN_SIMILARITY = 0.6
_PARTIAL_MAX_STRENGTH = 0.3
_PARTIAL_MAX_CONFIDENCE = 0.4
_PARTIAL_CONTENT_CHARS = 100


def detect_partially_retrieved(
    candidates: Sequence[Candidate],
    *,
    now: float,
    mood: PAD | None,
    neutral_mood: bool = False,
) -> list[PartialRetrieval]:
    """The candidates on the tip of the tongue, most confident first.

    A candidate qualifies when its similarity exceeds 0.6 and its strength at ``now`` is below
    0.3 or its provenance confidence below 0.4. Its confidence is
    ``min(confidence, 0.5·similarity)``, multiplied by ``1 + 0.25·max(0, mood.valence·trace
    valence)`` when there is a mood with non-zero valence and ``neutral_mood`` is off. Equal
    confidences keep the candidates' order.
    """
    partials: list[PartialRetrieval] = []
    for candidate in candidates:
        trace = candidate.trace
        similarity = _finite(candidate.vector_similarity)
        confidence = trace.provenance.confidence
        if similarity <= _PARTIAL_MIN_SIMILARITY:
            continue
        if not (
            trace.strength_at(now) < _PARTIAL_MAX_STRENGTH or confidence < _PARTIAL_MAX_CONFIDENCE
        ):
            continue
        feeling = min(confidence, 0.5 * similarity)
        if mood is not None and mood.valence != 0 and not neutral_mood:
            feeling *= 1.0 + 0.25 * _congruence(mood, trace, neutral_mood)
        partials.append(
            PartialRetrieval(
                trace_id=trace.id,
                confidence=feeling,
                partial_content=trace.content[:_PARTIAL_CONTENT_CHARS] + "...",
                suggested_cues=tuple(trace.tags[:3]),
            )
        )
    return sorted(partials, key=lambda item: item.confidence, reverse=True)


def blend_reranker(
    scored: Iterable[ScoredTrace],
    reranker_scores: Mapping[str, float],
    cognitive_weight: float = 0.7,
) -> list[ScoredTrace]:
    """Blend a reranker's scores (by trace id) into the composite scores and re-rank.

    A trace the reranker scored gets ``cognitive_weight·score + (1 - cognitive_weight)·reranker``
    (the spec's 0.7 / 0.3) and keeps its reranker score in ``reranker_score``; a trace it did not
    score keeps its composite score. Blends are clamped to 0..1 (a reranker's scores are meant to
    lie there). The result is sorted by score, highest first, ties in their order.
    ``cognitive_weight`` must be within 0..1.
    """
    if not 0.0 <= cognitive_weight <= 1.0:
        raise ValueError(f"cognitive_weight must be within 0..1, got {cognitive_weight!r}")
    blended: list[ScoredTrace] = []
    for item in scored:
        rerank = reranker_scores.get(item.trace.id)
        if rerank is None:
            blended.append(item)
            continue
        score = _clamp01(cognitive_weight * item.score + (1.0 - cognitive_weight) * _finite(rerank))
        blended.append(replace(item, score=score, reranker_score=rerank))
    return sorted(blended, key=lambda item: item.score, reverse=True)
