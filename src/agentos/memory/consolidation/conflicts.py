"""Step 4 of a consolidation cycle: settle contradicting traces (reference §1.20).

Over CONTRADICTS edges: with honesty above 0.6 the newer trace wins; else the less confident one
loses when the confidences differ by more than ``conflict_confidence_gap``; else both stay. The
loser is soft-deleted and each records the other in ``provenance.contradicted_by``.
"""

from __future__ import annotations

from agentos.memory.consolidation.changes import CycleChanges
from agentos.memory.consolidation.config import ConsolidationConfig
from agentos.memory.edge import EdgeType
from agentos.memory.graph import MemoryGraph
from agentos.memory.store import MemoryStore
from agentos.memory.trace import MemoryTrace
from agentos.memory.traits import TraitMap, trait_level

__all__ = ["conflict_loser", "resolve_conflicts"]

_HONESTY_NEWER_WINS = 0.6


async def resolve_conflicts(
    graph: MemoryGraph,
    store: MemoryStore,
    now: float,
    changes: CycleChanges,
    config: ConsolidationConfig,
    traits: TraitMap | None,
) -> int:
    """Settle the CONTRADICTS pairs (at most ``config.max_traces_per_cycle`` edges).

    Returns how many had a loser. Pairs with an end missing or already inactive are skipped.
    """
    edges = graph.edges(EdgeType.CONTRADICTS)[: config.max_traces_per_cycle]
    ends = await changes.load(store, [i for e in edges for i in (e.source, e.target)])
    known = {t.id: t for t in ends}
    newer_wins = trait_level(traits, "honesty") > _HONESTY_NEWER_WINS
    resolved = 0
    for edge in edges:
        a, b = known.get(edge.source), known.get(edge.target)
        if a is None or b is None or not (a.is_active and b.is_active):
            continue
        loser = conflict_loser(a, b, newer_wins, config.conflict_confidence_gap)
        if loser is None:
            continue
        winner = b if loser is a else a
        for trace, other in ((loser, winner), (winner, loser)):
            if other.id not in trace.provenance.contradicted_by:
                trace.provenance.contradicted_by.append(other.id)
            trace.updated_at = now
            changes.trace(trace)
        changes.retire(loser, now, graph, reason="contradicted")
        resolved += 1
    return resolved


def conflict_loser(
    a: MemoryTrace, b: MemoryTrace, newer_wins: bool, confidence_gap: float
) -> MemoryTrace | None:
    """The trace of a contradicting pair that gives way, or None when both stay.

    ``newer_wins`` (honesty above 0.6): the older one (equal ages fall through to confidence).
    Otherwise the less confident one when the confidences differ by more than
    ``confidence_gap``.
    """
    if newer_wins and a.created_at != b.created_at:
        return a if a.created_at < b.created_at else b
    ca, cb = a.provenance.confidence, b.provenance.confidence
    if abs(ca - cb) > confidence_gap:
        return a if ca < cb else b
    return None
