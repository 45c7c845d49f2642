"""`SQLiteToolPauseStore`: pending external tool requests in the agentos database (DESIGN.md §6).

One row per session with a pending pause (the session id is the primary key, so a session holds
at most one), on the foundation of `agentos.storage.sqlite`: WAL, the store's own migrations
under the name ``"tool_pauses"``, and every write committed before the call returns, so a pause
saved by a process that is killed the moment `save` returns is loaded by the next one. Each call
that reads and writes runs in one ``BEGIN IMMEDIATE`` transaction: of two handles or processes
taking the same pause, the second waits for the first to commit and then finds nothing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from .sqlite import Database, Migration, open_store_database
from .tool_pauses import (
    PauseRow,
    ToolPause,
    check_pause_key,
    check_pause_owner,
    check_user_id,
    decode_pause,
    encode_pause,
)

__all__ = ["TOOL_PAUSE_MIGRATIONS", "TOOL_PAUSE_STORE", "SQLiteToolPauseStore"]

TOOL_PAUSE_STORE = "tool_pauses"
"""The tool pause store's name in ``schema_version``."""

TOOL_PAUSE_MIGRATIONS: Sequence[Migration] = (
    Migration(
        1,
        """
        CREATE TABLE tool_pauses (
            session_id TEXT PRIMARY KEY CHECK (session_id <> ''),
            user_id TEXT NOT NULL CHECK (user_id <> ''),
            persona_id TEXT NOT NULL,
            gmi_instance_id TEXT,
            interaction_id TEXT NOT NULL,
            -- JSON: [{"id", "name", "arguments", "unparsed_arguments"?}, ...], at least one.
            tool_calls TEXT NOT NULL CHECK (tool_calls <> '[]'),
            rationale TEXT,
            -- JSON object, or NULL when the request carried no metadata.
            metadata TEXT,
            -- UTC, ISO 8601 with microseconds: one fixed width, so text order is time order.
            created_at TEXT NOT NULL
        );
        CREATE INDEX tool_pauses_by_user ON tool_pauses (user_id, created_at, session_id);
        """,
    ),
    # The paused turn's resolved organization (NULL: none, and every pause stored before).
    Migration(2, "ALTER TABLE tool_pauses ADD COLUMN organization_id TEXT;"),
)
"""The tool pause store's migrations, in order; a later change is a new entry at the end."""

_COLUMNS = ", ".join(PauseRow._fields)
_PLACEHOLDERS = ", ".join("?" * len(PauseRow._fields))
_UPDATES = ", ".join(f"{name} = excluded.{name}" for name in PauseRow._fields[1:])


class SQLiteToolPauseStore:
    """A `ToolPauseStore` in the agentos SQLite database: pauses survive the process.

    Give it an open `Database` (shared with the other stores; the caller closes it), or a
    ``path`` (default: ``AGENTOS_HOME``'s database; ``":memory:"`` for a private one) to open one
    it owns and closes in `close()`. Its migrations run when it is made. Each call is one
    transaction, committed before it returns.
    """

    def __init__(
        self, database: Database | None = None, *, path: str | os.PathLike[str] | None = None
    ) -> None:
        self._database, self._owns_database = open_store_database(
            "SQLiteToolPauseStore", database, path, TOOL_PAUSE_STORE, TOOL_PAUSE_MIGRATIONS
        )

    @property
    def database(self) -> Database:
        """The database the pauses live in."""
        return self._database

    async def save(self, pause: ToolPause) -> None:
        """Save ``pause`` as its session's pending pause, replacing the session's earlier one.

        Encoded (and so checked) before the transaction opens: refused input holds no lock and
        changes nothing. Another user's pause on the session is never replaced.
        """
        row = encode_pause(pause)
        with self._database.transaction() as connection:
            held = connection.execute(
                "SELECT user_id FROM tool_pauses WHERE session_id = ?", (row.session_id,)
            ).fetchone()
            if held is not None:
                check_pause_owner(held["user_id"], row.user_id, row.session_id)
            connection.execute(
                f"INSERT INTO tool_pauses ({_COLUMNS}) VALUES ({_PLACEHOLDERS}) "
                f"ON CONFLICT (session_id) DO UPDATE SET {_UPDATES}",
                tuple(row),
            )

    async def load(self, session_id: str, *, user_id: str) -> ToolPause | None:
        """The session's pending pause, or ``None`` when it has none."""
        check_pause_key(session_id, user_id)
        row = self._database.fetchone(
            f"SELECT {_COLUMNS} FROM tool_pauses WHERE session_id = ?", (session_id,)
        )
        if row is None:
            return None
        check_pause_owner(row["user_id"], user_id, session_id)
        return decode_pause(tuple(row))

    async def take(
        self, session_id: str, *, user_id: str, interaction_id: str | None = None
    ) -> ToolPause | None:
        """Remove and return the session's pending pause (only that turn's, if named).

        Read and delete share one write transaction, so exactly one of several takers gets it.
        A row that cannot be read raises `StorageError` and stays (the transaction rolls back).
        """
        check_pause_key(session_id, user_id, interaction_id)
        with self._database.transaction() as connection:
            row = connection.execute(
                f"SELECT {_COLUMNS} FROM tool_pauses WHERE session_id = ?", (session_id,)
            ).fetchone()
            if row is None:
                return None
            check_pause_owner(row["user_id"], user_id, session_id)
            if interaction_id is not None and row["interaction_id"] != interaction_id:
                return None
            pause = decode_pause(tuple(row))
            connection.execute("DELETE FROM tool_pauses WHERE session_id = ?", (session_id,))
        return pause

    async def list_pauses(self, user_id: str) -> list[ToolPause]:
        """The user's pending pauses, oldest first (ties by session id)."""
        check_user_id(user_id)
        rows = self._database.fetchall(
            f"SELECT {_COLUMNS} FROM tool_pauses WHERE user_id = ? ORDER BY created_at, session_id",
            (user_id,),
        )
        return [decode_pause(tuple(row)) for row in rows]

    def close(self) -> None:
        """Close the database when this store opened it (a shared one stays open)."""
        if self._owns_database:
            self._database.close()
