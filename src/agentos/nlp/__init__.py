"""Natural-language utilities: tokenizer, Porter stemmers, lexicon sentiment, utility AI.

Rank 1 (DESIGN.md §3): imports `agentos.core` and `agentos.llm` only. The lexicon scorer
reproduces npm ``natural`` (``reference/sentiment.md``), pinned by golden files that natural
itself generated (``scripts/golden/``).
"""

from agentos.nlp.lexicon import LANGUAGES, Lexicon, load_lexicon, resolve_language
from agentos.nlp.porter import stem
from agentos.nlp.sentiment import (
    POLARITY_THRESHOLD,
    Polarity,
    SentimentResult,
    TokenScore,
    lexicon_sentiment,
    polarity_of,
)
from agentos.nlp.tokenizer import tokenize, tokenize_for
from agentos.nlp.utility import (
    SENTIMENT_SYSTEM_PROMPT,
    LLMUtilityAI,
    StatisticalUtilityAI,
    UtilityAI,
    parse_sentiment_reply,
)

__all__ = [
    "LANGUAGES",
    "POLARITY_THRESHOLD",
    "SENTIMENT_SYSTEM_PROMPT",
    "LLMUtilityAI",
    "Lexicon",
    "Polarity",
    "SentimentResult",
    "StatisticalUtilityAI",
    "TokenScore",
    "UtilityAI",
    "lexicon_sentiment",
    "load_lexicon",
    "parse_sentiment_reply",
    "polarity_of",
    "resolve_language",
    "stem",
    "tokenize",
    "tokenize_for",
]
