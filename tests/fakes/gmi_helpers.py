"""Shared helpers for GMI tests: a persona, a GMI on a scripted model, a turn runner, fakes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentos.llm.budget import BudgetLike
from agentos.llm.gateway import GatewayProviderManager
from agentos.llm.model import ChatModel
from agentos.nlp import SentimentResult, TokenScore, polarity_of
from agentos.persona import PersonaDefinition
from agentos.substrate import (
    GMI,
    GMIConfig,
    GMIMood,
    GMIOutput,
    GMIOutputChunk,
    GMIState,
    GMITurnInput,
    IngestedDocument,
    PADState,
    RagRetrievalOptions,
    RetrievalResult,
    RetrievedChunk,
    TurnExchange,
)


def persona(**extra: Any) -> PersonaDefinition:
    """A minimal valid persona ``p1``; keyword arguments set more fields."""
    return PersonaDefinition(id="p1", name="P", base_system_prompt="You are P.", **extra)


async def make_gmi(model: ChatModel, **config: Any) -> GMI:
    """A READY GMI ``g1`` on ``model``; ``persona=`` picks its persona, the rest is GMIConfig."""
    gmi = GMI("g1")
    chosen = config.pop("persona", None) or persona()
    await gmi.initialize(chosen, GMIConfig(model=model, **config))
    return gmi


def turn(text: str = "hi", turn_id: str = "t1", **fields: Any) -> GMITurnInput:
    """A text turn of user ``u1``; ``options=`` and the other GMITurnInput fields pass through."""
    return GMITurnInput(interaction_id=turn_id, user_id="u1", content=text, **fields)


async def run(gmi: GMI, turn_input: GMITurnInput) -> tuple[list[GMIOutputChunk], GMIOutput]:
    """Run one turn to its end: its chunks and its output."""
    stream = gmi.process_turn_stream(turn_input)
    chunks = [chunk async for chunk in stream]
    return chunks, await stream.output()


def sentiment(score: float, intensity: float | None = None, negatives: int = 0) -> SentimentResult:
    """A sentiment result with ``score`` (polarity from it) and ``negatives`` negative tokens."""
    return SentimentResult(
        score=score,
        polarity=polarity_of(score),
        comparative=score,
        intensity=abs(score) if intensity is None else intensity,
        negative_tokens=tuple(TokenScore(f"bad{i}", -1.0) for i in range(negatives)),
    )


@dataclass
class FakeUtility:
    """A utility AI answering the scripted results in order; records the languages asked for."""

    results: list[SentimentResult]
    languages: list[str | None] = field(default_factory=list)

    async def analyze_sentiment(self, text: str, *, language: str | None = None) -> SentimentResult:
        self.languages.append(language)
        return self.results.pop(0)


@dataclass
class FakeAugmentor:
    """A retrieval augmentor that returns ``chunks`` and records every call."""

    chunks: Sequence[RetrievedChunk] = ()
    context: str = ""
    fail: bool = False
    queries: list[tuple[str, RagRetrievalOptions]] = field(default_factory=list)
    ingested: list[IngestedDocument] = field(default_factory=list)

    async def retrieve_context(self, query: str, options: RagRetrievalOptions) -> RetrievalResult:
        self.queries.append((query, options))
        if self.fail:
            raise RuntimeError("index offline")
        return RetrievalResult(self.chunks, self.context)

    async def ingest_documents(self, documents: Sequence[IngestedDocument]) -> None:
        self.ingested.extend(documents)


@dataclass
class FakeBridge:
    """A memory bridge that answers ``context`` and records what it was asked and told."""

    context: str | None = None
    fail: bool = False
    asked: list[tuple[str, GMIMood, PADState, int]] = field(default_factory=list)
    synced: list[TurnExchange] = field(default_factory=list)

    async def assemble_context(
        self, query: str, *, mood: GMIMood, pad: PADState, token_budget: int
    ) -> str | None:
        self.asked.append((query, mood, pad, token_budget))
        if self.fail:
            raise RuntimeError("memory offline")
        return self.context

    async def sync_for_turn(self, exchange: TurnExchange) -> None:
        self.synced.append(exchange)


@dataclass
class FakeTracker:
    """A sentiment tracker that records the texts it scored (and can set the mood)."""

    scored: list[tuple[str, str]] = field(default_factory=list)
    set_mood: GMIMood | None = None
    forgotten: list[str] = field(default_factory=list)

    async def analyze_turn_sentiment(self, state: GMIState, turn_id: str, text: str) -> None:
        self.scored.append((turn_id, text))
        if self.set_mood is not None:
            state.mood = self.set_mood

    async def forget_turns(self, state: GMIState, turn_ids: Iterable[str]) -> None:
        self.forgotten.extend(turn_ids)


@dataclass
class FakeMetaprompts:
    """A metaprompt runner that records the turns it was asked about."""

    checked: list[str] = field(default_factory=list)

    closed: bool = False

    async def check_and_trigger(
        self,
        state: GMIState,
        turn_id: str,
        *,
        provider_manager: GatewayProviderManager,
        budget: BudgetLike | None = None,
    ) -> None:
        self.checked.append(turn_id)

    async def wait_idle(self) -> None:
        return None

    async def aclose(self) -> None:
        self.closed = True
