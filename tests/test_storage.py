"""`agentos.storage`: the SQLite foundation (home, WAL, migrations) and the usage ledger."""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from agentos.core import GMIError, GMIErrorCode, ModelUsage
from agentos.memory import SQLiteMemoryStore
from agentos.storage import (
    AGENTOS_HOME_ENV,
    USAGE_LEDGER_MIGRATIONS,
    Database,
    InMemoryUsageLedger,
    Migration,
    SQLiteUsageLedger,
    StorageError,
    UsageEvent,
    UsageLedger,
    UsageTotals,
    agentos_home,
    default_database_path,
    open_database,
)
from agentos.storage import sqlite as sqlite_module
from agentos.storage.session_store import SQLiteSessionStore
from agentos.storage.sqlite import _statements

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """AGENTOS_HOME pointed at a fresh directory that does not exist yet."""
    directory = tmp_path / "agentos-home"
    monkeypatch.setenv(AGENTOS_HOME_ENV, str(directory))
    return directory


@pytest.fixture
def database(tmp_path: Path) -> Iterator[Database]:
    with open_database(tmp_path / "test.db") as db:
        yield db


def event(**fields: object) -> UsageEvent:
    values: dict[str, object] = {
        "recorded_at": T0,
        "provider_id": "openai",
        "model_id": "gpt-4o-mini",
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "cost_usd": 0.25,
        "finish_reason": "stop",
    }
    values.update(fields)
    return UsageEvent(**values)  # type: ignore[arg-type]


# --- the home directory and the database file -------------------------------------------------


def test_home_defaults_to_dot_agentos(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(AGENTOS_HOME_ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert agentos_home() == tmp_path / ".agentos"
    assert default_database_path() == tmp_path / ".agentos" / "agentos.db"


def test_blank_home_counts_as_unset(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(AGENTOS_HOME_ENV, "  ")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert agentos_home() == tmp_path / ".agentos"


def test_open_database_makes_one_file_under_home(home: Path) -> None:
    with open_database() as db:
        assert db.path == home / "agentos.db"
        assert db.path.is_file()
        assert db.journal_mode == "wal"
        row = db.fetchone("PRAGMA foreign_keys")
        assert row is not None
        assert row[0] == 1
        assert db.fetchall("SELECT store, version FROM schema_version") == []
    # Owner-only: the directory and file will hold conversations.
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert stat.S_IMODE((home / "agentos.db").stat().st_mode) == 0o600


def test_an_explicit_path_wins_over_home(home: Path, tmp_path: Path) -> None:
    with open_database(tmp_path / "nested" / "dir" / "x.db") as db:
        assert db.path == tmp_path / "nested" / "dir" / "x.db"
    assert not home.exists()


def test_a_home_that_cannot_be_made_names_agentos_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv(AGENTOS_HOME_ENV, str(blocker / "home"))
    with pytest.raises(StorageError) as caught:
        open_database()
    assert "AGENTOS_HOME" in caught.value.message
    assert str(blocker / "home") in caught.value.message
    assert caught.value.code is GMIErrorCode.CONFIGURATION_ERROR
    assert isinstance(caught.value, GMIError)


def test_a_home_that_is_a_file_names_agentos_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "home-file"
    blocker.write_text("")
    monkeypatch.setenv(AGENTOS_HOME_ENV, str(blocker))
    with pytest.raises(StorageError, match="AGENTOS_HOME"):
        open_database()


def test_an_explicit_path_that_cannot_be_made_names_the_path(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(StorageError) as caught:
        open_database(blocker / "sub" / "x.db")
    assert str(blocker / "sub") in caught.value.message
    assert "AGENTOS_HOME" not in caught.value.message
    assert caught.value.code is GMIErrorCode.DATABASE_ERROR


def test_a_path_that_is_a_directory_is_refused_clearly(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="cannot open the agentos database"):
        open_database(tmp_path)


def test_memory_database() -> None:
    with open_database(":memory:") as db:
        assert db.path is None
        assert db.journal_mode == "memory"
        assert "in-memory" in repr(db)


def test_closed_database_refuses_use(database: Database) -> None:
    database.close()
    database.close()  # idempotent
    assert database.closed
    with pytest.raises(StorageError, match="closed"):
        database.fetchall("SELECT 1")


def test_foreign_keys_are_enforced(database: Database) -> None:
    database.migrate(
        "fk",
        [
            Migration(
                1,
                "CREATE TABLE parent (id INTEGER PRIMARY KEY);"
                "CREATE TABLE child (parent_id INTEGER NOT NULL REFERENCES parent (id));",
            )
        ],
    )
    with pytest.raises(sqlite3.IntegrityError):
        database.execute("INSERT INTO child (parent_id) VALUES (42)")


# --- transactions -----------------------------------------------------------------------------


def test_transaction_commits_or_rolls_back(database: Database) -> None:
    database.migrate("t", [Migration(1, "CREATE TABLE t (x INTEGER)")])
    with database.transaction() as connection:
        connection.execute("INSERT INTO t VALUES (1)")

    def fail_midway() -> None:
        with database.transaction() as connection:
            connection.execute("INSERT INTO t VALUES (2)")
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        fail_midway()
    assert [row[0] for row in database.fetchall("SELECT x FROM t")] == [1]


def test_a_write_is_visible_to_another_connection_when_execute_returns(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    with open_database(path) as writer, open_database(path) as reader:
        writer.migrate("t", [Migration(1, "CREATE TABLE t (x INTEGER)")])
        assert writer.execute("INSERT INTO t VALUES (7)") == 1
        assert [row[0] for row in reader.fetchall("SELECT x FROM t")] == [7]


# --- migrations -------------------------------------------------------------------------------

NOTES_V1 = [
    Migration(
        1,
        "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL);"
        "INSERT INTO notes (body) VALUES ('seeded by migration 1');",
    )
]
NOTES_V2 = [*NOTES_V1, Migration(2, "ALTER TABLE notes ADD COLUMN tag TEXT DEFAULT 'none'")]


def test_migrations_apply_in_order_and_record_the_version(database: Database) -> None:
    assert database.schema_version("notes") == 0
    assert database.migrate("notes", NOTES_V2) == 2
    assert database.schema_version("notes") == 2
    rows = database.fetchall("SELECT body, tag FROM notes")
    assert [tuple(row) for row in rows] == [("seeded by migration 1", "none")]


def test_reopening_keeps_data_and_does_not_rerun_migrations(tmp_path: Path) -> None:
    path = tmp_path / "agentos.db"
    with open_database(path) as db:
        db.migrate("notes", NOTES_V1)
        db.execute("INSERT INTO notes (body) VALUES ('written by a user')")
    with open_database(path) as db:
        # A re-run of migration 1 would fail on CREATE TABLE and seed a second row.
        assert db.migrate("notes", NOTES_V1) == 1
        bodies = [row[0] for row in db.fetchall("SELECT body FROM notes ORDER BY id")]
        assert bodies == ["seeded by migration 1", "written by a user"]


def test_a_later_release_applies_only_the_new_migrations(tmp_path: Path) -> None:
    path = tmp_path / "agentos.db"
    with open_database(path) as db:
        db.migrate("notes", NOTES_V1)
    with open_database(path) as db:
        assert db.migrate("notes", NOTES_V2) == 2
        rows = db.fetchall("SELECT body, tag FROM notes")
        assert [tuple(row) for row in rows] == [("seeded by migration 1", "none")]


def test_stores_keep_their_own_versions(database: Database) -> None:
    database.migrate("notes", NOTES_V2)
    database.migrate("other", [Migration(1, "CREATE TABLE other (x)")])
    versions = dict(
        (row["store"], row["version"])
        for row in database.fetchall("SELECT store, version FROM schema_version")
    )
    assert versions == {"notes": 2, "other": 1}


def test_a_failing_migration_leaves_nothing_behind(database: Database) -> None:
    database.migrate("notes", NOTES_V1)
    broken = [
        *NOTES_V1,
        Migration(2, "CREATE TABLE half_done (x); INSERT INTO no_such_table VALUES (1);"),
    ]
    with pytest.raises(StorageError, match=r"migration 2 of the 'notes' tables failed"):
        database.migrate("notes", broken)
    assert database.schema_version("notes") == 1
    tables = {row[0] for row in database.fetchall("SELECT name FROM sqlite_master")}
    assert "half_done" not in tables


def test_a_newer_database_is_refused(database: Database) -> None:
    database.migrate("notes", NOTES_V2)
    with pytest.raises(StorageError, match="newer than this agentos knows"):
        database.migrate("notes", NOTES_V1)


@pytest.mark.parametrize(
    "migrations",
    [
        [Migration(2, "SELECT 1")],
        [Migration(1, "SELECT 1"), Migration(1, "SELECT 1")],
        [Migration(1, "SELECT 1"), Migration(3, "SELECT 1")],
    ],
)
def test_migrations_must_be_numbered_from_one(
    database: Database, migrations: list[Migration]
) -> None:
    with pytest.raises(ValueError, match="numbered 1, 2, 3"):
        database.migrate("bad", migrations)


def test_statements_keep_triggers_and_quoted_semicolons_whole() -> None:
    script = """
        CREATE TABLE t (x TEXT);
        INSERT INTO t VALUES ('a; b');
        CREATE TRIGGER t_copy AFTER INSERT ON t BEGIN
            INSERT INTO t VALUES ('copied; ' || new.x);
            SELECT 1;
        END;
        -- trailing comment
    """
    statements = list(_statements(script))
    assert len(statements) == 4
    assert statements[1] == "INSERT INTO t VALUES ('a; b');"
    assert statements[2].startswith("CREATE TRIGGER")
    assert statements[2].endswith("END;")


def test_a_migration_with_a_trigger_runs(database: Database) -> None:
    database.migrate(
        "trig",
        [
            Migration(
                1,
                """
                CREATE TABLE t (x TEXT);
                CREATE TABLE log (x TEXT);
                CREATE TRIGGER t_log AFTER INSERT ON t BEGIN
                    INSERT INTO log VALUES (new.x || ';');
                END;
                """,
            )
        ],
    )
    database.execute("INSERT INTO t VALUES ('hi')")
    assert [row[0] for row in database.fetchall("SELECT x FROM log")] == ["hi;"]


# --- the usage ledger -------------------------------------------------------------------------


@pytest.fixture(params=["memory", "sqlite"])
async def ledger(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[UsageLedger]:
    if request.param == "memory":
        yield InMemoryUsageLedger()
    else:
        sqlite_ledger = SQLiteUsageLedger(path=tmp_path / "ledger.db")
        yield sqlite_ledger
        sqlite_ledger.close()


def test_both_ledgers_meet_the_protocol(tmp_path: Path) -> None:
    sqlite_ledger = SQLiteUsageLedger(path=tmp_path / "x.db")
    assert isinstance(InMemoryUsageLedger(), UsageLedger)
    assert isinstance(sqlite_ledger, UsageLedger)
    sqlite_ledger.close()


async def test_rows_come_back_as_appended(ledger: UsageLedger) -> None:
    first = event(session_id="s1", persona_id="p", user_id="u", source="gmi.step", hop=1)
    second = event(
        recorded_at=T0 + timedelta(seconds=1),
        provider_id="anthropic",
        model_id="claude-sonnet-4",
        prompt_tokens=7,
        completion_tokens=0,
        total_tokens=9,
        cost_usd=None,
        finish_reason="error",
        attempt_failed=True,
    )
    await ledger.append(first)
    await ledger.append(second)
    assert await ledger.rows() == [first, second]


async def test_an_unknown_cost_stays_distinct_from_zero(ledger: UsageLedger) -> None:
    await ledger.append(event(cost_usd=None))
    await ledger.append(event(cost_usd=0.0))
    rows = await ledger.rows()
    assert rows[0].cost_usd is None
    assert rows[1].cost_usd == 0.0
    assert rows[1].cost_usd is not None
    totals = await ledger.totals()
    assert totals.calls == 2
    assert totals.unpriced_calls == 1
    assert totals.known_cost_usd == 0.0
    assert totals.cost_usd is None
    assert totals.usage.cost_usd is None


async def test_sqlite_stores_unknown_cost_as_null(tmp_path: Path) -> None:
    with open_database(tmp_path / "agentos.db") as db:
        sqlite_ledger = SQLiteUsageLedger(db)
        await sqlite_ledger.append(event(cost_usd=None))
        await sqlite_ledger.append(event(cost_usd=0.0))
        rows = db.fetchall("SELECT cost_usd IS NULL, cost_usd FROM usage_ledger ORDER BY id")
        assert [tuple(row) for row in rows] == [(1, None), (0, 0.0)]


async def test_filters_combine(ledger: UsageLedger) -> None:
    events = [
        event(session_id="s1", persona_id="a", user_id="u1", recorded_at=T0),
        event(session_id="s1", persona_id="b", user_id="u2", recorded_at=T0 + timedelta(1)),
        event(session_id="s2", persona_id="a", user_id="u1", recorded_at=T0 + timedelta(2)),
        event(recorded_at=T0 + timedelta(3)),
    ]
    for item in events:
        await ledger.append(item)
    assert await ledger.rows("s1") == events[:2]
    assert await ledger.rows("global") == events[3:]
    assert await ledger.rows(persona_id="a") == [events[0], events[2]]
    assert await ledger.rows("s1", user_id="u2") == [events[1]]
    assert await ledger.rows(since=T0 + timedelta(1)) == events[1:]
    assert await ledger.rows(until=T0 + timedelta(1)) == events[:1]
    assert await ledger.rows(since=T0 + timedelta(1), until=T0 + timedelta(3)) == events[1:3]
    assert await ledger.rows(limit=2) == events[:2]
    assert await ledger.rows(limit=0) == []
    assert await ledger.rows("nobody") == []


async def test_time_filters_compare_instants_not_zones(ledger: UsageLedger) -> None:
    plus_two = timezone(timedelta(hours=2))
    local = T0.astimezone(plus_two)
    await ledger.append(event(recorded_at=local))
    [row] = await ledger.rows()
    assert row.recorded_at == T0
    assert await ledger.rows(since=T0 - timedelta(microseconds=1)) == [row]
    assert await ledger.rows(until=T0) == []


async def test_totals_add_up(ledger: UsageLedger) -> None:
    await ledger.append(event(session_id="s1", prompt_tokens=100, completion_tokens=20))
    await ledger.append(event(session_id="s1", prompt_tokens=50, completion_tokens=5, cost_usd=0.5))
    await ledger.append(event(session_id="s2", prompt_tokens=1, completion_tokens=1))
    assert await ledger.totals("s1") == UsageTotals(
        calls=2,
        prompt_tokens=150,
        completion_tokens=25,
        total_tokens=175,
        known_cost_usd=0.75,
        unpriced_calls=0,
    )
    totals = await ledger.totals()
    assert (totals.calls, totals.total_tokens, totals.cost_usd) == (3, 177, 1.0)
    assert totals.usage == ModelUsage(151, 26, 177, 1.0)
    assert await ledger.totals("nobody") == UsageTotals()


async def test_a_bad_limit_is_refused(ledger: UsageLedger) -> None:
    with pytest.raises(ValueError, match="limit"):
        await ledger.rows(limit=-1)


async def test_only_usage_events_are_kept(ledger: UsageLedger) -> None:
    with pytest.raises(TypeError, match="UsageEvent"):
        await ledger.append({"provider_id": "x"})  # type: ignore[arg-type]


async def test_sqlite_rows_survive_reopening(tmp_path: Path) -> None:
    path = tmp_path / "agentos.db"
    first = SQLiteUsageLedger(path=path)
    await first.append(event(session_id="s1"))
    first.close()
    again = SQLiteUsageLedger(path=path)
    assert await again.rows() == [event(session_id="s1")]
    assert again.database.schema_version("usage_ledger") == len(USAGE_LEDGER_MIGRATIONS) == 2
    again.close()


async def test_sqlite_ledger_under_agentos_home_by_default(home: Path) -> None:
    default = SQLiteUsageLedger()
    await default.append(event())
    default.close()
    with open_database(home / "agentos.db") as db:
        row = db.fetchone("SELECT COUNT(*) FROM usage_ledger")
        assert row is not None
        assert row[0] == 1


async def test_a_shared_database_stays_open_after_the_ledger_closes(database: Database) -> None:
    shared = SQLiteUsageLedger(database)
    shared.close()
    assert not database.closed
    assert shared.database is database


def test_a_ledger_takes_a_database_or_a_path_not_both(database: Database, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not both"):
        SQLiteUsageLedger(database, path=tmp_path / "other.db")


@pytest.mark.parametrize("store", [SQLiteUsageLedger, SQLiteSessionStore, SQLiteMemoryStore])
def test_a_file_name_given_positionally_is_refused_with_the_path_hint(
    store: type[Any], tmp_path: Path
) -> None:
    name = str(tmp_path / "x.db")
    with pytest.raises(TypeError) as caught:
        store(name)
    assert str(caught.value) == (
        f"{store.__name__}'s database must be an open agentos Database, got str; "
        f"for a file, use {store.__name__}(path={name!r})"
    )
    assert not (tmp_path / "x.db").exists()  # refused before anything was opened


def test_a_ledger_closes_what_it_opened_when_migrating_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "agentos.db"
    with open_database(path) as db:
        # A future agentos left the ledger at version 99.
        db.execute(
            "INSERT INTO schema_version VALUES ('usage_ledger', 99, '2030-01-01T00:00:00+00:00')"
        )
    closed: list[Database] = []
    original_close = Database.close

    def spy_close(self: Database) -> None:
        closed.append(self)
        original_close(self)

    monkeypatch.setattr(Database, "close", spy_close)
    with pytest.raises(StorageError, match="newer"):
        SQLiteUsageLedger(path=path)
    assert len(closed) == 1
    assert closed[0].closed


# --- the event itself -------------------------------------------------------------------------


def test_event_defaults() -> None:
    item = UsageEvent(recorded_at=T0, provider_id="p", model_id="m", prompt_tokens=3)
    assert item.session_id == "global"
    assert item.total_tokens == 3
    assert item.cost_usd is None
    assert item.attempt_failed is False
    assert item.hop == 0
    assert item.usage == ModelUsage(prompt_tokens=3, completion_tokens=0, cost_usd=None)


def test_event_from_usage_copies_the_figures() -> None:
    usage = ModelUsage(prompt_tokens=4, completion_tokens=6, total_tokens=12, cost_usd=0.125)
    item = UsageEvent.from_usage(usage, recorded_at=T0, provider_id="p", model_id="m", hop=2)
    assert (item.prompt_tokens, item.completion_tokens, item.total_tokens) == (4, 6, 12)
    assert item.cost_usd == 0.125
    assert item.hop == 2


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("prompt_tokens", -1),
        ("completion_tokens", -1),
        ("total_tokens", -1),
        ("hop", -1),
        ("prompt_tokens", 1.5),
        ("prompt_tokens", True),
        ("cost_usd", -0.01),
        ("cost_usd", float("nan")),
        ("cost_usd", float("inf")),
        ("cost_usd", True),
    ],
)
def test_event_refuses_bad_figures_by_name(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=field):
        event(**{field: value})


def test_event_refuses_a_naive_time() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        event(recorded_at=datetime(2026, 1, 1))


def test_a_store_database_opened_for_a_store_is_closed_when_its_migrations_fail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[Database] = []
    real_open = sqlite_module.open_database

    def recording_open(path: str | os.PathLike[str] | None = None) -> Database:
        opened.append(real_open(path))
        return opened[-1]

    monkeypatch.setattr(sqlite_module, "open_database", recording_open)
    broken = [Migration(1, "CREATE TABLE t (x); THIS IS NOT SQL;")]
    with pytest.raises(StorageError):
        sqlite_module.open_store_database("Broken", None, tmp_path / "a.db", "broken", broken)
    assert [database.closed for database in opened] == [True]
    shared = real_open(tmp_path / "b.db")
    with pytest.raises(StorageError):
        sqlite_module.open_store_database("Broken", shared, None, "broken", broken)
    assert not shared.closed  # a database the caller gave stays the caller's to close
    shared.close()
