"""Shutting several GMIs down at once, each within a bound (spec: Getting a GMI).

"Every active GMI is shut down at the same time, each within gmiManagerConfig.shutdownTimeoutMs
(8000 ms by default); a GMI that has not finished by then is logged at warn and finishes on its
own while the runtime shuts down its other components." The bound is measured on the injected
clock (``clock.sleep``), so a test moves a fake clock past it instead of waiting. A late GMI's
shutdown is not cancelled: it keeps running, held here until it ends.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentos.core.clock import Clock

if TYPE_CHECKING:
    from agentos.substrate.gmi import GMI
    from agentos.substrate.igmi import IGMI

__all__ = ["BoundedShutdown", "ClosingGMI"]


@dataclass(frozen=True, slots=True)
class ClosingGMI:
    """A GMI to shut down, and the session it served (named in the log)."""

    gmi: GMI | IGMI
    session_id: str


class BoundedShutdown:
    """Shuts GMIs down concurrently and waits for them at most ``seconds`` on ``clock``."""

    def __init__(self, seconds: float, clock: Clock, log: logging.Logger) -> None:
        self.seconds = seconds
        self._clock = clock
        self._log = log
        self._late: set[asyncio.Task[None]] = set()  # keeps late shutdowns alive until they end

    @property
    def late(self) -> int:
        """How many shutdowns that missed the bound are still running."""
        return len(self._late)

    async def close(self, gmis: Sequence[ClosingGMI]) -> list[ClosingGMI]:
        """Start every GMI's shutdown now; return (and log at WARNING) those past the bound.

        A shutdown that raises is logged at WARNING; it counts as finished.
        """
        if not gmis:
            return []
        tasks = {asyncio.create_task(self._close_one(item)): item for item in gmis}
        await self._wait(set(tasks))
        late: list[ClosingGMI] = []
        for task, item in tasks.items():
            if task.done():
                continue
            late.append(item)
            self._late.add(task)
            task.add_done_callback(self._late.discard)
            self._log.warning(
                "GMI %s of session %s did not shut down within %d ms; it finishes on its own",
                item.gmi.gmi_id,
                item.session_id,
                round(self.seconds * 1000),
            )
        return late

    async def _wait(self, tasks: set[asyncio.Task[None]]) -> None:
        everything = asyncio.ensure_future(asyncio.wait(tasks))
        timer = asyncio.ensure_future(self._clock.sleep(self.seconds))
        try:
            await asyncio.wait({everything, timer}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            # Stops the waiting only: asyncio.wait() never cancels the shutdowns it waits for.
            timer.cancel()
            everything.cancel()

    async def _close_one(self, item: ClosingGMI) -> None:
        try:
            await item.gmi.shutdown()
        except Exception as exc:  # one GMI's failure must not stop the others' shutdown
            self._log.warning(
                "GMI %s of session %s failed to shut down: %s",
                item.gmi.gmi_id,
                item.session_id,
                exc,
            )
