"""Utility AI: sentiment analysis behind one protocol, statistical (no call) or by a model.

`StatisticalUtilityAI` scores with the lexicon natural ships for the language
(`agentos.nlp.sentiment.lexicon_sentiment`); it makes no model call and is what ``gmi()`` uses.
`LLMUtilityAI` asks a `ChatModel` once per text for a JSON verdict (reference §1.22's
``LLMUtilityAI.analyzeSentiment``).
"""

from __future__ import annotations

import math
from typing import Any, Protocol, runtime_checkable

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.json_reply import parse_json_object
from agentos.core.messages import Message
from agentos.llm.model import ChatModel, CompletionOptions, ModelRequest, complete_text
from agentos.nlp.sentiment import (
    Polarity,
    SentimentResult,
    TokenScore,
    lexicon_sentiment,
)

__all__ = [
    "SENTIMENT_SYSTEM_PROMPT",
    "LLMUtilityAI",
    "StatisticalUtilityAI",
    "UtilityAI",
    "parse_sentiment_reply",
]


@runtime_checkable
class UtilityAI(Protocol):
    """What the GMI needs from a utility AI: the sentiment of a text."""

    async def analyze_sentiment(self, text: str, *, language: str | None = None) -> SentimentResult:
        """The sentiment of ``text``; ``language`` a BCP-47 tag, ``None`` for the default."""
        ...


class StatisticalUtilityAI:
    """Lexicon sentiment, no model call: `lexicon_sentiment` in the requested language.

    ``default_language`` (English unless set) applies when a call passes no language; any tag
    resolves as `agentos.nlp.resolve_language` says (``es-MX`` -> Spanish, unknown -> English),
    so a call never fails on its language.
    """

    def __init__(self, *, default_language: str = "en") -> None:
        self.default_language = default_language

    async def analyze_sentiment(self, text: str, *, language: str | None = None) -> SentimentResult:
        """Score ``text`` with the lexicon of ``language`` (or the default language)."""
        return lexicon_sentiment(text, language or self.default_language)


SENTIMENT_SYSTEM_PROMPT = (
    "You analyse the sentiment of the user's text. Answer with one JSON object and nothing "
    "else, with these keys:\n"
    '- "score": a number from -1 (most negative) to 1 (most positive), 0 when neutral;\n'
    '- "polarity": "positive", "negative" or "neutral";\n'
    '- "intensity" (optional): a number from 0 to 1, how strong the sentiment is;\n'
    '- "positive_tokens": the words of the text that carry positive sentiment (a list of '
    "strings, possibly empty);\n"
    '- "negative_tokens": the words that carry negative sentiment (a list of strings, possibly '
    "empty)."
)
"""The system prompt `LLMUtilityAI` sends (the text to analyse is the user message)."""

_POLARITIES: dict[str, Polarity] = {
    "positive": "positive",
    "negative": "negative",
    "neutral": "neutral",
}


def _parsing_error(message: str, reply: str) -> GMIError:
    return GMIError(
        message,
        GMIErrorCode.PARSING_ERROR,
        {"reply": reply[:500]},
        component="LLMUtilityAI",
    )


def _load_object(reply: str) -> dict[str, Any]:
    # natural's parseJsonSafe would ask the model to repair the JSON; agentos keeps sentiment to
    # one call and refuses instead.
    value = parse_json_object(reply)
    if value is None:
        raise _parsing_error("the sentiment reply is not a JSON object", reply)
    return value


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _tokens(value: object) -> tuple[TokenScore, ...]:
    # Strings, or objects such as {"token": "great", "score": 0.8}; anything else is skipped.
    if not isinstance(value, list):
        return ()
    tokens: list[TokenScore] = []
    for item in value:
        if isinstance(item, str):
            tokens.append(TokenScore(item, None))
        elif isinstance(item, dict):
            word = item.get("token", item.get("word"))
            if isinstance(word, str):
                tokens.append(TokenScore(word, _number(item.get("score"))))
    return tuple(tokens)


def parse_sentiment_reply(reply: str) -> SentimentResult:
    """The `SentimentResult` of a model's JSON reply (see `SENTIMENT_SYSTEM_PROMPT`).

    ``score`` (a finite number) and ``polarity`` (``positive``, ``negative`` or ``neutral``,
    any case) are required: a reply without either, or with an unusable value, raises `GMIError`
    with code `GMIErrorCode.PARSING_ERROR`. Defaults: ``comparative = score``, ``intensity =
    abs(score)`` unless the reply gives a number, token lists empty. Keys may be snake_case or
    the reference's camelCase (``positiveTokens``).
    """
    data = _load_object(reply)
    score = _number(data.get("score"))
    if score is None:
        raise _parsing_error("the sentiment reply has no numeric 'score'", reply)
    polarity = data.get("polarity")
    checked = _POLARITIES.get(polarity.strip().lower()) if isinstance(polarity, str) else None
    if checked is None:
        raise _parsing_error("the sentiment reply has no valid 'polarity'", reply)
    comparative = _number(data.get("comparative"))
    intensity = _number(data.get("intensity"))
    return SentimentResult(
        score=score,
        polarity=checked,
        comparative=score if comparative is None else comparative,
        intensity=abs(score) if intensity is None else intensity,
        positive_tokens=_tokens(data.get("positive_tokens", data.get("positiveTokens"))),
        negative_tokens=_tokens(data.get("negative_tokens", data.get("negativeTokens"))),
        neutral_tokens=tuple(
            t.token for t in _tokens(data.get("neutral_tokens", data.get("neutralTokens")))
        ),
        language=None,
    )


class LLMUtilityAI:
    """Sentiment by one model call: `SENTIMENT_SYSTEM_PROMPT`, the text, temperature 0.3.

    The reply must be a JSON object with ``score`` and ``polarity`` (else `GMIError` with code
    `GMIErrorCode.PARSING_ERROR`, see `parse_sentiment_reply`); provider errors propagate. The
    request asks for JSON mode (``json_mode=True``), which providers without it ignore.
    ``language``, when given, is named in the instructions; the model reads any language.
    """

    def __init__(
        self,
        model: ChatModel,
        *,
        temperature: float = 0.3,
        system_prompt: str = SENTIMENT_SYSTEM_PROMPT,
    ) -> None:
        self.model = model
        self.temperature = temperature
        self.system_prompt = system_prompt

    async def analyze_sentiment(self, text: str, *, language: str | None = None) -> SentimentResult:
        """Ask the model for the sentiment of ``text`` (one call) and parse its JSON reply."""
        system = self.system_prompt
        if language:
            system += f"\nThe text's language is {language}."
        request = ModelRequest(
            messages=[Message.system(system), Message.user(text)],
            options=CompletionOptions(temperature=self.temperature, json_mode=True),
        )
        return parse_sentiment_reply(await complete_text(self.model, request))
