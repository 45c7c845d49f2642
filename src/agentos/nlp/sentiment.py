"""Lexicon sentiment: ``reference/sentiment.md`` for English, natural's analyzer for the others.

English (AFINN-165): tokenize (`agentos.nlp.tokenizer.tokenize`), stem each token with natural's
Porter stemmer, then token by token with ``negator = 1``: a stem among ``not, no, never,
neither`` sets ``negator = -1`` for the rest of the text; else a token that is itself an AFINN
word adds ``negator * AFINN[token]`` (agentos's one departure from natural, which keys by stem
only and so scores "This is fine" -0.67); else the stem, then the stem of the stem, is looked up
in the stem-keyed vocabulary. ``score = comparative = sum / number of tokens`` (0 for no tokens).

Other shipped languages: natural's ``SentimentAnalyzer(language, PorterStemmer<Lang>, type)``
``.getSentiment(tokens)`` over natural's ``AggressiveTokenizer<Lang>`` tokens of the lower-cased
text: the token itself, then its stem, is looked up in the stem-keyed vocabulary; the negations
are natural's list for the language (none for French and Italian).

``polarity`` is ``positive`` above 0.05, ``negative`` below -0.05, else ``neutral``; intensity is
``abs(score)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple

from agentos.nlp.lexicon import Lexicon, load_lexicon, resolve_language
from agentos.nlp.tokenizer import TOKENIZERS, tokenize

__all__ = [
    "POLARITY_THRESHOLD",
    "Polarity",
    "SentimentResult",
    "TokenScore",
    "lexicon_sentiment",
    "polarity_of",
]

Polarity = Literal["positive", "negative", "neutral"]

POLARITY_THRESHOLD = 0.05
"""A score above this is positive, below its negative is negative, else neutral."""


class TokenScore(NamedTuple):
    """A token that scored and its signed contribution to the sum (negation applied).

    ``score`` is ``None`` only for tokens an LLM named without a number.
    """

    token: str
    score: float | None


@dataclass(frozen=True, slots=True)
class SentimentResult:
    """The sentiment of one text (§1.22's ``SentimentResult``, in snake_case).

    - ``score``: the comparative score (sum of contributions / number of tokens; 0 for a text
      without tokens, never NaN). For English AFINN it lies in [-5, 5]; an LLM gives [-1, 1].
    - ``polarity``: ``positive`` when ``score > 0.05``, ``negative`` when ``< -0.05``, else
      ``neutral`` (`polarity_of`).
    - ``comparative``: equal to ``score`` for the lexicon scorer.
    - ``intensity``: ``abs(score)`` unless an LLM reported its own.
    - ``positive_tokens`` / ``negative_tokens``: the tokens that scored above / below zero, in
      text order, with their signed contribution.
    - ``neutral_tokens``: the other tokens (no lexicon entry, a zero score, or a negator).
    - ``language``: the lexicon that scored the text (ISO 639-1), or ``None`` from an LLM.
    """

    score: float
    polarity: Polarity
    comparative: float
    intensity: float
    positive_tokens: tuple[TokenScore, ...] = ()
    negative_tokens: tuple[TokenScore, ...] = ()
    neutral_tokens: tuple[str, ...] = ()
    language: str | None = None


def polarity_of(score: float) -> Polarity:
    """``positive`` when ``score > 0.05``, ``negative`` when ``score < -0.05``, else ``neutral``."""
    if score > POLARITY_THRESHOLD:
        return "positive"
    if score < -POLARITY_THRESHOLD:
        return "negative"
    return "neutral"


class _Negator:
    """Marks a negation word in the per-token cache."""


_NEGATOR = _Negator()
_CACHE_LIMIT = 100_000

# Per language: token -> its lexicon value, None (no entry) or _NEGATOR. It depends on the token
# alone (like a stem cache, never on the text), so it stays exact; bounded by clearing.
_token_values: dict[str, dict[str, float | _Negator | None]] = {}


def _english_value(lexicon: Lexicon, token: str) -> float | _Negator | None:
    stem = lexicon.stemmer(token)
    if stem in lexicon.negations:
        return _NEGATOR
    value = lexicon.words.get(token)  # the departure: the unstemmed AFINN word first
    if value is not None:
        return value
    value = lexicon.vocabulary.get(stem)
    if value is not None:
        return value
    return lexicon.vocabulary.get(lexicon.stemmer(stem))


def _natural_value(lexicon: Lexicon, token: str) -> float | _Negator | None:
    # natural's getSentiment: lower-case, negation list, the word itself, then its stem.
    lowered = token.lower()
    if lowered in lexicon.negations:
        return _NEGATOR
    value = lexicon.vocabulary.get(lowered)
    if value is not None:
        return value
    return lexicon.vocabulary.get(lexicon.stemmer(lowered))


def lexicon_sentiment(text: str, language: str | None = "en") -> SentimentResult:
    """Score ``text`` with the lexicon of ``language`` (see the module docstring).

    ``language`` is a BCP-47 tag, a natural language name or ``None``; it goes through
    `agentos.nlp.lexicon.resolve_language`, so ``es-MX`` uses Spanish and a language without a
    shipped lexicon uses English. Never raises on any ``str``; deterministic; no model call.
    """
    code = resolve_language(language)
    lexicon = load_lexicon(code)
    tokens = tokenize(text) if code == "en" else TOKENIZERS[code](text)
    value_of = _english_value if code == "en" else _natural_value
    cache = _token_values.setdefault(code, {})
    if len(cache) > _CACHE_LIMIT:
        cache.clear()

    total: float = 0
    negator = 1
    positive: list[TokenScore] = []
    negative: list[TokenScore] = []
    neutral: list[str] = []
    for token in tokens:
        try:
            value = cache[token]
        except KeyError:
            value = cache[token] = value_of(lexicon, token)
        if value is None:
            neutral.append(token)
        elif isinstance(value, _Negator):
            negator = -1
            neutral.append(token)
        else:
            # Same operations in the same order as natural (score += negator * value), so the
            # float sum is bit-identical to natural's for the fractional Pattern scores.
            contribution = negator * value
            total += contribution
            if contribution > 0:
                positive.append(TokenScore(token, contribution))
            elif contribution < 0:
                negative.append(TokenScore(token, contribution))
            else:
                neutral.append(token)
    score = total / len(tokens) if tokens else 0.0
    score = float(score)
    return SentimentResult(
        score=score,
        polarity=polarity_of(score),
        comparative=score,
        intensity=abs(score),
        positive_tokens=tuple(positive),
        negative_tokens=tuple(negative),
        neutral_tokens=tuple(neutral),
        language=code,
    )
