"""Reconsolidation: a recalled trace's affect drifts toward the current mood.

Spec: "The eight mechanisms" (drift 0.05 per recall, at most 0.4 in total); reference §1.18,
run from ``recordAccess`` (§1.12). Two fixes of the reference (§5 trap 9):

* the mood's arousal runs from -1 to 1 and a trace's from 0 to 1, so the mood's arousal is
  rescaled, ``(a + 1) / 2``, before the trace's arousal drifts toward it;
* immunity reads the trace's 0..1 ``importance`` (its encoding strength when it has none) against
  a 0..1 threshold, 0.9 by default; the reference compared strength with 9, so nothing was immune.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentos.memory.mechanisms._common import affect_intensity, append_history, pad_snapshot
from agentos.memory.mechanisms.config import ReconsolidationConfig
from agentos.memory.trace import PAD, MemoryTrace

__all__ = ["Drift", "apply_reconsolidation", "is_immune"]

PERSPECTIVE_RATE_FACTOR = 0.5
"""A trace encoded from a perspective (``metadata["perspective_encoded"]``) drifts at half rate:
it already departs from what happened, and full drift would compound that."""


@dataclass(frozen=True, slots=True)
class Drift:
    """One reconsolidation: the signed changes of valence, arousal (0..1 scale) and dominance."""

    trace_id: str
    valence: float
    arousal: float
    dominance: float

    @property
    def total(self) -> float:
        """The drift's size, ``|dV| + |dA| + |dD|``, which counts against the trace's budget."""
        return abs(self.valence) + abs(self.arousal) + abs(self.dominance)


def is_immune(trace: MemoryTrace, config: ReconsolidationConfig) -> bool:
    """Whether ``trace`` is important enough never to drift."""
    importance = trace.importance if trace.importance is not None else trace.encoding_strength
    return importance >= config.immune_above_importance


def apply_reconsolidation(
    trace: MemoryTrace, mood: PAD, config: ReconsolidationConfig, now: float
) -> Drift | None:
    """Drift ``trace``'s emotional context toward ``mood`` (mutates ``trace``).

    Each of V, A, D moves by ``rate · (target - current)``, where the arousal target is the mood's
    arousal rescaled to 0..1; when ``|dV| + |dA| + |dD|`` exceeds what is left of
    ``max_drift_per_trace`` the three are scaled down to the remainder. Intensity is recomputed as
    ``|V| · max(0, A)``; ``metadata["cumulative_drift"]`` and ``metadata["drift_history"]`` record
    it. Returns the drift, or ``None`` when disabled, immune, out of budget or already at the mood.
    """
    if not config.enabled or is_immune(trace, config):
        return None
    cumulative = float(trace.metadata.get("cumulative_drift", 0.0))
    remaining = config.max_drift_per_trace - cumulative
    if remaining <= 0.0:
        return None
    rate = config.drift_rate
    if trace.metadata.get("perspective_encoded") is True:
        rate *= PERSPECTIVE_RATE_FACTOR
    emotion = trace.emotional_context
    target_arousal = (mood.arousal + 1.0) / 2.0
    dv = rate * (mood.valence - emotion.valence)
    da = rate * (target_arousal - emotion.arousal)
    dd = rate * (mood.dominance - emotion.dominance)
    total = abs(dv) + abs(da) + abs(dd)
    if total == 0.0:
        return None
    if total > remaining:
        scale = remaining / total
        dv, da, dd = dv * scale, da * scale, dd * scale
    before = pad_snapshot(emotion)
    emotion.valence += dv
    emotion.arousal += da
    emotion.dominance += dd
    emotion.intensity = affect_intensity(emotion)
    drift = Drift(trace.id, dv, da, dd)
    # min() keeps float rounding from pushing the recorded total past the budget.
    trace.metadata["cumulative_drift"] = min(config.max_drift_per_trace, cumulative + drift.total)
    append_history(
        trace, "drift_history", {"at": now, "before": before, "after": pad_snapshot(emotion)}
    )
    return drift
