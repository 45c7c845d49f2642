"""The session store: the durable seam under a session's history (spec "Sessions", DESIGN.md §5.9).

A store keeps, per session id, one `SessionInfo` (who opened it, its memory scope, whether it is
open) and the session's messages as `StoredMessage` rows: each message with the block (one send)
it belongs to and its position (the order key). `SessionHistoryBuffer` is the only writer in
agentos; it decides blocks, positions and eviction, and the store applies each decision as one
atomic `SessionChanges` (the records and the `SessionStore` protocol live in
`agentos.storage.session_records`, the SQLite tables in `agentos.storage.session_tables`).

Two backends: `InMemorySessionStore` (the spec's default: the history ends with the process) and
`SQLiteSessionStore` (on `agentos.storage.sqlite`, migrations namespace ``"sessions"``), whose
sessions a new process reopens and continues. Messages are stored through the project's one
history adapter (`dump_messages` / `load_messages`), so tool calls, tool results, replay blocks and
metadata round-trip exactly; a stored message that cannot be read raises `StorageError` naming the
session and the message's position, never the parser's dump.

Both stores also keep one lease per session (`agentos.storage.session_lease.SessionLeases`,
DESIGN.md §5.21): one turn at a time per session across handles and processes, the session's
revision (bumped by every write, so a history reloads when someone else wrote), and the
reconciliation of a turn whose holder died (`agentos.storage.unfinished_turns`), done in the
transaction that frees the dead holder's lease. The in-memory store's leases live in the process
(its holders are this process's), so it behaves the same within one process.
"""

from __future__ import annotations

import copy
import math
import os
import sqlite3
import time
from collections.abc import Sequence
from datetime import datetime

from .session_lease import (
    DEFAULT_LEASE_TIMEOUT,
    DEFAULT_LEASE_TTL,
    LeaseHolder,
    check_lease_options,
)
from .session_records import SessionChanges, SessionInfo, SessionStore, StoredMessage
from .session_tables import (
    FREE_LEASE,
    LEASE_ROW,
    SESSION_STORE,
    SESSION_STORE_MIGRATIONS,
    apply_changes,
    message_row,
    save_info_row,
    session_revision,
    stored_message,
    time_from_text,
)
from .sqlite import Database, open_store_database
from .unfinished_turns import repair_changes

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


class InMemorySessionStore:
    """A `SessionStore` in process memory: the spec's default, gone with the process.

    Writes keep the written (frozen) messages as they are, so a turn's write costs no copy;
    `load_messages` hands out deep copies, as a durable store hands out fresh objects. Its
    leases are this process's (no heartbeat: ``lease_ttl`` is infinite); ``lease_timeout`` is
    how long a second handle's turn waits (30 s by default).
    """

    lease_ttl: float = math.inf

    def __init__(self, *, lease_timeout: float = DEFAULT_LEASE_TIMEOUT) -> None:
        check_lease_options(lease_timeout, self.lease_ttl)
        self.lease_timeout = lease_timeout
        """Seconds a turn waits for another handle's turn on the session (``SESSION_BUSY``)."""
        self._infos: dict[str, SessionInfo] = {}
        self._messages: dict[str, dict[int, StoredMessage]] = {}
        self._revisions: dict[str, int] = {}
        self._leases: dict[str, tuple[LeaseHolder, int | None]] = {}
        self._top_block: dict[str, int] = {}  # kept as writes land: no scan of a long history

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
        self._note_top_block(session_id, changes, held, appended)
        if changes.info is not None:
            self._infos[session_id] = changes.info
        if not changes.empty:
            self._revisions[session_id] = self._revisions.get(session_id, 0) + 1

    def _note_top_block(
        self,
        session_id: str,
        changes: SessionChanges,
        held: dict[int, StoredMessage],
        appended: dict[int, StoredMessage],
    ) -> None:
        if changes.reset is not None or changes.drop_blocks or changes.replace:
            self._top_block[session_id] = max((m.block for m in held.values()), default=-1)
        elif appended:
            top = max(m.block for m in appended.values())
            self._top_block[session_id] = max(self._top_block.get(session_id, -1), top)

    # -- leases (SessionLeases) ---------------------------------------------------------------

    def reconcile(self, session_id: str) -> int:
        """Reconcile a turn a dead holder left (freeing its lease); return the revision."""
        lease = self._leases.get(session_id)
        if lease is not None and not lease[0].alive(0.0, self.lease_ttl):
            self._repair(session_id, lease[1])
            del self._leases[session_id]
        return self._revisions.get(session_id, 0)

    def try_acquire_lease(self, session_id: str, holder: LeaseHolder, *, turn: bool) -> int | None:
        """Take the lease (a dead holder's is taken over); ``None`` while a live holder has it."""
        lease = self._leases.get(session_id)
        if lease is not None:
            if lease[0].alive(0.0, self.lease_ttl):
                return None
            self._repair(session_id, lease[1])
        first = self._top_block.get(session_id, -1) + 1
        self._leases[session_id] = (holder, first if turn else None)
        return self._revisions.get(session_id, 0)

    def renew_lease(self, session_id: str, holder: LeaseHolder) -> None:
        """Nothing to renew: this store's holders are this process's."""

    def release_lease(self, session_id: str, holder: LeaseHolder) -> int:
        """Free the lease when ``holder`` has it; return the session's revision."""
        lease = self._leases.get(session_id)
        if lease is not None and lease[0].token == holder.token:
            del self._leases[session_id]
        return self._revisions.get(session_id, 0)

    def _repair(self, session_id: str, first_block: int | None) -> None:
        if first_block is None:
            return
        held = self._messages.get(session_id, {})
        turn = [held[p] for p in sorted(held) if held[p].block >= first_block]
        changes = repair_changes(turn, max(held, default=-1) + 1)
        if not changes.empty:
            self.write(session_id, changes)


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


class SQLiteSessionStore:
    """A `SessionStore` in the agentos SQLite database: sessions survive the process.

    Give it an open `Database` (shared with the other stores; the caller closes it), or a
    ``path`` (default: ``AGENTOS_HOME``'s database) to open one it owns and closes in `close()`.
    Its migrations run when it is made. Each write is one transaction, committed before the call
    returns.

    One turn at a time per session holds across every process that opens the file (DESIGN.md
    §5.21): a turn takes the session's lease, and a turn of another process or handle waits for
    it up to ``lease_timeout`` seconds (30 by default), then fails with ``SESSION_BUSY``. A lease
    whose holder died expires: at once for a process of this host (its pid is gone), after
    ``lease_ttl`` seconds without a heartbeat for a holder on another host. The turn it guarded
    is reconciled before anyone reads or writes the session again.
    """

    def __init__(
        self,
        database: Database | None = None,
        *,
        path: str | os.PathLike[str] | None = None,
        lease_timeout: float = DEFAULT_LEASE_TIMEOUT,
        lease_ttl: float = DEFAULT_LEASE_TTL,
    ) -> None:
        check_lease_options(lease_timeout, lease_ttl)
        self.lease_timeout = lease_timeout
        """Seconds a turn waits for another turn on the session before ``SESSION_BUSY``."""
        self.lease_ttl = lease_ttl
        """Seconds a holder on another host keeps its lease without a heartbeat."""
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
            closed_at=time_from_text(row["closed_at"]),
        )

    def save_info(self, info: SessionInfo) -> None:
        """Save ``info`` under ``info.session_id``, committed before this returns."""
        with self._database.transaction() as connection:
            save_info_row(connection, info)

    def load_messages(self, session_id: str) -> list[StoredMessage]:
        """The session's messages in position order."""
        rows = self._database.fetchall(
            "SELECT block, position, message FROM session_messages "
            "WHERE session_id = ? ORDER BY position",
            (session_id,),
        )
        return [stored_message(session_id, row) for row in rows]

    def write(self, session_id: str, changes: SessionChanges) -> None:
        """Apply ``changes`` in one transaction, committed before this returns."""
        _check_info(session_id, changes)
        if changes.empty:
            return
        # Serialise before the transaction opens: a message the adapter refuses changes nothing
        # and holds no lock.
        reset = None if changes.reset is None else [message_row(m) for m in changes.reset]
        replace = [message_row(m) for m in changes.replace]
        append = [message_row(m) for m in changes.append]
        with self._database.transaction() as connection:
            apply_changes(connection, session_id, reset, changes.drop_blocks, replace, append)
            if changes.info is not None:
                save_info_row(connection, changes.info)

    # -- leases (SessionLeases) ---------------------------------------------------------------

    def reconcile(self, session_id: str) -> int:
        """Reconcile a turn a dead holder left (freeing its lease); return the revision."""
        row = self._database.fetchone(LEASE_ROW, (session_id,))
        if row is None:
            return 0
        if row["token"] is None or self._holder_alive(row):
            return int(row["revision"])
        with self._database.transaction() as connection:
            row = connection.execute(LEASE_ROW, (session_id,)).fetchone()
            if row["token"] is not None and not self._holder_alive(row):
                self._repair(connection, session_id, row["turn_block"])
                connection.execute(
                    f"UPDATE session_leases SET {FREE_LEASE} WHERE session_id = ?", (session_id,)
                )
            return session_revision(connection, session_id)

    def try_acquire_lease(self, session_id: str, holder: LeaseHolder, *, turn: bool) -> int | None:
        """Take the lease (a dead holder's is taken over); ``None`` while a live holder has it."""
        with self._database.transaction() as connection:
            row = connection.execute(LEASE_ROW, (session_id,)).fetchone()
            if row is not None and row["token"] is not None:
                if self._holder_alive(row):
                    return None
                self._repair(connection, session_id, row["turn_block"])
            first = None
            if turn:
                found = connection.execute(
                    "SELECT MAX(block) FROM session_messages WHERE session_id = ?", (session_id,)
                ).fetchone()[0]
                first = 0 if found is None else int(found) + 1
            connection.execute(
                "INSERT INTO session_leases (session_id, token, host, pid, started, "
                "heartbeat_at, turn_block) VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (session_id) DO UPDATE SET token = excluded.token, "
                "host = excluded.host, pid = excluded.pid, started = excluded.started, "
                "heartbeat_at = excluded.heartbeat_at, turn_block = excluded.turn_block",
                (
                    session_id,
                    holder.token,
                    holder.host,
                    holder.pid,
                    holder.started,
                    time.time(),
                    first,
                ),
            )
            return session_revision(connection, session_id)

    def renew_lease(self, session_id: str, holder: LeaseHolder) -> None:
        """Refresh the holder's heartbeat (nothing when it no longer holds the lease)."""
        self._database.execute(
            "UPDATE session_leases SET heartbeat_at = ? WHERE session_id = ? AND token = ?",
            (time.time(), session_id, holder.token),
        )

    def release_lease(self, session_id: str, holder: LeaseHolder) -> int:
        """Free the lease when ``holder`` has it; return the session's revision."""
        with self._database.transaction() as connection:
            connection.execute(
                f"UPDATE session_leases SET {FREE_LEASE} WHERE session_id = ? AND token = ?",
                (session_id, holder.token),
            )
            return session_revision(connection, session_id)

    def _holder_alive(self, row: sqlite3.Row) -> bool:
        holder = LeaseHolder(row["token"], row["host"], int(row["pid"]), row["started"] or "")
        return holder.alive(time.time() - float(row["heartbeat_at"]), self.lease_ttl)

    def _repair(
        self, connection: sqlite3.Connection, session_id: str, first_block: int | None
    ) -> None:
        if first_block is None:
            return
        rows = connection.execute(
            "SELECT block, position, message FROM session_messages "
            "WHERE session_id = ? AND block >= ? ORDER BY position",
            (session_id, first_block),
        ).fetchall()
        newest = connection.execute(
            "SELECT MAX(position) FROM session_messages WHERE session_id = ?", (session_id,)
        ).fetchone()[0]
        turn = [stored_message(session_id, row) for row in rows]
        changes = repair_changes(turn, 0 if newest is None else int(newest) + 1)
        if not changes.empty:
            apply_changes(
                connection,
                session_id,
                None,
                changes.drop_blocks,
                [message_row(m) for m in changes.replace],
                [message_row(m) for m in changes.append],
            )

    def close(self) -> None:
        """Close the database when this store opened it (a shared one stays open)."""
        if self._owns_database:
            self._database.close()
