"""The usage ledger: one row per metered model call (spec: Usage).

The ledger is an option, off by default in the library (DESIGN.md §5.9). One name for its
parts, each in its own module:

- `agentos.storage.usage_records`: the row (`UsageEvent`), what rows add up to (`UsageTotals`)
  and the `UsageLedger` protocol;
- `agentos.storage.memory_usage_ledger`: `InMemoryUsageLedger`, for tests and short runs;
- `agentos.storage.sqlite_usage_ledger`: `SQLiteUsageLedger` on the database of
  `agentos.storage.sqlite`, and its migrations.

Both ledgers finish a write before `append` returns.
"""

from __future__ import annotations

from .memory_usage_ledger import InMemoryUsageLedger
from .sqlite_usage_ledger import USAGE_LEDGER_MIGRATIONS, SQLiteUsageLedger
from .sqlite_usage_ledger import USAGE_LEDGER_STORE as USAGE_LEDGER_STORE
from .usage_records import GLOBAL_SESSION, UsageEvent, UsageLedger, UsageTotals

__all__ = [
    "GLOBAL_SESSION",
    "InMemoryUsageLedger",
    "SQLiteUsageLedger",
    "USAGE_LEDGER_MIGRATIONS",
    "UsageEvent",
    "UsageLedger",
    "UsageTotals",
]
