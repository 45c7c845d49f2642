"""The session store's records and its protocol (spec "Sessions", DESIGN.md §5.9).

`SessionInfo` (who opened a session, its memory scope, whether it is open), `StoredMessage` (one
message with its block and position), `SessionChanges` (one atomic change set) and the
`SessionStore` protocol both stores of `agentos.storage.session_store` implement.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, runtime_checkable

from agentos.core.messages import Message

__all__ = ["SessionChanges", "SessionInfo", "SessionStore", "StoredMessage"]


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """What a store knows about a session apart from its messages.

    ``scope_id`` is the session's memory scope: the session id at its first opening, a fresh id at
    each opening after a `close()`. ``open`` is ``False`` once the session was closed, and
    ``closed_at`` is then set. Times are timezone-aware.
    """

    session_id: str
    user_id: str | None
    scope_id: str
    open: bool
    opened_at: datetime
    closed_at: datetime | None = None

    def __post_init__(self) -> None:
        # Naive times would mean different instants to different processes; refuse them here so
        # both backends behave alike.
        for moment in (self.opened_at, self.closed_at):
            if moment is not None and moment.tzinfo is None:
                raise ValueError("session times must be timezone-aware")


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """One message of a session as the store holds it.

    ``block`` is the index of the block (one send, or one reseeded exchange) the message belongs
    to; ``position`` orders the session's messages and is unique within the session.
    """

    block: int
    position: int
    message: Message


@dataclass(frozen=True, slots=True)
class SessionChanges:
    """One atomic change set for one session; `SessionStore.write` applies all of it or nothing.

    Applied in this order:

    1. ``reset``: when not ``None``, every message the session holds is removed and these are
       stored in their place (``()`` empties the history);
    2. ``drop_blocks``: every message of these blocks is removed (absent blocks are ignored);
    3. ``replace``: each held message at one of these positions is replaced, block and all (a
       position the session does not hold is an error);
    4. ``append``: these messages are added (a position the session already holds is an error);
    5. ``info``: when not ``None``, saved as `SessionStore.save_info` would.
    """

    reset: tuple[StoredMessage, ...] | None = None
    drop_blocks: frozenset[int] = field(default_factory=frozenset)
    replace: tuple[StoredMessage, ...] = ()
    append: tuple[StoredMessage, ...] = ()
    info: SessionInfo | None = None

    @property
    def empty(self) -> bool:
        """Whether applying these changes would change nothing."""
        return (
            self.reset is None
            and not self.drop_blocks
            and not self.replace
            and not self.append
            and self.info is None
        )


@runtime_checkable
class SessionStore(Protocol):
    """Where sessions' histories and infos live.

    Every method is synchronous and atomic: a write is complete (committed, for a durable store)
    before it returns, and a write that fails changes nothing. A store serves one writer per
    session at a time: agentos writes a session only while it holds the session's lease when the
    store keeps leases (`agentos.storage.session_lease.SessionLeases`; both stores here do).
    """

    def load_info(self, session_id: str) -> SessionInfo | None:
        """The session's info, or ``None`` when none was saved."""
        ...

    def save_info(self, info: SessionInfo) -> None:
        """Save ``info`` under ``info.session_id``, replacing what was saved before."""
        ...

    def load_messages(self, session_id: str) -> list[StoredMessage]:
        """The session's messages in position order (``[]`` for an unknown session)."""
        ...

    def write(self, session_id: str, changes: SessionChanges) -> None:
        """Apply ``changes`` to the session atomically (see `SessionChanges` for the order).

        Raises `ValueError`, changing nothing, when ``changes`` contradicts what is held (a
        replaced position that is not held, an appended position that is, two messages at one
        position, an ``info`` for another session).
        """
        ...
