"""Involuntary recall: now and then an old, emotional memory surfaces unprompted.

Spec: "The eight mechanisms" (probability 0.08, at least 14 days old, strength at least 0.15);
reference §1.18. The reference never calls it (§5 trap 9); here the prompt assembly does, and the
chance comes from an injected `random.Random` (DESIGN.md §5.5), so a seeded test is exact.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Iterable

from agentos.memory.mechanisms._common import affect_intensity
from agentos.memory.mechanisms.config import InvoluntaryRecallConfig
from agentos.memory.trace import DAY, MemoryTrace

__all__ = ["MIN_RECALL_WEIGHT", "select_involuntary_memory"]

MIN_RECALL_WEIGHT = 0.01
"""A neutral memory's weight in the draw: rare, but never impossible."""


def select_involuntary_memory(
    traces: Iterable[MemoryTrace],
    retrieved_ids: Collection[str],
    config: InvoluntaryRecallConfig,
    rng: random.Random,
    now: float,
) -> MemoryTrace | None:
    """A memory that surfaces unprompted, or ``None``.

    First draw: ``rng.random() >= probability`` → ``None``. Candidates are active traces not in
    ``retrieved_ids``, older than ``min_age_days`` (strictly) with encoding strength at least
    ``min_strength``; one is drawn (second draw) with weight ``max(0.01, |V| · max(0, A))``, so
    vivid memories surface more often. The trace is not changed.
    """
    if not config.enabled or rng.random() >= config.probability:
        return None
    min_age = config.min_age_days * DAY
    candidates = [
        t
        for t in traces
        if t.is_active
        and t.id not in retrieved_ids
        and t.age_at(now) > min_age
        and t.encoding_strength >= config.min_strength
    ]
    if not candidates:
        return None
    weights = [max(MIN_RECALL_WEIGHT, affect_intensity(t.emotional_context)) for t in candidates]
    roll = rng.random() * sum(weights)
    for trace, weight in zip(candidates, weights, strict=True):
        roll -= weight
        if roll <= 0.0:
            return trace
    return candidates[-1]  # float rounding left a sliver of the roll
