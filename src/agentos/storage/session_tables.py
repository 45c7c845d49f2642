"""The SQLite tables of the session store: migrations and the statements on them (DESIGN.md §6).

``session_info`` (one row per session), ``session_messages`` (one row per stored message, the
message as the JSON of a one-item history) and ``session_leases`` (per session: its revision,
bumped by every write, and its lease, DESIGN.md §5.21). `SQLiteSessionStore` runs these
statements inside its transactions.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime

from agentos.core.messages import dump_messages, load_messages

from .session_records import SessionInfo, StoredMessage
from .sqlite import Migration, StorageError

__all__ = [
    "FREE_LEASE",
    "LEASE_ROW",
    "SESSION_STORE",
    "SESSION_STORE_MIGRATIONS",
    "apply_changes",
    "message_row",
    "save_info_row",
    "session_revision",
    "stored_message",
    "time_from_text",
]

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
    Migration(
        2,
        """
        -- One row per session with a history: its revision (bumped by every write) and its
        -- lease (DESIGN.md §5.21): the holder of the running turn, NULL when free.
        CREATE TABLE session_leases (
            session_id TEXT PRIMARY KEY,
            revision INTEGER NOT NULL DEFAULT 0,
            token TEXT,
            host TEXT,
            pid INTEGER,
            started TEXT,
            -- Unix seconds of the holder's last heartbeat.
            heartbeat_at REAL,
            -- The first block of the holder's turn (NULL: not a turn, or no holder).
            turn_block INTEGER
        ) WITHOUT ROWID;
        """,
    ),
)
"""The session store's migrations, in order; a later change is a new entry at the end."""


LEASE_ROW = (
    "SELECT revision, token, host, pid, started, heartbeat_at, turn_block "
    "FROM session_leases WHERE session_id = ?"
)
FREE_LEASE = (
    "token = NULL, host = NULL, pid = NULL, started = NULL, heartbeat_at = NULL, turn_block = NULL"
)


def session_revision(connection: sqlite3.Connection, session_id: str) -> int:
    """The session's revision (0 before its first write)."""
    row = connection.execute(
        "SELECT revision FROM session_leases WHERE session_id = ?", (session_id,)
    ).fetchone()
    return 0 if row is None else int(row[0])


def apply_changes(
    connection: sqlite3.Connection,
    session_id: str,
    reset: Sequence[tuple[int, int, str]] | None,
    drop_blocks: frozenset[int],
    replace: Sequence[tuple[int, int, str]],
    append: Sequence[tuple[int, int, str]],
) -> None:
    """Apply one change set's message changes inside ``connection``'s transaction."""
    if reset is not None:
        connection.execute("DELETE FROM session_messages WHERE session_id = ?", (session_id,))
        _insert(connection, session_id, reset)
    if drop_blocks:
        blocks = sorted(drop_blocks)
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
    # Every write bumps the revision, so a history that did not write it knows to reload.
    connection.execute(
        "INSERT INTO session_leases (session_id, revision) VALUES (?, 1) "
        "ON CONFLICT (session_id) DO UPDATE SET revision = revision + 1",
        (session_id,),
    )


def message_row(stored: StoredMessage) -> tuple[int, int, str]:
    """``(block, position, message JSON)``: a stored message as its row holds it."""
    return stored.block, stored.position, dump_messages([stored.message])


def stored_message(session_id: str, row: sqlite3.Row) -> StoredMessage:
    """A stored row read back; one that cannot be read names its session and position."""
    position = int(row["position"])
    try:
        messages = load_messages(row["message"])
    except ValueError as error:  # pydantic's ValidationError is a ValueError
        raise StorageError(
            f"session {session_id!r}: the stored message at position {position} cannot be "
            f"read ({_reason(error)})",
            details={"session_id": session_id, "position": position},
        ) from None
    if len(messages) != 1:
        raise StorageError(
            f"session {session_id!r}: the stored record at position {position} holds "
            f"{len(messages)} messages, not 1",
            details={"session_id": session_id, "position": position},
        )
    return StoredMessage(int(row["block"]), position, messages[0])


def _reason(error: ValueError) -> str:
    """The first problem a parser reports, in one short line."""
    errors = getattr(error, "errors", None)
    if callable(errors):
        found = errors()
        if found:
            first = found[0]
            where = ".".join(str(part) for part in first.get("loc", ()))
            return f"{where}: {first.get('msg', 'invalid')}" if where else str(first.get("msg"))
    return str(error).splitlines()[0][:200]


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


def save_info_row(connection: sqlite3.Connection, info: SessionInfo) -> None:
    """Insert or replace the session's info row."""
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


def time_from_text(text: str | None) -> datetime | None:
    """A stored time (``None`` stays ``None``)."""
    return None if text is None else datetime.fromisoformat(text)


def _to_text(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="microseconds")
