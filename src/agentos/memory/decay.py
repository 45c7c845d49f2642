"""Forgetting and remembering (reference §1.14 ``DecayModel``).

A trace's strength follows the Ebbinghaus curve `MemoryTrace.strength_at` reads,
``S(t) = S0·exp(-Δt / stability)``. This module changes a trace over its life:

* `update_on_retrieval`: recalling a trace strengthens it, most when it was nearly forgotten
  (desirable difficulty), less with each recall (diminishing returns), more when it was
  emotional; its spaced-repetition interval doubles;
* `compute_interference`: similar memories weaken each other (a new trace weakens old similar
  ones, retroactive; old ones make the new one harder to encode, proactive);
* `penalize_unused`: a trace that keeps not being used loses strength and stability;
* `is_prunable` / `find_prunable`: faint, unemotional traces are candidates for removal.

Times are seconds.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from agentos.memory.trace import DAY, MINUTE, MemoryTrace

__all__ = [
    "DEFAULT_DECAY_CONFIG",
    "DecayConfig",
    "InterferenceResult",
    "InterferenceVictim",
    "SimilarTrace",
    "compute_interference",
    "find_prunable",
    "is_prunable",
    "penalize_unused",
    "update_on_retrieval",
]


@dataclass(frozen=True, slots=True)
class DecayConfig:
    """The constants of decay (reference defaults).

    A trace whose current strength is below ``pruning_threshold`` (and whose emotional intensity
    is below 0.3) may be pruned. ``recency_half_life`` (seconds) is the time constant of the
    retrieval score's recency term, ``exp(-Δt / recency_half_life)``: despite the reference's
    name it is an e-folding time, not a half-life. Traces more similar than
    ``interference_threshold`` interfere.
    """

    pruning_threshold: float = 0.05
    recency_half_life: float = DAY
    interference_threshold: float = 0.7


DEFAULT_DECAY_CONFIG = DecayConfig()
"""The reference's decay defaults."""

_PRUNE_MAX_INTENSITY = 0.3
"""Traces at least this emotionally intense are never pruned (emotional memories persist)."""

_MIN_PENALIZED_STABILITY = MINUTE
"""`penalize_unused` never halves stability below one minute (reference: 60 000 ms)."""


def update_on_retrieval(trace: MemoryTrace, now: float) -> None:
    """Strengthen ``trace`` because it was recalled at ``now`` (mutates it).

    With ``cs = trace.strength_at(now)`` and ``n = trace.retrieval_count`` before the call::

        difficulty = max(0.1, 1 - cs)             # desirable difficulty: faint traces gain most
        diminish   = 1 / (1 + 0.1·n)              # each further recall gains less
        emo_bonus  = 1 + 0.3·emotional_context.intensity
        stability *= max(1, (1.5 + 2·difficulty)·diminish·emo_bonus)
        encoding_strength = min(1, encoding_strength + 0.1)

    then ``retrieval_count`` and ``access_count`` grow by one, ``last_accessed_at`` and
    ``updated_at`` become ``now``, ``reinforcement_interval`` doubles and
    ``next_reinforcement_at`` is ``now`` plus the new interval. Neither stability nor the
    current strength ever falls.
    """
    current = trace.strength_at(now)
    difficulty = max(0.1, 1.0 - current)
    diminish = 1.0 / (1.0 + 0.1 * trace.retrieval_count)
    emo_bonus = 1.0 + 0.3 * trace.emotional_context.intensity
    # The reference multiplies without a floor, so from about the eighth recall of a strong trace
    # the product drops below 1 and recalling a memory would make it *less* stable. Diminishing
    # returns mean smaller gains, never losses: the growth factor is floored at 1.
    growth = (1.5 + 2.0 * difficulty) * diminish * emo_bonus
    trace.stability *= max(1.0, growth)
    trace.encoding_strength = min(1.0, trace.encoding_strength + 0.1)
    trace.retrieval_count += 1
    trace.access_count += 1
    trace.last_accessed_at = now
    trace.updated_at = now
    trace.reinforcement_interval *= 2.0
    trace.next_reinforcement_at = now + trace.reinforcement_interval


@dataclass(frozen=True, slots=True)
class SimilarTrace:
    """An existing trace similar to a new one: its id, cosine similarity and current strength."""

    trace_id: str
    similarity: float
    current_strength: float


@dataclass(frozen=True, slots=True)
class InterferenceVictim:
    """An existing trace a new one weakens, and by how much its strength should drop."""

    trace_id: str
    strength_reduction: float


@dataclass(frozen=True, slots=True)
class InterferenceResult:
    """What encoding a new trace among similar ones does.

    ``retroactive`` lists the existing traces the new one weakens (in the order given);
    ``proactive`` (0..0.3) is how much the existing ones weaken the new trace's strength.
    """

    retroactive: tuple[InterferenceVictim, ...]
    proactive: float


_RETROACTIVE_RATE = 0.15
_PROACTIVE_RATE = 0.1
_PROACTIVE_CAP = 0.3


def compute_interference(
    similar: Iterable[SimilarTrace], config: DecayConfig = DEFAULT_DECAY_CONFIG
) -> InterferenceResult:
    """The interference between a new trace and existing ``similar`` ones.

    Only traces with ``similarity > config.interference_threshold`` (``θ``) interfere. For each,
    the overlap ``o = (similarity - θ) / (1 - θ)`` (0..1) gives a retroactive reduction
    ``0.15·o`` of that trace's strength and adds ``0.1·o·current_strength`` to the proactive
    interference on the new trace, which is capped at 0.3. The caller applies the reductions.
    """
    threshold = config.interference_threshold
    # The reference writes (sim - 0.7) / 0.3; with a configurable threshold the same overlap is
    # measured over the range the threshold leaves, so o still runs from 0 to 1.
    span = 1.0 - threshold
    victims: list[InterferenceVictim] = []
    proactive = 0.0
    for other in similar:
        if other.similarity <= threshold or span <= 0.0:
            continue
        overlap = min(1.0, (other.similarity - threshold) / span)
        victims.append(InterferenceVictim(other.trace_id, _RETROACTIVE_RATE * overlap))
        proactive += _PROACTIVE_RATE * overlap * other.current_strength
    return InterferenceResult(tuple(victims), min(_PROACTIVE_CAP, proactive))


def penalize_unused(trace: MemoryTrace, now: float) -> None:
    """Weaken a trace that went unused (mutates it).

    ``encoding_strength`` becomes ``0.9·strength_at(now)`` and stability halves, never below one
    minute; ``last_accessed_at`` stays, so the time already elapsed keeps counting (as in the
    reference).
    """
    trace.encoding_strength = 0.9 * trace.strength_at(now)
    trace.stability = max(0.5 * trace.stability, _MIN_PENALIZED_STABILITY)
    trace.updated_at = now


def is_prunable(trace: MemoryTrace, now: float, config: DecayConfig = DEFAULT_DECAY_CONFIG) -> bool:
    """Whether ``trace`` may be pruned at ``now``.

    True when it is active, fainter than ``config.pruning_threshold`` and less emotionally
    intense than 0.3.
    """
    return (
        trace.is_active
        and trace.strength_at(now) < config.pruning_threshold
        and trace.emotional_context.intensity < _PRUNE_MAX_INTENSITY
    )


def find_prunable(
    traces: Iterable[MemoryTrace], now: float, config: DecayConfig = DEFAULT_DECAY_CONFIG
) -> list[MemoryTrace]:
    """The traces of ``traces`` that `is_prunable` accepts, in their order."""
    return [trace for trace in traces if is_prunable(trace, now, config)]
