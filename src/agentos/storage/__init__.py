"""Storage: the SQLite foundation and the stores of plain records (DESIGN.md §6).

Each store is a small protocol with an in-memory and a SQLite backend, all on one database
file under ``AGENTOS_HOME`` (`open_database()`). Stores apply their own migrations, kept per
store in ``schema_version`` (see `agentos.storage.sqlite`). A durable session store also keeps one
turn at a time per session across processes (`SessionLeases`, DESIGN.md §5.21). This layer imports
only `agentos.core`.
"""

from agentos.storage.history_events import HistoryEvent, HistoryEventKind
from agentos.storage.ledger import (
    USAGE_LEDGER_MIGRATIONS,
    InMemoryUsageLedger,
    SQLiteUsageLedger,
    UsageEvent,
    UsageLedger,
    UsageTotals,
)
from agentos.storage.personality_mutations import (
    InMemoryPersonalityMutationStore,
    PersonalityMutation,
    PersonalityMutationStore,
    SQLitePersonalityMutationStore,
)
from agentos.storage.session_blocks import message_tokens
from agentos.storage.session_history import (
    DEFAULT_EVICT_CHUNK_RATIO,
    DEFAULT_HISTORY_MAX_TOKENS,
    DEFAULT_MIN_KEEP_SENDS,
    SessionHistoryBuffer,
)
from agentos.storage.session_lease import DEFAULT_LEASE_TIMEOUT, SessionLeases
from agentos.storage.session_store import (
    SESSION_STORE,
    SESSION_STORE_MIGRATIONS,
    InMemorySessionStore,
    SessionChanges,
    SessionInfo,
    SessionStore,
    SQLiteSessionStore,
    StoredMessage,
)
from agentos.storage.sqlite import (
    AGENTOS_HOME_ENV,
    DATABASE_FILENAME,
    Database,
    Migration,
    StorageError,
    agentos_home,
    default_database_path,
    open_database,
)
from agentos.storage.tool_pause_sqlite import (
    TOOL_PAUSE_MIGRATIONS,
    TOOL_PAUSE_STORE,
    SQLiteToolPauseStore,
)
from agentos.storage.tool_pauses import InMemoryToolPauseStore, ToolPause, ToolPauseStore
from agentos.storage.tool_rounds import validate_tool_pairing
from agentos.storage.turn_writer import TurnWriter
from agentos.storage.unfinished_turns import PARTIAL, is_partial, mark_partial

__all__ = [
    "AGENTOS_HOME_ENV",
    "DATABASE_FILENAME",
    "DEFAULT_EVICT_CHUNK_RATIO",
    "DEFAULT_HISTORY_MAX_TOKENS",
    "DEFAULT_LEASE_TIMEOUT",
    "DEFAULT_MIN_KEEP_SENDS",
    "PARTIAL",
    "SESSION_STORE",
    "SESSION_STORE_MIGRATIONS",
    "TOOL_PAUSE_MIGRATIONS",
    "TOOL_PAUSE_STORE",
    "USAGE_LEDGER_MIGRATIONS",
    "Database",
    "HistoryEvent",
    "HistoryEventKind",
    "InMemorySessionStore",
    "InMemoryPersonalityMutationStore",
    "InMemoryToolPauseStore",
    "InMemoryUsageLedger",
    "Migration",
    "PersonalityMutation",
    "PersonalityMutationStore",
    "SQLitePersonalityMutationStore",
    "SQLiteSessionStore",
    "SQLiteToolPauseStore",
    "SQLiteUsageLedger",
    "SessionChanges",
    "SessionHistoryBuffer",
    "SessionInfo",
    "SessionLeases",
    "SessionStore",
    "StorageError",
    "StoredMessage",
    "ToolPause",
    "ToolPauseStore",
    "TurnWriter",
    "UsageEvent",
    "UsageLedger",
    "UsageTotals",
    "agentos_home",
    "default_database_path",
    "is_partial",
    "mark_partial",
    "message_tokens",
    "open_database",
    "validate_tool_pairing",
]
