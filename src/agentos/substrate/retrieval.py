r"""The GMI's RAG decisions (spec: What a turn does, steps 2 and 7; reference §1.1).

Retrieval runs for the first model call of a user turn when a `RetrievalAugmentor` is configured,
the persona's ``memory_config.rag_config.enabled`` is on and `should_trigger_rag_retrieval()`
says so. Its options come from the persona (`retrieval_options()`). The text a prompt carries
joins the memory context, the RAG context and the turn's ``long_term_memory_context`` with
``"\n\n---\n\n"`` (`join_retrieved_context()`).

After a turn, `turn_summary_document()` builds what a persona with turn-summary ingestion
(``ingestion_triggers.on_turn_summary``) hands the augmentor: ``"User: ...\n\nAssistant: ..."``,
summarized first when ``ingestion_processing.summarization.enabled`` and a summarizer is given,
and ingested as it is when the summary fails.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from agentos.persona.definition import PersonaDefinition, RagConfig, RagSummarizationConfig
from agentos.substrate.collaborators import IngestedDocument, RagRetrievalOptions
from agentos.substrate.system_prompts import loaded_value

__all__ = [
    "DEFAULT_RETRIEVAL_TOP_K",
    "RETRIEVED_CONTEXT_SEPARATOR",
    "TURN_SUMMARY_TYPE",
    "ExchangeSummarizer",
    "join_retrieved_context",
    "rag_config",
    "retrieval_options",
    "should_ingest_turn_summary",
    "should_trigger_rag_retrieval",
    "turn_summary_document",
]

DEFAULT_RETRIEVAL_TOP_K = 5
RETRIEVED_CONTEXT_SEPARATOR = "\n\n---\n\n"
TURN_SUMMARY_TYPE = "conversation_turn_summary"

ExchangeSummarizer = Callable[[str, RagSummarizationConfig], Awaitable[str]]
"""Summarizes an exchange before ingestion (a utility AI's summarize)."""

_STRATEGIES = {"similarity": "similarity", "mmr": "mmr", "hybrid_search": "hybrid"}


def rag_config(persona: PersonaDefinition) -> RagConfig | None:
    """The persona's RAG settings when they are enabled, else ``None``."""
    memory = persona.memory_config
    config = memory.rag_config if memory is not None else None
    return config if config is not None and config.enabled else None


def should_trigger_rag_retrieval(config: RagConfig, query: str) -> bool:
    """Whether a user query retrieves: yes unless ``retrieval_triggers.on_user_query`` is off.

    An empty query never retrieves. (The reference's other triggers, on tool failure and on a
    detected intent, need context the turn loop does not have.)
    """
    if not query.strip():
        return False
    triggers: Mapping[str, Any] = config.retrieval_triggers or {}
    return loaded_value(triggers, "on_user_query") is not False


def retrieval_options(config: RagConfig) -> RagRetrievalOptions:
    """The top-k, the enabled data sources and the strategy the persona sets."""
    sources = tuple(s.id for s in config.data_sources or [] if s.is_enabled)
    strategy = _STRATEGIES.get(config.default_retrieval_strategy or "", "similarity")
    return RagRetrievalOptions(
        config.default_retrieval_top_k or DEFAULT_RETRIEVAL_TOP_K, sources, strategy
    )


def join_retrieved_context(*parts: str | None) -> str | None:
    """The non-empty parts joined with `RETRIEVED_CONTEXT_SEPARATOR`, or ``None``."""
    kept = [part for part in parts if part and part.strip()]
    return RETRIEVED_CONTEXT_SEPARATOR.join(kept) if kept else None


def should_ingest_turn_summary(config: RagConfig) -> bool:
    """Whether ``ingestion_triggers.on_turn_summary`` is on."""
    return loaded_value(config.ingestion_triggers or {}, "on_turn_summary") is True


async def turn_summary_document(
    config: RagConfig,
    *,
    gmi_id: str,
    turn_id: str,
    user_text: str,
    response_text: str,
    summarizer: ExchangeSummarizer | None,
    on_summary_failure: Callable[[BaseException], None],
) -> IngestedDocument:
    """The document a finished exchange is ingested as (summarized when configured)."""
    text = f"User: {user_text}\n\nAssistant: {response_text}"
    processing = config.ingestion_processing
    summarization = processing.summarization if processing is not None else None
    summarized = False
    if summarization is not None and summarization.enabled and summarizer is not None:
        try:
            text = await summarizer(text, summarization)
            summarized = True
        except Exception as exc:
            on_summary_failure(exc)
    return IngestedDocument(
        id=f"turnsummary-{gmi_id}-{turn_id}-{uuid.uuid4()}",
        content=text,
        data_source_id=config.default_ingestion_data_source_id,
        metadata={"type": TURN_SUMMARY_TYPE, "turn_id": turn_id, "summarized": summarized},
    )
