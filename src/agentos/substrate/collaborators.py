"""The optional collaborators a GMI calls during a turn (spec: What a turn does, What a GMI holds).

Each is a small protocol, so a host (or a later layer of agentos) plugs in its own:

- `TurnSentimentTracker`: step 1, scores the user's message before the first model call when the
  persona enables ``sentiment_tracking``;
- `RetrievalAugmentor`: step 2, retrieval for the turn's first model call (the GMI emits
  RAG_SOURCES_AVAILABLE with what it returns), and step 7, turn-summary ingestion;
- `MemoryBridge`: step 3, memory context for the turn's first model call, and step 7, encoding
  the exchange with the GMI's mood;
- `MetapromptRunner`: step 7, the metaprompt trigger check that ends a turn.

The sentiment tracker and the metaprompt runner receive the GMI's state (`GMIState`: persona,
mood, contexts, working memory, history, events, trace) and what else they need as arguments,
never the `GMI` itself, so a host's own implementation can do all that the built-in
`SentimentTracker` and `MetapromptExecutor` do.

A collaborator that raises never fails the turn: the GMI records a WARNING in its reasoning trace
and goes on without what the step would have added.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from agentos.substrate.mood import GMIMood, PADState

if TYPE_CHECKING:
    from agentos.llm.budget import BudgetLike
    from agentos.llm.gateway import GatewayProviderManager
    from agentos.substrate.state import GMIState

__all__ = [
    "IngestedDocument",
    "MemoryBridge",
    "MetapromptRunner",
    "RetrievalAugmentor",
    "RagRetrievalOptions",
    "RetrievalResult",
    "RetrievedChunk",
    "TurnExchange",
    "TurnSentimentTracker",
]


@dataclass(frozen=True, slots=True)
class RetrievedChunk:
    """One retrieved passage: the RAG source a turn reports."""

    id: str
    content: str
    data_source_id: str | None = None
    score: float | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RagRetrievalOptions:
    """What the GMI asks a retrieval for (from the persona's ``rag_config``).

    ``top_k`` is ``default_retrieval_top_k`` or 5; ``target_data_source_ids`` the enabled data
    sources (empty: the augmentor's own default); ``strategy`` ``similarity``, ``mmr`` or
    ``hybrid`` (the persona's ``hybrid_search``).
    """

    top_k: int = 5
    target_data_source_ids: tuple[str, ...] = ()
    strategy: str = "similarity"


@dataclass(frozen=True, slots=True)
class RetrievalResult:
    """What a retrieval found: its passages, and the text the prompt carries."""

    chunks: Sequence[RetrievedChunk] = ()
    augmented_context: str = ""


@dataclass(frozen=True, slots=True)
class IngestedDocument:
    """A document the GMI hands a retrieval augmentor (a turn summary)."""

    id: str
    content: str
    data_source_id: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class RetrievalAugmentor(Protocol):
    """Retrieval over document corpora, and ingestion of turn summaries."""

    async def retrieve_context(self, query: str, options: RagRetrievalOptions) -> RetrievalResult:
        """The passages relevant to ``query``."""
        ...

    async def ingest_documents(self, documents: Sequence[IngestedDocument]) -> None:
        """Add ``documents`` to the corpora."""
        ...


@dataclass(frozen=True, slots=True)
class TurnExchange:
    """A finished turn as the memory bridge encodes it."""

    turn_id: str
    user_id: str
    session_id: str | None
    user_text: str | None
    response_text: str | None
    mood: GMIMood
    pad: PADState


@runtime_checkable
class MemoryBridge(Protocol):
    """Connects a GMI to its cognitive memory (spec: CognitiveMemoryBridge)."""

    async def assemble_context(
        self, query: str, *, mood: GMIMood, pad: PADState, token_budget: int
    ) -> str | None:
        """Memory context for a user turn's prompt, within ``token_budget`` tokens."""
        ...

    async def sync_for_turn(self, exchange: TurnExchange) -> None:
        """Encode a finished exchange."""
        ...


@runtime_checkable
class TurnSentimentTracker(Protocol):
    """Scores a user turn and raises the events its scores call for."""

    async def analyze_turn_sentiment(self, state: GMIState, turn_id: str, text: str) -> None:
        """Score ``text``, the user message of turn ``turn_id``; may change ``state``."""
        ...

    async def forget_turns(self, state: GMIState, turn_ids: Iterable[str]) -> None:
        """Drop the context kept about ``turn_ids`` (a history replace or clear dropped them)."""
        ...


@runtime_checkable
class MetapromptRunner(Protocol):
    """Checks the metaprompt triggers at the end of a turn and runs those that fire."""

    async def check_and_trigger(
        self,
        state: GMIState,
        turn_id: str,
        *,
        provider_manager: GatewayProviderManager,
        budget: BudgetLike | None = None,
    ) -> None:
        """Start the metaprompts whose triggers fire after turn ``turn_id``.

        ``provider_manager`` answers from the hop that served the turn (a metaprompt calls no
        other model); ``budget`` is the spend budget its calls are checked against and recorded
        in. A metaprompt may change ``state`` (its mood through `GMIState.set_mood()`).
        """
        ...

    async def wait_idle(self) -> None:
        """Wait for the metaprompts still running."""
        ...

    async def aclose(self) -> None:
        """Stop the metaprompts still running (the GMI is shutting down)."""
        ...
