"""Emotion regulation: intense memories are reappraised, and those still intense suppressed.

Spec: "The eight mechanisms" (reappraisal rate 0.15, suppression above 0.8, at most 10 per
cycle); reference §1.18, run at consolidation (§1.20 step 6).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from agentos.memory.mechanisms._common import (
    FLASHBULB_STRENGTH,
    affect_intensity,
    append_history,
)
from agentos.memory.mechanisms.config import EmotionRegulationConfig
from agentos.memory.trace import MemoryTrace

__all__ = [
    "MIN_REGULATED_AROUSAL",
    "SUPPRESSION_STRENGTH_FACTOR",
    "Regulation",
    "apply_emotion_regulation",
]

MIN_REGULATED_AROUSAL = 0.6
"""Only traces with arousal (0..1) above this are regulated."""

SUPPRESSION_STRENGTH_FACTOR = 0.9
"""Suppression lowers a trace's encoding strength by this factor and leaves its feeling as is."""


@dataclass(frozen=True, slots=True)
class Regulation:
    """What one cycle did: the traces reappraised and those suppressed (a trace may be both)."""

    reappraised: tuple[MemoryTrace, ...] = ()
    suppressed: tuple[MemoryTrace, ...] = ()


def _over(trace: MemoryTrace, config: EmotionRegulationConfig) -> bool:
    emotion = trace.emotional_context
    return (
        abs(emotion.valence) > config.suppression_threshold
        and emotion.arousal > MIN_REGULATED_AROUSAL
    )


def apply_emotion_regulation(
    traces: Iterable[MemoryTrace], config: EmotionRegulationConfig, now: float
) -> Regulation:
    """Regulate the intense traces (mutates them).

    Candidates are active traces below flashbulb strength (0.9) with ``|V| >
    suppression_threshold`` and ``A > 0.6``, most aroused first. The first
    ``max_regulation_per_cycle`` are reappraised: V and A * (1 - ``reappraisal_rate``),
    intensity recomputed, an entry appended to ``metadata["regulation_history"]``. Then every
    candidate still over both bounds is suppressed: encoding strength * 0.9.
    """
    if not config.enabled:
        return Regulation()
    candidates = [
        t
        for t in traces
        if t.is_active and t.encoding_strength < FLASHBULB_STRENGTH and _over(t, config)
    ]
    candidates.sort(key=lambda t: t.emotional_context.arousal, reverse=True)
    reappraised: list[MemoryTrace] = []
    for trace in candidates[: config.max_regulation_per_cycle]:
        emotion = trace.emotional_context
        entry = {
            "at": now,
            "kind": "reappraisal",
            "previous_valence": emotion.valence,
            "previous_arousal": emotion.arousal,
        }
        emotion.valence *= 1.0 - config.reappraisal_rate
        emotion.arousal *= 1.0 - config.reappraisal_rate
        emotion.intensity = affect_intensity(emotion)
        append_history(trace, "regulation_history", entry)
        reappraised.append(trace)
    suppressed: list[MemoryTrace] = []
    for trace in candidates:
        if _over(trace, config):
            previous = trace.encoding_strength
            trace.encoding_strength = previous * SUPPRESSION_STRENGTH_FACTOR
            append_history(
                trace,
                "regulation_history",
                {"at": now, "kind": "suppression", "previous_strength": previous},
            )
            suppressed.append(trace)
    return Regulation(tuple(reappraised), tuple(suppressed))
