"""`FakeClock`: a `Clock` that moves only when the test says so."""

from __future__ import annotations

import asyncio
import heapq
import itertools
from datetime import UTC, datetime, timedelta

__all__ = ["FakeClock"]

_DEFAULT_START = datetime(2026, 1, 1, tzinfo=UTC)


class FakeClock:
    """A manual clock: `advance()` moves wall-clock and monotonic time together.

    `sleep()` waits until the clock has been advanced past its deadline; sleepers wake in
    deadline order once the event loop runs (``await asyncio.sleep(0)`` after `advance()`, or
    use `advance_and_settle()`).
    """

    def __init__(self, start: datetime | None = None) -> None:
        start = start or _DEFAULT_START
        if start.tzinfo is None:
            raise ValueError("FakeClock start must be timezone-aware")
        self._now = start.astimezone(UTC)
        self._monotonic = 0.0
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def now(self) -> datetime:
        """The fake current time (UTC)."""
        return self._now

    def timestamp(self) -> float:
        """The fake current time as Unix seconds."""
        return self._now.timestamp()

    def monotonic(self) -> float:
        """Seconds advanced since the clock was made."""
        return self._monotonic

    async def sleep(self, seconds: float) -> None:
        """Wait until the clock is advanced by ``seconds`` (at once when ``seconds <= 0``)."""
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self._monotonic + seconds, next(self._order), future))
        await future

    def advance(self, by: float | timedelta) -> None:
        """Move time forward by seconds or a timedelta, waking every sleeper now due."""
        seconds = by.total_seconds() if isinstance(by, timedelta) else float(by)
        if seconds < 0:
            raise ValueError("a FakeClock only moves forward")
        self._now += timedelta(seconds=seconds)
        self._monotonic += seconds
        while self._sleepers and self._sleepers[0][0] <= self._monotonic:
            _, _, future = heapq.heappop(self._sleepers)
            if not future.done():
                future.set_result(None)

    async def advance_and_settle(self, by: float | timedelta) -> None:
        """`advance()`, then let the woken sleepers run."""
        self.advance(by)
        for _ in range(3):
            await asyncio.sleep(0)

    def set(self, when: datetime) -> None:
        """Jump to ``when`` (not earlier than now)."""
        if when.tzinfo is None:
            raise ValueError("FakeClock times must be timezone-aware")
        self.advance(when.astimezone(UTC) - self._now)

    @property
    def sleepers(self) -> int:
        """How many sleeps are still waiting."""
        return sum(1 for _, _, future in self._sleepers if not future.done())
