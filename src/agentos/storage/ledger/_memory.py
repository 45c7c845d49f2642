"""`InMemoryUsageLedger`: a usage ledger in process memory, for tests and short runs.

A write has finished when `append` returns; the rows end with the process.
"""

from __future__ import annotations

import math
from datetime import datetime

from agentos.storage.ledger._records import UsageEvent, UsageTotals, check_row_limit, checked_event

__all__ = ["InMemoryUsageLedger"]


class InMemoryUsageLedger:
    """A `UsageLedger` in process memory: it ends with the process."""

    def __init__(self) -> None:
        self._events: list[UsageEvent] = []

    async def append(self, event: UsageEvent) -> None:
        """Keep ``event``."""
        self._events.append(checked_event(event))

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
        """The matching rows in append order."""
        check_row_limit(limit)
        matching = [
            event
            for event in self._events
            if _matches(event, session_id, persona_id, user_id, since, until)
        ]
        return matching if limit is None else matching[:limit]

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
        matching = await self.rows(
            session_id, persona_id=persona_id, user_id=user_id, since=since, until=until
        )
        known = [event.cost_usd for event in matching if event.cost_usd is not None]
        return UsageTotals(
            calls=len(matching),
            prompt_tokens=sum(event.prompt_tokens for event in matching),
            completion_tokens=sum(event.completion_tokens for event in matching),
            total_tokens=sum(event.total_tokens for event in matching),
            # fsum: exactly rounded, so the total does not depend on the order of the rows.
            known_cost_usd=math.fsum(known),
            unpriced_calls=len(matching) - len(known),
            estimated_calls=sum(event.estimated for event in matching),
        )


def _matches(
    event: UsageEvent,
    session_id: str | None,
    persona_id: str | None,
    user_id: str | None,
    since: datetime | None,
    until: datetime | None,
) -> bool:
    return (
        (session_id is None or event.session_id == session_id)
        and (persona_id is None or event.persona_id == persona_id)
        and (user_id is None or event.user_id == user_id)
        and (since is None or event.recorded_at >= since)
        and (until is None or event.recorded_at < until)
    )
