"""The sessions of a `gmi()` agent: the open ones, the ids it has opened, and their usage.

Spec (GMIs from agent() → Cognitive memory, Scope): the agent keeps one entry per session id it
has opened, until `agent.close()`, to tell an id's first opening from a later one. That entry is
all a closed session leaves behind (issue 11): `ended()` drops the session object the moment it
closes (and marks it closed in a durable store), so its GMI, its history buffer and all they
hold are freed; only its usage figures stay, so `agent.usage(id)` still answers (spec: Usage).

`close_all()` is `agent.close()`'s part (DESIGN §5.16): it closes every open session, or, with a
durable store, releases each one and leaves it open in the store, so the next process's
`session(id)` continues it; either way the ids opened are forgotten (the spec's new memory, in
which an id's next opening is its first).
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

from agentos.core.usage import ModelUsage
from agentos.storage.session_store import SessionStore

from .session import AgentSession

__all__ = ["SessionRegistry"]


class SessionRegistry:
    """What a `gmi()` agent keeps about its sessions (see the module doc)."""

    def __init__(self) -> None:
        self.opened: set[str] = set()
        """Every session id opened since the agent's last `close()` (the spec's entries)."""
        self._open: dict[str, AgentSession] = {}
        self._usage: dict[str, ModelUsage] = {}
        self._calls = ModelUsage.zero()

    def open_session(self, session_id: str) -> AgentSession | None:
        """The session open under ``session_id``, or ``None``."""
        session = self._open.get(session_id)
        return session if session is not None and not session.closed else None

    def add(self, session: AgentSession) -> None:
        """Keep ``session`` as the one open under its id."""
        self._open[session.id] = session

    def forget(self, session: AgentSession) -> None:
        """Drop a closed session; its usage figures stay."""
        if self._open.get(session.id) is session:
            del self._open[session.id]

    def ended(self, session: AgentSession, store: SessionStore | None) -> None:
        """`session.close()` ended ``session``: forget it and mark it closed in ``store``.

        The store's next opening of the id then starts empty, with a new scope (spec: Closing).
        """
        self.forget(session)
        info = store.load_info(session.id) if store is not None else None
        if store is not None and info is not None and info.open:
            store.save_info(dataclasses.replace(info, open=False, closed_at=datetime.now(UTC)))

    def add_usage(self, usage: ModelUsage, session_id: str | None) -> None:
        """Count a turn's usage to its session (``None``: an agent's `generate()`/`stream()`)."""
        if session_id is None:
            self._calls = self._calls + usage
        else:
            self._usage[session_id] = self._usage.get(session_id, ModelUsage.zero()) + usage

    def usage(self, session_id: str | None = None) -> ModelUsage:
        """One session id's usage (closed sessions' included), or every session's and call's."""
        if session_id is not None:
            return self._usage.get(session_id, ModelUsage.zero())
        return ModelUsage.sum([*self._usage.values(), self._calls])

    async def close_all(self, *, keep_open: bool) -> None:
        """Close every open session, or with ``keep_open`` release each (see the module doc)."""
        sessions = list(self._open.values())
        self._open.clear()
        for session in sessions:
            await (session.release() if keep_open else session.close())
        self.opened.clear()
