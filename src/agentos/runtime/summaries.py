"""Summarizing an exchange before the runtime's GMIs ingest it into retrieval.

Spec (What a turn does, step 7): "When the persona's RAG configuration enables turn-summary
ingestion, the GMI ingests the exchange into the retrieval augmentor, summarizing it first if
that is configured; when the summary fails, [it ingests the exchange as it is]". The issue asks
for the summary by the runtime's utility AI: with the default ``llm`` utility AI the summary is
one call to the runtime's model (`model_summarizer`); with the ``statistical`` one it is made
without a call (`extractive_summarizer`: the exchange's leading sentences up to the length).
``target_length`` is a number of words (a number, or a string such as ``"80"`` or
``"80 words"``); unset, 60.
"""

from __future__ import annotations

import re

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import Message
from agentos.llm.model import ChatModel, CompletionOptions, ModelRequest, complete_text
from agentos.persona.definition import RagSummarizationConfig
from agentos.substrate.retrieval import ExchangeSummarizer

__all__ = ["DEFAULT_SUMMARY_WORDS", "extractive_summarizer", "model_summarizer", "summary_words"]

DEFAULT_SUMMARY_WORDS = 60
"""The words a summary may take when the persona sets no ``target_length``."""

_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def summary_words(config: RagSummarizationConfig) -> int:
    """The summary's length in words (``target_length``: a number or ``"80 words"``)."""
    target = config.target_length
    if isinstance(target, int) and not isinstance(target, bool) and target > 0:
        return target
    if isinstance(target, str) and (found := re.match(r"\s*(\d+)", target)) and int(found[1]):
        return int(found[1])
    return DEFAULT_SUMMARY_WORDS


def model_summarizer(model: ChatModel) -> ExchangeSummarizer:
    """A summarizer that asks ``model`` once for a summary of the exchange.

    An empty answer raises `GMIError` (the GMI then ingests the exchange as it is).
    """

    async def summarize(text: str, config: RagSummarizationConfig) -> str:
        words = summary_words(config)
        request = ModelRequest(
            messages=[
                Message.system(
                    f"Summarize this conversation exchange in at most {words} words, keeping "
                    "names, numbers and decisions. Answer with the summary only."
                ),
                Message.user(text),
            ],
            options=CompletionOptions(temperature=0.2),
        )
        summary = (await complete_text(model, request)).strip()
        if not summary:
            raise GMIError("the summary was empty", GMIErrorCode.PROCESSING_ERROR)
        return summary

    return summarize


async def extractive_summarizer(text: str, config: RagSummarizationConfig) -> str:
    """The exchange's leading sentences, whole, within the length (no model call)."""
    budget = summary_words(config)
    kept: list[str] = []
    used = 0
    for sentence in _SENTENCE.split(text.strip()):
        count = len(sentence.split())
        if kept and used + count > budget:
            break
        kept.append(sentence)
        used += count
    return " ".join(kept)
