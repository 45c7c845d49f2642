"""What an agency call returns: `AgentCall`, `AgencyResult`, and `AgencyStreamResult`'s events.

Spec (the first table's Output row): agency() gives "a result with text, agentCalls and usage
from generate() and send(), an AgencyStreamResult from stream()". The stream really streams
(issue 14 item 5): `AgentStarted` and `AgentFinished` for each member call, `AgentTextDelta` as
each call's text is generated, `AgencyFinished` last; `text_stream` yields the text of the call
whose output is the result, as it is generated.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import ToolCall
from agentos.core.usage import ModelUsage

__all__ = [
    "AgencyEvent",
    "AgencyFinished",
    "AgencyResult",
    "AgencyStreamResult",
    "AgentCall",
    "AgentFinished",
    "AgentStarted",
    "AgentTextDelta",
    "EventSink",
]


@dataclass(slots=True)
class AgentCall:
    """One call to a member (or to a manager, synthesizer, judge or specialist).

    ``input`` is the prompt it was given, ``output`` its text; ``skipped`` is true when an
    approval skipped it (``output`` is then ``"[skipped by HITL]"``) and ``error`` holds why a
    failed call failed (its ``output`` is then empty: a failure never passes on partial text).
    """

    agent: str
    input: str
    output: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: ModelUsage = field(default_factory=ModelUsage.zero)
    duration_ms: float = 0.0
    skipped: bool = False
    error: str | None = None


@dataclass(slots=True)
class AgencyResult:
    """An agency call's result: its text, every call it made, their usage summed, its strategy.

    ``metadata`` holds ``guardrails_not_enforced`` (the guardrail ids given, none applied),
    ``budget_exhausted`` (which budget refused which member's call, or ``None``),
    ``limit_reached`` (the control reached, or ``None``), ``emergent_agents`` (the specialists
    spawned) and what a strategy adds (``failed_agents`` for parallel, say).
    """

    text: str
    agent_calls: list[AgentCall]
    usage: ModelUsage
    strategy: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AgentStarted:
    """A call to ``agent`` started with ``input``."""

    agent: str
    input: str


@dataclass(frozen=True, slots=True)
class AgentTextDelta:
    """A piece of ``agent``'s text; ``result`` marks the call whose text is the result's."""

    agent: str
    text: str
    result: bool = False


@dataclass(frozen=True, slots=True)
class AgentFinished:
    """A call ended (done, failed or skipped): the `AgentCall` it made."""

    call: AgentCall


@dataclass(frozen=True, slots=True)
class AgencyFinished:
    """The agency call ended: its result. Always the last event."""

    result: AgencyResult


AgencyEvent = AgentStarted | AgentTextDelta | AgentFinished | AgencyFinished
"""Any event of `AgencyStreamResult.events`."""

EventSink = Callable[[AgencyEvent], None]
"""Where a run sends its events (a no-op for ``generate()``)."""

_DONE = object()


class AgencyStreamResult:
    """An agency call to read as it happens (made by ``Agency.stream()`` / a session's).

    Read `events` or `text_stream` (one of them, once), or just ``await result()``, which runs
    the call to its end when nobody reads. The call starts when first read. Stopping a stream
    early (``break`` then ``aclose()``, or cancelling the reader) cancels the call and every
    member call it runs.
    """

    def __init__(self, start: Callable[[EventSink], Awaitable[AgencyResult]]) -> None:
        self._start = start
        self._queue: asyncio.Queue[object] = asyncio.Queue()
        self._task: asyncio.Task[AgencyResult] | None = None
        self._claimed = False

    @property
    def events(self) -> AsyncGenerator[AgencyEvent, None]:
        """Every event, `AgencyFinished` last; the call's error, if any, raised at the end."""
        self._claim()
        return self._events()

    @property
    def text_stream(self) -> AsyncGenerator[str, None]:
        """The result call's text as generated; the result text at the end if none streamed."""
        self._claim()
        return self._texts()

    async def result(self) -> AgencyResult:
        """The `AgencyResult`, once the call has finished (raises the call's error).

        After the stream was stopped early, `GMIError` ``ABORTED``.
        """
        if not self._claimed:
            async with contextlib.aclosing(self.events) as events:
                async for _ in events:
                    pass
        task = self._ensure_task()
        if not task.done():
            await asyncio.wait([task])
        if task.cancelled():
            raise GMIError(
                "the stream was stopped before the agency call finished", GMIErrorCode.ABORTED
            )
        return task.result()

    def _claim(self) -> None:
        if self._claimed:
            raise RuntimeError("an AgencyStreamResult's stream can be read only once")
        self._claimed = True

    def _ensure_task(self) -> asyncio.Task[AgencyResult]:
        if self._task is None:
            self._task = asyncio.create_task(self._run())
        return self._task

    async def _run(self) -> AgencyResult:
        try:
            return await self._start(self._queue.put_nowait)
        finally:
            self._queue.put_nowait(_DONE)

    async def _events(self) -> AsyncGenerator[AgencyEvent, None]:
        task = self._ensure_task()
        try:
            while (item := await self._queue.get()) is not _DONE:
                yield item  # type: ignore[misc]  # the queue holds events and the end marker
            task.result()  # raises the call's failure
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def _texts(self) -> AsyncGenerator[str, None]:
        streamed = False
        async with contextlib.aclosing(self._events()) as events:
            async for event in events:
                if isinstance(event, AgentTextDelta) and event.result:
                    streamed = True
                    yield event.text
                elif isinstance(event, AgencyFinished) and not streamed and event.result.text:
                    yield event.result.text
