"""Decay (reference §1.14): §3 memory-math cases 1-5, hand-derived cases, properties."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentos.memory.decay import (
    DEFAULT_DECAY_CONFIG,
    DecayConfig,
    InterferenceVictim,
    SimilarTrace,
    compute_interference,
    find_prunable,
    is_prunable,
    penalize_unused,
    update_on_retrieval,
)
from agentos.memory.trace import (
    DAY,
    HOUR,
    EmotionalContext,
    MemoryScope,
    MemoryTrace,
    MemoryType,
)
from agentos.testing import FakeClock

NOW = 1_700_000_000.0


def make_trace(
    strength: float,
    stability: float,
    *,
    at: float = NOW,
    intensity: float = 0.0,
    retrieval_count: int = 0,
    trace_id: str = "t",
) -> MemoryTrace:
    return MemoryTrace(
        id=trace_id,
        type=MemoryType.EPISODIC,
        scope=MemoryScope.USER,
        scope_id="u",
        content="something",
        created_at=at,
        encoding_strength=strength,
        stability=stability,
        emotional_context=EmotionalContext(intensity=intensity),
        retrieval_count=retrieval_count,
    )


# --- §3 case 1: the Ebbinghaus curve -----------------------------------------------------------


def test_case1_decay_one_stability_later() -> None:
    trace = make_trace(1.0, HOUR)
    assert trace.strength_at(NOW + HOUR) == pytest.approx(0.367879, abs=1e-6)
    assert trace.strength_at(NOW - HOUR) == pytest.approx(1.0, abs=1e-6)


def test_case1_on_a_fake_clock() -> None:
    clock = FakeClock()
    trace = make_trace(1.0, HOUR, at=clock.timestamp())
    clock.advance(timedelta(hours=1))
    assert trace.strength_at(clock.timestamp()) == pytest.approx(math.exp(-1), abs=1e-6)


# --- §3 case 2: pruning after days -------------------------------------------------------------


def test_case2_prunable_after_three_days() -> None:
    trace = make_trace(0.8, DAY)
    later = NOW + 3 * DAY
    assert trace.strength_at(later) == pytest.approx(0.039830, abs=1e-6)
    assert is_prunable(trace, later)
    emotional = make_trace(0.8, DAY, intensity=0.3, trace_id="e")
    assert not is_prunable(emotional, later)
    inactive = make_trace(0.8, DAY, trace_id="i")
    inactive.is_active = False
    assert not is_prunable(inactive, later)
    assert find_prunable([emotional, trace, inactive], later) == [trace]


def test_pruning_threshold_is_configurable() -> None:
    # 0.8·e^-3 = 0.03983 is not below a threshold of 0.03.
    trace = make_trace(0.8, DAY)
    assert not is_prunable(trace, NOW + 3 * DAY, DecayConfig(pruning_threshold=0.03))
    assert not is_prunable(trace, NOW + 2 * DAY)  # 0.8·e^-2 = 0.108


# --- §3 case 3: retrieval update ---------------------------------------------------------------


def test_case3_retrieval_update() -> None:
    trace = make_trace(0.5, HOUR)
    trace.access_count = 4
    update_on_retrieval(trace, NOW)
    assert trace.encoding_strength == pytest.approx(0.6, abs=1e-6)
    assert trace.stability == pytest.approx(9_000.0, abs=1e-6)  # 9 000 000 ms
    assert trace.retrieval_count == 1
    assert trace.access_count == 5
    assert trace.reinforcement_interval == pytest.approx(2 * HOUR, abs=1e-6)
    assert trace.next_reinforcement_at == pytest.approx(NOW + 2 * HOUR, abs=1e-6)
    assert trace.last_accessed_at == NOW
    assert trace.updated_at == NOW


def test_case3_diminishing_returns_after_ten_retrievals() -> None:
    trace = make_trace(0.5, HOUR, retrieval_count=10)
    update_on_retrieval(trace, NOW)
    assert trace.stability == pytest.approx(4_500.0, abs=1e-6)  # 4 500 000 ms
    assert trace.retrieval_count == 11


# --- §3 case 4: desirable difficulty -----------------------------------------------------------


def test_case4_desirable_difficulty() -> None:
    immediate = make_trace(0.9, HOUR)
    update_on_retrieval(immediate, NOW)
    assert immediate.stability == pytest.approx(HOUR * 1.7, abs=1e-6)

    later = make_trace(0.9, HOUR)
    assert later.strength_at(NOW + 2 * HOUR) == pytest.approx(0.1218, abs=1e-4)
    update_on_retrieval(later, NOW + 2 * HOUR)
    # 1.5 + 2·(1 - 0.9·e^-2) = 3.2563965; 3600·3.2563965 = 11 723.027 s (11 723 027 ms)
    assert later.stability / HOUR == pytest.approx(3.2564, abs=1e-4)
    assert later.stability == pytest.approx(11_723.027, abs=1e-3)
    assert later.stability == pytest.approx(HOUR * (3.5 - 1.8 * math.exp(-2)), abs=1e-6)


# --- hand-derived retrieval cases --------------------------------------------------------------


def test_emotional_bonus_and_second_retrieval() -> None:
    # strength 0.5, Δt 0 → difficulty 0.5, factor 2.5; retrieval_count 1 → diminish 1/1.1;
    # intensity 0.5 → bonus 1.15. stability = 3600·2.5·1.15/1.1 = 9 409.0909 s
    trace = make_trace(0.5, HOUR, intensity=0.5, retrieval_count=1)
    trace.reinforcement_interval = 2 * HOUR
    update_on_retrieval(trace, NOW)
    assert trace.strength_at(NOW) == pytest.approx(0.6, abs=1e-6)
    assert trace.stability == pytest.approx(HOUR * 2.5 * 1.15 / 1.1, abs=1e-6)
    assert trace.stability == pytest.approx(9_409.090909, abs=1e-6)
    assert trace.reinforcement_interval == pytest.approx(4 * HOUR)
    assert trace.next_reinforcement_at == pytest.approx(NOW + 4 * HOUR)


def test_strength_is_capped_at_one() -> None:
    trace = make_trace(0.95, HOUR)
    update_on_retrieval(trace, NOW)
    assert trace.encoding_strength == 1.0


def test_many_retrievals_never_shrink_stability() -> None:
    # Deviation from the reference: strength 1, retrieval_count 20 → growth
    # 1.7·1/(1 + 2) = 0.567 < 1; the reference would cut stability to 2 040 s, here it stays.
    trace = make_trace(1.0, HOUR, retrieval_count=20)
    update_on_retrieval(trace, NOW)
    assert trace.stability == pytest.approx(HOUR, abs=1e-6)
    assert trace.retrieval_count == 21


# --- §3 case 5: interference -------------------------------------------------------------------


def test_case5_interference() -> None:
    one = compute_interference([SimilarTrace("a", 0.9, 0.8)])
    assert len(one.retroactive) == 1
    assert one.retroactive[0] == InterferenceVictim("a", one.retroactive[0].strength_reduction)
    assert one.retroactive[0].strength_reduction == pytest.approx(0.1, abs=1e-6)
    assert one.proactive == pytest.approx(0.053333, abs=1e-6)  # 0.1·(2/3)·0.8

    four = compute_interference([SimilarTrace(f"t{i}", 0.99, 1.0) for i in range(4)])
    assert four.proactive == pytest.approx(0.3, abs=1e-6)  # 4·0.1·0.9667 = 0.387, capped
    assert len(four.retroactive) == 4

    strict = compute_interference(
        [SimilarTrace("a", 0.85, 1.0)], DecayConfig(interference_threshold=0.9)
    )
    assert strict.retroactive == ()
    assert strict.proactive == 0.0


def test_interference_hand_derived() -> None:
    # sim 0.7 is not above the threshold; sim 1.0 → o = 1, reduction 0.15, proactive 0.1·0.5;
    # sim 0.8 → o = 1/3, reduction 0.05, proactive 0.1·(1/3)·0.3 = 0.01. Total 0.06.
    result = compute_interference(
        [SimilarTrace("x", 0.7, 1.0), SimilarTrace("y", 1.0, 0.5), SimilarTrace("z", 0.8, 0.3)]
    )
    assert [v.trace_id for v in result.retroactive] == ["y", "z"]
    assert result.retroactive[0].trace_id == "y"
    assert result.retroactive[0].strength_reduction == pytest.approx(0.15, abs=1e-6)
    assert result.retroactive[1].strength_reduction == pytest.approx(0.05, abs=1e-6)
    assert result.proactive == pytest.approx(0.06, abs=1e-6)
    # Threshold 0.9, sim 0.95: o = 0.05 / 0.1 = 0.5 → reduction 0.075.
    high = compute_interference(
        [SimilarTrace("a", 0.95, 1.0)], DecayConfig(interference_threshold=0.9)
    )
    assert high.retroactive[0].strength_reduction == pytest.approx(0.075, abs=1e-6)
    assert high.proactive == pytest.approx(0.05, abs=1e-6)
    assert compute_interference([]).proactive == 0.0


# --- penalize_unused ---------------------------------------------------------------------------


def test_penalize_unused() -> None:
    # strength 0.8, stability 1000 s, 1000 s later: S = 0.8·e^-1 = 0.294304;
    # new S0 = 0.9·0.294304 = 0.264873, stability 500 s.
    trace = make_trace(0.8, 1_000.0)
    penalize_unused(trace, NOW + 1_000.0)
    assert trace.encoding_strength == pytest.approx(0.264873, abs=1e-6)
    assert trace.stability == pytest.approx(500.0, abs=1e-6)
    assert trace.last_accessed_at == NOW  # elapsed time keeps counting
    # stability 100 s halves to 50 s, floored at 60 s.
    short = make_trace(0.8, 100.0)
    penalize_unused(short, NOW)
    assert short.stability == pytest.approx(60.0, abs=1e-6)
    assert short.encoding_strength == pytest.approx(0.72, abs=1e-6)


def test_default_config() -> None:
    assert DecayConfig(0.05, DAY, 0.7) == DEFAULT_DECAY_CONFIG


# --- properties --------------------------------------------------------------------------------

_strength = st.floats(min_value=0.0, max_value=1.0)
_stability = st.floats(min_value=1.0, max_value=1e9)
_offset = st.floats(min_value=-1e7, max_value=1e8)


@given(strength=_strength, stability=_stability, t1=_offset, t2=_offset)
def test_strength_is_non_increasing_and_bounded(
    strength: float, stability: float, t1: float, t2: float
) -> None:
    trace = make_trace(strength, stability)
    early, late = sorted((t1, t2))
    s_early = trace.strength_at(NOW + early)
    s_late = trace.strength_at(NOW + late)
    assert 0.0 <= s_late <= s_early <= strength


@given(
    strength=_strength,
    stability=_stability,
    elapsed=st.floats(min_value=0.0, max_value=1e8),
    intensity=st.floats(min_value=0.0, max_value=1.0),
    count=st.integers(min_value=0, max_value=1000),
)
def test_retrieval_never_lowers_stability_or_strength(
    strength: float, stability: float, elapsed: float, intensity: float, count: int
) -> None:
    trace = make_trace(strength, stability, intensity=intensity, retrieval_count=count)
    now = NOW + elapsed
    before_current = trace.strength_at(now)
    interval = trace.reinforcement_interval
    update_on_retrieval(trace, now)
    assert trace.stability >= stability
    assert trace.encoding_strength >= strength
    assert trace.encoding_strength <= 1.0
    assert trace.strength_at(now) >= before_current
    assert trace.retrieval_count == count + 1
    assert trace.next_reinforcement_at == pytest.approx(now + 2 * interval)


@given(
    # No subnormal similarities: 0.15 times one underflows to 0.0, which no cosine yields.
    sims=st.lists(
        st.tuples(st.floats(min_value=-1.0, max_value=1.0, allow_subnormal=False), _strength),
        max_size=20,
    ),
    threshold=st.floats(min_value=0.0, max_value=0.99),
)
def test_interference_is_bounded(sims: list[tuple[float, float]], threshold: float) -> None:
    similar = [SimilarTrace(str(i), sim, s) for i, (sim, s) in enumerate(sims)]
    result = compute_interference(similar, DecayConfig(interference_threshold=threshold))
    assert 0.0 <= result.proactive <= 0.3
    assert all(0.0 < v.strength_reduction <= 0.15 for v in result.retroactive)
    assert len(result.retroactive) == sum(1 for sim, _ in sims if sim > threshold)
