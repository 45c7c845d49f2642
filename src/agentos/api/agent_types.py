"""`Agent` and `Session`: what every agent and every session offers, whichever engine runs it.

Spec (the first table; GMIs from agent() → the same surface). `agent()` returns an `Agent`: a
plain agent (`PlainAgent`) or, with ``runtime="gmi"``, a GMI agent (`GmiAgent`); both hand out
`AgentSession`, the one session class (`agentos.api.session`). Code written against these two
protocols runs on either engine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from agentos.core.messages import ContentPart, Message
from agentos.core.usage import ModelUsage
from agentos.learning import LearningLayer
from agentos.llm.budget import SpendBudget
from agentos.storage.history_events import HistoryEvent

from .agent_export import AgentExport
from .results import GenerateTextResult
from .stream_result import StreamTextResult

__all__ = ["Agent", "Session"]


class Session(Protocol):
    """One conversation with an agent: its turns, its history, its usage (spec: Sessions)."""

    @property
    def id(self) -> str:
        """The session's id."""
        ...

    @property
    def user_id(self) -> str | None:
        """The end user's id (``None``: none is sent with the model requests)."""
        ...

    async def send(self, prompt: str | list[ContentPart], **options: Any) -> GenerateTextResult:
        """Run one turn to its end and return its result; a failed turn raises its error."""
        ...

    def stream(self, prompt: str | list[ContentPart], **options: Any) -> StreamTextResult:
        """Start a turn to read as it streams."""
        ...

    async def messages(self) -> list[Message]:
        """Every message of the history, oldest first."""
        ...

    async def reseed(self, messages: Sequence[Message]) -> None:
        """Replace the history with ``messages``."""
        ...

    async def clear(self) -> None:
        """Empty the history."""
        ...

    def drain_history_events(self) -> list[HistoryEvent]:
        """What happened to the history since the last call."""
        ...

    def usage(self) -> ModelUsage:
        """The usage of this session's turns."""
        ...

    def record_external_cost(self, cost_usd: float, tokens: int = 0) -> None:
        """Charge a cost spent outside the model calls to the agent's budget (spec)."""
        ...

    async def close(self) -> None:
        """End the session: later turns raise."""
        ...

    @property
    def closed(self) -> bool:
        """Whether the session (or its agent) was closed."""
        ...


class Agent(Protocol):
    """An agent built by `agent()` or `gmi()`: one-off calls, sessions, usage, export, closing."""

    @property
    def options(self) -> Mapping[str, Any]:
        """The options the agent was built with."""
        ...

    @property
    def budget(self) -> SpendBudget | None:
        """The agent's own spend budget (its ``budget`` option), or ``None``."""
        ...

    @property
    def learning(self) -> LearningLayer | None:
        """The agent's learning layer (``learning`` on a GMI agent), else ``None``."""
        ...

    async def generate(self, prompt: str | list[ContentPart], **options: Any) -> GenerateTextResult:
        """Run one call with no history and return its result."""
        ...

    def stream(self, prompt: str | list[ContentPart], **options: Any) -> StreamTextResult:
        """Start one call with no history, to read as it streams."""
        ...

    def session(self, session_id: str | None = None, *, user_id: str | None = None) -> Session:
        """The session ``session_id`` (a new id when ``None``), opened on first use."""
        ...

    def usage(self, session_id: str | None = None) -> ModelUsage:
        """One session's usage, or (no id) every call's and session's."""
        ...

    def export(self, metadata: Mapping[str, Any] | None = None) -> AgentExport:
        """The agent's options as a portable document."""
        ...

    async def close(self) -> None:
        """Release the agent and its sessions."""
        ...
