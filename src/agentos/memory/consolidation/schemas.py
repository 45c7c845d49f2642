"""Step 3 of a consolidation cycle: schema integration (reference §1.20; spec: Cognitive memory).

The graph's clusters (CONTRADICTS edges left out) of at least ``min_cluster_size`` traces of one
scope give the mechanisms engine its cluster centroids (schema encoding) with no model at all;
with an invoker and an ``embed`` function, a cluster not summarised yet also gets a schema
trace, the model's summary, linked to every member by SCHEMA_INSTANCE. A new schema retires an
older one that covered only a part of the cluster.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Sequence

import numpy as np
import numpy.typing as npt

from agentos.memory.consolidation.changes import CycleChanges
from agentos.memory.consolidation.config import ConsolidationConfig
from agentos.memory.edge import EdgeType, MemoryEdge
from agentos.memory.graph import MemoryGraph
from agentos.memory.invoker import ModelInvoker
from agentos.memory.mechanisms.engine import CognitiveMechanismsEngine
from agentos.memory.store import MemoryStore, Vector
from agentos.memory.trace import HOUR, MemoryTrace, MemoryType, Provenance, SourceType

__all__ = [
    "SCHEMA_SYSTEM_PROMPT",
    "SCHEMA_TAGS",
    "Embed",
    "SchemaGroup",
    "find_schema_groups",
    "schema_prompt",
    "set_cluster_centroids",
    "write_schemas",
]

_log = logging.getLogger(__name__)

Embed = Callable[[str], Awaitable[Sequence[float] | Vector]]
"""``await embed(text)`` → the passage embedding a new schema trace is stored with."""

SchemaGroup = tuple[list[MemoryTrace], list[MemoryTrace]]
"""A cluster of one scope: its member traces and the schema traces already linked to it."""

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
_LINKED_TYPES = tuple(t for t in EdgeType if t is not EdgeType.CONTRADICTS)


def schema_prompt(members: Sequence[MemoryTrace]) -> str:
    """The user prompt asking for the schema of ``members`` (each shown up to 400 characters)."""
    lines = ["Related memories:"]
    for trace in members:
        text = " ".join(trace.content.split())
        if len(text) > _SCHEMA_MEMBER_CHARS:
            text = text[:_SCHEMA_MEMBER_CHARS] + "..."
        lines.append(f"- {text}")
    return "\n".join(lines)


async def find_schema_groups(
    graph: MemoryGraph, store: MemoryStore, changes: CycleChanges, config: ConsolidationConfig
) -> list[SchemaGroup]:
    """The clusters of the graph, split by scope, with at least ``min_cluster_size`` members.

    Only active traces count; schema traces are kept apart from the members.
    """
    groups: list[SchemaGroup] = []
    for component in graph.detect_clusters(config.min_cluster_size, _LINKED_TYPES):
        # A component has no size cap (graph.detect_clusters): read a bounded part of it.
        ids = sorted(component)[: config.max_traces_per_cycle]
        by_scope: dict[tuple[str, str], list[MemoryTrace]] = {}
        for trace in await changes.load(store, ids):
            if trace.is_active:
                by_scope.setdefault((str(trace.scope), trace.scope_id), []).append(trace)
        for traces in by_scope.values():
            members = [t for t in traces if "schema" not in t.tags]
            schemas = [t for t in traces if "schema" in t.tags]
            if len(members) >= config.min_cluster_size:
                groups.append((members, schemas))
    return groups


async def set_cluster_centroids(
    engine: CognitiveMechanismsEngine, store: MemoryStore, groups: Sequence[SchemaGroup]
) -> None:
    """Give ``engine`` the mean embedding of each group's members (schema encoding)."""
    centroids: dict[str, npt.NDArray[np.float64]] = {}
    for members, _ in groups:
        vectors = await store.embeddings([t.id for t in members])
        if vectors:
            matrix = np.vstack([np.asarray(v, dtype=np.float64) for v in vectors.values()])
            centroids[_cluster_id(members)] = matrix.mean(axis=0)
    engine.set_cluster_centroids(centroids)


async def write_schemas(
    graph: MemoryGraph,
    groups: Sequence[SchemaGroup],
    now: float,
    changes: CycleChanges,
    config: ConsolidationConfig,
    ask: tuple[ModelInvoker, Embed],
) -> None:
    """Summarise each group not covered by a schema yet, up to ``max_schemas_per_cycle``.

    ``ask`` is the model invoker and the embedding function the summaries need.
    """
    invoker, embed = ask
    for members, schemas in groups:
        if len(changes.added) >= config.max_schemas_per_cycle:
            break
        if any(_covers(graph, s, members) for s in schemas):
            continue  # summarised already
        summary = await _ask_summary(invoker, embed, members, now)
        if summary is not None:
            schema = _schema_trace(*summary, members, now, changes)
            _link_schema(graph, schema, members, schemas, now, changes, config.schema_weight)


def _covers(graph: MemoryGraph, schema: MemoryTrace, members: Sequence[MemoryTrace]) -> bool:
    """Whether ``schema`` is linked to every one of ``members`` by SCHEMA_INSTANCE."""
    kind = EdgeType.SCHEMA_INSTANCE
    return all(graph.edge(schema.id, m.id, kind) is not None for m in members)


async def _ask_summary(
    invoker: ModelInvoker, embed: Embed, members: Sequence[MemoryTrace], now: float
) -> tuple[str, Sequence[float] | Vector] | None:
    """The model's schema of ``members`` and its embedding; None on an empty reply."""
    shown = sorted(members, key=lambda t: (-t.strength_at(now), t.created_at))
    try:
        reply = await invoker(SCHEMA_SYSTEM_PROMPT, schema_prompt(shown[:_SCHEMA_PROMPT_MEMBERS]))
        summary = reply.strip()
        return (summary, await embed(summary)) if summary else None
    except Exception:
        # A model or embedder failure costs this cluster its summary, not the cycle.
        _log.warning("consolidation: schema summary failed", exc_info=True)
        return None


def _schema_trace(
    summary: str,
    vector: Sequence[float] | Vector,
    members: Sequence[MemoryTrace],
    now: float,
    changes: CycleChanges,
) -> MemoryTrace:
    """The schema trace of ``members``, recorded in ``changes`` as new."""
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
    return schema


def _link_schema(
    graph: MemoryGraph,
    schema: MemoryTrace,
    members: Sequence[MemoryTrace],
    schemas: Sequence[MemoryTrace],
    now: float,
    changes: CycleChanges,
    weight: float,
) -> None:
    """Link ``schema`` to ``members``; it replaces the older schemas of a part of them."""
    for member in members:
        instance = MemoryEdge(schema.id, member.id, EdgeType.SCHEMA_INSTANCE, weight, now)
        changes.link(graph, instance)
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
            changes.retire(old, now, graph, reason="schema superseded")


def _cluster_id(members: Iterable[MemoryTrace]) -> str:
    """A stable id for a cluster: a hash of its member ids."""
    digest = hashlib.sha256("\n".join(sorted(t.id for t in members)).encode()).hexdigest()
    return f"cluster_{digest[:16]}"
