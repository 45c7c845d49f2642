"""What a user turn does around its model steps (spec: What a turn does, steps 1-3 and 7).

Before the first model call: sentiment (step 1), retrieval (step 2) and memory context (step 3).
After the last: the memory bridge encodes the exchange, a persona with turn-summary ingestion
hands it to the retrieval augmentor, and the metaprompt triggers are checked (step 7). Each step
calls an optional collaborator (`agentos.substrate.collaborators`); one that raises is recorded as a
WARNING in the reasoning trace and the turn goes on without it. Each phase receives the GMI's
state (`GMIState`) and its services (`GMIServices`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from agentos.core.messages import Role
from agentos.substrate.collaborators import RetrievedChunk, TurnExchange, TurnSentimentTracker
from agentos.substrate.retrieval import (
    join_retrieved_context,
    rag_config,
    retrieval_options,
    should_ingest_turn_summary,
    should_trigger_rag_retrieval,
    turn_summary_document,
)
from agentos.substrate.services import GMIServices
from agentos.substrate.state import GMIState
from agentos.substrate.trace import ReasoningEntryType
from agentos.substrate.turn_input import GMITurnInput

__all__ = [
    "TurnContext",
    "after_turn",
    "before_first_call",
    "scrub_dropped_turns",
    "user_text",
]


@dataclass(slots=True)
class TurnContext:
    """What steps 2 and 3 found for a user turn's prompt."""

    retrieved_context: str | None = None
    rag_sources: list[RetrievedChunk] = field(default_factory=list)


def _warn(state: GMIState, turn_id: str, step: str, exc: BaseException) -> None:
    state.record(
        ReasoningEntryType.WARNING,
        f"{step} failed: {exc}",
        {"step": step, "error": type(exc).__name__},
        turn_id,
    )


def user_text(turn_input: GMITurnInput) -> str:
    """The text of a turn's user input (the text parts of a multimodal one)."""
    content = turn_input.content
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(getattr(part, "text", "") for part in content)


async def _guarded(
    state: GMIState, turn_id: str, step: str, call: Callable[[], Awaitable[Any]]
) -> tuple[bool, Any]:
    try:
        return True, await call()
    except Exception as exc:
        _warn(state, turn_id, step, exc)
        return False, None


async def scrub_dropped_turns(state: GMIState, tracker: TurnSentimentTracker | None) -> None:
    """Have ``tracker`` forget what it keeps about the turns a history replace or clear dropped."""
    ids = state.take_dropped_turns()
    if ids and tracker is not None:
        await tracker.forget_turns(state, ids)


async def before_first_call(
    state: GMIState,
    services: GMIServices,
    turn_input: GMITurnInput,
    turn_id: str,
    on_sources: Callable[[list[RetrievedChunk]], Awaitable[None]],
) -> TurnContext:
    """Steps 1-3 for a user turn: sentiment, retrieval (``on_sources`` told), memory context."""
    config = services.config
    persona = state.persona
    messages = state.history.messages()
    user_initiated = bool(messages) and messages[-1].role is Role.USER
    text = user_text(turn_input) if user_initiated else ""
    tracker = services.sentiment_tracker
    await scrub_dropped_turns(state, tracker)  # the sentiment part of a replace finishes first
    tracking = persona.sentiment_tracking
    if tracker is not None and tracking is not None and tracking.enabled and user_initiated:
        await _guarded(
            state,
            turn_id,
            "sentiment",
            lambda: tracker.analyze_turn_sentiment(state, turn_id, text),
        )
    found = TurnContext()
    if not user_initiated:
        return found
    rag_text = await _retrieve(state, services, turn_id, text, found, on_sources)
    memory_text: str | None = None
    bridge = config.memory_bridge
    if bridge is not None:
        _, memory_text = await _guarded(
            state,
            turn_id,
            "memory context",
            lambda: bridge.assemble_context(
                text,
                mood=state.mood,
                pad=state.pad,
                token_budget=config.memory_context_token_budget,
            ),
        )
    found.retrieved_context = join_retrieved_context(
        memory_text, rag_text, turn_input.options.long_term_memory_context
    )
    return found


async def _retrieve(
    state: GMIState,
    services: GMIServices,
    turn_id: str,
    text: str,
    found: TurnContext,
    on_sources: Callable[[list[RetrievedChunk]], Awaitable[None]],
) -> str | None:
    """Step 2: the RAG context for ``text`` (its sources put in ``found`` and announced)."""
    augmentor = services.config.retrieval_augmentor
    rag = rag_config(state.persona)
    if augmentor is None or rag is None or not should_trigger_rag_retrieval(rag, text):
        return None
    state.record(ReasoningEntryType.RAG_QUERY_START, "retrieving context", None, turn_id)
    ok, result = await _guarded(
        state,
        turn_id,
        "retrieval",
        lambda: augmentor.retrieve_context(text, retrieval_options(rag)),
    )
    if not ok:
        return None
    found.rag_sources = list(result.chunks)
    state.record(
        ReasoningEntryType.RAG_QUERY_RESULT,
        f"retrieved {len(found.rag_sources)} chunks",
        {"chunk_ids": [chunk.id for chunk in found.rag_sources]},
        turn_id,
    )
    if found.rag_sources:
        await on_sources(found.rag_sources)
    return result.augmented_context or None


async def after_turn(
    state: GMIState,
    services: GMIServices,
    turn_input: GMITurnInput,
    turn_id: str,
    response_text: str | None,
) -> None:
    """Step 7 for a turn that ended without error: memory sync, ingestion, metaprompts."""
    config = services.config
    text = user_text(turn_input) or None
    bridge = config.memory_bridge
    if bridge is not None:
        exchange = TurnExchange(
            turn_id,
            turn_input.user_id,
            turn_input.session_id,
            text,
            response_text,
            state.mood,
            state.pad,
        )
        await _guarded(state, turn_id, "memory sync", lambda: bridge.sync_for_turn(exchange))
    augmentor = config.retrieval_augmentor
    rag = rag_config(state.persona)
    if (
        augmentor is not None
        and rag is not None
        and should_ingest_turn_summary(rag)
        and text
        and response_text
    ):
        document = await turn_summary_document(
            rag,
            gmi_id=state.gmi_id,
            turn_id=turn_id,
            user_text=text,
            response_text=response_text,
            summarizer=config.exchange_summarizer,
            on_summary_failure=lambda exc: _warn(state, turn_id, "turn summary", exc),
        )
        await _guarded(
            state, turn_id, "turn-summary ingestion", lambda: augmentor.ingest_documents([document])
        )
    runner = services.metaprompt_runner
    if runner is not None:
        await _guarded(
            state,
            turn_id,
            "metaprompts",
            lambda: runner.check_and_trigger(
                state,
                turn_id,
                provider_manager=services.provider_manager,
                budget=config.budget,
            ),
        )
