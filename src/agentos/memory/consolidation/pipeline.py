"""`ConsolidationPipeline`: the memory's offline cycle (reference §1.20; spec: Cognitive memory).

`ConsolidationPipeline.run()` runs one cycle over the store's active traces, of every scope
(DESIGN.md §5.10: the reference reads only ``('user', agent_id)`` and so never finds what the
sessions filed, §5 trap 11):

1. **decay sweep**: traces `agentos.memory.decay.find_prunable` accepts are soft-deleted and
   leave the graph;
2. **co-activation replay** over the traces created within ``replay_window``
   (`agentos.memory.consolidation.replay`): traces sharing an entity get a SHARED_ENTITY edge
   (0.5), traces created less than ``temporal_gap`` apart a TEMPORAL_SEQUENCE edge (0.3). Only
   traces of one scope, kind and id alike (DESIGN.md §5.17), are linked: retrieval filters by
   scope, but a link across users would let spreading activation carry one user's memory
   toward another's. (The cost: a user's message, filed in the user's scope, and the reply,
   filed in the session's, are not linked by replay.);
3. **schema integration** (`agentos.memory.consolidation.schemas`): the graph's clusters
   (CONTRADICTS edges left out) of at least ``min_cluster_size`` traces of one scope give the
   mechanisms engine its cluster centroids (schema encoding) with no model at all; with an
   invoker and an ``embed`` function, a cluster not summarised yet also gets a schema trace,
   the model's summary, linked to every member by SCHEMA_INSTANCE (0.6);
4. **conflicts** over CONTRADICTS edges (`agentos.memory.consolidation.conflicts`): honesty
   above 0.6, the newer trace wins; else the less confident one loses when the confidences
   differ by more than ``conflict_confidence_gap``; else both stay. The loser is soft-deleted
   and each records the other in ``provenance.contradicted_by``;
5. **spaced repetition**: traces whose ``next_reinforcement_at`` has come are reinforced
   (`agentos.memory.decay.update_on_retrieval`);
6. the engine's **mechanisms** (temporal gist, source-confidence decay, emotion regulation);
7. **persistence**: new traces with ``store.add``, every changed trace with one
   ``store.update``, edges with one ``save_edges`` and one ``delete_edges``.

A cycle reads at most ``max_traces_per_cycle`` traces, oldest first, continuing where the last
cycle stopped (so a large store is covered over several cycles instead of its oldest page
forever), plus at most as many from the replay window. A cycle that fails part-way persists
nothing and reloads the graph from the store, so graph and store never disagree.
"""

from __future__ import annotations

import logging

from agentos.core.clock import Clock, system_clock
from agentos.memory.consolidation.changes import CycleChanges
from agentos.memory.consolidation.config import ConsolidationConfig, ConsolidationResult
from agentos.memory.consolidation.conflicts import resolve_conflicts
from agentos.memory.consolidation.replay import replay
from agentos.memory.consolidation.schemas import (
    Embed,
    find_schema_groups,
    set_cluster_centroids,
    write_schemas,
)
from agentos.memory.decay import DEFAULT_DECAY_CONFIG, DecayConfig, find_prunable
from agentos.memory.decay import update_on_retrieval as reinforce
from agentos.memory.graph import MemoryGraph
from agentos.memory.invoker import ModelInvoker
from agentos.memory.mechanisms.engine import CognitiveMechanismsEngine
from agentos.memory.store import MemoryStore, TraceFilter
from agentos.memory.trace import MemoryTrace
from agentos.memory.traits import TraitMap

__all__ = ["ConsolidationPipeline"]

_log = logging.getLogger(__name__)


class ConsolidationPipeline:
    """One memory's consolidation cycle (see the module doc for the seven steps).

    ``graph`` is the memory's in-process graph, kept in step with the store's edges (``None``
    when the memory's graph is disabled: then there are no edges to replay, cluster or resolve,
    and only steps 1, 5 and 6 run). ``engine`` supplies the mechanisms and takes the cluster
    centroids; ``invoker`` and ``embed`` together let a cycle write schema summaries (either
    missing: none); ``traits`` are HEXACO values (honesty decides conflicts); ``decay`` sets the
    pruning threshold. Times come from ``clock``.
    """

    def __init__(
        self,
        store: MemoryStore,
        graph: MemoryGraph | None,
        *,
        engine: CognitiveMechanismsEngine | None = None,
        invoker: ModelInvoker | None = None,
        traits: TraitMap | None = None,
        config: ConsolidationConfig | None = None,
        clock: Clock = system_clock,
        embed: Embed | None = None,
        decay: DecayConfig = DEFAULT_DECAY_CONFIG,
    ) -> None:
        self.store = store
        self.graph = graph
        self.engine = engine
        self.invoker = invoker
        self.traits = traits
        self.config = config if config is not None else ConsolidationConfig()
        self.clock = clock
        self.embed = embed
        self.decay = decay
        self._cursor: float | None = None
        """``created_at`` the next cycle's oldest-first page starts from (None: the start)."""

    async def run(self) -> ConsolidationResult:
        """Run one cycle now and return what it did.

        A disabled configuration returns an empty result. On any failure (or cancellation)
        nothing is persisted, the graph is reloaded from the store and the error propagates.
        Not safe to run twice at once: `agentos.memory.consolidation_loop.ConsolidationLoop`
        serialises cycles.
        """
        if not self.config.enabled:
            return ConsolidationResult()
        started = self.clock.monotonic()
        cursor = self._cursor
        try:
            counts = await self._cycle(self.clock.timestamp())
        except BaseException:
            self._cursor = cursor  # the next cycle reads the page this one could not finish
            await self._reload_graph()
            raise
        return ConsolidationResult(**counts, duration=self.clock.monotonic() - started)

    async def _cycle(self, now: float) -> dict[str, int]:
        working = await self._read_batch(now)
        changes = CycleChanges(dict(working))
        # 1. decay sweep
        pruned = find_prunable(working.values(), now, self.decay)
        for trace in pruned:
            changes.retire(trace, now, self.graph, reason="pruned")
        live = {tid: t for tid, t in working.items() if t.is_active}
        # 2.-4. replay, schema integration, conflicts
        clusters, conflicts = await self._graph_steps(live, now, changes)
        # 5. spaced repetition
        reinforced = self._reinforce_due(live, now, changes)
        # 6. the mechanisms that run at consolidation
        mechanisms = await self._run_mechanisms(live, now, changes)
        # 7. persistence
        await changes.persist(self.store)
        return {
            "pruned_count": len(pruned),
            "edges_created": changes.edges_created,
            "schemas_created": len(changes.added),
            "conflicts_resolved": conflicts,
            "reinforced_count": reinforced,
            "total_processed": len(working),
            "clusters": clusters,
            **mechanisms,
        }

    async def _graph_steps(
        self, live: dict[str, MemoryTrace], now: float, changes: CycleChanges
    ) -> tuple[int, int]:
        """Steps 2 to 4: the clusters found and the conflicts resolved (0, 0 without a graph)."""
        graph, cfg = self.graph, self.config
        if graph is None:
            return 0, 0
        recent = [
            t
            for t in live.values()
            if t.created_at >= now - cfg.replay_window and "schema" not in t.tags
        ]
        replay(graph, recent, now, changes, cfg)
        groups = await find_schema_groups(graph, self.store, changes, cfg)
        if self.engine is not None:
            await set_cluster_centroids(self.engine, self.store, groups)
        if self.invoker is not None and self.embed is not None:
            await write_schemas(graph, groups, now, changes, cfg, (self.invoker, self.embed))
        conflicts = await resolve_conflicts(graph, self.store, now, changes, cfg, self.traits)
        return len(groups), conflicts

    @staticmethod
    def _reinforce_due(live: dict[str, MemoryTrace], now: float, changes: CycleChanges) -> int:
        """Step 5: reinforce the active traces whose repetition is due; returns how many."""
        reinforced = 0
        for trace in live.values():
            due = trace.next_reinforcement_at
            if trace.is_active and due is not None and due <= now:
                reinforce(trace, now)
                changes.trace(trace)
                reinforced += 1
        return reinforced

    async def _run_mechanisms(
        self, live: dict[str, MemoryTrace], now: float, changes: CycleChanges
    ) -> dict[str, int]:
        """Step 6: the engine's consolidation mechanisms; returns their counts."""
        if self.engine is None:
            return {"gisted": 0, "source_decayed": 0, "regulated": 0}
        active = sorted((t for t in live.values() if t.is_active), key=lambda t: t.created_at)
        effects = await self.engine.on_consolidation(active, now, self.invoker)
        for trace in effects.changed:
            changes.trace(trace)
        return {
            "gisted": len(effects.gisted),
            "source_decayed": len(effects.source_decayed),
            "regulated": len({t.id for t in (*effects.reappraised, *effects.suppressed)}),
        }

    async def _reload_graph(self) -> None:
        """Put the graph back in step with the store after a cycle that persisted nothing."""
        if self.graph is None:
            return
        try:
            self.graph.load(await self.store.load_edges())
        except Exception:
            # The cycle's own error is the one to report; this one is only logged.
            _log.warning("consolidation: could not reload the memory graph", exc_info=True)

    async def _read_batch(self, now: float) -> dict[str, MemoryTrace]:
        """The next oldest-first page of active traces and the replay window's traces, by id."""
        limit = self.config.max_traces_per_cycle
        page = await self.store.list_traces(TraceFilter(created_after=self._cursor), limit)
        # Continue after this page next time; a short page means the store was covered: wrap.
        # The bound is inclusive, so traces sharing the page's last timestamp are read again
        # (harmless: what was due for them is done); a page all of one timestamp wraps (so
        # more than a page of traces with one timestamp is never read past).
        last = page[-1].created_at if page else None
        self._cursor = None if len(page) < limit or last == self._cursor else last
        recent = await self.store.list_traces(
            TraceFilter(created_after=now - self.config.replay_window), limit
        )
        working = {t.id: t for t in page}
        for trace in recent:
            working.setdefault(trace.id, trace)
        return working
