"""Helpers the mechanism modules share (private)."""

from __future__ import annotations

from typing import Any

from agentos.memory.trace import EmotionalContext, MemoryTrace

FLASHBULB_STRENGTH = 0.9
"""Encoding strength from which a trace counts as flashbulb-grade and is left alone."""

HISTORY_LIMIT = 20
"""Entries kept in a trace's per-mechanism history lists, so metadata stays bounded."""


def affect_intensity(emotion: EmotionalContext) -> float:
    """``|valence| · max(0, arousal)``: how vivid a trace's affect is (reference §1.18)."""
    return abs(emotion.valence) * max(0.0, emotion.arousal)


def append_history(trace: MemoryTrace, key: str, entry: dict[str, Any]) -> None:
    """Append ``entry`` to ``trace.metadata[key]``, keeping the last `HISTORY_LIMIT` entries."""
    history = list(trace.metadata.get(key) or [])
    history.append(entry)
    trace.metadata[key] = history[-HISTORY_LIMIT:]


def pad_snapshot(emotion: EmotionalContext) -> dict[str, float]:
    """The valence, arousal and dominance of ``emotion`` as a JSON-ready mapping."""
    return {
        "valence": emotion.valence,
        "arousal": emotion.arousal,
        "dominance": emotion.dominance,
    }
