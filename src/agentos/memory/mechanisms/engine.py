"""The mechanisms engine: the eight mechanisms behind the hooks the memory manager calls.

Spec: "The eight mechanisms" and "Personality modulation"; reference §1.12 (where each hook runs)
and §1.18. The manager builds an engine only when it is given a mechanisms configuration
(`resolve_mechanisms_config` returns ``None`` otherwise) and calls:

========================  ==========================================  =========================
hook                      where the manager calls it                  mechanisms
========================  ==========================================  =========================
`on_encoding`             ``encode()``, before the trace is stored    schema encoding
`on_retrieval`            ``retrieve()``, after scoring and ranking   RIF, feeling of knowing
`on_access`               ``record_access()`` of each recalled trace  reconsolidation
`on_prompt_assembly`      ``assemble_for_prompt()``                   involuntary recall
`on_consolidation`        consolidation, step 6                       gist, source decay,
                                                                      emotion regulation
`set_cluster_centroids`   consolidation, after clustering the graph   (schema encoding's input)
========================  ==========================================  =========================

Every hook mutates the traces in place and returns what it changed, so the manager persists
exactly those (``store.update``) and can report the effects. Candidates are read through the
`Candidate` protocol (``trace``, ``score``, ``vector_similarity``), which the scorer's scored
traces satisfy, so the engine does not depend on the scorer.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from agentos.core.randomness import resolve_rng
from agentos.memory.invoker import ModelInvoker
from agentos.memory.mechanisms.candidates import Candidate
from agentos.memory.mechanisms.config import MechanismsConfig, apply_personality
from agentos.memory.mechanisms.emotion_regulation import apply_emotion_regulation
from agentos.memory.mechanisms.feeling_of_knowing import (
    FeelingOfKnowing,
    detect_feeling_of_knowing,
)
from agentos.memory.mechanisms.forgetting import apply_retrieval_induced_forgetting
from agentos.memory.mechanisms.involuntary_recall import select_involuntary_memory
from agentos.memory.mechanisms.reconsolidation import Drift, apply_reconsolidation
from agentos.memory.mechanisms.schema_encoding import (
    ClusterCentroids,
    SchemaMatch,
    VectorLike,
    apply_schema_encoding,
)
from agentos.memory.mechanisms.source_decay import apply_source_confidence_decay
from agentos.memory.mechanisms.temporal_gist import apply_temporal_gist
from agentos.memory.trace import PAD, MemoryTrace

__all__ = ["CognitiveMechanismsEngine", "ConsolidationEffects", "RetrievalEffects"]


@dataclass(frozen=True, slots=True)
class RetrievalEffects:
    """What a retrieval set off.

    The competitors RIF suppressed (their stability changed, so the manager persists them) and
    the feeling-of-knowing signals, highest first.
    """

    suppressed: tuple[MemoryTrace, ...] = ()
    signals: tuple[FeelingOfKnowing, ...] = ()

    @property
    def suppressed_ids(self) -> tuple[str, ...]:
        """The ids of the suppressed traces."""
        return tuple(t.id for t in self.suppressed)


@dataclass(frozen=True, slots=True)
class ConsolidationEffects:
    """What the consolidation mechanisms changed, each list in the order it was applied."""

    gisted: tuple[MemoryTrace, ...] = ()
    source_decayed: tuple[MemoryTrace, ...] = ()
    reappraised: tuple[MemoryTrace, ...] = ()
    suppressed: tuple[MemoryTrace, ...] = ()

    @property
    def changed(self) -> tuple[MemoryTrace, ...]:
        """Every changed trace once, in first-change order: what the manager must persist."""
        seen: dict[str, MemoryTrace] = {}
        for group in (self.gisted, self.source_decayed, self.reappraised, self.suppressed):
            for trace in group:
                seen.setdefault(trace.id, trace)
        return tuple(seen.values())


class CognitiveMechanismsEngine:
    """The eight mechanisms, configured once and scaled by personality at construction.

    ``traits`` are HEXACO values (0..1; `apply_personality`: ``None`` leaves the configuration as
    is). ``rng`` is the only source of chance (involuntary recall); tests pass a seeded
    `random.Random`, and without one a fresh OS-seeded source is used.
    """

    def __init__(
        self,
        config: MechanismsConfig,
        traits: Mapping[str, object] | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self._config = apply_personality(config, traits)
        self._rng = resolve_rng(rng)
        self._centroids = ClusterCentroids()

    @property
    def config(self) -> MechanismsConfig:
        """The configuration in effect (after personality scaling)."""
        return self._config

    @property
    def cluster_centroids(self) -> ClusterCentroids:
        """The centroids schema encoding compares new traces with."""
        return self._centroids

    def set_cluster_centroids(self, centroids: Mapping[str, VectorLike] | ClusterCentroids) -> None:
        """Replace the cluster centroids schema encoding compares new traces with.

        ``centroids`` maps cluster id → centroid embedding (the memory's dimension); an empty
        mapping turns schema encoding off until the next call.
        """
        self._centroids = (
            centroids if isinstance(centroids, ClusterCentroids) else ClusterCentroids(centroids)
        )

    def on_encoding(
        self, trace: MemoryTrace, embedding: VectorLike | Sequence[float], now: float
    ) -> SchemaMatch | None:
        """Schema encoding of a new ``trace`` with its ``embedding``, before it is stored.

        Returns the classification, or ``None`` when nothing changed (disabled, no centroids).
        """
        match = apply_schema_encoding(
            trace, embedding, self._centroids, self._config.schema_encoding
        )
        if match is not None:
            trace.metadata["schema_encoded_at"] = now
        return match

    def on_retrieval(
        self,
        results: Iterable[Candidate],
        candidates: Iterable[Candidate],
        cutoff_score: float | None,
        now: float,
        query_entities: Sequence[str] = (),
    ) -> RetrievalEffects:
        """Retrieval-induced forgetting and feeling of knowing for one query.

        ``results`` are the candidates returned; ``candidates`` all that were scored (results
        included: they are recognised by trace id); ``cutoff_score`` the lowest score returned,
        or ``None`` when nothing was (then every candidate from the FOK threshold up is a near
        miss, with cutoff 1.0). ``query_entities`` are the query's entities, for FOK.
        """
        pool = list(candidates)
        retrieved_ids = {r.trace.id for r in results}
        suppressed = apply_retrieval_induced_forgetting(
            pool, retrieved_ids, self._config.retrieval_induced_forgetting
        )
        signals = detect_feeling_of_knowing(
            pool,
            retrieved_ids,
            1.0 if cutoff_score is None else cutoff_score,
            self._config.metacognitive_fok,
            now,
            query_entities,
        )
        return RetrievalEffects(tuple(suppressed), tuple(signals))

    def on_access(self, trace: MemoryTrace, mood: PAD, now: float) -> Drift | None:
        """Reconsolidation of a recalled ``trace`` toward the current ``mood``."""
        return apply_reconsolidation(trace, mood, self._config.reconsolidation, now)

    def on_prompt_assembly(
        self, candidates: Iterable[MemoryTrace], retrieved_ids: Collection[str], now: float
    ) -> MemoryTrace | None:
        """Involuntary recall at prompt assembly.

        A trace from ``candidates`` (the scope's traces) that surfaces unprompted beside the
        ``retrieved_ids``, or ``None``.
        """
        return select_involuntary_memory(
            candidates, retrieved_ids, self._config.involuntary_recall, self._rng, now
        )

    async def on_consolidation(
        self,
        traces: Sequence[MemoryTrace],
        now: float,
        invoker: ModelInvoker | None = None,
    ) -> ConsolidationEffects:
        """The consolidation mechanisms over ``traces``.

        Temporal gist (asking ``invoker`` when given), source-confidence decay and emotion
        regulation, in that order; the effects name every changed trace.
        """
        gisted = await apply_temporal_gist(traces, self._config.temporal_gist, now, invoker)
        decayed = apply_source_confidence_decay(traces, self._config.source_confidence_decay, now)
        regulation = apply_emotion_regulation(traces, self._config.emotion_regulation, now)
        return ConsolidationEffects(
            tuple(gisted), tuple(decayed), regulation.reappraised, regulation.suppressed
        )
