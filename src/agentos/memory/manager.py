"""`CognitiveMemoryManager`: long-term memory for an agent (spec: Cognitive memory; §1.12).

- `encode()` turns a text into a trace: content features, the mood and the HEXACO traits set its
  initial strength and stability (`agentos.memory.encoding`), its entities and sentiment are
  read without a model, schema encoding adjusts it, and the store keeps it with its embedding.
  A text that contradicts a close memory of the same scope ("actually", "no longer", ...) is
  linked to it by a CONTRADICTS edge for consolidation to resolve.
- `retrieve()` runs the four layers of `agentos.memory.retrieval`.
- `assemble_for_prompt()` retrieves and writes the memory context of a prompt within a token
  budget (`agentos.memory.assembler`): recalled memories, graph associations, reminders,
  observation notes and, now and then, an involuntary recall.
- `observe()` feeds the observer/reflector pipeline (with a model invoker only): notes, then
  reflected memories encoded in the observing scope and prospective reminders.
- `run_consolidation()` runs a consolidation cycle on demand; `start()` runs one every interval
  (an hour by default) and `shutdown()` stops it and closes the store the manager made (a
  store passed in `CognitiveMemoryConfig` is the caller's: it outlives the manager and stays
  open, so an agent closed and used again, or a second agent, can build a memory over it).

Every call of one manager may come from a different session: recall reads only the scopes a
call names, and the observer keeps one buffer per scope, so no session hears another's notes.
A scope is a kind and an id (`agentos.memory.scope`, DESIGN.md §5.17): ``(USER, "ada")`` and
``(THREAD, "ada")`` are different scopes, and `RetrievalOptions` refuses an id without its kind.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.llm.embedding import calibration_of
from agentos.memory.assembler import AssembledMemoryContext, MemorySections, Recalled
from agentos.memory.assembler import assemble_memory_context as _assemble
from agentos.memory.config import CognitiveMemoryConfig, RetrievalOptions
from agentos.memory.consolidation import ConsolidationPipeline, ConsolidationResult
from agentos.memory.consolidation_loop import ConsolidationLoop
from agentos.memory.edge import EdgeType, MemoryEdge
from agentos.memory.encoding import compute_encoding, detect_features
from agentos.memory.entities import extract_entities
from agentos.memory.graph import MemoryGraph
from agentos.memory.graph_factory import create_memory_graph
from agentos.memory.hyde import MemoryHydeRetriever
from agentos.memory.in_memory_store import InMemoryMemoryStore
from agentos.memory.mechanisms import CognitiveMechanismsEngine, resolve_mechanisms_config
from agentos.memory.observer import MemoryObserver
from agentos.memory.prospective import ProspectiveItem, prospective_items_from_notes
from agentos.memory.reflector import MemoryReflector
from agentos.memory.retrieval import RetrievalResult, Retriever, trace_filter
from agentos.memory.store import MemoryStore, TraceFilter
from agentos.memory.trace import (
    DAY,
    PAD,
    MemoryScope,
    MemoryTrace,
    MemoryType,
    Provenance,
    SourceType,
    new_trace_id,
)
from agentos.nlp import lexicon_sentiment

__all__ = ["CONTRADICTION_SIMILARITY", "CognitiveMemoryManager"]

# The scopes one prompt recalls from: its observer's buffer, notes and reminders are kept per key.
_RecallKey = tuple[tuple[MemoryScope, str], ...]
CONTRADICTION_SIMILARITY = 0.6
"""The calibrated similarity above which a contradicting text is linked to a memory."""
_ASSOCIATION_SEEDS = 3
_ASSOCIATIONS = 5
_INVOLUNTARY_POOL = 200


class CognitiveMemoryManager:
    """Encodes, recalls, observes and consolidates one agent's memories."""

    def __init__(self, config: CognitiveMemoryConfig) -> None:
        self.config = config
        self.store: MemoryStore = config.store or InMemoryMemoryStore()
        self._owns_store = config.store is None
        self.clock = config.clock
        self.rng = config.rng or random.Random()
        mechanisms = resolve_mechanisms_config(config.mechanisms)
        self.engine = (
            CognitiveMechanismsEngine(mechanisms, config.traits, self.rng)
            if mechanisms is not None
            else None
        )
        self.graph: MemoryGraph | None = (
            None if config.graph.disabled else create_memory_graph(config.graph)
        )
        self.hyde = MemoryHydeRetriever(config.invoker) if config.invoker is not None else None
        self.retriever = Retriever(
            store=self.store,
            embedder=config.embedder,
            clock=self.clock,
            graph=self.graph,
            graph_config=config.graph,
            engine=self.engine,
            hyde=self.hyde,
            reranker=config.reranker,
            weights=config.scoring_weights,
            policy=config.policy,
        )
        self.pipeline = ConsolidationPipeline(
            self.store,
            self.graph,
            engine=self.engine,
            invoker=config.invoker,
            traits=config.traits,
            config=config.consolidation,
            clock=self.clock,
            embed=self._embed_passage,
            decay=config.decay,
        )
        self._loop: ConsolidationLoop | None = None
        self._observers: dict[_RecallKey, tuple[MemoryObserver, MemoryReflector]] = {}
        self._prospective: dict[_RecallKey, list[ProspectiveItem]] = {}
        self._notes: dict[_RecallKey, list[str]] = {}
        self._loaded = False
        self._closed = False

    # -- lifecycle --------------------------------------------------------------------------

    async def initialize(self) -> None:
        """Load the graph's edges from the store (a memory reopened over a durable store)."""
        if not self._loaded:
            self._loaded = True
            if self.graph is not None:
                self.graph.load(await self.store.load_edges())

    def start(self) -> None:
        """Run a consolidation cycle every interval (unless consolidation is disabled)."""
        if self.config.consolidation.enabled and self._loop is None:
            self._loop = ConsolidationLoop(
                self.pipeline, self.clock, self.config.consolidation.interval
            )
            self._loop.start()

    @property
    def consolidation_interval(self) -> float | None:
        """The seconds between consolidation cycles while `start()`'s loop runs, else ``None``."""
        return self._loop.interval if self._loop is not None and not self._closed else None

    async def shutdown(self) -> None:
        """Stop the consolidation loop and close the store it made, not a passed one."""
        if self._closed:
            return
        self._closed = True
        if self._loop is not None:
            await self._loop.stop()
        if self._owns_store:
            await self.store.close()

    def _check_open(self) -> None:
        if self._closed:
            raise GMIError("the cognitive memory is shut down", GMIErrorCode.NOT_INITIALIZED)

    async def _embed_passage(self, text: str) -> list[float]:
        [vector] = await self.config.embedder.embed([text])
        return vector

    # -- encoding ---------------------------------------------------------------------------

    async def encode(
        self,
        content: str,
        *,
        pad: PAD | None = None,
        gmi_mood: str | None = None,
        type: MemoryType = MemoryType.EPISODIC,
        scope: MemoryScope = MemoryScope.USER,
        scope_id: str | None = None,
        source_type: SourceType = SourceType.USER_STATEMENT,
        content_sentiment: float | None = None,
        tags: Iterable[str] = (),
        entities: Iterable[str] | None = None,
        confidence: float = 0.8,
    ) -> MemoryTrace:
        """Encode ``content`` as a new trace and store it (see the module doc)."""
        self._check_open()
        await self.initialize()
        if not content.strip():
            raise ValueError("encode() needs some content")
        now = self.clock.timestamp()
        mood = pad or PAD()
        features = detect_features(content)
        sentiment = (
            content_sentiment
            if content_sentiment is not None
            else max(-1.0, min(1.0, lexicon_sentiment(content).score))
        )
        encoded = compute_encoding(
            mood,
            self.config.traits,
            features,
            content_sentiment=sentiment,
            gmi_mood=gmi_mood,
            config=self.config.encoding,
        )
        trace = MemoryTrace(
            id=new_trace_id(),
            type=type,
            scope=scope,
            scope_id=scope_id or self.config.agent_id,
            content=content,
            created_at=now,
            encoding_strength=encoded.strength,
            stability=encoded.stability,
            emotional_context=encoded.emotional_context,
            provenance=Provenance(
                source_type=source_type, source_timestamp=now, confidence=confidence
            ),
            entities=list(entities) if entities is not None else extract_entities(content),
            tags=list(dict.fromkeys(tags)),
            importance=encoded.importance,
            reinforcement_interval=3600.0,
            next_reinforcement_at=now + 3600.0,
            metadata={"flashbulb": True} if encoded.flashbulb else {},
        )
        await self._file(trace, features.has_contradiction, now)
        return trace

    async def _file(self, trace: MemoryTrace, check_contradiction: bool, now: float) -> None:
        """Embed and store a new trace, linking it to the memory it contradicts (if any)."""
        vector = await self._embed_passage(trace.content)
        if self.engine is not None:
            self.engine.on_encoding(trace, vector, now)
        contradicted = await self._contradicted(trace, vector) if check_contradiction else None
        await self.store.add(trace, vector)
        if self.graph is not None:
            self.graph.add_node(trace.id)
            if contradicted is not None:
                edge = MemoryEdge(trace.id, contradicted, EdgeType.CONTRADICTS, 1.0, now)
                await self.store.save_edges(self.graph.upsert_edge(edge))

    async def _contradicted(self, trace: MemoryTrace, vector: Sequence[float]) -> str | None:
        hits = await self.store.search(
            vector, 1, TraceFilter(scopes=[(trace.scope, trace.scope_id)])
        )
        calibration = calibration_of(self.config.embedder)
        if hits and calibration.apply(hits[0].similarity) >= CONTRADICTION_SIMILARITY:
            return hits[0].trace.id
        return None

    # -- recall -----------------------------------------------------------------------------

    async def retrieve(
        self, query: str, *, pad: PAD | None = None, options: RetrievalOptions | None = None
    ) -> RetrievalResult:
        """The memories for ``query``, best first (`agentos.memory.retrieval`)."""
        self._check_open()
        await self.initialize()
        return await self.retriever.retrieve(query, options or RetrievalOptions(), pad)

    async def assemble_for_prompt(
        self,
        query: str,
        token_budget: int | None = None,
        *,
        pad: PAD | None = None,
        options: RetrievalOptions | None = None,
    ) -> AssembledMemoryContext:
        """The memory context of a prompt for ``query``, within ``token_budget`` tokens."""
        self._check_open()
        budget = token_budget or self.config.prompt_token_budget
        options = options or RetrievalOptions()
        now = self.clock.timestamp()
        if not query.strip():
            return _assemble(MemorySections(), budget, now=now, traits=self.config.traits)
        result = await self.retrieve(query, pad=pad, options=options)
        retrieved_ids = {s.trace.id for s in result.retrieved}
        where = trace_filter(options)
        associations = await self._associations(result, where, retrieved_ids)
        involuntary = await self._involuntary(where, retrieved_ids, now)
        key = _scope_key(options)
        sections = MemorySections(
            recalled=[Recalled(s.trace, s.score) for s in result.retrieved],
            prospective_alerts=[item.content for item in self._prospective.get(key, [])],
            graph_associations=associations,
            observation_notes=self._notes.get(key, [])[-5:],
            involuntary=involuntary,
        )
        return _assemble(sections, budget, now=now, traits=self.config.traits)

    async def _associations(
        self, result: RetrievalResult, where: TraceFilter, retrieved: set[str]
    ) -> list[str]:
        if self.graph is None or not result.retrieved:
            return []
        seeds = [s.trace.id for s in result.retrieved[:_ASSOCIATION_SEEDS]]
        config = replace(self.config.graph, max_results=_ASSOCIATIONS + len(retrieved))
        nodes = [n for n in self.graph.spreading_activation(seeds, config) if n.id not in retrieved]
        traces = {t.id: t for t in await self.store.get([n.id for n in nodes]) if where.matches(t)}
        return [
            f"[associated, activation={n.activation:.2f}] {traces[n.id].content[:150]}"
            for n in nodes
            if n.id in traces
        ][:_ASSOCIATIONS]

    async def _involuntary(
        self, where: TraceFilter, retrieved: set[str], now: float
    ) -> MemoryTrace | None:
        if self.engine is None or not self.engine.config.involuntary_recall.enabled:
            return None
        min_age = self.engine.config.involuntary_recall.min_age_days * DAY
        pool = await self.store.list_traces(
            replace(where, created_before=now - min_age), limit=_INVOLUNTARY_POOL
        )
        return self.engine.on_prompt_assembly(pool, retrieved, now)

    # -- observation ------------------------------------------------------------------------

    async def observe(
        self,
        role: str,
        content: str,
        *,
        pad: PAD | None = None,
        scope: MemoryScope = MemoryScope.USER,
        scope_id: str | None = None,
        recall_scopes: Sequence[tuple[MemoryScope, str]] | None = None,
    ) -> list[MemoryTrace]:
        """Feed the observer; returns the traces reflection encoded (none without an invoker).

        The notes and reminders are kept for the prompts of ``recall_scopes`` (default: the
        observing scope); reflected memories are encoded in ``scope`` / ``scope_id``.
        """
        self._check_open()
        invoker = self.config.invoker
        if invoker is None or not content.strip():
            return []
        scope_id = scope_id or self.config.agent_id
        key: _RecallKey = tuple(recall_scopes or [(scope, scope_id)])
        now = self.clock.timestamp()
        if key not in self._observers:
            self._observers[key] = (
                MemoryObserver(invoker, self.config.traits, self.config.observer),
                MemoryReflector(invoker, self.config.traits, self.config.reflector),
            )
        observer, reflector = self._observers[key]
        notes = await observer.observe(role, content, pad, now)
        if not notes:
            return []
        self._notes.setdefault(key, []).extend(note.content for note in notes)
        self._prospective.setdefault(key, []).extend(prospective_items_from_notes(notes, now))
        if not reflector.add_notes(notes):
            return []
        existing = await self.store.list_traces(TraceFilter(scopes=list(key)), limit=50)
        reflection = await reflector.reflect(now, existing)
        encoded = [
            await self.encode(
                memory.content,
                pad=pad,
                type=memory.type,
                scope=scope,
                scope_id=scope_id,
                source_type=memory.source_type,
                tags=memory.tags,
                entities=memory.entities,
                confidence=memory.confidence,
            )
            for memory in reflection.memories
        ]
        superseded = [t for t in existing if t.id in set(reflection.superseded_trace_ids)]
        for trace in superseded:
            trace.is_active = False
        if superseded:
            await self.store.update(superseded)
        return encoded

    # -- consolidation ----------------------------------------------------------------------

    async def run_consolidation(self) -> ConsolidationResult:
        """Run one consolidation cycle now."""
        self._check_open()
        await self.initialize()
        if self._loop is not None:
            return await self._loop.run_now()
        return await self.pipeline.run()

    async def health(self) -> dict[str, Any]:
        """Counts for monitoring: active traces, edges, whether consolidation runs."""
        return {
            "active_traces": await self.store.count(TraceFilter()),
            "edges": len(self.graph.edges()) if self.graph is not None else 0,
            "consolidation_running": self._loop is not None,
            "mechanisms": self.engine is not None,
        }


def _scope_key(options: RetrievalOptions) -> _RecallKey:
    return tuple(options.scopes or ())
