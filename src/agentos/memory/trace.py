"""A memory trace: one thing a cognitive memory holds (reference §1.12 ``MemoryTrace``).

Times are seconds since the Unix epoch and durations are seconds (the reference counts in
milliseconds: its stability of 3,600,000 ms is 3,600 s here). A trace is mutable: retrieval,
consolidation and the mechanisms update it in place and its store persists the update. Its
embedding lives in the store's vector index, not on the trace.

`MemoryTrace.strength_at()` is the Ebbinghaus forgetting curve every part reads,
``S(t) = encoding_strength * exp(-max(0, t - last_accessed_at) / stability)``.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = [
    "DAY",
    "HOUR",
    "MINUTE",
    "EmotionalContext",
    "MemoryScope",
    "MemoryTrace",
    "MemoryType",
    "PAD",
    "Provenance",
    "SourceType",
    "new_trace_id",
]

MINUTE = 60.0
HOUR = 3600.0
DAY = 86400.0


@dataclass(frozen=True, slots=True)
class PAD:
    """A mood as pleasure (valence), arousal and dominance, each from -1 to 1 (0 is neutral)."""

    valence: float = 0.0
    arousal: float = 0.0
    dominance: float = 0.0


class MemoryType(StrEnum):
    """What kind of memory a trace is (the CoALA taxonomy the spec follows, and more)."""

    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    PROCEDURAL = "procedural"
    PROSPECTIVE = "prospective"
    RELATIONAL = "relational"


class MemoryScope(StrEnum):
    """Whose memory a trace is: a thread's, a user's, a persona's or an organization's."""

    THREAD = "thread"
    USER = "user"
    PERSONA = "persona"
    ORGANIZATION = "organization"


class SourceType(StrEnum):
    """Where a trace's content came from (source-confidence decay reads it)."""

    USER_STATEMENT = "user_statement"
    AGENT_INFERENCE = "agent_inference"
    TOOL_RESULT = "tool_result"
    OBSERVATION = "observation"
    REFLECTION = "reflection"
    EXTERNAL = "external"
    FACT_GRAPH = "fact_graph"
    TYPED_NETWORK = "typed_network"
    RETRIEVED_DOCUMENT = "retrieved_document"
    HUMAN_APPROVAL = "human_approval"
    IDENTITY_PROVIDER = "identity_provider"
    SYSTEM_CONFIG = "system_config"
    EXTERNAL_API = "external_api"
    MEMORY_SUMMARY = "memory_summary"


@dataclass(slots=True)
class EmotionalContext:
    """The affect a trace was encoded with.

    ``valence`` and ``dominance`` run from -1 to 1, ``arousal`` from 0 to 1 (the PAD arousal
    rescaled: ``(pad.arousal + 1) / 2``), ``intensity`` from 0 to 1; ``gmi_mood`` names the GMI's
    mood at the time, when a GMI encoded it.
    """

    valence: float = 0.0
    arousal: float = 0.5
    dominance: float = 0.0
    intensity: float = 0.0
    gmi_mood: str | None = None


@dataclass(slots=True)
class Provenance:
    """Where a trace came from and how far it is trusted."""

    source_type: SourceType = SourceType.USER_STATEMENT
    source_id: str | None = None
    source_timestamp: float = 0.0
    confidence: float = 0.8
    verification_count: int = 0
    last_verified_at: float | None = None
    contradicted_by: list[str] = field(default_factory=list)


def new_trace_id() -> str:
    """A fresh trace id (``mt_<hex>``)."""
    return f"mt_{uuid.uuid4().hex}"


@dataclass(slots=True)
class MemoryTrace:
    """One memory: its content, affect, strength and history.

    ``encoding_strength`` is S0 (0..1) and ``stability`` the seconds over which it decays by a
    factor e; ``reinforcement_interval`` (seconds) doubles at each retrieval. ``metadata`` holds
    what the mechanisms record on a trace (``cumulative_drift``, ``drift_history``,
    ``last_source_decay_at``, ``gisted``, ``schema_cluster_id``, ``regulation_history``, ...).
    ``is_active`` False is a soft delete: the trace stays stored and is never recalled.
    """

    id: str
    type: MemoryType
    scope: MemoryScope
    scope_id: str
    content: str
    created_at: float
    encoding_strength: float
    stability: float
    emotional_context: EmotionalContext = field(default_factory=EmotionalContext)
    provenance: Provenance = field(default_factory=Provenance)
    entities: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    importance: float | None = None
    retrieval_count: int = 0
    access_count: int = 0
    last_accessed_at: float = 0.0
    reinforcement_interval: float = HOUR
    next_reinforcement_at: float | None = None
    associated_trace_ids: list[str] = field(default_factory=list)
    structured_data: dict[str, Any] | None = None
    updated_at: float = 0.0
    consolidated_at: float | None = None
    is_active: bool = True
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.last_accessed_at:
            self.last_accessed_at = self.created_at
        if not self.updated_at:
            self.updated_at = self.created_at
        if self.stability <= 0:
            raise ValueError(f"MemoryTrace.stability must be positive, got {self.stability}")

    def strength_at(self, now: float) -> float:
        """The Ebbinghaus strength at ``now`` (a time before the last access counts as no time)."""
        elapsed = max(0.0, now - self.last_accessed_at)
        return self.encoding_strength * math.exp(-elapsed / self.stability)

    def age_at(self, now: float) -> float:
        """Seconds since the trace was created."""
        return max(0.0, now - self.created_at)
