"""The usage ledger's rows and contract: one row per metered model call (spec: Usage).

The spec meters each model call of a turn with the provider and model that served it: one
ledger row per finished step and one for each attempt that failed and was billed, with the
finish reason ``error``; with the ledger enabled, ``session.usage()`` and ``agent.usage()`` read
it alone. The row (`UsageEvent`) is the reference's ``AgentOSUsageEvent`` (``recordedAt``,
``sessionId`` (``'global'``), ``personaId``, ``userId``, provider and model, the three token
counts, ``costUSD``), plus the failed-attempt flag and hop the spec's ``USAGE_UPDATE`` carries,
and whether the figures are agentos's estimate (``estimated``: a stream left before the
provider's usage report, DESIGN §5.19).

A cost the catalog and the provider did not know is kept as ``None``: never as 0, which would
claim the call was free. `UsageTotals` keeps the sum of the known costs and the number of calls
whose cost is unknown apart.

`UsageLedger` is the protocol every backend keeps; `checked_event` and `check_row_limit` are
the argument checks they share.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from agentos.core.usage import ModelUsage

__all__ = [
    "GLOBAL_SESSION",
    "UsageEvent",
    "UsageLedger",
    "UsageTotals",
    "check_row_limit",
    "checked_event",
]

GLOBAL_SESSION = "global"
"""The session id of a call made outside any session (the reference's default)."""


@dataclass(frozen=True, slots=True)
class UsageEvent:
    """One metered model call: what the observer receives and what a ledger row holds.

    - ``recorded_at``: when the call was metered (timezone-aware; stored in UTC);
    - ``provider_id`` / ``model_id``: who served the call (the hop's, after a fallback);
    - ``prompt_tokens`` / ``completion_tokens`` / ``total_tokens``: the total defaults to the
      sum of the two;
    - ``cost_usd``: ``None`` when unknown, never read as 0;
    - ``finish_reason``: the step's, ``"error"`` for a billed failed attempt;
    - ``attempt_failed``: the call failed and was billed (spec: ``attemptFailed``);
    - ``hop``: 0 for the primary, n for the n-th fallback hop;
    - ``session_id`` (``"global"`` outside a session), ``persona_id``, ``user_id``;
    - ``source``: what made the call (``"gmi.step"``, ``"generate_text"``, ...), when known;
    - ``estimated``: the figures are agentos's estimate, not the provider's report (a stream its
      reader left before the usage report; its ``finish_reason`` is ``None``: DESIGN §5.19).

    Negative token counts, a negative, NaN or infinite cost, a naive ``recorded_at`` and a
    negative hop are refused with `ValueError` naming the field.
    """

    recorded_at: datetime
    provider_id: str
    model_id: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # None only until __post_init__ derives it, as in ModelUsage.
    total_tokens: int = None  # type: ignore[assignment]
    cost_usd: float | None = None
    finish_reason: str | None = None
    attempt_failed: bool = False
    hop: int = 0
    session_id: str = GLOBAL_SESSION
    persona_id: str | None = None
    user_id: str | None = None
    source: str | None = None
    estimated: bool = False

    def __post_init__(self) -> None:
        if self.recorded_at.tzinfo is None:
            raise ValueError("UsageEvent.recorded_at must be timezone-aware")
        prompt, completion, hop = self.prompt_tokens, self.completion_tokens, self.hop
        # Plain non-negative ints pass at once (one event per metered step); anything else is
        # checked field by field, so the error names the first bad one.
        if not (
            type(prompt) is int
            and prompt >= 0
            and type(completion) is int
            and completion >= 0
            and type(hop) is int
            and hop >= 0
        ):
            for name in ("prompt_tokens", "completion_tokens", "hop"):
                _check_count(name, getattr(self, name))
        if self.total_tokens is None:
            object.__setattr__(self, "total_tokens", prompt + completion)
        _check_count("total_tokens", self.total_tokens)
        if self.cost_usd is not None and not (
            isinstance(self.cost_usd, int | float)
            and not isinstance(self.cost_usd, bool)
            and math.isfinite(self.cost_usd)
            and self.cost_usd >= 0
        ):
            raise ValueError(
                f"UsageEvent.cost_usd must be a finite number >= 0 or None, got {self.cost_usd!r}"
            )

    @classmethod
    def from_usage(
        cls,
        usage: ModelUsage,
        *,
        recorded_at: datetime,
        provider_id: str,
        model_id: str,
        **context: Any,
    ) -> UsageEvent:
        """The event for ``usage`` (tokens and cost copied), with the given context fields."""
        return cls(
            recorded_at=recorded_at,
            provider_id=provider_id,
            model_id=model_id,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            total_tokens=usage.total_tokens,
            cost_usd=usage.cost_usd,
            estimated=usage.estimated,
            **context,
        )

    @property
    def usage(self) -> ModelUsage:
        """The event's tokens and cost as a `ModelUsage`."""
        return ModelUsage(
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            total_tokens=self.total_tokens,
            cost_usd=self.cost_usd,
            estimated=self.estimated,
        )


def _check_count(name: str, value: object) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"UsageEvent.{name} must be an int >= 0, got {value!r}")


@dataclass(frozen=True, slots=True)
class UsageTotals:
    """What a set of ledger rows adds up to.

    ``known_cost_usd`` sums the costs that are known; ``unpriced_calls`` counts the rows whose
    cost is unknown, and while there is one, ``cost_usd`` is ``None`` (an unknown added to
    anything is unknown, as in `ModelUsage`). ``estimated_calls`` counts the rows whose figures
    are estimates (DESIGN §5.19); while there is one, `usage` is marked ``estimated``.
    """

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    known_cost_usd: float = 0.0
    unpriced_calls: int = 0
    estimated_calls: int = 0

    @property
    def cost_usd(self) -> float | None:
        """The total cost, or ``None`` when a row's cost is unknown."""
        return None if self.unpriced_calls else self.known_cost_usd

    @property
    def usage(self) -> ModelUsage:
        """The totals as a `ModelUsage` (``cost_usd`` as above)."""
        return ModelUsage(
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            total_tokens=self.total_tokens,
            cost_usd=self.cost_usd,
            estimated=self.estimated_calls > 0,
        )


@runtime_checkable
class UsageLedger(Protocol):
    """Where metered calls are kept. Filters combine with AND; ``None`` means any.

    ``since`` is inclusive and ``until`` exclusive, compared with ``recorded_at``.
    """

    async def append(self, event: UsageEvent) -> None:
        """Keep ``event``; the write has finished when this returns."""
        ...

    async def rows(
        self,
        session_id: str | None = None,
        *,
        persona_id: str | None = None,
        user_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int | None = None,
    ) -> list[UsageEvent]:
        """The matching rows in the order they were appended (the first ``limit`` of them)."""
        ...

    async def totals(
        self,
        session_id: str | None = None,
        *,
        persona_id: str | None = None,
        user_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> UsageTotals:
        """What the matching rows add up to."""
        ...


def checked_event(event: object) -> UsageEvent:
    """``event``, refused with `TypeError` unless it is a `UsageEvent`: what `append` keeps."""
    if not isinstance(event, UsageEvent):
        raise TypeError(f"a usage ledger keeps UsageEvent rows, not {type(event).__name__}")
    return event


def check_row_limit(limit: int | None) -> None:
    """Refuse a ``limit`` of `rows` that is not an int >= 0 or ``None`` with `ValueError`."""
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
        raise ValueError(f"limit must be an int >= 0 or None, got {limit!r}")
