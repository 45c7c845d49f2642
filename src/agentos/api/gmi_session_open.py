"""Opening a session of a `gmi()` agent: its user, memory scope, history and memory provider.

Spec (GMIs from agent() → Sessions, Cognitive memory, Scope; memoryProvider). `GmiAgent.session()`
opens a session from these parts: `check_same_user` (an open id is not reopened for another
user), `scope_of_opening` (the session id at its first opening, a new id after a close),
`history_buffer` (the ``history`` option) and `MemoryProviderHooks` (the ``memory_provider``'s
context before a turn and its observation after one).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.memory.store import MemoryStore
from agentos.storage.session_history import DEFAULT_HISTORY_MAX_TOKENS, SessionHistoryBuffer
from agentos.storage.session_store import SessionInfo, SessionStore

from .agent_options import AgentOptions
from .memory_provider import fetch_memory_context, observe_turn
from .session import AgentSession

__all__ = [
    "MemoryProviderHooks",
    "check_same_user",
    "history_buffer",
    "memory_outlives_agent",
    "scope_of_opening",
]


def check_same_user(session_id: str, open_user_id: str | None, user_id: str | None) -> None:
    """Raise `GMIError` (``INVALID_ARGUMENT``) when ``user_id`` is not the open session's user.

    ``None`` asks for no particular user and always passes.
    """
    if user_id is not None and user_id != open_user_id:
        raise GMIError(
            f"session {session_id!r} is open for user {open_user_id!r}, not {user_id!r}",
            GMIErrorCode.INVALID_ARGUMENT,
            {"option": "user_id"},
        )


def memory_outlives_agent(options: AgentOptions) -> bool:
    """Whether the cognitive memory's store is the caller's (see `scope_of_opening`)."""
    settings = options.get("memory")
    return isinstance(settings, Mapping) and isinstance(settings.get("store"), MemoryStore)


def scope_of_opening(
    session_id: str,
    user_id: str | None,
    store: SessionStore | None,
    opened: set[str],
    *,
    outlives_agent: bool,
) -> tuple[str, str | None]:
    """The memory scope (and user) of an opening of ``session_id`` (spec: Scope).

    ``opened`` holds the ids the agent has opened since its last close (the spec's entries); the
    id is added to it. The session id at its first opening, a new id at each opening after a
    close. With a durable ``store``, a session still open in it (another process's, or this
    one's before a restart) continues with its scope and user; one closed there starts anew.

    The spec's "first opening" assumes ``agent.close()`` starts a new memory. A memory store the
    caller passed outlives the agent (``outlives_agent``: a SQLite file, a store shared by two
    agents), so there an id's first opening in this agent may follow another agent's session of
    that id, perhaps another user's: such an opening gets a new scope id too, and only a session
    the durable store holds open continues an earlier scope.
    """
    info = store.load_info(session_id) if store is not None else None
    if info is not None and info.open:
        # As for a session open in this process: a session without a user is not picked up
        # by one, or that user would recall the session's memories (DESIGN.md §5.17).
        check_same_user(session_id, info.user_id, user_id)
        opened.add(session_id)
        return info.scope_id, user_id or info.user_id
    reopened = session_id in opened or info is not None or outlives_agent
    scope_id = f"{session_id}#{uuid.uuid4().hex[:8]}" if reopened else session_id
    opened.add(session_id)
    if store is not None:
        store.save_info(SessionInfo(session_id, user_id, scope_id, True, datetime.now(UTC)))
    return scope_id, user_id


def history_buffer(
    option: object, scope_id: str, store: SessionStore | None
) -> SessionHistoryBuffer | None:
    """The session's history as the ``history`` option sets it (``False``: none).

    ``history={"max_tokens": n}`` caps it at ``n`` tokens; otherwise the default cap applies.
    """
    if option is False:
        return None
    max_tokens = (
        option.get("max_tokens", DEFAULT_HISTORY_MAX_TOKENS)
        if isinstance(option, Mapping)
        else DEFAULT_HISTORY_MAX_TOKENS
    )
    return SessionHistoryBuffer(scope_id, store, max_tokens=max_tokens)


@dataclass(frozen=True, slots=True)
class MemoryProviderHooks:
    """The ``memory_provider``'s two calls as a session makes them (spec: memoryProvider).

    With cognitive memory on (``cognitive_memory_on``), the memory supplies the context, so the
    provider's is not asked for (the agent warns about it at construction); it still observes.
    """

    provider: object
    timeout_ms: float
    cognitive_memory_on: bool

    async def context(self, session: AgentSession, text: str) -> str | None:
        """The provider's context for a turn of ``session`` that says ``text``, or ``None``."""
        if self.provider is None or self.cognitive_memory_on:
            return None
        return await fetch_memory_context(
            self.provider,
            text,
            timeout_ms=self.timeout_ms,
            session_id=session.id,
            user_id=session.user_id,
        )

    async def observe(self, session: AgentSession, text: str, reply: str) -> None:
        """Give the provider a turn of ``session`` that ended without error."""
        await observe_turn(
            self.provider, text, reply, session_id=session.id, user_id=session.user_id
        )
