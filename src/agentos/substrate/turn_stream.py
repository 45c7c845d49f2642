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
_EMPTY = object()


class GMITurnStream:
    """One turn's chunks (iterate once) and its output (``await output()``).

    The hand-over is a one-chunk slot with a future per wait, not an `asyncio.Queue`: the
    order and waits of a queue of size 1 with ``join()``, in a fraction of the calls (a turn
    hands over a handful of chunks, each waited for), and the end a flag the consumer reads
    right after the last chunk, so the turn's task is done without waiting for it.
    """

    def __init__(self, run: TurnTask) -> None:
        """Start ``run`` (the GMI's turn) in a task of its own, feeding this stream."""
        self._loop = asyncio.get_running_loop()
        self._slot: object = _EMPTY  # the chunk handed over and not yet taken
        self._unfinished = 0  # chunks handed over whose consumer has not come back
        self._ended = False  # the turn has handed over its last chunk (`finish`)
        self._getter: asyncio.Future[None] | None = None  # the consumer, waiting for a chunk
        self._putter: asyncio.Future[None] | None = None  # the turn, waiting for an empty slot
        self._joiner: asyncio.Future[None] | None = None  # the turn, waiting for its consumer
        self._output: asyncio.Future[GMIOutput] = self._loop.create_future()
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
        await self._put(chunk)
        while self._unfinished:  # until the consumer is done with it (see the module doc)
            self._joiner = waiter = self._loop.create_future()
            await waiter

    async def _put(self, item: object) -> None:
        while self._slot is not _EMPTY:
            self._putter = waiter = self._loop.create_future()
            await waiter
        self._slot = item
        self._unfinished += 1
        getter = self._getter
        if getter is not None and not getter.done():  # not done: it may have been cancelled
            getter.set_result(None)

    async def _get(self) -> object:
        while self._slot is _EMPTY:
            if self._ended:
                return _DONE
            self._getter = waiter = self._loop.create_future()
            await waiter
        item, self._slot = self._slot, _EMPTY
        putter = self._putter
        if putter is not None and not putter.done():
            putter.set_result(None)
        return item

    def __aiter__(self) -> AsyncIterator[GMIOutputChunk]:
        return self._chunks()

    async def _chunks(self) -> AsyncIterator[GMIOutputChunk]:
        try:
            while not self._finished:
                item = await self._get()
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
        await self._put(marker)
        self._output.set_result(output)
        # The end is a flag, not a second chunk in the slot: the turn does not wait for the
        # marker to be taken, and the consumer reads the end right after it, in one wake-up.
        self._ended = True
        getter = self._getter
        if getter is not None and not getter.done():
            getter.set_result(None)

    def _let_go(self) -> None:
        if self._held:
            self._held = False
            self._unfinished -= 1
            joiner = self._joiner
            if not self._unfinished and joiner is not None and not joiner.done():
                joiner.set_result(None)

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
