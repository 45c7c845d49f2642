"""Consolidation: the memory's offline cycle (reference §1.20; spec: Cognitive memory).

`ConsolidationPipeline.run()` runs one cycle over the store's active traces, of every scope
(DESIGN.md §5.10: the reference reads only ``('user', agent_id)`` and so never finds what the
sessions filed, §5 trap 11):

1. **decay sweep**: traces `agentos.memory.decay.find_prunable` accepts are soft-deleted and
   leave the graph;
2. **co-activation replay** over the traces created within ``replay_window``: traces sharing an
   entity get a SHARED_ENTITY edge (0.5), traces created less than ``temporal_gap`` apart a
   TEMPORAL_SEQUENCE edge (0.3). Only traces of one scope, kind and id alike (DESIGN.md
   §5.17), are linked: retrieval filters by scope, but a link across users would let spreading
   activation carry one user's memory toward another's. (The cost: a user's message, filed in
   the user's scope, and the reply, filed in the session's, are not linked by replay.);
3. **schema integration**: the graph's clusters (CONTRADICTS edges left out) of at least
   ``min_cluster_size`` traces of one scope give the mechanisms engine its cluster centroids
   (schema encoding) with no model at all; with an invoker and an ``embed`` function, a cluster
   not summarised yet also gets a schema trace, the model's summary, linked to every member by
   SCHEMA_INSTANCE (0.6);
4. **conflicts** over CONTRADICTS edges: honesty above 0.6, the newer trace wins; else the less
   confident one loses when the confidences differ by more than ``conflict_confidence_gap``;
   else both stay. The loser is soft-deleted and each records the other in
   ``provenance.contradicted_by``;
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

import hashlib
import logging
import math
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import numpy.typing as npt

from agentos.core.clock import Clock, system_clock
from agentos.memory.decay import DEFAULT_DECAY_CONFIG, DecayConfig, find_prunable
from agentos.memory.decay import update_on_retrieval as reinforce
from agentos.memory.edge import EdgeType, MemoryEdge
from agentos.memory.graph import EdgeKey, MemoryGraph
from agentos.memory.invoker import ModelInvoker
from agentos.memory.mechanisms.engine import CognitiveMechanismsEngine
from agentos.memory.store import MemoryStore, TraceFilter, Vector
from agentos.memory.trace import HOUR, MemoryTrace, MemoryType, Provenance, SourceType
from agentos.memory.traits import TraitMap, trait_level

__all__ = [
    "SCHEMA_SYSTEM_PROMPT",
    "SCHEMA_TAGS",
    "ConsolidationConfig",
    "ConsolidationPipeline",
    "ConsolidationResult",
    "Embed",
    "schema_prompt",
]

_log = logging.getLogger(__name__)

Embed = Callable[[str], Awaitable[Sequence[float] | Vector]]
"""``await embed(text)`` → the passage embedding a new schema trace is stored with."""

SCHEMA_TAGS = ("schema", "consolidated")
"""The tags of a schema trace; a trace tagged ``schema`` is never a cluster member itself."""

SCHEMA_SYSTEM_PROMPT = (
    "You consolidate an agent's long-term memory. Given related memories, write their schema: "
    "one or two sentences stating the general pattern or fact they share, naming the people, "
    "places and things involved. Do not list the memories one by one and do not add anything "
    "they do not support. Reply with the schema only."
)
"""The system prompt of a schema summary (written for agentos)."""

_SCHEMA_STRENGTH = 0.7
_SCHEMA_STABILITY = 2 * HOUR
_SCHEMA_CONFIDENCE = 0.8
_SCHEMA_PROMPT_MEMBERS = 20  # the prompt shows the strongest members, not a whole cluster
_SCHEMA_MEMBER_CHARS = 400
_SCHEMA_ENTITIES = 10
_HONESTY_NEWER_WINS = 0.6
_LINKED_TYPES = tuple(t for t in EdgeType if t is not EdgeType.CONTRADICTS)


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


def schema_prompt(members: Sequence[MemoryTrace]) -> str:
    """The user prompt asking for the schema of ``members`` (each shown up to 400 characters)."""
    lines = ["Related memories:"]
    for trace in members:
        text = " ".join(trace.content.split())
        if len(text) > _SCHEMA_MEMBER_CHARS:
            text = text[:_SCHEMA_MEMBER_CHARS] + "..."
        lines.append(f"- {text}")
    return "\n".join(lines)


class _Changes:
    """One cycle's state: the traces it read, and what it will persist.

    ``known`` holds every trace the cycle has read, by id, so each trace is one object however
    many steps touch it (two copies would persist whichever was recorded last).
    """

    def __init__(self, known: dict[str, MemoryTrace]) -> None:
        self.known = known
        self.added: list[tuple[MemoryTrace, Sequence[float] | Vector]] = []
        self.traces: dict[str, MemoryTrace] = {}
        self.saved: dict[EdgeKey, MemoryEdge] = {}
        self.deleted: set[EdgeKey] = set()
        self.edges_created = 0

    def trace(self, trace: MemoryTrace) -> None:
        self.traces[trace.id] = trace

    async def load(self, store: MemoryStore, ids: Sequence[str]) -> list[MemoryTrace]:
        """The traces of ``ids`` that exist, read from the store only when not read yet."""
        missing = [i for i in dict.fromkeys(ids) if i not in self.known]
        for trace in await store.get(missing):
            self.known[trace.id] = trace
        return [self.known[i] for i in ids if i in self.known]

    def save(self, edges: Iterable[MemoryEdge]) -> None:
        for edge in edges:
            self.deleted.discard(edge.key())
            self.saved[edge.key()] = edge

    def delete(self, keys: Iterable[EdgeKey]) -> None:
        for key in keys:
            self.saved.pop(key, None)
            self.deleted.add(key)

    async def persist(self, store: MemoryStore) -> None:
        new_ids = {trace.id for trace, _ in self.added}
        for trace, vector in self.added:
            await store.add(trace, vector)
        updated = [t for t in self.traces.values() if t.id not in new_ids]
        if updated:
            await store.update(updated)
        if self.saved:
            await store.save_edges(list(self.saved.values()))
        if self.deleted:
            await store.delete_edges(sorted(self.deleted))


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
        cfg = self.config
        working = await self._read_batch(now)
        changes = _Changes(dict(working))
        total = len(working)

        # 1. decay sweep
        pruned = find_prunable(working.values(), now, self.decay)
        for trace in pruned:
            self._retire(trace, now, changes, reason="pruned")
        live = {tid: t for tid, t in working.items() if t.is_active}

        clusters = 0
        conflicts = 0
        if self.graph is not None:
            # 2. co-activation replay
            recent = [
                t
                for t in live.values()
                if t.created_at >= now - cfg.replay_window and "schema" not in t.tags
            ]
            self._replay(self.graph, recent, now, changes)
            # 3. schema integration
            clusters = await self._integrate_schemas(self.graph, now, changes)
            # 4. conflicts
            conflicts = await self._resolve_conflicts(self.graph, now, changes)

        # 5. spaced repetition
        reinforced = 0
        for trace in live.values():
            due = trace.next_reinforcement_at
            if trace.is_active and due is not None and due <= now:
                reinforce(trace, now)
                changes.trace(trace)
                reinforced += 1

        # 6. the mechanisms that run at consolidation
        gisted = decayed = regulated = 0
        if self.engine is not None:
            active = sorted((t for t in live.values() if t.is_active), key=lambda t: t.created_at)
            effects = await self.engine.on_consolidation(active, now, self.invoker)
            for trace in effects.changed:
                changes.trace(trace)
            gisted, decayed = len(effects.gisted), len(effects.source_decayed)
            regulated = len({t.id for t in (*effects.reappraised, *effects.suppressed)})

        # 7. persistence
        await changes.persist(self.store)
        return {
            "pruned_count": len(pruned),
            "edges_created": changes.edges_created,
            "schemas_created": len(changes.added),
            "conflicts_resolved": conflicts,
            "reinforced_count": reinforced,
            "total_processed": total,
            "clusters": clusters,
            "gisted": gisted,
            "source_decayed": decayed,
            "regulated": regulated,
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

    def _retire(self, trace: MemoryTrace, now: float, changes: _Changes, *, reason: str) -> None:
        """Soft-delete ``trace`` and take it out of the graph."""
        trace.is_active = False
        trace.updated_at = now
        trace.metadata["retired_at"] = now
        trace.metadata["retired_because"] = reason
        changes.trace(trace)
        if self.graph is not None:
            changes.delete(self.graph.remove_node(trace.id))

    @staticmethod
    def _link(graph: MemoryGraph, edge: MemoryEdge, changes: _Changes) -> None:
        """Create ``edge`` unless an edge of its type already links its ends (kept as is)."""
        if graph.edge(edge.source, edge.target, edge.type) is not None:
            return
        created = graph.upsert_edge(edge)
        changes.save(created)
        changes.edges_created += len(created)

    def _replay(
        self, graph: MemoryGraph, recent: Sequence[MemoryTrace], now: float, changes: _Changes
    ) -> None:
        """Step 2: link recent traces of one scope by shared entities and by time."""
        cfg = self.config
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
                for prev, cur in list(pairwise(ids))[: cfg.max_links_per_entity]:
                    entity_edge = MemoryEdge(
                        prev, cur, EdgeType.SHARED_ENTITY, cfg.shared_entity_weight, now
                    )
                    self._link(graph, entity_edge, changes)
            for before, after in pairwise(group):
                if after.created_at - before.created_at < cfg.temporal_gap:
                    sequence_edge = MemoryEdge(
                        before.id, after.id, EdgeType.TEMPORAL_SEQUENCE, cfg.temporal_weight, now
                    )
                    self._link(graph, sequence_edge, changes)

    async def _integrate_schemas(self, graph: MemoryGraph, now: float, changes: _Changes) -> int:
        """Step 3: cluster centroids for the engine and, with a model, schema summaries.

        Returns how many clusters were found.
        """
        cfg = self.config
        groups: list[tuple[list[MemoryTrace], list[MemoryTrace]]] = []
        for component in graph.detect_clusters(cfg.min_cluster_size, _LINKED_TYPES):
            # A component has no size cap (graph.detect_clusters): read a bounded part of it.
            ids = sorted(component)[: cfg.max_traces_per_cycle]
            by_scope: dict[tuple[str, str], list[MemoryTrace]] = {}
            for trace in await changes.load(self.store, ids):
                if trace.is_active:
                    by_scope.setdefault((str(trace.scope), trace.scope_id), []).append(trace)
            for traces in by_scope.values():
                members = [t for t in traces if "schema" not in t.tags]
                schemas = [t for t in traces if "schema" in t.tags]
                if len(members) >= cfg.min_cluster_size:
                    groups.append((members, schemas))
        if self.engine is not None:
            centroids: dict[str, npt.NDArray[np.float64]] = {}
            for members, _ in groups:
                vectors = await self.store.embeddings([t.id for t in members])
                if vectors:
                    matrix = np.vstack([np.asarray(v, dtype=np.float64) for v in vectors.values()])
                    centroids[_cluster_id(members)] = matrix.mean(axis=0)
            self.engine.set_cluster_centroids(centroids)
        invoker, embed = self.invoker, self.embed
        if invoker is not None and embed is not None:
            for members, schemas in groups:
                if len(changes.added) >= cfg.max_schemas_per_cycle:
                    break
                if any(self._covers(graph, s, members) for s in schemas):
                    continue  # summarised already
                summary = await self._ask_summary(invoker, embed, members, now)
                if summary is not None:
                    self._add_schema(graph, *summary, members, schemas, now, changes)
        return len(groups)

    @staticmethod
    def _covers(graph: MemoryGraph, schema: MemoryTrace, members: Sequence[MemoryTrace]) -> bool:
        """Whether ``schema`` is linked to every one of ``members`` by SCHEMA_INSTANCE."""
        kind = EdgeType.SCHEMA_INSTANCE
        return all(graph.edge(schema.id, m.id, kind) is not None for m in members)

    @staticmethod
    async def _ask_summary(
        invoker: ModelInvoker, embed: Embed, members: Sequence[MemoryTrace], now: float
    ) -> tuple[str, Sequence[float] | Vector] | None:
        """The model's schema of ``members`` and its embedding; None on an empty reply."""
        shown = sorted(members, key=lambda t: (-t.strength_at(now), t.created_at))
        try:
            reply = await invoker(
                SCHEMA_SYSTEM_PROMPT, schema_prompt(shown[:_SCHEMA_PROMPT_MEMBERS])
            )
            summary = reply.strip()
            return (summary, await embed(summary)) if summary else None
        except Exception:
            # A model or embedder failure costs this cluster its summary, not the cycle.
            _log.warning("consolidation: schema summary failed", exc_info=True)
            return None

    def _add_schema(
        self,
        graph: MemoryGraph,
        summary: str,
        vector: Sequence[float] | Vector,
        members: Sequence[MemoryTrace],
        schemas: Sequence[MemoryTrace],
        now: float,
        changes: _Changes,
    ) -> None:
        """Write the schema trace of ``members``; it replaces the schemas of a part of them."""
        first = members[0]
        counts = Counter(e for t in members for e in dict.fromkeys(t.entities))
        schema = MemoryTrace(
            id=f"schema_{uuid.uuid4().hex}",
            type=MemoryType.SEMANTIC,
            scope=first.scope,
            scope_id=first.scope_id,
            content=summary,
            created_at=now,
            encoding_strength=_SCHEMA_STRENGTH,
            stability=_SCHEMA_STABILITY,
            provenance=Provenance(
                source_type=SourceType.REFLECTION,
                source_timestamp=now,
                confidence=_SCHEMA_CONFIDENCE,
            ),
            entities=[e for e, _ in counts.most_common(_SCHEMA_ENTITIES)],
            tags=list(SCHEMA_TAGS),
            reinforcement_interval=HOUR,
            next_reinforcement_at=now + HOUR,
            associated_trace_ids=sorted(t.id for t in members),
            consolidated_at=now,
            metadata={"schema_cluster_id": _cluster_id(members)},
        )
        changes.added.append((schema, vector))
        for member in members:
            instance = MemoryEdge(
                schema.id, member.id, EdgeType.SCHEMA_INSTANCE, self.config.schema_weight, now
            )
            self._link(graph, instance, changes)
        # An older schema of a part of this cluster (it has grown since) is superseded.
        member_ids = {t.id for t in members}
        for old in schemas:
            linked = {
                other
                for other, _ in graph.neighbors(old.id)
                if graph.edge(old.id, other, EdgeType.SCHEMA_INSTANCE) is not None
            }
            if linked <= member_ids:
                old.metadata["superseded_by"] = schema.id
                self._retire(old, now, changes, reason="schema superseded")

    async def _resolve_conflicts(self, graph: MemoryGraph, now: float, changes: _Changes) -> int:
        """Step 4: settle the CONTRADICTS pairs; returns how many had a loser."""
        edges = graph.edges(EdgeType.CONTRADICTS)[: self.config.max_traces_per_cycle]
        ends = await changes.load(self.store, [i for e in edges for i in (e.source, e.target)])
        known = {t.id: t for t in ends}
        newer_wins = trait_level(self.traits, "honesty") > _HONESTY_NEWER_WINS
        resolved = 0
        for edge in edges:
            a, b = known.get(edge.source), known.get(edge.target)
            if a is None or b is None or not (a.is_active and b.is_active):
                continue
            loser = self._loser(a, b, newer_wins)
            if loser is None:
                continue
            winner = b if loser is a else a
            for trace, other in ((loser, winner), (winner, loser)):
                if other.id not in trace.provenance.contradicted_by:
                    trace.provenance.contradicted_by.append(other.id)
                trace.updated_at = now
                changes.trace(trace)
            self._retire(loser, now, changes, reason="contradicted")
            resolved += 1
        return resolved

    def _loser(self, a: MemoryTrace, b: MemoryTrace, newer_wins: bool) -> MemoryTrace | None:
        """The trace of a contradicting pair that gives way, or None when both stay.

        Honesty above 0.6: the older one (equal ages fall through to confidence). Otherwise
        the less confident one when the confidences differ by more than the configured gap.
        """
        if newer_wins and a.created_at != b.created_at:
            return a if a.created_at < b.created_at else b
        ca, cb = a.provenance.confidence, b.provenance.confidence
        if abs(ca - cb) > self.config.conflict_confidence_gap:
            return a if ca < cb else b
        return None


def _cluster_id(members: Iterable[MemoryTrace]) -> str:
    """A stable id for a cluster: a hash of its member ids."""
    digest = hashlib.sha256("\n".join(sorted(t.id for t in members)).encode()).hexdigest()
    return f"cluster_{digest[:16]}"
