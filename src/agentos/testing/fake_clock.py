"""`FakeClock`: a `Clock` that moves only when the test says so."""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import math
from datetime import UTC, datetime, timedelta

__all__ = ["FakeClock"]

_DEFAULT_START = datetime(2026, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def _microseconds(by: float | timedelta) -> int:
    """``by`` in whole microseconds, rounded as `datetime.timedelta` rounds seconds.

    Refuses a negative or non-finite amount: a FakeClock only moves forward, by a known step.
    """
    if isinstance(by, timedelta):
        step = by
    else:
        seconds = float(by)
        if not math.isfinite(seconds):
            raise ValueError(f"a FakeClock moves by a finite number of seconds, got {by!r}")
        if seconds < 0:
            raise ValueError(f"a FakeClock only moves forward, got {by!r} seconds")
        step = timedelta(seconds=seconds)
    if step < timedelta(0):
        raise ValueError(f"a FakeClock only moves forward, got {by!r}")
    return step // _MICROSECOND


class FakeClock:
    """A manual clock: `advance()` moves wall-clock and monotonic time together.

    Time is kept in whole microseconds (the resolution of `datetime`), so `now()`,
    `timestamp()` and `monotonic()` always agree on how far the clock has moved, and advances
    that add up to a sleep's duration wake it however they are split (``0.1`` then ``0.7``
    wakes a sleep of ``0.8``).

    `sleep()` waits until the clock has been advanced to its deadline or past it; sleepers wake
    in deadline order (ties in the order they started) once the event loop runs
    (``await asyncio.sleep(0)`` after `advance()`, or use `advance_and_settle()`).
    """

    def __init__(self, start: datetime | None = None) -> None:
        start = start or _DEFAULT_START
        if start.tzinfo is None:
            raise ValueError("FakeClock start must be timezone-aware")
        self._start = start.astimezone(UTC)
        self._elapsed = 0
        """Microseconds advanced since the clock was made."""
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def now(self) -> datetime:
        """The fake current time (UTC)."""
        return self._start + self._elapsed * _MICROSECOND

    def timestamp(self) -> float:
        """The fake current time as Unix seconds."""
        return self.now().timestamp()

    def monotonic(self) -> float:
        """Seconds advanced since the clock was made."""
        return self._elapsed / 1_000_000

    async def sleep(self, seconds: float) -> None:
        """Wait until the clock is advanced by ``seconds`` (at once when ``seconds <= 0``).

        A positive duration shorter than a microsecond waits for one microsecond; an infinite
        one (or one beyond `datetime.timedelta`'s range) waits until cancelled.
        """
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        deadline: float = math.inf
        if not math.isinf(seconds):
            with contextlib.suppress(OverflowError):
                deadline = self._elapsed + max(1, _microseconds(seconds))
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (deadline, next(self._order), future))
        await future

    def advance(self, by: float | timedelta) -> None:
        """Move time forward by seconds or a timedelta, waking every sleeper now due.

        Seconds are rounded to the microsecond; a negative or non-finite amount is refused
        with `ValueError`.
        """
        self._elapsed += _microseconds(by)
        while self._sleepers and self._sleepers[0][0] <= self._elapsed:
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
        self.advance(when.astimezone(UTC) - self.now())

    @property
    def sleepers(self) -> int:
        """How many sleeps are still waiting."""
        return sum(1 for _, _, future in self._sleepers if not future.done())
