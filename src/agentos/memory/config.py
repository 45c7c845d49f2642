"""How a `CognitiveMemoryManager` is built and what a retrieval asks for (reference §1.12).

`CognitiveMemoryConfig` names the manager's parts: the embedder (required), the store (in-memory
unless given), the HEXACO traits, a model invoker (HyDE, observer, reflector, gist and schema
summaries; none means no model call), the mechanisms (``None``: none; ``{}``: all eight at their
defaults; per-mechanism settings override), the graph (on unless ``disabled``), consolidation
(every hour unless ``enabled`` is False), an optional reranker, the clock and the random source.
`RetrievalOptions` is one `retrieve()`: how many, which scopes, types, tags and times, the
mood's part, HyDE and weight overrides.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agentos.core.clock import Clock, system_clock
from agentos.llm.embedding import Embedder
from agentos.memory.consolidation.config import ConsolidationConfig
from agentos.memory.decay import DEFAULT_DECAY_CONFIG, DecayConfig
from agentos.memory.encoding import DEFAULT_ENCODING_CONFIG, EncodingConfig
from agentos.memory.graph import GraphConfig
from agentos.memory.invoker import ModelInvoker
from agentos.memory.mechanisms import MechanismsConfig
from agentos.memory.observer import ObserverConfig
from agentos.memory.reflector import ReflectorConfig
from agentos.memory.scope import check_scopes
from agentos.memory.scoring import DEFAULT_SCORING_WEIGHTS, ScoringWeights
from agentos.memory.store import MemoryStore
from agentos.memory.trace import MemoryScope, MemoryType

__all__ = [
    "DEFAULT_TOP_K",
    "CognitiveMemoryConfig",
    "Reranker",
    "RetrievalOptions",
    "RetrievalPolicy",
]

DEFAULT_TOP_K = 20
"""How many memories a retrieval returns unless it asks for another number."""

Reranker = Callable[[str, Sequence[str]], Awaitable[Sequence[float]]]
"""``await reranker(query, texts)`` → one relevance score (0..1) per text."""


@dataclass(frozen=True, slots=True)
class RetrievalPolicy:
    """Standing retrieval rules: ``hyde`` 'always' searches with a hypothesis on every call."""

    hyde: Literal["always", "never", "auto"] = "auto"


@dataclass(frozen=True, slots=True)
class RetrievalOptions:
    """One retrieval.

    ``scopes`` limits recall to ``(kind, id)`` pairs (`agentos.memory.scope.ScopeKey`; ``None``:
    every scope): a kind and an id together, so a user's scope and a session's never match each
    other whatever their ids (DESIGN.md §5.17); anything else is a `GMIError` naming
    ``scopes``. ``types``, ``tags`` (any of), ``min_confidence`` and ``time_range`` (created
    from, to; seconds) filter further. ``neutral_mood`` leaves the mood out of the score.
    ``hyde`` True or False overrides the policy. ``scoring_weights`` merges over the manager's
    weights.
    """

    top_k: int = DEFAULT_TOP_K
    scopes: Sequence[tuple[MemoryScope, str]] | None = None
    types: frozenset[MemoryType] | None = None
    tags: frozenset[str] | None = None
    min_confidence: float | None = None
    time_range: tuple[float | None, float | None] | None = None
    neutral_mood: bool = False
    hyde: bool | None = None
    policy: RetrievalPolicy | None = None
    scoring_weights: Mapping[str, float] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.top_k, bool) or not isinstance(self.top_k, int) or self.top_k < 1:
            raise ValueError(f"top_k must be a positive integer, got {self.top_k!r}")
        if self.scopes is not None:
            object.__setattr__(self, "scopes", check_scopes(self.scopes))


@dataclass(slots=True, kw_only=True)
class CognitiveMemoryConfig:
    """The parts and settings of one `CognitiveMemoryManager` (see the module doc)."""

    embedder: Embedder
    store: MemoryStore | None = None
    agent_id: str = "agent"
    traits: Mapping[str, float] | None = None
    invoker: ModelInvoker | None = None
    mechanisms: Mapping[str, Any] | MechanismsConfig | None = None
    graph: GraphConfig = field(default_factory=GraphConfig)
    encoding: EncodingConfig = DEFAULT_ENCODING_CONFIG
    decay: DecayConfig = DEFAULT_DECAY_CONFIG
    scoring_weights: ScoringWeights = DEFAULT_SCORING_WEIGHTS
    observer: ObserverConfig | None = None
    reflector: ReflectorConfig | None = None
    consolidation: ConsolidationConfig = field(default_factory=ConsolidationConfig)
    policy: RetrievalPolicy = field(default_factory=RetrievalPolicy)
    reranker: Reranker | None = None
    prompt_token_budget: int = 1600
    clock: Clock = field(default=system_clock)
    rng: random.Random | None = None
