"""`SQLiteUsageLedger`: the usage ledger on the database of `agentos.storage.sqlite`.

Rows survive the process; each `append` commits before it returns. A cost the catalog and the
provider did not know is stored as ``NULL`` and read back as ``None``, never as 0.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from agentos.storage.ledger._records import UsageEvent, UsageTotals, check_row_limit, checked_event
from agentos.storage.sqlite import Database, Migration, open_store_database

__all__ = ["USAGE_LEDGER_MIGRATIONS", "USAGE_LEDGER_STORE", "SQLiteUsageLedger"]

USAGE_LEDGER_STORE = "usage_ledger"
"""The usage ledger's name in ``schema_version``."""

USAGE_LEDGER_MIGRATIONS: Sequence[Migration] = (
    Migration(
        1,
        """
        CREATE TABLE usage_ledger (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            -- UTC, ISO 8601 with microseconds: one fixed width, so text order is time order.
            recorded_at TEXT NOT NULL,
            session_id TEXT NOT NULL DEFAULT 'global',
            persona_id TEXT,
            user_id TEXT,
            provider_id TEXT NOT NULL,
            model_id TEXT NOT NULL,
            prompt_tokens INTEGER NOT NULL CHECK (prompt_tokens >= 0),
            completion_tokens INTEGER NOT NULL CHECK (completion_tokens >= 0),
            total_tokens INTEGER NOT NULL CHECK (total_tokens >= 0),
            -- NULL is an unknown cost, never 0.
            cost_usd REAL CHECK (cost_usd IS NULL OR cost_usd >= 0),
            finish_reason TEXT,
            attempt_failed INTEGER NOT NULL DEFAULT 0 CHECK (attempt_failed IN (0, 1)),
            hop INTEGER NOT NULL DEFAULT 0 CHECK (hop >= 0),
            source TEXT
        );
        CREATE INDEX usage_ledger_by_session ON usage_ledger (session_id, recorded_at);
        CREATE INDEX usage_ledger_by_time ON usage_ledger (recorded_at);
        """,
    ),
    # An estimated row: a stream left before the provider's usage report (DESIGN §5.19).
    Migration(
        2,
        """
        ALTER TABLE usage_ledger ADD COLUMN
            estimated INTEGER NOT NULL DEFAULT 0 CHECK (estimated IN (0, 1));
        """,
    ),
)
"""The usage ledger's migrations, in order; a later change is a new entry at the end."""

_COLUMNS = (
    "recorded_at, session_id, persona_id, user_id, provider_id, model_id, prompt_tokens, "
    "completion_tokens, total_tokens, cost_usd, finish_reason, attempt_failed, hop, source, "
    "estimated"
)
_PLACEHOLDERS = ", ".join("?" * len(_COLUMNS.split(",")))


class SQLiteUsageLedger:
    """A `UsageLedger` in the agentos SQLite database: rows survive the process.

    Give it an open `Database` (shared with the other stores; the caller closes it), or a
    ``path`` (default: ``AGENTOS_HOME``'s database) to open one it owns and closes in `close()`.
    Its migrations run when it is made. Each `append` commits before it returns.
    """

    def __init__(
        self, database: Database | None = None, *, path: str | os.PathLike[str] | None = None
    ) -> None:
        self._database, self._owns_database = open_store_database(
            "SQLiteUsageLedger", database, path, USAGE_LEDGER_STORE, USAGE_LEDGER_MIGRATIONS
        )

    @property
    def database(self) -> Database:
        """The database the rows live in."""
        return self._database

    async def append(self, event: UsageEvent) -> None:
        """Insert ``event`` as one row, committed before this returns."""
        event = checked_event(event)
        self._database.execute(
            f"INSERT INTO usage_ledger ({_COLUMNS}) VALUES ({_PLACEHOLDERS})",
            (
                _to_text(event.recorded_at),
                event.session_id,
                event.persona_id,
                event.user_id,
                event.provider_id,
                event.model_id,
                event.prompt_tokens,
                event.completion_tokens,
                event.total_tokens,
                event.cost_usd,
                event.finish_reason,
                int(event.attempt_failed),
                event.hop,
                event.source,
                int(event.estimated),
            ),
        )

    async def rows(
        self,
        session_id: str | None = None,
        *,
        persona_id: str | None = None,
        user_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int | None = None,
    ) -> list[UsageEvent]:
        """The matching rows in append order."""
        check_row_limit(limit)
        where, parameters = _where(session_id, persona_id, user_id, since, until)
        sql = f"SELECT {_COLUMNS} FROM usage_ledger{where} ORDER BY id"
        if limit is not None:
            sql += " LIMIT ?"
            parameters.append(limit)
        return [_from_row(row) for row in self._database.fetchall(sql, parameters)]

    async def totals(
        self,
        session_id: str | None = None,
        *,
        persona_id: str | None = None,
        user_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> UsageTotals:
        """What the matching rows add up to, summed by SQLite."""
        where, parameters = _where(session_id, persona_id, user_id, since, until)
        row = self._database.fetchone(
            # SUM stays an exact integer for the token counts; TOTAL gives 0.0, not NULL, for
            # no rows; COUNT(cost_usd) counts only the known costs.
            "SELECT COUNT(*), COALESCE(SUM(prompt_tokens), 0), "
            "COALESCE(SUM(completion_tokens), 0), COALESCE(SUM(total_tokens), 0), "
            "TOTAL(cost_usd), COUNT(cost_usd), COALESCE(SUM(estimated), 0) "
            f"FROM usage_ledger{where}",
            parameters,
        )
        assert row is not None  # an aggregate without GROUP BY always gives one row
        calls, prompt, completion, total, cost, priced_calls, estimated = row
        return UsageTotals(
            calls=int(calls),
            prompt_tokens=int(prompt),
            completion_tokens=int(completion),
            total_tokens=int(total),
            known_cost_usd=float(cost),
            unpriced_calls=int(calls) - int(priced_calls),
            estimated_calls=int(estimated),
        )

    def close(self) -> None:
        """Close the database when this ledger opened it (a shared one stays open)."""
        if self._owns_database:
            self._database.close()


def _where(
    session_id: str | None,
    persona_id: str | None,
    user_id: str | None,
    since: datetime | None,
    until: datetime | None,
) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    parameters: list[Any] = []
    for column, value in (
        ("session_id", session_id),
        ("persona_id", persona_id),
        ("user_id", user_id),
    ):
        if value is not None:
            clauses.append(f"{column} = ?")
            parameters.append(value)
    if since is not None:
        clauses.append("recorded_at >= ?")
        parameters.append(_to_text(since))
    if until is not None:
        clauses.append("recorded_at < ?")
        parameters.append(_to_text(until))
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), parameters


def _to_text(moment: datetime) -> str:
    if moment.tzinfo is None:
        raise ValueError("usage ledger times must be timezone-aware")
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def _from_row(row: Any) -> UsageEvent:
    return UsageEvent(
        recorded_at=datetime.fromisoformat(row["recorded_at"]),
        session_id=row["session_id"],
        persona_id=row["persona_id"],
        user_id=row["user_id"],
        provider_id=row["provider_id"],
        model_id=row["model_id"],
        prompt_tokens=row["prompt_tokens"],
        completion_tokens=row["completion_tokens"],
        total_tokens=row["total_tokens"],
        cost_usd=row["cost_usd"],
        finish_reason=row["finish_reason"],
        attempt_failed=bool(row["attempt_failed"]),
        hop=row["hop"],
        source=row["source"],
        estimated=bool(row["estimated"]),
    )
