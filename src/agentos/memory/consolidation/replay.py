"""Step 2 of a consolidation cycle: co-activation replay (reference §1.20; DESIGN.md §5.17).

Recent traces of one scope are linked by the entities they share (SHARED_ENTITY) and by being
created close together (TEMPORAL_SEQUENCE). Traces of different scopes are never linked:
retrieval filters by scope, but a link across users would let spreading activation carry one
user's memory toward another's.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from agentos.memory.consolidation.changes import CycleChanges
from agentos.memory.consolidation.config import ConsolidationConfig
from agentos.memory.edge import EdgeType, MemoryEdge
from agentos.memory.graph import MemoryGraph
from agentos.memory.trace import MemoryTrace

__all__ = ["replay"]


def replay(
    graph: MemoryGraph,
    recent: Sequence[MemoryTrace],
    now: float,
    changes: CycleChanges,
    config: ConsolidationConfig,
) -> None:
    """Link ``recent`` traces of one scope by shared entities and by time, into ``changes``.

    Per entity, each holder links to the previous one (oldest first, at most
    ``config.max_links_per_entity`` links) with ``shared_entity_weight``; consecutive traces
    created less than ``temporal_gap`` apart get ``temporal_weight``. An existing edge of the
    same type is kept as is.
    """
    by_scope: dict[tuple[str, str], list[MemoryTrace]] = {}
    for trace in sorted(recent, key=lambda t: (t.created_at, t.id)):
        by_scope.setdefault((str(trace.scope), trace.scope_id), []).append(trace)
    for group in by_scope.values():
        holders: dict[str, list[str]] = {}
        for trace in group:
            for entity in dict.fromkeys(e.casefold() for e in trace.entities if e.strip()):
                holders.setdefault(entity, []).append(trace.id)
        for ids in holders.values():
            # Each holder links to the one before it: a chain keeps every holder reachable
            # with as few links as there are holders, where all pairs would grow squarely.
            for prev, cur in list(pairwise(ids))[: config.max_links_per_entity]:
                entity_edge = MemoryEdge(
                    prev, cur, EdgeType.SHARED_ENTITY, config.shared_entity_weight, now
                )
                changes.link(graph, entity_edge)
        for before, after in pairwise(group):
            if after.created_at - before.created_at < config.temporal_gap:
                sequence_edge = MemoryEdge(
                    before.id, after.id, EdgeType.TEMPORAL_SEQUENCE, config.temporal_weight, now
                )
                changes.link(graph, sequence_edge)
