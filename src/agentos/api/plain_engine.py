"""The plain engine: a plain `agent()`'s session turns, on `stream_text()` with the whole history.

Spec (the first table, "Per-session state" of the lightweight helpers; the paragraph before it):
the path without a GMI keeps each session's message history in process memory, unless the agent
was built with ``history=False``, and sends the whole of it with every turn, where a GMI's
prompt engine would give it 35 % of the window. A request that does not fit the window of a
model the catalog knows is refused with `ContextWindowExceededError` before it is sent
(`agentos.api.context_window`). A turn is an `AgentTurn` (`agentos.api.agent_turn`); only a
turn that ends without error is written to the history and observed by the memory provider.
The session itself is the one `AgentSession` (`agentos.api.session`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentos.core.messages import ContentPart
from agentos.core.usage import ModelUsage
from agentos.llm.budget import BudgetLike
from agentos.storage.session_history import SessionHistoryBuffer

from .agent_turn import AgentTurn, TurnSettings
from .generate import TextOptions
from .session import AgentSession, UsageCounter

if TYPE_CHECKING:  # the plain agent runs without the GMI package
    from agentos.substrate.gmi import GMI

__all__ = ["SESSION_CALL_OPTIONS", "PlainEngine", "UsageTally"]


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
        "approve_tool",
    }
)
"""The options a plain agent's ``session.send()`` and ``stream()`` take (another is refused):
``temperature``, ``max_tokens``, ``top_p``, ``response_schema``, ``schema_name``,
``tool_choice``, ``request_timeout``, ``cache_diagnostics``, ``model``, ``provider``,
``max_steps``, ``usage_ledger``, ``budget`` (a `SpendBudget`, budget settings or a `JointBudget`,
replacing the agent's for this turn) and ``approve_tool`` (the tool-approval gate)."""

CallOptionsMerger = Callable[[str, dict[str, Any], frozenset[str]], TextOptions]
"""The agent's check of a call's options, laid over its own (raises naming a bad one)."""


class PlainEngine:
    """A plain agent's session turns (a `SessionEngine`): `AgentTurn` over the session's history.

    A turn already running when the session closes finishes; the engine holds nothing to let go.
    """

    def __init__(
        self,
        settings: TurnSettings,
        history: SessionHistoryBuffer | None,
        merge_options: CallOptionsMerger,
    ) -> None:
        self._settings = settings
        self._history = history
        self._merge = merge_options

    @property
    def budget(self) -> BudgetLike | None:
        """The agent's spend budget."""
        budget: BudgetLike | None = self._settings.text_options.get("budget")
        return budget

    @property
    def gmi(self) -> GMI | None:
        """Always ``None``: a plain agent has no GMI."""
        return None

    def turn(
        self,
        session: AgentSession,
        prompt: str | list[ContentPart],
        options: dict[str, Any],
        count: UsageCounter,
    ) -> AgentTurn:
        """A turn of ``session``: its options checked (`SESSION_CALL_OPTIONS`) and merged."""
        call = self._merge("session.send()", options, SESSION_CALL_OPTIONS)
        return AgentTurn(
            self._settings,
            prompt,
            call,
            history=self._history,
            session_id=session.id,
            user_id=session.user_id,
            on_usage=count,
        )

    async def history_replaced(self, history: SessionHistoryBuffer | None) -> None:
        """Nothing to do: each turn reads the history afresh."""

    async def release(self) -> None:
        """Nothing to let go of."""
