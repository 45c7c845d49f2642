"""A GMI turn's stream: its chunks, in order, and its output (DESIGN.md §5.12).

The turn runs in a task of its own, so `GMI.shutdown()` can abort it while its consumer waits;
the turn waits for its consumer to take each chunk and come back for the next, so it never runs
ahead of its consumer and what the consumer does with a chunk (a session stores a finished step
or a tool result) is done before the turn goes on: a process killed at any point has stored all
the turn recorded (DESIGN.md §5.21). Closing the stream early (``aclose()``, or leaving an
``async for`` with ``break``) stops the turn and its model call.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

from agentos.core.usage import ModelUsage
from agentos.substrate.chunks import GMIOutput, GMIOutputChunk

__all__ = ["GMITurnStream", "TurnTask"]

TurnTask = Callable[["GMITurnStream"], Coroutine[Any, Any, None]]
"""Runs a turn into the stream it is given (`GMITurnStream.emit`, then `GMITurnStream.finish`)."""


_DONE = object()


class GMITurnStream:
    """One turn's chunks (iterate once) and its output (``await output()``)."""

    def __init__(self, run: TurnTask) -> None:
        """Start ``run`` (the GMI's turn) in a task of its own, feeding this stream."""
        self._queue: asyncio.Queue[object] = asyncio.Queue(maxsize=1)
        self._output: asyncio.Future[GMIOutput] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(run(self))
        self._finished = False
        self._held = False  # a chunk handed out whose consumer has not come back for the next
        self.usage: Callable[[], ModelUsage] = ModelUsage.zero
        """The turn's usage so far (the turn sets it when it starts): its finished steps, billed
        failed attempts and a step stopped early (estimated, DESIGN §5.19). After `aclose()`,
        what the stopped turn used."""

    @property
    def task(self) -> asyncio.Task[None]:
        """The task that runs the turn (the GMI cancels it to abort or shut down the turn)."""
        return self._task

    async def emit(self, chunk: GMIOutputChunk) -> None:
        """Hand ``chunk`` to the consumer; return once it is done with it (the turn calls it)."""
        await self._queue.put(chunk)
        await self._queue.join()  # until the consumer is done with it (see the module doc)

    def __aiter__(self) -> AsyncIterator[GMIOutputChunk]:
        return self._chunks()

    async def _chunks(self) -> AsyncIterator[GMIOutputChunk]:
        try:
            while not self._finished:
                item = await self._queue.get()
                if item is _DONE:
                    self._finished = True
                    break
                assert isinstance(item, GMIOutputChunk)
                self._held = True
                yield item
                self._let_go()
        finally:
            if not self._finished:
                await self.aclose()
        await self._task  # re-raise a turn-loop bug rather than hide it

    async def finish(self, marker: GMIOutputChunk, output: GMIOutput) -> None:
        """End the stream: the FINAL_RESPONSE_MARKER chunk, then the output (the GMI calls it)."""
        # Not waited for: the turn has nothing left to do, and a consumer that leaves its loop at
        # the marker must still find the output.
        await self._queue.put(marker)
        self._output.set_result(output)
        await self._queue.put(_DONE)

    def _let_go(self) -> None:
        if self._held:
            self._held = False
            self._queue.task_done()

    async def output(self) -> GMIOutput:
        """The turn's output; reads (and drops) any chunks not yet read."""
        # A consumer that left its loop (``break`` after the final marker, say) is done with the
        # chunk it held: the turn may go on.
        self._let_go()
        if not self._finished:
            async for _ in self:
                pass
        return await self._output

    async def aclose(self) -> None:
        """Stop the turn (its model call aborted) when it is still running."""
        self._finished = True
        if not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
