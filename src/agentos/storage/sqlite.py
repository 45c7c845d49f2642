"""The SQLite foundation every embedded store builds on (DESIGN.md §6).

One database file under ``AGENTOS_HOME`` (default ``~/.agentos/``), named ``agentos.db``:

- WAL mode, so readers (a console, a second ``agentos`` process) never block the writer;
- ``foreign_keys`` on and a 5 s busy timeout, so two processes opening it at once wait rather
  than fail;
- a ``schema_version`` table with one row per store, and ordered migrations each store applies
  to itself in one transaction;
- explicit transactions: a write is committed before the call that made it returns.

**Migrations are namespaced per store.** A store (the usage ledger, later the session history,
tool pauses, ...) declares its own ordered ``(version, sql)`` list and calls
`Database.migrate` with its name when it opens. Each store's version is kept in its own
``schema_version`` row, so adding a store, or a migration to one store, never renumbers or
touches another store's list, and stores added by different modules (``memory/`` keeps its own
on top of this foundation) cannot collide. A migration, once released, is never edited: a
change is a new version at the end of the list.

A database written by a newer agentos (a store version above the newest this code knows) is
refused with `StorageError` rather than used half-understood.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from agentos.core.errors import GMIError, GMIErrorCode

__all__ = [
    "AGENTOS_HOME_ENV",
    "DATABASE_FILENAME",
    "Database",
    "Migration",
    "StorageError",
    "agentos_home",
    "default_database_path",
    "open_database",
    "open_store_database",
]

AGENTOS_HOME_ENV = "AGENTOS_HOME"
"""The environment variable naming the directory agentos keeps its state in."""

DATABASE_FILENAME = "agentos.db"
"""The database file's name inside ``AGENTOS_HOME``."""

MEMORY = ":memory:"
"""Pass as ``path`` for a private in-memory database (tests, throwaway runs)."""

_BUSY_TIMEOUT_SECONDS = 5.0


class StorageError(GMIError):
    """The embedded store cannot be opened, migrated or written.

    Code ``SYS_CONFIGURATION_ERROR`` when the cause is the environment (``AGENTOS_HOME`` names a
    directory that cannot be made), ``SYS_DATABASE_ERROR`` otherwise.
    """

    def __init__(
        self,
        message: str,
        code: GMIErrorCode = GMIErrorCode.DATABASE_ERROR,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message, code, details, component="storage")


@dataclass(frozen=True, slots=True)
class Migration:
    """One step of a store's schema: its ``version`` (1, 2, ...) and the SQL that makes it.

    ``sql`` may hold several statements (tables, indexes, triggers); they run in the same
    transaction as the version bump, so a failing migration leaves nothing behind.
    """

    version: int
    sql: str


def agentos_home() -> Path:
    """The directory agentos keeps its state in: ``$AGENTOS_HOME``, else ``~/.agentos``."""
    configured = os.environ.get(AGENTOS_HOME_ENV, "").strip()
    return Path(configured).expanduser() if configured else Path.home() / ".agentos"


def default_database_path() -> Path:
    """``agentos_home() / "agentos.db"``: the database `open_database()` opens by default."""
    return agentos_home() / DATABASE_FILENAME


def open_database(path: str | os.PathLike[str] | None = None) -> Database:
    """Open (creating when needed) the agentos database and return it.

    ``path`` defaults to `default_database_path()`; ``":memory:"`` gives a private in-memory
    database. The parent directory is created (mode 0700, as it may hold conversations) and a
    new database file is made readable by its owner only. When the directory cannot be made,
    `StorageError` names ``AGENTOS_HOME`` (or the ``path`` given) so the user knows what to fix.
    Stores apply their own migrations when they open (`Database.migrate`).
    """
    if path is not None and os.fspath(path) == MEMORY:
        return Database(_connect(MEMORY), None)
    from_home = path is None
    target = default_database_path() if path is None else Path(os.fspath(path)).expanduser()
    directory = target.parent
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as error:
        raise StorageError(
            _directory_message(directory, from_home, error),
            _home_code(from_home),
            {"path": str(directory)},
        ) from error
    if not os.access(directory, os.W_OK | os.X_OK):
        raise StorageError(
            _directory_message(directory, from_home, PermissionError("not writable")),
            _home_code(from_home),
            {"path": str(directory)},
        )
    created = not target.exists()
    try:
        connection = _connect(str(target))
    except sqlite3.Error as error:
        raise StorageError(
            f"cannot open the agentos database {str(target)!r}: {error}",
            details={"path": str(target)},
        ) from error
    if created:
        # The file holds usage and, later, conversations: owner-only, as the reference does.
        os.chmod(target, 0o600)
    return Database(connection, target)


def open_store_database(
    owner: str,
    database: Database | None,
    path: str | os.PathLike[str] | None,
    store: str,
    migrations: Sequence[Migration],
) -> tuple[Database, bool]:
    """The database a store named ``owner`` lives in, with ``store``'s migrations applied.

    A store takes an open ``database`` (shared, its caller closes it) or a ``path`` to open one
    it owns (``None``: the default database); both is a `ValueError` naming ``owner``, and a
    ``database`` that is no `Database` (a file name given positionally) a `TypeError` that says
    to pass it as ``path=``. Returns the database and whether the store owns it. A database
    opened here is closed again when the migrations fail, so a store that cannot open leaves no
    connection behind.
    """
    if database is not None and not isinstance(database, Database):
        hint = (
            f"; for a file, use {owner}(path={database!r})"
            if isinstance(database, str | os.PathLike)
            else ""
        )
        raise TypeError(
            f"{owner}'s database must be an open agentos Database, got "
            f"{type(database).__name__}{hint}"
        )
    if database is not None and path is not None:
        raise ValueError(f"give {owner} a database or a path, not both")
    owned = database is None
    opened = database if database is not None else open_database(path)
    try:
        opened.migrate(store, migrations)
    except BaseException:
        if owned:
            opened.close()
        raise
    return opened, owned


def _home_code(from_home: bool) -> GMIErrorCode:
    return GMIErrorCode.CONFIGURATION_ERROR if from_home else GMIErrorCode.DATABASE_ERROR


def _directory_message(directory: Path, from_home: bool, error: OSError) -> str:
    reason = error.strerror or str(error)
    if from_home:
        return (
            f"cannot create the agentos home directory {str(directory)!r} ({reason}); "
            f"set {AGENTOS_HOME_ENV} to a directory you can write to"
        )
    return f"cannot create the database directory {str(directory)!r} ({reason})"


def _connect(target: str) -> sqlite3.Connection:
    # isolation_level=None: no implicit BEGINs; Database opens its transactions explicitly so
    # a write's commit point is where the code says. check_same_thread=False because sync
    # wrappers may use the database from another thread; Database serialises access itself.
    connection = sqlite3.connect(
        target,
        timeout=_BUSY_TIMEOUT_SECONDS,
        isolation_level=None,
        check_same_thread=False,
    )
    connection.row_factory = sqlite3.Row
    connection.execute("PRAGMA foreign_keys = ON")
    # WAL: readers do not block the writer; NORMAL sync is WAL's recommended pairing (a commit
    # survives a process crash; only a power loss can take back the last transactions).
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = NORMAL")
    return connection


_SCHEMA_VERSION_TABLE = """
CREATE TABLE IF NOT EXISTS schema_version (
    store TEXT PRIMARY KEY,
    version INTEGER NOT NULL CHECK (version >= 0),
    applied_at TEXT NOT NULL
)
"""


class Database:
    """An open agentos database: one connection, serialised, with explicit transactions.

    Safe to share between the coroutines of one event loop and between threads: every use of the
    connection holds one lock. Calls are synchronous; a local SQLite write takes well under a
    millisecond in WAL mode, so stores call them directly from their async methods.
    """

    def __init__(self, connection: sqlite3.Connection, path: Path | None) -> None:
        self._connection = connection
        self._lock = threading.RLock()
        self._closed = False
        self.path = path
        """The database file, or ``None`` for an in-memory database."""
        with self._lock:
            self._connection.execute(_SCHEMA_VERSION_TABLE)

    @property
    def journal_mode(self) -> str:
        """SQLite's journal mode for this connection (``"wal"``, or ``"memory"`` in memory)."""
        row = self.fetchone("PRAGMA journal_mode")
        assert row is not None
        return str(row[0])

    @property
    def closed(self) -> bool:
        """Whether `close()` has been called."""
        return self._closed

    def schema_version(self, store: str) -> int:
        """The version ``store``'s migrations have reached here (0 before the first)."""
        row = self.fetchone("SELECT version FROM schema_version WHERE store = ?", (store,))
        return int(row[0]) if row is not None else 0

    def migrate(self, store: str, migrations: Sequence[Migration]) -> int:
        """Bring ``store``'s tables up to its newest migration and return that version.

        ``migrations`` must be numbered 1, 2, 3, ... in order (checked, `ValueError`
        otherwise). The pending ones run in one ``BEGIN IMMEDIATE`` transaction together with
        the version bump, so a failure rolls all of them back (`StorageError`) and a second
        process opening the database at the same moment waits, then finds nothing to do.
        Migrations already applied are never run again. A stored version above the newest one
        given means a newer agentos wrote this database: `StorageError`.
        """
        _check_numbering(store, migrations)
        newest = len(migrations)
        with self.transaction():
            current = self.schema_version(store)
            if current > newest:
                raise StorageError(
                    f"the {store!r} tables in {self._describe()} are at schema version "
                    f"{current}, newer than this agentos knows ({newest}); upgrade agentos",
                    details={"store": store, "version": current, "known": newest},
                )
            for migration in migrations[current:]:
                try:
                    for statement in _statements(migration.sql):
                        self._connection.execute(statement)
                except sqlite3.Error as error:
                    raise StorageError(
                        f"migration {migration.version} of the {store!r} tables failed: {error}",
                        details={"store": store, "version": migration.version},
                    ) from error
            if newest > current:
                self._connection.execute(
                    "INSERT INTO schema_version (store, version, applied_at) VALUES (?, ?, ?) "
                    "ON CONFLICT (store) DO UPDATE SET version = excluded.version, "
                    "applied_at = excluded.applied_at",
                    (store, newest, datetime.now(UTC).isoformat()),
                )
        return newest

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Run the block in one write transaction: committed on exit, rolled back on error.

        The lock is held for the whole block, so no other coroutine or thread interleaves its
        statements. Transactions do not nest.
        """
        with self._lock:
            self._check_open()
            self._connection.execute("BEGIN IMMEDIATE")
            try:
                yield self._connection
            except BaseException:
                self._connection.execute("ROLLBACK")
                raise
            self._connection.execute("COMMIT")

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> int:
        """Run one write statement in its own transaction; return the rows it changed."""
        with self.transaction() as connection:
            return connection.execute(sql, parameters).rowcount

    def fetchall(self, sql: str, parameters: Sequence[Any] = ()) -> list[sqlite3.Row]:
        """Run a query and return every row."""
        with self._lock:
            self._check_open()
            return self._connection.execute(sql, parameters).fetchall()

    def fetchone(self, sql: str, parameters: Sequence[Any] = ()) -> sqlite3.Row | None:
        """Run a query and return its first row, or ``None``."""
        with self._lock:
            self._check_open()
            row: sqlite3.Row | None = self._connection.execute(sql, parameters).fetchone()
            return row

    def close(self) -> None:
        """Close the connection (idempotent); later calls raise `StorageError`."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._connection.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Database({self._describe()})"

    def _describe(self) -> str:
        return repr(str(self.path)) if self.path is not None else "in-memory database"

    def _check_open(self) -> None:
        if self._closed:
            raise StorageError(f"the database {self._describe()} is closed")


def _check_numbering(store: str, migrations: Sequence[Migration]) -> None:
    for expected, migration in enumerate(migrations, start=1):
        if migration.version != expected:
            raise ValueError(
                f"the {store!r} migrations must be numbered 1, 2, 3, ... in order; "
                f"position {expected} holds version {migration.version}"
            )


def _statements(sql: str) -> Iterator[str]:
    """Split a script into statements, keeping triggers and quoted semicolons whole.

    ``executescript()`` would commit the open transaction first, so a migration runs its
    statements one by one instead; `sqlite3.complete_statement` tells where each one ends.
    """
    pending = ""
    for piece in sql.split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            statement = pending.strip()
            if statement.strip(";").strip():
                yield statement
            pending = ""
    if pending.strip(" \t\r\n;"):
        yield pending.rstrip(";").strip()
