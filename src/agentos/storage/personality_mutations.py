"""`PersonalityMutationStore`: the trait changes ``adapt_personality`` made, with decay.

Spec (What a GMI adds over a plain agent): "a PersonalityMutationStore records the changes only
when a storage adapter is supplied and personality.persistWithDecay is on, and stored mutations
are not reloaded into later GMIs". Nothing here writes a trait into a GMI: the store is a record.

A mutation starts at strength 1.0. Decay runs on the store's clock, once per UTC day: each day
that has passed since a mutation was last decayed takes ``rate`` off its strength, and a mutation
at or below 0.1 is pruned (reference §1.30, the ``day:YYYY-MM-DD`` decay cycle; a day on which
no tool ran still counts, which the reference's per-call cycle missed).
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Protocol

from agentos.core.clock import Clock, system_clock
from agentos.core.errors import GMIError, GMIErrorCode
from agentos.storage.sqlite import Database, Migration, open_store_database

__all__ = [
    "PERSONALITY_MUTATION_MIGRATIONS",
    "PERSONALITY_MUTATION_STORE",
    "PRUNE_THRESHOLD",
    "DecayResult",
    "InMemoryPersonalityMutationStore",
    "PersonalityMutation",
    "PersonalityMutationStore",
    "SQLitePersonalityMutationStore",
]

PRUNE_THRESHOLD = 0.1
"""A mutation whose strength falls to this or below is deleted."""
PERSONALITY_MUTATION_STORE = "personality_mutations"
"""The store's name in ``schema_version``."""


@dataclass(frozen=True, slots=True)
class PersonalityMutation:
    """One recorded trait change: who, which trait, by how much, why, and its strength now."""

    id: str
    agent_id: str
    trait: str
    delta: float
    reasoning: str
    baseline_value: float
    mutated_value: float
    strength: float
    created_at: datetime
    decayed_day: int
    """The proleptic ordinal of the UTC day the mutation was last decayed through."""


@dataclass(frozen=True, slots=True)
class DecayResult:
    """What one decay did: mutations weakened and mutations pruned."""

    decayed: int
    pruned: int


class PersonalityMutationStore(Protocol):
    """Where trait changes are recorded; the store decays them on its own clock."""

    async def record(
        self,
        *,
        agent_id: str,
        trait: str,
        delta: float,
        reasoning: str,
        baseline_value: float,
        mutated_value: float,
    ) -> PersonalityMutation:
        """Store a new mutation at strength 1.0; returns it."""
        ...

    async def load_for_agent(self, agent_id: str) -> list[PersonalityMutation]:
        """The agent's mutations above the prune threshold, newest first."""
        ...

    async def decay_for_agent(self, agent_id: str, rate: float) -> DecayResult:
        """Apply every whole UTC day passed since the last decay, ``rate`` per day."""
        ...


def _check_rate(rate: float) -> float:
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not math.isfinite(rate):
        raise GMIError(
            f"decay rate must be a finite number from 0 to 1, got {rate!r}",
            GMIErrorCode.INVALID_ARGUMENT,
            {"option": "rate"},
        )
    if not 0.0 <= rate <= 1.0:
        raise GMIError(
            f"decay rate must be from 0 to 1, got {rate!r}",
            GMIErrorCode.INVALID_ARGUMENT,
            {"option": "rate"},
        )
    return float(rate)


def _decayed(mutation: PersonalityMutation, today: int, rate: float) -> PersonalityMutation:
    days = max(0, today - mutation.decayed_day)
    # Rounded so that 1.0 - 0.3 * 3 reaches the 0.1 threshold instead of 0.10000000000000003.
    strength = round(mutation.strength - rate * days, 12)
    return replace(mutation, strength=strength, decayed_day=today)


def _fresh(mutation_id: str, fields: _Fields, now: datetime) -> PersonalityMutation:
    """A just-recorded mutation: full strength, decayed through the day it was made."""
    return PersonalityMutation(
        mutation_id,
        fields.agent_id,
        fields.trait,
        fields.delta,
        fields.reasoning,
        fields.baseline_value,
        fields.mutated_value,
        1.0,
        now,
        now.toordinal(),
    )


@dataclass(frozen=True, slots=True)
class _Fields:
    """What a caller gives `record`, with the numbers as floats."""

    agent_id: str
    trait: str
    delta: float
    reasoning: str
    baseline_value: float
    mutated_value: float


class _MutationStoreBase:
    """What both stores share: the `record` contract and the decay walk over one agent's rows."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock

    async def record(
        self,
        *,
        agent_id: str,
        trait: str,
        delta: float,
        reasoning: str,
        baseline_value: float,
        mutated_value: float,
    ) -> PersonalityMutation:
        """Store a new mutation at strength 1.0; returns it."""
        fields = _Fields(
            agent_id, trait, float(delta), reasoning, float(baseline_value), float(mutated_value)
        )
        return self._insert(fields, self._clock.now())

    def _insert(self, fields: _Fields, now: datetime) -> PersonalityMutation:
        raise NotImplementedError

    def _today(self, rate: float) -> tuple[float, int]:
        """The checked rate and today's UTC day ordinal on the store's clock."""
        return _check_rate(rate), self._clock.now().toordinal()


def _decay_all(
    mutations: Sequence[PersonalityMutation],
    today: int,
    rate: float,
    delete: Callable[[PersonalityMutation], None],
    update: Callable[[PersonalityMutation], None],
) -> DecayResult:
    """Decay each mutation not yet decayed today; prune those at or below the threshold."""
    decayed = pruned = 0
    for mutation in mutations:
        if mutation.decayed_day >= today:
            continue
        after = _decayed(mutation, today, rate)
        if after.strength <= PRUNE_THRESHOLD:
            delete(mutation)
            pruned += 1
        else:
            update(after)
            decayed += 1
    return DecayResult(decayed, pruned)


class InMemoryPersonalityMutationStore(_MutationStoreBase):
    """A `PersonalityMutationStore` in process memory (tests, short runs)."""

    def __init__(self, clock: Clock = system_clock) -> None:
        super().__init__(clock)
        self._rows: dict[str, PersonalityMutation] = {}
        self._ids = itertools.count(1)

    def _insert(self, fields: _Fields, now: datetime) -> PersonalityMutation:
        mutation = _fresh(f"pm_{next(self._ids)}", fields, now)
        self._rows[mutation.id] = mutation
        return mutation

    async def load_for_agent(self, agent_id: str) -> list[PersonalityMutation]:
        """The agent's mutations above the prune threshold, newest first."""
        rows = [m for m in self._rows.values() if m.agent_id == agent_id]
        rows = [m for m in rows if m.strength > PRUNE_THRESHOLD]
        return sorted(rows, key=lambda m: (m.created_at, m.id), reverse=True)

    async def decay_for_agent(self, agent_id: str, rate: float) -> DecayResult:
        """Apply every whole UTC day passed since the last decay, ``rate`` per day."""
        rate, today = self._today(rate)
        rows = [m for m in self._rows.values() if m.agent_id == agent_id]

        def delete(mutation: PersonalityMutation) -> None:
            del self._rows[mutation.id]

        def update(mutation: PersonalityMutation) -> None:
            self._rows[mutation.id] = mutation

        return _decay_all(rows, today, rate, delete, update)


PERSONALITY_MUTATION_MIGRATIONS: Sequence[Migration] = (
    Migration(
        1,
        """
        CREATE TABLE personality_mutations (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            agent_id TEXT NOT NULL,
            trait TEXT NOT NULL,
            delta REAL NOT NULL,
            reasoning TEXT NOT NULL,
            baseline_value REAL NOT NULL,
            mutated_value REAL NOT NULL,
            strength REAL NOT NULL DEFAULT 1.0,
            -- UTC, ISO 8601 with microseconds: one fixed width, so text order is time order.
            created_at TEXT NOT NULL,
            decayed_day INTEGER NOT NULL
        );
        CREATE INDEX personality_mutations_by_agent ON personality_mutations (agent_id, trait);
        """,
    ),
)
"""The store's migrations, in order; a later change is a new entry at the end."""

_COLUMNS = (
    "id, agent_id, trait, delta, reasoning, baseline_value, mutated_value, strength, "
    "created_at, decayed_day"
)


class SQLitePersonalityMutationStore(_MutationStoreBase):
    """A `PersonalityMutationStore` in the agentos SQLite database: mutations survive the process.

    Give it an open `Database` (shared with the other stores; the caller closes it), or a
    ``path`` to open one it owns and closes in `close()`. Each write commits before it returns.
    """

    def __init__(
        self,
        database: Database | None = None,
        *,
        path: str | os.PathLike[str] | None = None,
        clock: Clock = system_clock,
    ) -> None:
        self._database, self._owns_database = open_store_database(
            "SQLitePersonalityMutationStore",
            database,
            path,
            PERSONALITY_MUTATION_STORE,
            PERSONALITY_MUTATION_MIGRATIONS,
        )
        super().__init__(clock)

    def _insert(self, fields: _Fields, now: datetime) -> PersonalityMutation:
        with self._database.transaction() as connection:
            cursor = connection.execute(
                "INSERT INTO personality_mutations (agent_id, trait, delta, reasoning, "
                "baseline_value, mutated_value, strength, created_at, decayed_day) "
                "VALUES (?, ?, ?, ?, ?, ?, 1.0, ?, ?)",
                (
                    fields.agent_id,
                    fields.trait,
                    fields.delta,
                    fields.reasoning,
                    fields.baseline_value,
                    fields.mutated_value,
                    now.isoformat(timespec="microseconds"),
                    now.toordinal(),
                ),
            )
            row_id = cursor.lastrowid
        return _fresh(f"pm_{row_id}", fields, now)

    async def load_for_agent(self, agent_id: str) -> list[PersonalityMutation]:
        """The agent's mutations above the prune threshold, newest first."""
        rows = self._database.fetchall(
            f"SELECT {_COLUMNS} FROM personality_mutations WHERE agent_id = ? AND strength > ? "
            "ORDER BY created_at DESC, id DESC",
            (agent_id, PRUNE_THRESHOLD),
        )
        return [_from_row(row) for row in rows]

    async def decay_for_agent(self, agent_id: str, rate: float) -> DecayResult:
        """Apply every whole UTC day passed since the last decay, ``rate`` per day.

        One transaction: a crash leaves every mutation as it was or every one decayed.
        """
        rate, today = self._today(rate)
        with self._database.transaction() as connection:
            rows = connection.execute(
                f"SELECT {_COLUMNS} FROM personality_mutations "
                "WHERE agent_id = ? AND decayed_day < ?",
                (agent_id, today),
            ).fetchall()

            def delete(mutation: PersonalityMutation) -> None:
                connection.execute(
                    "DELETE FROM personality_mutations WHERE id = ?", (_row_id(mutation),)
                )

            def update(mutation: PersonalityMutation) -> None:
                connection.execute(
                    "UPDATE personality_mutations SET strength = ?, decayed_day = ? WHERE id = ?",
                    (mutation.strength, mutation.decayed_day, _row_id(mutation)),
                )

            return _decay_all([_from_row(row) for row in rows], today, rate, delete, update)

    def close(self) -> None:
        """Close the database when this store opened it (a shared one stays open)."""
        if self._owns_database:
            self._database.close()


def _row_id(mutation: PersonalityMutation) -> int:
    """The SQLite row id behind a ``pm_<n>`` id."""
    return int(mutation.id.removeprefix("pm_"))


def _from_row(row: Any) -> PersonalityMutation:
    return PersonalityMutation(
        f"pm_{row[0]}",
        row[1],
        row[2],
        float(row[3]),
        row[4],
        float(row[5]),
        float(row[6]),
        float(row[7]),
        datetime.fromisoformat(row[8]),
        int(row[9]),
    )
