"""`AgentSession`: a conversation with a plain `agent()`, its history in process memory.

Spec (the first table, "Per-session state" of the lightweight helpers; the paragraph before it):
the path without a GMI keeps each session's message history in process memory, unless the agent
was built with ``history=False``, and sends the whole of it with every turn, where a GMI's
prompt engine would give it 35 % of the window. A request that does not fit the window of a
model the catalog knows is refused with `ContextWindowExceededError` before it is sent
(`agentos.api.context_window`).

A turn is an `AgentTurn` (`agentos.api.agent_turn`); only a turn that ends without error is
written to the history and observed by the memory provider. One turn runs at a time per session.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import ContentPart, Message
from agentos.core.usage import ModelUsage
from agentos.storage.history_events import HistoryEvent
from agentos.storage.session_history import SessionHistoryBuffer

from .agent_turn import AgentTurn, TurnSettings
from .call_checks import check_prompt
from .generate import TextOptions
from .results import GenerateTextResult
from .stream_result import StreamTextResult

__all__ = ["SESSION_CALL_OPTIONS", "AgentSession", "UsageTally"]


@dataclass(slots=True)
class UsageTally:
    """Usage added up: one total, and one per session id (kept after a session closes)."""

    total: ModelUsage = field(default_factory=ModelUsage.zero)
    sessions: dict[str, ModelUsage] = field(default_factory=dict)

    def add(self, usage: ModelUsage, session_id: str | None) -> None:
        """Count ``usage`` in the total and, for a session's turn, in that session's."""
        self.total = self.total + usage
        if session_id is not None:
            self.sessions[session_id] = self.sessions.get(session_id, ModelUsage.zero()) + usage


SESSION_CALL_OPTIONS: frozenset[str] = frozenset(
    {
        "temperature",
        "max_tokens",
        "top_p",
        "response_schema",
        "schema_name",
        "tool_choice",
        "request_timeout",
        "cache_diagnostics",
        "model",
        "provider",
        "max_steps",
        "usage_ledger",
        "budget",
    }
)
"""The options a session's ``send()`` and ``stream()`` take (anything else is refused)."""

CallOptionsMerger = Callable[[str, dict[str, Any], frozenset[str]], TextOptions]


class AgentSession:
    """A conversation with a plain `agent()`: its history in process memory (or ``store``).

    Made by `Agent.session()`. ``send()`` and ``stream()`` run one turn at a time: a second waits
    for the first to end. ``messages()``, ``reseed()``, ``clear()`` and
    ``drain_history_events()`` act on the history; with ``history=False`` there is none:
    ``messages()`` is empty and ``reseed()`` raises.
    """

    def __init__(
        self,
        session_id: str,
        *,
        user_id: str | None,
        settings: TurnSettings,
        history: SessionHistoryBuffer | None,
        merge_options: CallOptionsMerger,
        on_usage: Callable[[ModelUsage, str], None],
        on_closed: Callable[[AgentSession], None],
    ) -> None:
        self.id = session_id
        """The session's id."""
        self.user_id = user_id
        """The end user's id, sent with each model request (``None``: none is sent)."""
        self._settings = settings
        self._history = history
        self._merge = merge_options
        self._lock = asyncio.Lock()
        self._usage = ModelUsage.zero()
        self._on_usage = on_usage
        self._on_closed = on_closed
        self._closed = False

    async def send(self, prompt: str | list[ContentPart], **options: Any) -> GenerateTextResult:
        """Run one turn to its end and return its result.

        Options: ``temperature``, ``max_tokens``, ``top_p``, ``response_schema``,
        ``schema_name``, ``tool_choice``, ``request_timeout``, ``cache_diagnostics``, ``model``,
        ``provider``, ``max_steps``, ``usage_ledger`` and ``budget`` (a `SpendBudget` or budget
        settings, replacing the agent's for this turn); another raises `GMIError` naming it.
        The prompt (text or a list of content parts) and the options are checked before the
        turn starts (`agentos.api.call_checks`): a bad one raises `GMIError` naming it, and
        nothing is stored or sent. A failed turn raises its error
        (``ContextWindowExceededError`` before any request when the history does not fit a
        known model's window) and leaves the history as it was.
        """
        return await self.stream(prompt, **options).result

    def stream(self, prompt: str | list[ContentPart], **options: Any) -> StreamTextResult:
        """Start a turn to read as it streams (options as for `send`).

        Its text, usage and result settle after the history is written; a consumer that stops
        reading stops the turn, which then leaves nothing in the history.
        """
        self._check_open()
        check_prompt(prompt)
        call = self._merge("session.send()", options, SESSION_CALL_OPTIONS)
        turn = AgentTurn(
            self._settings,
            prompt,
            call,
            history=self._history,
            lock=self._lock,
            session_id=self.id,
            user_id=self.user_id,
            on_usage=self._count,
            check_open=self._check_open,
        )
        return StreamTextResult(turn, call.get("response_schema"))

    def _count(self, usage: ModelUsage) -> None:
        self._usage = self._usage + usage
        self._on_usage(usage, self.id)

    async def messages(self) -> list[Message]:
        """Every message of the history, oldest first (an empty list with ``history=False``)."""
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

    async def clear(self) -> None:
        """Empty the history; a turn running meanwhile writes nothing."""
        if self._history is not None:
            await self._history.load()
            await self._history.clear()

    def drain_history_events(self) -> list[HistoryEvent]:
        """What happened to the history since the last call (evictions, reseeds, clears, ...)."""
        return self._history.drain_history_events() if self._history is not None else []

    def usage(self) -> ModelUsage:
        """The usage of this session's turns, failed ones' billed attempts included."""
        return self._usage

    async def close(self) -> None:
        """End the session: later turns raise, and the agent's next ``session(id)`` starts anew.

        A turn already running finishes. Closing twice does nothing.
        """
        if self._closed:
            return
        self._closed = True
        self._on_closed(self)

    @property
    def closed(self) -> bool:
        """Whether the session (or its agent) was closed."""
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise GMIError(f"session {self.id!r} is closed", GMIErrorCode.INVALID_STATE)
