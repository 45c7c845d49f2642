"""The consolidation cycle's settings and its report (reference §1.20; spec: Cognitive memory)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from agentos.memory.trace import HOUR

__all__ = ["ConsolidationConfig", "ConsolidationResult"]


@dataclass(frozen=True, slots=True)
class ConsolidationConfig:
    """The consolidation cycle's settings (reference defaults; times in seconds).

    ``enabled`` False makes `ConsolidationPipeline.run` a no-op and keeps the loop from
    starting. ``max_schemas_per_cycle`` bounds the model calls of schema summaries in one cycle
    (an addition: each is a model call). Raises ValueError on a value out of range.
    """

    enabled: bool = True
    interval: float = HOUR
    max_traces_per_cycle: int = 500
    min_cluster_size: int = 5
    replay_window: float = 24 * HOUR
    temporal_gap: float = 300.0
    shared_entity_weight: float = 0.5
    temporal_weight: float = 0.3
    schema_weight: float = 0.6
    max_links_per_entity: int = 10
    conflict_confidence_gap: float = 0.2
    max_schemas_per_cycle: int = 5

    def __post_init__(self) -> None:
        for name in ("interval", "replay_window", "temporal_gap"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"ConsolidationConfig.{name} must be positive, got {value!r}")
        for name in ("max_traces_per_cycle", "max_links_per_entity", "max_schemas_per_cycle"):
            if getattr(self, name) < 0:
                raise ValueError(f"ConsolidationConfig.{name} must be >= 0")
        if self.min_cluster_size < 2:
            raise ValueError("ConsolidationConfig.min_cluster_size must be at least 2")
        for name in ("shared_entity_weight", "temporal_weight", "schema_weight"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"ConsolidationConfig.{name} must be in [0, 1]")
        if not 0.0 <= self.conflict_confidence_gap <= 1.0:
            raise ValueError("ConsolidationConfig.conflict_confidence_gap must be in [0, 1]")


@dataclass(frozen=True, slots=True)
class ConsolidationResult:
    """What one cycle did (counts of traces or edges; ``duration`` in seconds).

    ``total_processed`` is the number of traces the cycle read; ``clusters`` the schema clusters
    found (each gives the engine a centroid); ``gisted``, ``source_decayed`` and ``regulated``
    what the engine's mechanisms changed (``regulated`` counts reappraised and suppressed
    traces once each).
    """

    pruned_count: int = 0
    edges_created: int = 0
    schemas_created: int = 0
    conflicts_resolved: int = 0
    reinforced_count: int = 0
    total_processed: int = 0
    duration: float = 0.0
    clusters: int = 0
    gisted: int = 0
    source_decayed: int = 0
    regulated: int = 0
