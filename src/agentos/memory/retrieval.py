"""`Retriever`: `CognitiveMemoryManager.retrieve()` in the spec's four layers (spec: Retrieval).

1. **HyDE** (opt in, or a policy with ``hyde: 'always'``; only with a model invoker): the search
   embeds a hypothetical memory instead of the query.
2. **Composite score**: the store's ``2 * top_k`` nearest traces within the filter, their cosine
   calibrated for the embedder (`agentos.llm.embedding.calibration_of`), scored on similarity,
   strength, emotional congruence with the mood, recency, graph activation and importance.
3. **Spreading activation** (unless the graph is disabled): the top 5 seed the memory graph;
   every activated trace that passes the same filter is scored with its activation, the ones the
   vector search did not return included (DESIGN.md §5.6: the reference only rescored those it
   already had), and the ranking is redone. The top 5 then link more strongly (Hebbian
   co-activation), and the new weights are stored.
4. **Reranking** (with a reranker): 0.7 cognitive, 0.3 reranker.

Then the mechanisms see the query (retrieval-induced forgetting weakens the near misses;
feeling-of-knowing signals are returned), and the top 5 are recalled: each one's spaced
repetition is updated (`update_on_retrieval`) and reconsolidation drifts it toward the mood.
Every trace changed on the way is persisted with one `MemoryStore.update()`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from agentos.core.clock import Clock
from agentos.llm.embedding import Embedder, calibration_of
from agentos.memory.config import Reranker, RetrievalOptions, RetrievalPolicy
from agentos.memory.decay import update_on_retrieval
from agentos.memory.entities import extract_entities
from agentos.memory.graph import GraphConfig, MemoryGraph
from agentos.memory.hyde import MemoryHydeRetriever
from agentos.memory.mechanisms import CognitiveMechanismsEngine, FeelingOfKnowing
from agentos.memory.scoring import (
    Candidate,
    PartialRetrieval,
    ScoredTrace,
    ScoringWeights,
    blend_reranker,
    detect_partially_retrieved,
    score_candidates,
)
from agentos.memory.store import MemoryStore, TraceFilter, Vector
from agentos.memory.trace import PAD, MemoryTrace

__all__ = [
    "RECALLED_TOP",
    "RetrievalDiagnostics",
    "RetrievalResult",
    "Retriever",
    "embed_query",
    "trace_filter",
]

RECALLED_TOP = 5
"""How many of the top results seed spreading activation, link together and count as recalled."""


@dataclass(frozen=True, slots=True)
class RetrievalDiagnostics:
    """How a retrieval went: what each layer found and how long it took."""

    vector_hits: int = 0
    graph_activated: int = 0
    graph_added: int = 0
    hyde_used: bool = False
    reranked: bool = False
    suppressed: int = 0
    duration: float = 0.0


@dataclass(frozen=True, slots=True)
class RetrievalResult:
    """The retrieved memories (best first), near misses and how the retrieval went."""

    retrieved: list[ScoredTrace] = field(default_factory=list)
    partially_retrieved: list[PartialRetrieval] = field(default_factory=list)
    feeling_of_knowing: list[FeelingOfKnowing] = field(default_factory=list)
    diagnostics: RetrievalDiagnostics = field(default_factory=RetrievalDiagnostics)


def trace_filter(options: RetrievalOptions) -> TraceFilter:
    """The store filter a retrieval's options describe."""
    after, before = options.time_range or (None, None)
    return TraceFilter(
        scopes=options.scopes,
        types=options.types,
        tags=options.tags,
        min_confidence=options.min_confidence,
        created_after=after,
        created_before=before,
    )


async def embed_query(embedder: Embedder, text: str) -> list[float]:
    """A search vector: the embedder's ``embed_query`` when it has one (E5's ``query:``)."""
    query = getattr(embedder, "embed_query", None)
    if query is not None:
        vector: list[float] = await query(text)
        return vector
    [vector] = await embedder.embed([text])
    return vector


@dataclass(slots=True)
class Retriever:
    """The parts a retrieval reads and changes."""

    store: MemoryStore
    embedder: Embedder
    clock: Clock
    graph: MemoryGraph | None = None
    graph_config: GraphConfig = field(default_factory=GraphConfig)
    engine: CognitiveMechanismsEngine | None = None
    hyde: MemoryHydeRetriever | None = None
    reranker: Reranker | None = None
    weights: ScoringWeights = field(default_factory=ScoringWeights)
    policy: RetrievalPolicy = field(default_factory=RetrievalPolicy)

    def _wants_hyde(self, options: RetrievalOptions) -> bool:
        if self.hyde is None:
            return False
        if options.hyde is not None:
            return options.hyde
        return (options.policy or self.policy).hyde == "always"

    async def retrieve(
        self, query: str, options: RetrievalOptions, mood: PAD | None = None
    ) -> RetrievalResult:
        """The memories for ``query`` (see the module doc)."""
        started = time.perf_counter()
        now = self.clock.timestamp()
        search_text = query
        hyde_used = False
        if self._wants_hyde(options):
            assert self.hyde is not None
            search_text = await self.hyde.search_text(query)
            hyde_used = search_text != query
        vector = await embed_query(self.embedder, search_text)
        where = trace_filter(options)
        calibration = calibration_of(self.embedder)
        hits = await self.store.search(vector, 2 * options.top_k, where)
        candidates = [Candidate(h.trace, calibration.apply(h.similarity)) for h in hits]
        weights = self.weights.merged(options.scoring_weights)
        scored = score_candidates(
            candidates, now=now, mood=mood, weights=weights, neutral_mood=options.neutral_mood
        )
        partial = detect_partially_retrieved(
            candidates, now=now, mood=mood, neutral_mood=options.neutral_mood
        )
        activated, added = 0, 0
        if self.graph is not None and scored:
            scored, activated, added = await self._spread(
                scored, vector, where, now, mood, weights, options
            )
        top, reranked = await self._rerank(query, scored[: options.top_k])
        signals, suppressed = await self._recall(query, top, scored, now, mood)
        return RetrievalResult(
            retrieved=top,
            partially_retrieved=partial,
            feeling_of_knowing=signals,
            diagnostics=RetrievalDiagnostics(
                vector_hits=len(hits),
                graph_activated=activated,
                graph_added=added,
                hyde_used=hyde_used,
                reranked=reranked,
                suppressed=suppressed,
                duration=time.perf_counter() - started,
            ),
        )

    async def _rerank(self, query: str, top: list[ScoredTrace]) -> tuple[list[ScoredTrace], bool]:
        """``top`` blended with the reranker's opinions, and whether a reranker ran."""
        if self.reranker is None or not top:
            return top, False
        opinions = await self.reranker(query, [s.trace.content for s in top])
        blended = blend_reranker(top, dict(zip((s.trace.id for s in top), opinions, strict=True)))
        return blended, True

    async def _recall(
        self,
        query: str,
        top: list[ScoredTrace],
        scored: list[ScoredTrace],
        now: float,
        mood: PAD | None,
    ) -> tuple[list[FeelingOfKnowing], int]:
        """Apply and store what recalling ``top`` changes; the signals and the suppressed count.

        The engine's retrieval effects, the reinforcement of the recalled traces and their
        co-activation (Hebbian) links.
        """
        changed: dict[str, MemoryTrace] = {}
        signals: list[FeelingOfKnowing] = []
        if self.engine is not None:
            effects = self.engine.on_retrieval(
                top,
                scored,
                top[-1].score if top else None,
                now,
                extract_entities(query),
            )
            changed.update((t.id, t) for t in effects.suppressed)
            signals = list(effects.signals)
        recalled = top[:RECALLED_TOP]
        for item in recalled:
            update_on_retrieval(item.trace, now)
            if self.engine is not None:
                self.engine.on_access(item.trace, mood or PAD(), now)
            changed[item.trace.id] = item.trace
        if self.graph is not None and len(recalled) > 1:
            edges = self.graph.record_co_activation(
                [s.trace.id for s in recalled], self.graph_config.hebbian_learning_rate, now
            )
            if edges:
                await self.store.save_edges(edges)
        if changed:
            await self.store.update(changed.values())
        return signals, len(changed) - len(recalled)

    async def _spread(
        self,
        scored: list[ScoredTrace],
        vector: list[float] | Vector,
        where: TraceFilter,
        now: float,
        mood: PAD | None,
        weights: ScoringWeights,
        options: RetrievalOptions,
    ) -> tuple[list[ScoredTrace], int, int]:
        assert self.graph is not None
        seeds = [s.trace.id for s in scored[:RECALLED_TOP]]
        activated = self.graph.spreading_activation(seeds, self.graph_config)
        if not activated:
            return scored, 0, 0
        activation = {node.id: node.activation for node in activated}
        known = {s.trace.id for s in scored}
        missing = [node_id for node_id in activation if node_id not in known]
        # An activated trace outside the retrieval's scopes or filters is never recalled: the
        # graph may link memories of different users through what they share.
        extra = [t for t in await self.store.get(missing) if where.matches(t)] if missing else []
        similarity = await self.store.similarities(vector, [t.id for t in extra]) if extra else {}
        calibration = calibration_of(self.embedder)
        # Only the activated change score: the others keep theirs (scoring is the hot path).
        candidates = [
            Candidate(s.trace, s.vector_similarity, activation[s.trace.id])
            for s in scored
            if s.trace.id in activation
        ]
        candidates += [
            Candidate(t, calibration.apply(similarity.get(t.id, 0.0)), activation[t.id])
            for t in extra
        ]
        rescored = score_candidates(
            candidates, now=now, mood=mood, weights=weights, neutral_mood=options.neutral_mood
        )
        kept = [s for s in scored if s.trace.id not in activation]
        merged = sorted([*kept, *rescored], key=lambda s: s.score, reverse=True)
        return merged, len(activated), len(extra)
