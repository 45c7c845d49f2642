"""Source-confidence decay: memories from less reliable sources lose stability faster.

Spec: "The eight mechanisms" (user statements and tool results 1.0, observations 0.95, external
0.90, agent inferences 0.80, reflections 0.75); reference §1.18, run at consolidation (§1.20
step 6).
"""

from __future__ import annotations

from collections.abc import Iterable

from agentos.memory.mechanisms.config import SourceConfidenceDecayConfig
from agentos.memory.trace import HOUR, MemoryTrace

__all__ = [
    "SOURCE_DECAY_INTERVAL",
    "STRONG_TRACE_FLOOR",
    "STRONG_TRACE_STRENGTH",
    "apply_source_confidence_decay",
]

SOURCE_DECAY_INTERVAL = HOUR
"""A trace is decayed at most once in this many seconds, however often consolidation runs."""

STRONG_TRACE_STRENGTH = 0.8
STRONG_TRACE_FLOOR = 0.9
"""A trace with encoding strength ≥ 0.8 is multiplied by no less than 0.9."""


def apply_source_confidence_decay(
    traces: Iterable[MemoryTrace], config: SourceConfidenceDecayConfig, now: float
) -> list[MemoryTrace]:
    """Multiply each due trace's stability by its source's multiplier; return those changed.

    A trace is due when active and not decayed in the last hour
    (``metadata["last_source_decay_at"]``). Its multiplier is ``decay_multipliers[source]``,
    raised to 0.9 for encoding strength ≥ 0.8; only a multiplier below 1 is applied, and then the
    time is recorded.
    """
    if not config.enabled:
        return []
    decayed: list[MemoryTrace] = []
    for trace in traces:
        if not trace.is_active:
            continue
        last = trace.metadata.get("last_source_decay_at")
        if last is not None and now - float(last) < SOURCE_DECAY_INTERVAL:
            continue
        source = trace.provenance.source_type
        multiplier = config.decay_multipliers.get(str(source), 1.0)
        if trace.encoding_strength >= STRONG_TRACE_STRENGTH:
            multiplier = max(multiplier, STRONG_TRACE_FLOOR)
        if multiplier < 1.0:
            trace.stability *= multiplier
            trace.metadata["last_source_decay_at"] = now
            decayed.append(trace)
    return decayed
