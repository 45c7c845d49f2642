"""Cognitive memory (rank 2; spec: Cognitive memory).

Traces, encoding, decay, scored retrieval, the memory graph and spreading activation, the eight
mechanisms, the observer/reflector pipeline, consolidation and the stores. The names most
programs need are here; the rest live in their modules (`agentos.memory.mechanisms`, ...).
"""

from agentos.memory.config import CognitiveMemoryConfig, RetrievalOptions, RetrievalPolicy
from agentos.memory.consolidation import ConsolidationConfig
from agentos.memory.in_memory_store import InMemoryMemoryStore
from agentos.memory.manager import CognitiveMemoryManager
from agentos.memory.retrieval import RetrievalResult
from agentos.memory.scope import ScopeKey, SessionScopes
from agentos.memory.sqlite_store import SQLiteMemoryStore
from agentos.memory.store import MemoryStore
from agentos.memory.trace import PAD, MemoryScope, MemoryTrace, MemoryType

__all__ = [
    "PAD",
    "CognitiveMemoryConfig",
    "CognitiveMemoryManager",
    "ConsolidationConfig",
    "InMemoryMemoryStore",
    "MemoryScope",
    "MemoryStore",
    "MemoryTrace",
    "MemoryType",
    "RetrievalOptions",
    "RetrievalPolicy",
    "RetrievalResult",
    "SQLiteMemoryStore",
    "ScopeKey",
    "SessionScopes",
]
