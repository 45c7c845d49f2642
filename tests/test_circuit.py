"""`agentos.llm.gateway` (circuit): per-provider circuit breakers on an injected clock.

Spec, "Model calls through a completion gateway" (a hop whose provider circuit is open is
skipped); reference §1.26 LLMProviderHealthRegistry for the policies. Every test runs on
`FakeClock` and checks the exact boundaries: open at exactly the threshold, still open one
microsecond before the cooldown ends, closed at the cooldown.
"""

from __future__ import annotations

import asyncio
import threading
from datetime import timedelta
from typing import Any

import pytest

from agentos.core import GMIError, GMIErrorCode
from agentos.llm.budget import CostCapExceededError, SpendLimitInfo
from agentos.llm.errors import ProviderError
from agentos.llm.gateway import (
    AUTH_POLICY,
    QUOTA_POLICY,
    RATE_LIMIT_POLICY,
    TRANSIENT_POLICY,
    CircuitPolicy,
    ProviderHealthRegistry,
    failure_policy,
)
from agentos.testing import FakeClock

US = timedelta(microseconds=1)


class StatusError(Exception):
    def __init__(self, message: str = "", **attributes: Any) -> None:
        super().__init__(message)
        for name, value in attributes.items():
            setattr(self, name, value)


def budget_refusal() -> CostCapExceededError:
    info = SpendLimitInfo("max_cost_usd", 1.0, 0.9, 0.5, "gmi.step", "openai", "gpt-5.6-sol")
    return CostCapExceededError("budget refused gmi.step", info)


def http(status: int, message: str = "provider error", **details: Any) -> ProviderError:
    return ProviderError(message, status_code=status, details=details or None)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def registry(clock: FakeClock) -> ProviderHealthRegistry:
    return ProviderHealthRegistry(clock)


# --- the policies -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "threshold", "cooldown"),
    [
        (QUOTA_POLICY, 1, timedelta(minutes=5)),
        (AUTH_POLICY, 1, timedelta(minutes=30)),
        (RATE_LIMIT_POLICY, 3, timedelta(seconds=30)),
        (TRANSIENT_POLICY, 5, timedelta(seconds=60)),
    ],
)
def test_policy_numbers_are_the_references(
    policy: CircuitPolicy, threshold: int, cooldown: timedelta
) -> None:
    assert (policy.threshold, policy.cooldown) == (threshold, cooldown)


@pytest.mark.parametrize(
    ("error", "policy"),
    [
        (http(402), QUOTA_POLICY),
        (http(429, error_code="insufficient_quota"), QUOTA_POLICY),
        (http(400, error_type="billing_error"), QUOTA_POLICY),
        (http(400, "Your credit balance is too low to access the Anthropic API"), QUOTA_POLICY),
        (RuntimeError("You exceeded your current quota"), QUOTA_POLICY),
        (http(401), AUTH_POLICY),
        (http(403), AUTH_POLICY),
        (ProviderError("[401] bad key"), AUTH_POLICY),
        (StatusError("x", statusCode=403), AUTH_POLICY),
        (StatusError("x", http_status=401), AUTH_POLICY),
        (http(429), RATE_LIMIT_POLICY),
        (StatusError("x", status=429), RATE_LIMIT_POLICY),
        (http(500), TRANSIENT_POLICY),
        (http(502), TRANSIENT_POLICY),
        (http(503), TRANSIENT_POLICY),
        (http(529), TRANSIENT_POLICY),
        (http(408), TRANSIENT_POLICY),
        (ProviderError("connection reset", kind="network"), TRANSIENT_POLICY),
        (ProviderError("timed out", kind="timeout"), TRANSIENT_POLICY),
        (TimeoutError(), TRANSIENT_POLICY),
        (RuntimeError("something odd"), TRANSIENT_POLICY),
        (http(400), None),
        (http(404), None),
        (http(409), None),
        (http(413), None),
        (http(422), None),
        (ProviderError("[400] bad request"), None),
        (http(400, error_code="content_policy_violation"), None),
        (ProviderError("declined", kind="refusal"), None),
        (asyncio.CancelledError(), None),
        (GMIError("stopped", GMIErrorCode.ABORTED), None),
        (budget_refusal(), None),
    ],
)
def test_failure_policy(error: BaseException, policy: CircuitPolicy | None) -> None:
    assert failure_policy(error) == policy


# --- opening at exactly the threshold, closing at exactly the cooldown ------------------------

CASES = [
    pytest.param(http(402), 1, timedelta(minutes=5), id="402"),
    pytest.param(http(429, error_code="insufficient_quota"), 1, timedelta(minutes=5), id="quota"),
    pytest.param(http(401), 1, timedelta(minutes=30), id="401"),
    pytest.param(http(403), 1, timedelta(minutes=30), id="403"),
    pytest.param(http(429), 3, timedelta(seconds=30), id="429"),
    pytest.param(http(500), 5, timedelta(seconds=60), id="500"),
    pytest.param(http(503), 5, timedelta(seconds=60), id="503"),
    pytest.param(http(408), 5, timedelta(seconds=60), id="408"),
    pytest.param(ProviderError("reset", kind="network"), 5, timedelta(seconds=60), id="network"),
    pytest.param(TimeoutError(), 5, timedelta(seconds=60), id="timeout"),
    pytest.param(RuntimeError("unknown"), 5, timedelta(seconds=60), id="unknown"),
]


@pytest.mark.parametrize(("error", "threshold", "cooldown"), CASES)
def test_opens_at_exactly_the_threshold_and_closes_at_exactly_the_cooldown(
    registry: ProviderHealthRegistry,
    clock: FakeClock,
    error: BaseException,
    threshold: int,
    cooldown: timedelta,
) -> None:
    for streak in range(1, threshold):
        registry.record_failure("p", error)
        assert not registry.is_open("p")
        assert registry.status("p").streak == streak
    clock.advance(7 * US)  # the cooldown runs from the failure that opens the circuit
    opened_at = clock.now()
    registry.record_failure("p", error)
    assert registry.is_open("p")
    status = registry.status("p")
    assert status.state == "open"
    assert status.is_open
    assert status.streak == threshold
    assert status.open_until == opened_at + cooldown
    assert status.cooldown_remaining == cooldown
    assert status.trips == 1

    clock.advance(cooldown - US)
    assert registry.is_open("p")
    assert registry.status("p").cooldown_remaining == US

    clock.advance(US)
    assert not registry.is_open("p")
    closed = registry.status("p")
    assert closed.state == "closed"
    assert closed.streak == 0  # closing starts a fresh streak
    assert closed.open_until is None
    assert closed.cooldown_remaining == timedelta(0)
    assert closed.trips == 1


@pytest.mark.parametrize(("error", "threshold", "cooldown"), CASES)
def test_a_fresh_streak_is_needed_after_the_circuit_closes(
    registry: ProviderHealthRegistry,
    clock: FakeClock,
    error: BaseException,
    threshold: int,
    cooldown: timedelta,
) -> None:
    for _ in range(threshold):
        registry.record_failure("p", error)
    clock.advance(cooldown)
    assert not registry.is_open("p")
    for _ in range(threshold - 1):
        registry.record_failure("p", error)
    assert not registry.is_open("p")
    registry.record_failure("p", error)
    assert registry.is_open("p")
    assert registry.status("p").trips == 2


def test_status_alone_closes_a_due_circuit(
    registry: ProviderHealthRegistry, clock: FakeClock
) -> None:
    registry.record_failure("p", http(402))
    clock.advance(timedelta(minutes=5))
    status = registry.status("p")
    assert status.state == "closed"
    assert status.streak == 0


def test_a_failure_after_the_cooldown_counts_toward_a_new_streak(
    registry: ProviderHealthRegistry, clock: FakeClock
) -> None:
    for _ in range(3):
        registry.record_failure("p", http(429))
    clock.advance(timedelta(seconds=30))
    # No is_open() call in between: record_failure closes the due circuit itself first.
    registry.record_failure("p", http(429))
    assert registry.status("p").streak == 1
    assert not registry.is_open("p")


# --- what does not count ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "error",
    [
        http(400),
        http(404),
        http(422),
        http(400, error_code="content_policy_violation"),
        ProviderError("declined", kind="refusal"),
        asyncio.CancelledError(),
        GMIError("stopped", GMIErrorCode.ABORTED),
        budget_refusal(),
    ],
)
def test_ignored_failures_never_count_nor_reset_the_streak(
    registry: ProviderHealthRegistry, error: BaseException
) -> None:
    for _ in range(10):
        registry.record_failure("p", error)
    assert not registry.is_open("p")
    assert registry.status("p").streak == 0

    for _ in range(4):
        registry.record_failure("p", http(500))
    registry.record_failure("p", error)
    assert registry.status("p").streak == 4  # neither counted nor reset
    registry.record_failure("p", http(500))
    assert registry.is_open("p")


# --- success -----------------------------------------------------------------------------------


def test_a_success_resets_the_streak(registry: ProviderHealthRegistry) -> None:
    for _ in range(4):
        registry.record_failure("p", http(503))
    registry.record_success("p")
    assert registry.status("p").streak == 0
    for _ in range(4):
        registry.record_failure("p", http(503))
    assert not registry.is_open("p")
    registry.record_failure("p", http(503))
    assert registry.is_open("p")


def test_two_429s_a_success_and_one_more_429_stay_closed(
    registry: ProviderHealthRegistry,
) -> None:
    registry.record_failure("p", http(429))
    registry.record_failure("p", http(429))
    registry.record_success("p")
    registry.record_failure("p", http(429))
    assert not registry.is_open("p")


def test_a_success_does_not_close_an_open_circuit(
    registry: ProviderHealthRegistry, clock: FakeClock
) -> None:
    registry.record_failure("p", http(401))
    registry.record_success("p")
    assert registry.is_open("p")
    assert registry.status("p").streak == 0
    clock.advance(timedelta(minutes=30) - US)
    assert registry.is_open("p")
    clock.advance(US)
    assert not registry.is_open("p")


def test_a_success_on_an_unknown_provider_records_nothing(
    registry: ProviderHealthRegistry,
) -> None:
    registry.record_success("never-seen")
    status = registry.status("never-seen")
    assert (status.state, status.streak, status.trips, status.last_status) == ("closed", 0, 0, None)


# --- one streak, shared by every class of failure (reference) ---------------------------------


def test_the_streak_is_shared_and_the_latest_failure_sets_the_threshold(
    registry: ProviderHealthRegistry, clock: FakeClock
) -> None:
    for _ in range(2):
        registry.record_failure("p", http(500))
    registry.record_failure("p", http(429))  # streak 3 reaches the 429 threshold
    assert registry.is_open("p")
    assert registry.status("p").cooldown_remaining == timedelta(seconds=30)


def test_two_429s_then_a_500_do_not_reach_the_transient_threshold(
    registry: ProviderHealthRegistry,
) -> None:
    registry.record_failure("p", http(429))
    registry.record_failure("p", http(429))
    registry.record_failure("p", http(500))
    assert not registry.is_open("p")
    assert registry.status("p").streak == 3


# --- failures on an open circuit ------------------------------------------------------------


def test_a_failure_on_an_open_circuit_never_shortens_it(
    registry: ProviderHealthRegistry, clock: FakeClock
) -> None:
    registry.record_failure("p", http(401))
    for _ in range(3):
        registry.record_failure("p", http(429))
    assert registry.status("p").cooldown_remaining == timedelta(minutes=30)
    assert registry.status("p").trips == 1


def test_a_failure_on_an_open_circuit_can_extend_it(
    registry: ProviderHealthRegistry, clock: FakeClock
) -> None:
    registry.record_failure("p", http(402))  # open for 5 minutes
    clock.advance(timedelta(minutes=1))
    registry.record_failure("p", http(401))  # 30 minutes from now
    assert registry.status("p").cooldown_remaining == timedelta(minutes=30)
    assert registry.status("p").trips == 1
    assert registry.status("p").last_status == 401


# --- bookkeeping --------------------------------------------------------------------------------


def test_providers_are_independent(registry: ProviderHealthRegistry) -> None:
    registry.record_failure("openai", http(401))
    assert registry.is_open("openai")
    assert not registry.is_open("anthropic")
    assert registry.status("anthropic").streak == 0


def test_last_status_is_the_last_counted_failures(registry: ProviderHealthRegistry) -> None:
    registry.record_failure("p", http(503))
    registry.record_failure("p", http(400))  # not counted
    assert registry.status("p").last_status == 503
    registry.record_failure("p", TimeoutError())
    assert registry.status("p").last_status is None


def test_reset(registry: ProviderHealthRegistry) -> None:
    registry.record_failure("a", http(401))
    registry.record_failure("b", http(401))
    registry.reset("a")
    assert not registry.is_open("a")
    assert registry.is_open("b")
    registry.reset()
    assert not registry.is_open("b")
    assert registry.status("b").trips == 0


def test_defaults_to_the_system_clock() -> None:
    registry = ProviderHealthRegistry()
    registry.record_failure("p", http(401))
    assert registry.is_open("p")
    remaining = registry.status("p").cooldown_remaining
    assert timedelta(minutes=29) < remaining <= timedelta(minutes=30)


def test_concurrent_failures_from_threads_all_count(clock: FakeClock) -> None:
    registry = ProviderHealthRegistry(clock)

    def fail() -> None:
        for _ in range(100):
            registry.record_failure("p", http(400))  # ignored: only exercises the lock
            registry.record_failure("p", http(503))

    threads = [threading.Thread(target=fail) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert registry.status("p").streak == 400
    assert registry.status("p").trips == 1
