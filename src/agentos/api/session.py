"""`AgentSession`: one conversation with an agent, over the engine its agent runs turns on.

Spec (GMIs from agent() → Sessions, Closing; the first table's "Per-session state" of the
lightweight helpers). Both kinds of agent hand out this one class: a plain `agent()` over the
plain engine (`agentos.api.plain_engine`: `stream_text()` with the whole history), a `gmi()`
agent over the GMI engine (`agentos.api.gmi_engine`: a GMI of the session's own). The session
keeps what they share: its id, user and memory scope, its history (`SessionHistoryBuffer`, the
source of truth; none with ``history=False``), one turn at a time (its lock; across handles and
processes the store's lease, DESIGN §5.21), its usage, and closing. The engine checks a turn's
options, runs the turn, follows a reseed or clear of the history, and lets go of what it holds
when the session is released.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import ContentPart, Message
from agentos.core.usage import ModelUsage
from agentos.llm.budget import BudgetLike
from agentos.llm.model import closing_stream
from agentos.storage.history_events import HistoryEvent
from agentos.storage.session_history import SessionHistoryBuffer

from .call_checks import check_prompt
from .results import GenerateTextResult, StreamPart
from .stream_result import Run, StreamTextResult

if TYPE_CHECKING:  # the plain agent runs without the GMI package
    from agentos.substrate.gmi import GMI

__all__ = ["AgentSession", "SessionEngine", "SessionTurn", "UsageCounter"]

UsageCounter = Callable[[ModelUsage], None]
"""Told of what a turn used (its finished steps, billed failed attempts), once per figure."""


class SessionTurn(Run, Protocol):
    """A session's turn: read as a stream (`Run`), or run to its end at once."""

    async def run(self) -> GenerateTextResult:
        """Run the turn to its end and return its result (raises the turn's failure)."""
        ...


class SessionEngine(Protocol):
    """How one session's turns run: the plain engine or the GMI engine."""

    @property
    def budget(self) -> BudgetLike | None:
        """The spend budget the session's turns are held to (``None``: none)."""
        ...

    @property
    def gmi(self) -> GMI | None:
        """The GMI the session's turns run on, when there is one now."""
        ...

    def turn(
        self,
        session: AgentSession,
        prompt: str | list[ContentPart],
        options: dict[str, Any],
        count: UsageCounter,
    ) -> SessionTurn:
        """A turn of ``session`` not yet started; raises `GMIError` naming a bad option first."""
        ...

    async def history_replaced(self, history: SessionHistoryBuffer | None) -> None:
        """The session's history was reseeded or cleared (``history`` holds it now)."""
        ...

    async def release(self) -> None:
        """Let go of what the engine holds (a running turn stops); it runs no turn again."""
        ...


class AgentSession:
    """A conversation with an agent: made by ``agent.session(id)``; see the module doc.

    ``send()`` and ``stream()`` run one turn at a time: a second waits for the first to end.
    ``messages()``, ``reseed()``, ``clear()`` and ``drain_history_events()`` act on the history;
    with ``history=False`` there is none: ``messages()`` is empty and ``reseed()`` raises.
    """

    def __init__(
        self,
        session_id: str,
        engine: SessionEngine,
        *,
        history: SessionHistoryBuffer | None,
        user_id: str | None = None,
        scope_id: str | None = None,
        on_usage: Callable[[ModelUsage, str], None] | None = None,
        on_closed: Callable[[AgentSession], None] | None = None,
    ) -> None:
        self.id = session_id
        """The session's id."""
        self.user_id = user_id
        """The end user's id, sent with each model request (``None``: none is sent)."""
        self.scope_id = scope_id or session_id
        """The memory scope of this opening of the session (spec: Scope)."""
        self._engine = engine
        self._history = history
        self._lock = asyncio.Lock()
        self._usage = ModelUsage.zero()
        self._on_usage = on_usage
        self._on_closed = on_closed
        self._closed = False

    # -- turns ------------------------------------------------------------------------------

    async def send(self, prompt: str | list[ContentPart], **options: Any) -> GenerateTextResult:
        """Run one turn to its end and return its result; a failed turn raises its error.

        The options are the agent's send options (`agentos.api.plain_engine`,
        `agentos.api.gmi_engine`); another raises `GMIError` naming it. The prompt (text or a
        list of content parts) and the options are checked before the turn starts
        (`agentos.api.call_checks`): a bad one raises naming it, and nothing is stored or sent.
        """
        turn = self._turn(prompt, options)
        async with self._lock:
            self._check_open()
            return await turn.run()

    def stream(self, prompt: str | list[ContentPart], **options: Any) -> StreamTextResult:
        """Start a turn to read as it streams (options as for `send`).

        Its text, usage and result settle after the history is written; a consumer that stops
        reading stops the turn and aborts its model call.
        """
        run = _LockedRun(self._turn(prompt, options), self._lock, self._check_open)
        return StreamTextResult(run, options.get("response_schema"))

    def _turn(self, prompt: str | list[ContentPart], options: dict[str, Any]) -> SessionTurn:
        """The engine's turn, not yet started, after the checks that need no turn."""
        self._check_open()
        check_prompt(prompt)
        return self._engine.turn(self, prompt, options, self._count)

    def _count(self, usage: ModelUsage) -> None:
        self._usage = self._usage + usage
        if self._on_usage is not None:
            self._on_usage(usage, self.id)

    # -- the history ------------------------------------------------------------------------

    async def messages(self) -> list[Message]:
        """Every message of the history, oldest first, partial ones included.

        An empty list with ``history=False``.
        """
        if self._history is None:
            return []
        await self._history.load()
        return self._history.messages()

    async def reseed(self, messages: Sequence[Message]) -> None:
        """Replace the history with ``messages`` (tool pairing checked first: `ValueError`).

        A turn running meanwhile writes nothing. Raises `GMIError` (``INVALID_STATE``) on an
        agent built with ``history=False``.
        """
        if self._history is None:
            raise GMIError(
                "reseed() needs a session history; this agent was built with history=False",
                GMIErrorCode.INVALID_STATE,
            )
        await self._history.load()
        await self._history.reseed(messages)
        await self._engine.history_replaced(self._history)

    async def clear(self) -> None:
        """Empty the history; a turn running meanwhile writes nothing."""
        if self._history is not None:
            await self._history.load()
            await self._history.clear()
        await self._engine.history_replaced(self._history)

    def drain_history_events(self) -> list[HistoryEvent]:
        """What happened to the history since the last call (evictions, reseeds, clears, ...)."""
        return self._history.drain_history_events() if self._history is not None else []

    # -- usage ------------------------------------------------------------------------------

    def usage(self) -> ModelUsage:
        """The usage of this session's turns, failed ones' billed attempts included."""
        return self._usage

    def record_external_cost(self, cost_usd: float, tokens: int = 0) -> None:
        """Charge a cost spent outside the model calls (a paid tool, say) to the agent's budget.

        Without a budget there is nothing to charge and nothing happens.
        """
        budget = self._engine.budget
        if budget is not None:
            budget.record_external_cost(cost_usd, tokens)

    # -- closing ----------------------------------------------------------------------------

    async def close(self) -> None:
        """End the session: later turns raise, and the agent's next ``session(id)`` starts anew.

        On a GMI, a turn still running stops (its model call aborted, its caller given the
        abort error, its finished steps kept and marked partial) and the GMI is shut down; on
        the plain engine a turn already running finishes. Closing twice does nothing.
        """
        if self._closed:
            return
        await self.release()
        if self._on_closed is not None:
            self._on_closed(self)

    async def release(self) -> None:
        """Let go of this handle without ending the session (`agent.close()`, DESIGN §5.16).

        The engine lets go as `close()` has it, but a durable store keeps the session open: the
        next `session(id)`, in this process or another, continues it. The handle cannot be
        used again.
        """
        if self._closed:
            return
        self._closed = True
        await self._engine.release()

    @property
    def closed(self) -> bool:
        """Whether the session (or its agent) was closed."""
        return self._closed

    @property
    def gmi(self) -> GMI | None:
        """The session's GMI (its mood, events, trace); ``None`` on a plain agent's session.

        On a `gmi()` agent, ``None`` before its first turn; with ``history=False``, the running
        turn's GMI, and ``None`` between turns.
        """
        return self._engine.gmi

    def _check_open(self) -> None:
        if self._closed:
            raise GMIError(f"session {self.id!r} is closed", GMIErrorCode.INVALID_STATE)


class _LockedRun:
    """A session's turn that waits for the session's previous turn before it starts."""

    def __init__(self, run: Run, lock: asyncio.Lock, check_open: Callable[[], None]) -> None:
        self._run = run
        self._lock = lock
        self._check_open = check_open

    async def parts(self) -> AsyncIterator[StreamPart]:
        async with self._lock:
            self._check_open()
            # Closed explicitly, so a consumer that stops reading stops the turn now.
            async with closing_stream(self._run.parts()) as parts:
                async for part in parts:
                    yield part

    def result(self) -> GenerateTextResult:
        return self._run.result()

    def usage(self) -> ModelUsage:
        return self._run.usage()
