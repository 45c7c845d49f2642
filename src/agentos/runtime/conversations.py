"""The full runtime's stored conversations: one per session, owned by the user who opened it.

Spec (Output stream: the runtime "keeps only the reply in the conversation"; DESIGN §5.4 and
§5.9): each session's conversation is the user's inputs and the GMI's replies, kept in a
`SessionHistoryBuffer` over the runtime's `SessionStore` (in process memory by default, SQLite
one option away), so a restarted runtime with a durable store continues a session. The GMI gets
the conversation before the turn, bounded by the history window (the persona's
``conversation_context_config.max_messages``, else 20); trimming never leaves a tool result
without the assistant message that called it.

Privacy: a session belongs to the user who opened it. A request naming the session with another
user id is refused (``PERMISSION_DENIED``), whatever ids a caller chooses, so no user reads or
continues another user's conversation.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import Message, Role
from agentos.storage.session_history import DEFAULT_HISTORY_MAX_TOKENS, SessionHistoryBuffer
from agentos.storage.session_records import SessionInfo
from agentos.storage.session_store import SessionStore

__all__ = ["DEFAULT_HISTORY_WINDOW", "Conversations", "history_window"]

DEFAULT_HISTORY_WINDOW = 20
"""Messages of the conversation a turn sees when the persona sets no window (DESIGN §5.4)."""


class Conversations:
    """The runtime's conversations over one `SessionStore` (see the module doc)."""

    def __init__(
        self,
        store: SessionStore,
        *,
        max_tokens: int = DEFAULT_HISTORY_MAX_TOKENS,
        private: bool = False,
    ) -> None:
        """Conversations over ``store``.

        ``private``: the store is the runtime's own (in process memory, no other writer), so a
        session's turns are kept one at a time by `turn_lock` alone, without the store's lease.
        """
        self.store = store
        """Where the conversations live."""
        self._max_tokens = max_tokens
        self._private = private
        self._open: dict[str, SessionHistoryBuffer] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def open(self, session_id: str, user_id: str) -> SessionHistoryBuffer:
        """The conversation of ``session_id``, opened for ``user_id`` (recorded as its owner).

        Raises `GMIError` (``PERMISSION_DENIED``, naming the session) when another user owns it.
        """
        info = self.store.load_info(session_id)
        if info is not None and info.open and info.user_id != user_id:
            raise GMIError(
                f"session {session_id!r} belongs to another user",
                GMIErrorCode.PERMISSION_DENIED,
                {"option": "session_id", "session_id": session_id},
            )
        if info is None or not info.open:
            self.store.save_info(
                SessionInfo(session_id, user_id, session_id, True, datetime.now(UTC))
            )
        buffer = self._open.get(session_id)
        if buffer is None:
            buffer = self._open[session_id] = SessionHistoryBuffer(
                session_id, self.store, max_tokens=self._max_tokens, sole_writer=self._private
            )
        return buffer

    def turn_lock(self, session_id: str) -> asyncio.Lock:
        """The lock one turn of ``session_id`` holds in this runtime (one turn at a time)."""
        lock = self._locks.get(session_id)
        if lock is None:
            lock = self._locks[session_id] = asyncio.Lock()
        return lock

    def owner(self, session_id: str) -> str | None:
        """The user who owns the open session ``session_id``, or ``None``."""
        info = self.store.load_info(session_id)
        return info.user_id if info is not None and info.open else None

    def forget(self, session_id: str) -> None:
        """Drop the in-process handle of a session (its stored conversation stays)."""
        self._open.pop(session_id, None)
        self._locks.pop(session_id, None)


def history_window(messages: Sequence[Message], size: int) -> list[Message]:
    """The newest ``size`` messages, widened so no tool result loses the call it answers.

    A tool result at the window's start pulls in the messages back to the assistant message
    that made its call (DESIGN §5.4).
    """
    if size <= 0:
        return []
    start = max(0, len(messages) - size)
    while start > 0 and messages[start].role is Role.TOOL:
        start -= 1
    return list(messages[start:])
