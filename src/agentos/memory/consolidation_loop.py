"""`ConsolidationLoop`: a consolidation cycle every interval, and on demand (reference §1.20).

The spec's consolidation runs every hour whatever interval is configured; here the interval is
applied (DESIGN.md §5.10). The loop sleeps on the injected `agentos.core.clock.Clock`, so tests
move an `agentos.testing.FakeClock` by hours without waiting. Cycles never overlap: the timer's
cycles and `ConsolidationLoop.run_now` share one lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math

from agentos.core.clock import Clock
from agentos.memory.consolidation import ConsolidationPipeline, ConsolidationResult

__all__ = ["ConsolidationLoop"]

_log = logging.getLogger(__name__)


class ConsolidationLoop:
    """Runs ``pipeline.run()`` once per ``interval`` seconds of ``clock`` once started.

    ``interval`` defaults to the pipeline's ``config.interval``; a non-positive or non-finite one
    is a ValueError. A cycle that raises is logged and the loop goes on to the next interval.
    """

    def __init__(
        self, pipeline: ConsolidationPipeline, clock: Clock, interval: float | None = None
    ) -> None:
        chosen = pipeline.config.interval if interval is None else float(interval)
        if not (math.isfinite(chosen) and chosen > 0):
            raise ValueError(f"the consolidation interval must be positive, got {interval!r}")
        self.pipeline = pipeline
        self.clock = clock
        self.interval = chosen
        self.cycles = 0
        """Cycles completed (timer and on-demand), failed ones not counted."""
        self.last_result: ConsolidationResult | None = None
        """The result of the last completed cycle."""
        self._lock = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        """Whether the timer is started (and not stopped)."""
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        """Start the timer in the running event loop (idempotent).

        Cycles are due at the start plus one interval, two intervals, ... of clock time; a cycle
        that falls due while another runs (or while the process was suspended, or while a fake
        clock jumped several intervals) runs right after it, so each interval of clock time gets
        its cycle. A pipeline whose configuration is disabled is not started.
        """
        if self.running or not self.pipeline.config.enabled:
            return
        # Anchored now, not when the task first runs: time that passes before then counts.
        first_due = self.clock.monotonic() + self.interval
        self._task = asyncio.get_running_loop().create_task(
            self._tick(first_due), name="agentos-memory-consolidation"
        )

    async def stop(self) -> None:
        """Stop the timer and wait for it to end (idempotent).

        A cycle in progress is cancelled: it persists nothing and the pipeline reloads its graph
        from the store, so the memory stays as it was before that cycle.
        """
        task, self._task = self._task, None
        if task is None or task.done():
            return
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    async def run_now(self) -> ConsolidationResult:
        """Run a cycle now, after the one in progress if any; its errors propagate."""
        async with self._lock:
            result = await self.pipeline.run()
            self.cycles += 1
            self.last_result = result
            return result

    async def _tick(self, due: float) -> None:
        while True:
            await self.clock.sleep(max(0.0, due - self.clock.monotonic()))
            due += self.interval
            try:
                await self.run_now()
            except Exception:
                # One failing cycle (a store error, say) must not end consolidation for good.
                _log.exception("memory consolidation cycle failed")
