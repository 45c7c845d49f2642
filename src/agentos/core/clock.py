"""Injectable time (DESIGN.md §4: decay, idle cleanup and consolidation read a `Clock`).

Components take a ``clock`` argument and default to `SystemClock`; tests pass
`agentos.testing.FakeClock` and move it by days without sleeping.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "SystemClock", "system_clock"]


@runtime_checkable
class Clock(Protocol):
    """A source of time: wall-clock, monotonic and a sleep that honours the same clock."""

    def now(self) -> datetime:
        """The current time, timezone-aware in UTC."""
        ...

    def timestamp(self) -> float:
        """The current time as seconds since the Unix epoch."""
        ...

    def monotonic(self) -> float:
        """Seconds from an arbitrary origin that never goes backwards: use it for durations."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait until this clock has moved ``seconds`` forward."""
        ...


class SystemClock:
    """The real clock."""

    def now(self) -> datetime:
        """The current time, timezone-aware in UTC."""
        return datetime.now(UTC)

    def timestamp(self) -> float:
        """The current time as seconds since the Unix epoch."""
        return time.time()

    def monotonic(self) -> float:
        """`time.monotonic()`."""
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        """`asyncio.sleep()`."""
        await asyncio.sleep(seconds)


system_clock = SystemClock()
"""The process's shared real clock, the default wherever a ``clock`` is optional."""
