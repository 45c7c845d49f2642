"""The session store: the durable seam under a session's history (spec "Sessions", DESIGN.md §5.9).

A store keeps, per session id, one `SessionInfo` (who opened it, its memory scope, whether it is
open) and the session's messages as `StoredMessage` rows: each message with the block (one send)
it belongs to and its position (the order key). `SessionHistoryBuffer` is the only writer in
agentos; it decides blocks, positions and eviction, and the store applies each decision as one
atomic `SessionChanges`.

Two backends: `InMemorySessionStore` (the spec's default: the history ends with the process) and
`SQLiteSessionStore` (on `agentos.storage.sqlite`, migrations namespace ``"sessions"``), whose
sessions a new process reopens and continues. Messages are stored through the project's one
history adapter (`dump_messages` / `load_messages`), so tool calls, tool results, replay blocks and
metadata round-trip exactly.
"""

from __future__ import annotations

import copy
import os
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable

from agentos.core.messages import Message, dump_messages, load_messages

from .sqlite import Database, Migration, StorageError, open_store_database

__all__ = [
    "SESSION_STORE",
    "SESSION_STORE_MIGRATIONS",
    "InMemorySessionStore",
    "SQLiteSessionStore",
    "SessionChanges",
    "SessionInfo",
    "SessionStore",
    "StoredMessage",
]


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
    session at a time (agentos runs one turn at a time per session).
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


class InMemorySessionStore:
    """A `SessionStore` in process memory: the spec's default, gone with the process.

    Writes keep the written (frozen) messages as they are, so a turn's write costs no copy;
    `load_messages` hands out deep copies, as a durable store hands out fresh objects.
    """

    def __init__(self) -> None:
        self._infos: dict[str, SessionInfo] = {}
        self._messages: dict[str, dict[int, StoredMessage]] = {}

    def load_info(self, session_id: str) -> SessionInfo | None:
        """The session's info, or ``None`` when none was saved."""
        return self._infos.get(session_id)

    def save_info(self, info: SessionInfo) -> None:
        """Save ``info`` under ``info.session_id``."""
        self._infos[info.session_id] = info

    def load_messages(self, session_id: str) -> list[StoredMessage]:
        """The session's messages in position order, as copies the caller may keep."""
        held = self._messages.get(session_id, {})
        # Deep copies: a durable store hands out fresh objects, so this one does too, and a
        # caller mutating a message's metadata dict cannot change what is stored.
        return [_copied(held[position]) for position in sorted(held)]

    def write(self, session_id: str, changes: SessionChanges) -> None:
        """Apply ``changes`` all or nothing: everything is checked before anything changes."""
        _check_info(session_id, changes)
        held = self._messages.get(session_id, {})
        if changes.reset is not None or changes.drop_blocks:
            # Rare (clear, reseed, eviction): build the new history aside, then swap it in.
            held = dict(held) if changes.reset is None else _unique(changes.reset)
            if changes.drop_blocks:
                held = {p: s for p, s in held.items() if s.block not in changes.drop_blocks}
        # The common write (a turn's step appended) checks and touches only its own positions.
        for stored in changes.replace:
            if stored.position not in held:
                raise ValueError(f"no message at position {stored.position} to replace")
        appended = _unique(changes.append)
        for position in appended:
            if position in held:
                raise ValueError(f"position {position} already holds a message")
        for stored in changes.replace:
            held[stored.position] = stored
        held.update(appended)
        self._messages[session_id] = held
        if changes.info is not None:
            self._infos[session_id] = changes.info


def _unique(messages: Sequence[StoredMessage]) -> dict[int, StoredMessage]:
    unique: dict[int, StoredMessage] = {}
    for stored in messages:
        if stored.position in unique:
            raise ValueError(f"position {stored.position} already holds a message")
        unique[stored.position] = stored
    return unique


def _copied(stored: StoredMessage) -> StoredMessage:
    return StoredMessage(stored.block, stored.position, copy.deepcopy(stored.message))


def _check_info(session_id: str, changes: SessionChanges) -> None:
    if changes.info is not None and changes.info.session_id != session_id:
        raise ValueError(
            f"changes for session {session_id!r} carry the info of {changes.info.session_id!r}"
        )


SESSION_STORE = "sessions"
"""The session store's name in ``schema_version``."""

SESSION_STORE_MIGRATIONS: Sequence[Migration] = (
    Migration(
        1,
        """
        CREATE TABLE session_info (
            session_id TEXT PRIMARY KEY,
            user_id TEXT,
            scope_id TEXT NOT NULL,
            open INTEGER NOT NULL CHECK (open IN (0, 1)),
            -- UTC, ISO 8601 with microseconds.
            opened_at TEXT NOT NULL,
            closed_at TEXT
        );
        -- No foreign key to session_info: a history may be written before (or without) an info.
        CREATE TABLE session_messages (
            session_id TEXT NOT NULL,
            position INTEGER NOT NULL CHECK (position >= 0),
            block INTEGER NOT NULL CHECK (block >= 0),
            -- One message as the JSON of a one-item history (agentos.core.messages.dump_messages).
            message TEXT NOT NULL,
            PRIMARY KEY (session_id, position)
        ) WITHOUT ROWID;
        CREATE INDEX session_messages_by_block ON session_messages (session_id, block);
        """,
    ),
)
"""The session store's migrations, in order; a later change is a new entry at the end."""


class SQLiteSessionStore:
    """A `SessionStore` in the agentos SQLite database: sessions survive the process.

    Give it an open `Database` (shared with the other stores; the caller closes it), or a
    ``path`` (default: ``AGENTOS_HOME``'s database) to open one it owns and closes in `close()`.
    Its migrations run when it is made. Each write is one transaction, committed before the call
    returns.
    """

    def __init__(
        self, database: Database | None = None, *, path: str | os.PathLike[str] | None = None
    ) -> None:
        self._database, self._owns_database = open_store_database(
            "SQLiteSessionStore", database, path, SESSION_STORE, SESSION_STORE_MIGRATIONS
        )

    @property
    def database(self) -> Database:
        """The database the sessions live in."""
        return self._database

    def load_info(self, session_id: str) -> SessionInfo | None:
        """The session's info, or ``None`` when none was saved."""
        row = self._database.fetchone(
            "SELECT session_id, user_id, scope_id, open, opened_at, closed_at "
            "FROM session_info WHERE session_id = ?",
            (session_id,),
        )
        if row is None:
            return None
        return SessionInfo(
            session_id=row["session_id"],
            user_id=row["user_id"],
            scope_id=row["scope_id"],
            open=bool(row["open"]),
            opened_at=datetime.fromisoformat(row["opened_at"]),
            closed_at=_from_text(row["closed_at"]),
        )

    def save_info(self, info: SessionInfo) -> None:
        """Save ``info`` under ``info.session_id``, committed before this returns."""
        with self._database.transaction() as connection:
            _save_info(connection, info)

    def load_messages(self, session_id: str) -> list[StoredMessage]:
        """The session's messages in position order."""
        rows = self._database.fetchall(
            "SELECT block, position, message FROM session_messages "
            "WHERE session_id = ? ORDER BY position",
            (session_id,),
        )
        return [
            StoredMessage(int(row["block"]), int(row["position"]), _load(row["message"]))
            for row in rows
        ]

    def write(self, session_id: str, changes: SessionChanges) -> None:
        """Apply ``changes`` in one transaction, committed before this returns."""
        _check_info(session_id, changes)
        if changes.empty:
            return
        # Serialise before the transaction opens: a message the adapter refuses changes nothing
        # and holds no lock.
        reset = None if changes.reset is None else [_row(m) for m in changes.reset]
        replace = [_row(m) for m in changes.replace]
        append = [_row(m) for m in changes.append]
        with self._database.transaction() as connection:
            if reset is not None:
                connection.execute(
                    "DELETE FROM session_messages WHERE session_id = ?", (session_id,)
                )
                _insert(connection, session_id, reset)
            if changes.drop_blocks:
                blocks = sorted(changes.drop_blocks)
                marks = ", ".join("?" * len(blocks))
                connection.execute(
                    f"DELETE FROM session_messages WHERE session_id = ? AND block IN ({marks})",
                    (session_id, *blocks),
                )
            for block, position, text in replace:
                updated = connection.execute(
                    "UPDATE session_messages SET block = ?, message = ? "
                    "WHERE session_id = ? AND position = ?",
                    (block, text, session_id, position),
                ).rowcount
                if updated != 1:
                    # Raised inside the transaction: it rolls back everything above.
                    raise ValueError(f"no message at position {position} to replace")
            _insert(connection, session_id, append)
            if changes.info is not None:
                _save_info(connection, changes.info)

    def close(self) -> None:
        """Close the database when this store opened it (a shared one stays open)."""
        if self._owns_database:
            self._database.close()


def _row(stored: StoredMessage) -> tuple[int, int, str]:
    return stored.block, stored.position, dump_messages([stored.message])


def _load(text: str) -> Message:
    messages = load_messages(text)
    if len(messages) != 1:
        raise StorageError(f"a stored session message holds {len(messages)} messages, not 1")
    return messages[0]


def _insert(
    connection: sqlite3.Connection, session_id: str, rows: Sequence[tuple[int, int, str]]
) -> None:
    for block, position, text in rows:
        try:
            connection.execute(
                "INSERT INTO session_messages (session_id, position, block, message) "
                "VALUES (?, ?, ?, ?)",
                (session_id, position, block, text),
            )
        except sqlite3.IntegrityError as error:
            raise ValueError(f"position {position} already holds a message") from error


def _save_info(connection: sqlite3.Connection, info: SessionInfo) -> None:
    connection.execute(
        "INSERT INTO session_info (session_id, user_id, scope_id, open, opened_at, closed_at) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET "
        "user_id = excluded.user_id, scope_id = excluded.scope_id, open = excluded.open, "
        "opened_at = excluded.opened_at, closed_at = excluded.closed_at",
        (
            info.session_id,
            info.user_id,
            info.scope_id,
            int(info.open),
            _to_text(info.opened_at),
            None if info.closed_at is None else _to_text(info.closed_at),
        ),
    )


def _from_text(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


def _to_text(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="microseconds")
