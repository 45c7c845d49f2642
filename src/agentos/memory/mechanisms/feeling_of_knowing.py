"""Feeling of knowing: near misses of a retrieval surface as tip-of-the-tongue signals.

Spec: "The eight mechanisms" (partial activations above 0.3); reference §1.18. The reference
computes the signals and discards them (§5 trap 9); here the retrieval returns them.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from agentos.memory.mechanisms.candidates import Candidate
from agentos.memory.mechanisms.config import MetacognitiveFOKConfig
from agentos.memory.trace import DAY, MemoryTrace

__all__ = ["HIGH_CONFIDENCE_FOK", "FeelingOfKnowing", "detect_feeling_of_knowing", "partial_info"]

HIGH_CONFIDENCE_FOK = 0.6
"""A feeling of knowing above this is ``high_confidence``; at or below, ``tip_of_tongue``."""

PARTIAL_INFO_SEPARATOR = " | "
PARTIAL_INFO_ENTITIES = 3

FOKLevel = Literal["high_confidence", "tip_of_tongue"]


@dataclass(frozen=True, slots=True)
class FeelingOfKnowing:
    """A memory the retrieval almost reached.

    ``fok`` (0..1) is how strongly it is felt; ``partial_info`` is what comes to mind, e.g.
    ``"Paris, Lyon | mood: nostalgic | ~12 days ago"``, or ``None`` when nothing does.
    """

    trace_id: str
    level: FOKLevel
    fok: float
    partial_info: str | None


def partial_info(trace: MemoryTrace, now: float) -> str | None:
    """What comes to mind of ``trace``: entities, mood, age.

    The first three entities, the mood (unless neutral) and the age in whole days (if at least
    one), joined with `` | ``.
    """
    parts: list[str] = []
    if trace.entities:
        parts.append(", ".join(trace.entities[:PARTIAL_INFO_ENTITIES]))
    mood = trace.emotional_context.gmi_mood
    if mood and mood.lower() != "neutral":
        parts.append(f"mood: {mood}")
    days = math.floor(trace.age_at(now) / DAY)
    if days > 0:
        parts.append(f"~{days} days ago")
    return PARTIAL_INFO_SEPARATOR.join(parts) if parts else None


def _entity_overlap(query_entities: set[str], trace: MemoryTrace) -> float:
    if not query_entities or not trace.entities:
        return 0.0
    shared = sum(1 for e in trace.entities if e.lower() in query_entities)
    return shared / max(len(query_entities), len(trace.entities))


def detect_feeling_of_knowing(
    candidates: Iterable[Candidate],
    retrieved_ids: Collection[str],
    cutoff_score: float,
    config: MetacognitiveFOKConfig,
    now: float,
    query_entities: Sequence[str] = (),
) -> list[FeelingOfKnowing]:
    """Signals for the candidates whose score lies in ``[threshold, cutoff_score)``.

    ``threshold`` is ``partial_activation_threshold`` and ``cutoff_score`` the lowest score that
    was retrieved. For each such candidate not in ``retrieved_ids``::

        fok = min(1, 0.4 · (score - thr) / (cutoff - thr) + 0.3 · similarity
                     + 0.3 · |shared entities| / max(|query entities|, |trace entities|))

    (entities compared case-insensitively); ``fok > 0.6`` is ``high_confidence``, otherwise
    ``tip_of_tongue``, left out when ``surface_tip_of_tongue`` is false. Sorted by ``fok``,
    highest first.
    """
    if not config.enabled:
        return []
    threshold = config.partial_activation_threshold
    span = cutoff_score - threshold
    wanted = {e.lower() for e in query_entities}
    signals: list[FeelingOfKnowing] = []
    seen: set[str] = set()
    for candidate in candidates:
        trace, score = candidate.trace, candidate.score
        if trace.id in retrieved_ids or trace.id in seen or not threshold <= score < cutoff_score:
            continue
        seen.add(trace.id)
        gap = (score - threshold) / span if span > 0 else 0.0
        fok = min(
            1.0,
            0.4 * gap + 0.3 * candidate.vector_similarity + 0.3 * _entity_overlap(wanted, trace),
        )
        level: FOKLevel = "high_confidence" if fok > HIGH_CONFIDENCE_FOK else "tip_of_tongue"
        if level == "tip_of_tongue" and not config.surface_tip_of_tongue:
            continue
        signals.append(FeelingOfKnowing(trace.id, level, fok, partial_info(trace, now)))
    signals.sort(key=lambda s: s.fok, reverse=True)
    return signals
