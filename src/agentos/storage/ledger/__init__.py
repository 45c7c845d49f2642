"""The usage ledger: one row per metered model call (spec: Usage).

The ledger is an option, off by default in the library (DESIGN.md §5.9). This package is its
public entry; its parts are private modules:

- `_records`: the row (`UsageEvent`), what rows add up to (`UsageTotals`), the `UsageLedger`
  protocol and the argument checks every backend shares;
- `_memory`: `InMemoryUsageLedger`, for tests and short runs;
- `_sqlite`: `SQLiteUsageLedger` on the database of `agentos.storage.sqlite`, its store name
  and its migrations.

Both ledgers finish a write before `append` returns.
"""

from __future__ import annotations

from agentos.storage.ledger._memory import InMemoryUsageLedger
from agentos.storage.ledger._records import GLOBAL_SESSION, UsageEvent, UsageLedger, UsageTotals
from agentos.storage.ledger._sqlite import (
    USAGE_LEDGER_MIGRATIONS,
    USAGE_LEDGER_STORE,
    SQLiteUsageLedger,
)

__all__ = [
    "GLOBAL_SESSION",
    "InMemoryUsageLedger",
    "SQLiteUsageLedger",
    "USAGE_LEDGER_MIGRATIONS",
    "USAGE_LEDGER_STORE",
    "UsageEvent",
    "UsageLedger",
    "UsageTotals",
]
