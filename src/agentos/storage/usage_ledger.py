"""The usage ledger: one row per metered model call (spec: Usage).

The spec meters each model call of a turn with the provider and model that served it: one
ledger row per finished step and one for each attempt that failed and was billed, with the
finish reason ``error``; with the ledger enabled, ``session.usage()`` and ``agent.usage()`` read
it alone. The row is the reference's ``AgentOSUsageEvent`` (``recordedAt``, ``sessionId``
(``'global'``), ``personaId``, ``userId``, provider and model, the three token counts,
``costUSD``), plus the failed-attempt flag and hop the spec's ``USAGE_UPDATE`` carries.

A cost the catalog and the provider did not know is stored as ``NULL`` and read back as
``None``: never as 0, which would claim the call was free. `UsageTotals` keeps the sum of the
known costs and the number of calls whose cost is unknown apart.

The ledger is an option, off by default in the library (DESIGN.md §5.9): `InMemoryUsageLedger`
for tests and short runs, `SQLiteUsageLedger` on the database of `agentos.storage.sqlite`.
Both finish a write before `append` returns.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol, runtime_checkable

from agentos.core.usage import ModelUsage

from .sqlite import Database, Migration, open_database

__all__ = [
    "GLOBAL_SESSION",
    "InMemoryUsageLedger",
    "SQLiteUsageLedger",
    "USAGE_LEDGER_MIGRATIONS",
    "UsageEvent",
    "UsageLedger",
    "UsageTotals",
]

GLOBAL_SESSION = "global"
"""The session id of a call made outside any session (the reference's default)."""


@dataclass(frozen=True, slots=True)
class UsageEvent:
    """One metered model call: what the observer receives and what a ledger row holds.

    - ``recorded_at``: when the call was metered (timezone-aware; stored in UTC);
    - ``provider_id`` / ``model_id``: who served the call (the hop's, after a fallback);
    - ``prompt_tokens`` / ``completion_tokens`` / ``total_tokens``: the total defaults to the
      sum of the two;
    - ``cost_usd``: ``None`` when unknown, never read as 0;
    - ``finish_reason``: the step's, ``"error"`` for a billed failed attempt;
    - ``attempt_failed``: the call failed and was billed (spec: ``attemptFailed``);
    - ``hop``: 0 for the primary, n for the n-th fallback hop;
    - ``session_id`` (``"global"`` outside a session), ``persona_id``, ``user_id``;
    - ``source``: what made the call (``"gmi.step"``, ``"generate_text"``, ...), when known.

    Negative token counts, a negative, NaN or infinite cost, a naive ``recorded_at`` and a
    negative hop are refused with `ValueError` naming the field.
    """

    recorded_at: datetime
    provider_id: str
    model_id: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # None only until __post_init__ derives it, as in ModelUsage.
    total_tokens: int = None  # type: ignore[assignment]
    cost_usd: float | None = None
    finish_reason: str | None = None
    attempt_failed: bool = False
    hop: int = 0
    session_id: str = GLOBAL_SESSION
    persona_id: str | None = None
    user_id: str | None = None
    source: str | None = None

    def __post_init__(self) -> None:
        if self.recorded_at.tzinfo is None:
            raise ValueError("UsageEvent.recorded_at must be timezone-aware")
        for name in ("prompt_tokens", "completion_tokens", "hop"):
            _check_count(name, getattr(self, name))
        if self.total_tokens is None:
            object.__setattr__(self, "total_tokens", self.prompt_tokens + self.completion_tokens)
        _check_count("total_tokens", self.total_tokens)
        if self.cost_usd is not None and not (
            isinstance(self.cost_usd, int | float)
            and not isinstance(self.cost_usd, bool)
            and math.isfinite(self.cost_usd)
            and self.cost_usd >= 0
        ):
            raise ValueError(
                f"UsageEvent.cost_usd must be a finite number >= 0 or None, got {self.cost_usd!r}"
            )

    @classmethod
    def from_usage(
        cls,
        usage: ModelUsage,
        *,
        recorded_at: datetime,
        provider_id: str,
        model_id: str,
        **context: Any,
    ) -> UsageEvent:
        """The event for ``usage`` (tokens and cost copied), with the given context fields."""
        return cls(
            recorded_at=recorded_at,
            provider_id=provider_id,
            model_id=model_id,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            total_tokens=usage.total_tokens,
            cost_usd=usage.cost_usd,
            **context,
        )

    @property
    def usage(self) -> ModelUsage:
        """The event's tokens and cost as a `ModelUsage`."""
        return ModelUsage(
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            total_tokens=self.total_tokens,
            cost_usd=self.cost_usd,
        )


def _check_count(name: str, value: object) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"UsageEvent.{name} must be an int >= 0, got {value!r}")


@dataclass(frozen=True, slots=True)
class UsageTotals:
    """What a set of ledger rows adds up to.

    ``known_cost_usd`` sums the costs that are known; ``unpriced_calls`` counts the rows whose
    cost is unknown, and while there is one, ``cost_usd`` is ``None`` (an unknown added to
    anything is unknown, as in `ModelUsage`).
    """

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    known_cost_usd: float = 0.0
    unpriced_calls: int = 0

    @property
    def cost_usd(self) -> float | None:
        """The total cost, or ``None`` when a row's cost is unknown."""
        return None if self.unpriced_calls else self.known_cost_usd

    @property
    def usage(self) -> ModelUsage:
        """The totals as a `ModelUsage` (``cost_usd`` as above)."""
        return ModelUsage(
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            total_tokens=self.total_tokens,
            cost_usd=self.cost_usd,
        )


@runtime_checkable
class UsageLedger(Protocol):
    """Where metered calls are kept. Filters combine with AND; ``None`` means any.

    ``since`` is inclusive and ``until`` exclusive, compared with ``recorded_at``.
    """

    async def append(self, event: UsageEvent) -> None:
        """Keep ``event``; the write has finished when this returns."""
        ...

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
        """The matching rows in the order they were appended (the first ``limit`` of them)."""
        ...

    async def totals(
        self,
        session_id: str | None = None,
        *,
        persona_id: str | None = None,
        user_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> UsageTotals:
        """What the matching rows add up to."""
        ...


class InMemoryUsageLedger:
    """A `UsageLedger` in process memory: it ends with the process."""

    def __init__(self) -> None:
        self._events: list[UsageEvent] = []

    async def append(self, event: UsageEvent) -> None:
        """Keep ``event``."""
        self._events.append(_checked_event(event))

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
        _check_limit(limit)
        matching = [
            event
            for event in self._events
            if _matches(event, session_id, persona_id, user_id, since, until)
        ]
        return matching if limit is None else matching[:limit]

    async def totals(
        self,
        session_id: str | None = None,
        *,
        persona_id: str | None = None,
        user_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> UsageTotals:
        """What the matching rows add up to."""
        matching = await self.rows(
            session_id, persona_id=persona_id, user_id=user_id, since=since, until=until
        )
        known = [event.cost_usd for event in matching if event.cost_usd is not None]
        return UsageTotals(
            calls=len(matching),
            prompt_tokens=sum(event.prompt_tokens for event in matching),
            completion_tokens=sum(event.completion_tokens for event in matching),
            total_tokens=sum(event.total_tokens for event in matching),
            # fsum: exactly rounded, so the total does not depend on the order of the rows.
            known_cost_usd=math.fsum(known),
            unpriced_calls=len(matching) - len(known),
        )


def _matches(
    event: UsageEvent,
    session_id: str | None,
    persona_id: str | None,
    user_id: str | None,
    since: datetime | None,
    until: datetime | None,
) -> bool:
    return (
        (session_id is None or event.session_id == session_id)
        and (persona_id is None or event.persona_id == persona_id)
        and (user_id is None or event.user_id == user_id)
        and (since is None or event.recorded_at >= since)
        and (until is None or event.recorded_at < until)
    )


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
)
"""The usage ledger's migrations, in order; a later change is a new entry at the end."""

_COLUMNS = (
    "recorded_at, session_id, persona_id, user_id, provider_id, model_id, prompt_tokens, "
    "completion_tokens, total_tokens, cost_usd, finish_reason, attempt_failed, hop, source"
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
        if database is not None and path is not None:
            raise ValueError("give SQLiteUsageLedger a database or a path, not both")
        self._owns_database = database is None
        self._database = database if database is not None else open_database(path)
        try:
            self._database.migrate(USAGE_LEDGER_STORE, USAGE_LEDGER_MIGRATIONS)
        except BaseException:
            if self._owns_database:
                self._database.close()
            raise

    @property
    def database(self) -> Database:
        """The database the rows live in."""
        return self._database

    async def append(self, event: UsageEvent) -> None:
        """Insert ``event`` as one row, committed before this returns."""
        event = _checked_event(event)
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
        _check_limit(limit)
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
            "TOTAL(cost_usd), COUNT(cost_usd) "
            f"FROM usage_ledger{where}",
            parameters,
        )
        assert row is not None  # an aggregate without GROUP BY always gives one row
        calls, prompt, completion, total, cost, priced_calls = row
        return UsageTotals(
            calls=int(calls),
            prompt_tokens=int(prompt),
            completion_tokens=int(completion),
            total_tokens=int(total),
            known_cost_usd=float(cost),
            unpriced_calls=int(calls) - int(priced_calls),
        )

    def close(self) -> None:
        """Close the database when this ledger opened it (a shared one stays open)."""
        if self._owns_database:
            self._database.close()


def _checked_event(event: object) -> UsageEvent:
    if not isinstance(event, UsageEvent):
        raise TypeError(f"a usage ledger keeps UsageEvent rows, not {type(event).__name__}")
    return event


def _check_limit(limit: int | None) -> None:
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
        raise ValueError(f"limit must be an int >= 0 or None, got {limit!r}")


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
    )
