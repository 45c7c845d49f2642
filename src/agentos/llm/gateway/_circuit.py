"""Per-provider circuit breakers: skip a provider that keeps failing, for a while.

Spec, "Model calls through a completion gateway": the gateway skips a hop whose provider circuit
is open. The policies are the reference's ``LLMProviderHealthRegistry``
(typescript-implementation.md §1.26), chosen by the failure's HTTP status:

====================================================  =========  =========
failure                                               opens at   cooldown
====================================================  =========  =========
402, or quota exhausted (`is_quota_exhaustion()`)     1          5 min
401, 403                                              1          30 min
429                                                   3          30 s
anything else: 5xx, 408, network, timeouts, unknown   5          60 s
any other 4xx (400, 404, 422...)                      never      (not counted)
====================================================  =========  =========

"Opens at" counts the provider's failures in a row (its streak): one streak per provider, shared
by every class of failure as in the reference, held against the threshold of the failure just
recorded. A success resets the streak but does not close an open circuit (the circuit is open
precisely so that nobody probes the provider); an open circuit closes by itself once its
cooldown has passed on the injected `Clock`, and its streak starts again from zero.

Time is read from `Clock.monotonic()` in whole microseconds, so a test on
`agentos.testing.FakeClock` sees exact boundaries: open at ``cooldown - 1 µs``, closed at
``cooldown``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final, Literal

from agentos.core.clock import Clock, system_clock
from agentos.llm.gateway._retry import (
    http_status_of,
    is_caller_stop,
    is_content_policy_refusal,
    is_quota_exhaustion,
)

__all__ = [
    "AUTH_POLICY",
    "QUOTA_POLICY",
    "RATE_LIMIT_POLICY",
    "TRANSIENT_POLICY",
    "CircuitPolicy",
    "CircuitState",
    "ProviderHealthRegistry",
    "ProviderHealthStatus",
    "failure_policy",
]

CircuitState = Literal["open", "closed"]


@dataclass(frozen=True, slots=True)
class CircuitPolicy:
    """How many failures in a row open a provider's circuit, and for how long."""

    threshold: int
    cooldown: timedelta


QUOTA_POLICY: Final = CircuitPolicy(1, timedelta(minutes=5))
"""402 and quota exhaustion: credit may be topped up within minutes."""
AUTH_POLICY: Final = CircuitPolicy(1, timedelta(minutes=30))
"""401 and 403: a bad key needs a person to change the configuration."""
RATE_LIMIT_POLICY: Final = CircuitPolicy(3, timedelta(seconds=30))
"""429: rate limits usually lift within one interval, so a short pause after a short streak."""
TRANSIENT_POLICY: Final = CircuitPolicy(5, timedelta(seconds=60))
"""5xx, 408, network failures, timeouts and anything unclassified."""


def failure_policy(error: BaseException) -> CircuitPolicy | None:
    """The policy a failure with ``error`` counts under, or ``None`` when it does not count.

    Not counted: the caller's own stop (its abort, its budget's refusal) and a content-policy
    refusal (none says anything about the provider's health), and a 4xx other than 401, 402,
    403, 408 and 429 (the request was at fault, not the provider). Quota exhaustion counts as
    a 402 whatever its status (OpenAI reports ``insufficient_quota`` with a 429, Anthropic an
    empty credit balance with a 400). The status is `retry.http_status_of()`'s.
    """
    if is_caller_stop(error) or is_content_policy_refusal(error):
        return None
    if is_quota_exhaustion(error):
        return QUOTA_POLICY
    status = http_status_of(error)
    if status == 402:
        return QUOTA_POLICY
    if status in (401, 403):
        return AUTH_POLICY
    if status == 429:
        return RATE_LIMIT_POLICY
    if status is not None and 400 <= status < 500 and status != 408:
        return None
    return TRANSIENT_POLICY


@dataclass(frozen=True, slots=True)
class ProviderHealthStatus:
    """A snapshot of one provider's circuit.

    ``open_until`` is the wall-clock time the circuit closes (``None`` when closed) and
    ``cooldown_remaining`` the time left until then; ``streak`` counts the failures in a row
    since the last success or close; ``last_status`` is the HTTP status of the last counted
    failure (``None`` when it had none, or before any); ``trips`` counts how often the circuit
    opened.
    """

    provider_id: str
    state: CircuitState
    streak: int
    open_until: datetime | None
    cooldown_remaining: timedelta
    last_status: int | None
    trips: int

    @property
    def is_open(self) -> bool:
        """Whether the circuit was open when the snapshot was taken."""
        return self.state == "open"


@dataclass(slots=True)
class _Record:
    streak: int = 0
    open_until_us: int | None = None
    """The monotonic microsecond the circuit closes at; ``None`` while closed."""
    last_status: int | None = None
    trips: int = 0


_MICROSECOND: Final = timedelta(microseconds=1)


class ProviderHealthRegistry:
    """The circuit of each provider id, on an injected clock (reference LLMProviderHealthRegistry).

    One registry serves one gateway (or a process): `record_failure()` and `record_success()`
    after each attempt, `is_open()` before one. The policies are the module docstring's.
    Safe to share between threads.
    """

    def __init__(self, clock: Clock | None = None) -> None:
        self._clock: Clock = clock or system_clock
        self._records: dict[str, _Record] = {}
        # A registry may be shared by the sync wrappers' threads and the event loop.
        self._lock = threading.Lock()

    def record_failure(self, provider_id: str, error: BaseException) -> None:
        """Count a failed attempt on ``provider_id``; open its circuit at the policy's threshold.

        A failure that does not count (`failure_policy()` is ``None``) changes nothing: it
        neither adds to the streak nor resets it. A failure on a circuit already open may keep
        it open longer, never shorter: a 401's half hour is not cut to a 429's 30 seconds.
        """
        policy = failure_policy(error)
        if policy is None:
            return
        with self._lock:
            now = self._now_us()
            record = self._records.setdefault(provider_id, _Record())
            self._close_if_due(record, now)
            record.streak += 1
            record.last_status = http_status_of(error)
            if record.streak < policy.threshold:
                return
            until = now + policy.cooldown // _MICROSECOND
            if record.open_until_us is None:
                record.trips += 1
                record.open_until_us = until
            else:
                record.open_until_us = max(record.open_until_us, until)

    def record_success(self, provider_id: str) -> None:
        """Reset ``provider_id``'s streak; an open circuit stays open until its cooldown ends."""
        with self._lock:
            record = self._records.get(provider_id)
            if record is not None:
                record.streak = 0

    def is_open(self, provider_id: str) -> bool:
        """Whether ``provider_id``'s circuit is open now (a due circuit closes on this call)."""
        with self._lock:
            record = self._records.get(provider_id)
            if record is None:
                return False
            self._close_if_due(record, self._now_us())
            return record.open_until_us is not None

    def status(self, provider_id: str) -> ProviderHealthStatus:
        """A snapshot of ``provider_id``'s circuit; a provider never seen is closed, streak 0."""
        with self._lock:
            now = self._now_us()
            record = self._records.get(provider_id) or _Record()
            self._close_if_due(record, now)
            remaining = timedelta(0)
            open_until: datetime | None = None
            if record.open_until_us is not None:
                remaining = (record.open_until_us - now) * _MICROSECOND
                open_until = self._clock.now() + remaining
            return ProviderHealthStatus(
                provider_id=provider_id,
                state="open" if record.open_until_us is not None else "closed",
                streak=record.streak,
                open_until=open_until,
                cooldown_remaining=remaining,
                last_status=record.last_status,
                trips=record.trips,
            )

    def reset(self, provider_id: str | None = None) -> None:
        """Forget ``provider_id`` (closed, streak 0), or every provider when it is ``None``."""
        with self._lock:
            if provider_id is None:
                self._records.clear()
            else:
                self._records.pop(provider_id, None)

    def _now_us(self) -> int:
        # Whole microseconds: FakeClock's resolution, and exact comparisons at the boundary.
        return round(self._clock.monotonic() * 1_000_000)

    @staticmethod
    def _close_if_due(record: _Record, now_us: int) -> None:
        if record.open_until_us is not None and now_us >= record.open_until_us:
            record.open_until_us = None
            record.streak = 0
