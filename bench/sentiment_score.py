"""``sentiment_score``: lexicon sentiment of one 100-character English message, against a budget.

Candidate: ``agentos.nlp.lexicon_sentiment(message)`` (English, AFINN-165, the scorer the GMI's
sentiment tracking runs on every user turn). Baseline: none to run side by side: natural, the
library the scorer reproduces, is JavaScript. The target is absolute (issue 5: a median of at
most 30 µs per message), so the baseline side reports that budget, a constant ``BUDGET_US``,
and the metric passes when candidate / budget <= 1.

Fairness decisions:

- **A different message every iteration.** Setup builds ``POOL`` distinct messages of exactly
  100 characters (seeded: AFINN words, everyday filler words, negations, punctuation, some
  capitals and non-ASCII); every scoring call, warm-up included, takes the next unused one, so
  no message is scored twice. The scorer keeps no cache of whole texts; it does cache stems and
  per-token lexicon values (a token's value depends on the token alone), which the issue allows.
- **Warm.** Setup loads the lexicon and scores ``WARMUP`` messages first, so the lexicon load
  and the first stems of the vocabulary are not in any run.
- **Many messages per run.** One call takes microseconds, so each run times ``PER_RUN`` calls
  one by one and reports their median; the runner then takes the median of runs.
"""

from __future__ import annotations

import gc
import random
import statistics
import time
from typing import ClassVar

from agentos.nlp import lexicon_sentiment, load_lexicon
from bench.registry import Benchmark, Metric, Sample, register

__all__ = ["SentimentScore"]

BUDGET_US = 30.0
MESSAGE_CHARS = 100
PER_RUN = 2_000
WARMUP = 2_000
MAX_REPEAT = 25
POOL = WARMUP + PER_RUN * MAX_REPEAT
SEED = 5

_FILLER = [
    "the",
    "a",
    "it",
    "this",
    "is",
    "was",
    "and",
    "but",
    "so",
    "very",
    "really",
    "i",
    "you",
    "we",
    "they",
    "to",
    "of",
    "in",
    "on",
    "with",
    "my",
    "your",
    "code",
    "build",
    "answer",
    "question",
    "table",
    "room",
    "door",
    "again",
    "just",
    "quite",
    "too",
    "ever",
    "what",
    "why",
    "how",
    "can",
    "do",
    "does",
    "did",
    "please",
    "still",
    "now",
    "then",
    "when",
    "where",
    "there",
    "here",
    "all",
    "some",
    "any",
    "more",
    "less",
    "one",
    "two",
    "three",
]
_NEGATIONS = ("not", "no", "never", "neither", "don't", "isn't", "can't")
_PUNCT = ("", "", "", "", ",", ".", "!", "?", "...", ":)", ":(")
_NON_ASCII = ("café", "über", "naïve", "Привет", "😀", "👍", "€")


def _messages(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    afinn = sorted(load_lexicon("en").words)
    seen: set[str] = set()
    messages: list[str] = []
    while len(messages) < count:
        words: list[str] = []
        while sum(len(w) + 1 for w in words) < MESSAGE_CHARS + 20:
            roll = rng.random()
            if roll < 0.25:
                word = rng.choice(afinn)
            elif roll < 0.85:
                word = rng.choice(_FILLER)
            elif roll < 0.95:
                word = rng.choice(_NEGATIONS)
            else:
                word = rng.choice(_NON_ASCII)
            if rng.random() < 0.1:
                word = word.capitalize()
            words.append(word + rng.choice(_PUNCT))
        message = " ".join(words)[:MESSAGE_CHARS]
        if message not in seen:
            seen.add(message)
            messages.append(message)
    return messages


class SentimentScore(Benchmark):
    """Microseconds to score one new 100-character English message, against a 30 µs budget."""

    name: ClassVar[str] = "sentiment_score"
    description: ClassVar[str] = (
        "agentos.nlp.lexicon_sentiment on distinct 100-char English messages vs the 30 us "
        f"budget, median of {PER_RUN} messages per run"
    )
    metrics: ClassVar[tuple[Metric, ...]] = (Metric("score_message", "us", "lower", tolerance=1.0),)

    def __init__(self) -> None:
        self._messages: list[str] = []
        self._next = 0

    def setup(self) -> None:
        self._messages = _messages(POOL, SEED)
        assert all(len(m) == MESSAGE_CHARS for m in self._messages)
        for _ in range(WARMUP):
            self._score_next()

    def settle(self) -> None:
        gc.collect()

    def run_candidate(self) -> Sample:
        if self._next + PER_RUN > len(self._messages):
            raise SystemExit(f"sentiment_score: at most --repeat {MAX_REPEAT} (message pool)")
        times = [self._score_next() for _ in range(PER_RUN)]
        return {"score_message": statistics.median(times) * 1e6}

    def run_baseline(self) -> Sample:
        return {"score_message": BUDGET_US}

    def settings(self) -> dict[str, object]:
        return {
            "message_chars": MESSAGE_CHARS,
            "messages_per_run": PER_RUN,
            "warmup_messages": WARMUP,
            "distinct_messages": len(self._messages),
            "seed": SEED,
            "language": "en",
            "candidate": "agentos.nlp.lexicon_sentiment(message), a new message every call",
            "baseline": f"the budget: a constant {BUDGET_US} us per message (issue 5)",
        }

    def _score_next(self) -> float:
        message = self._messages[self._next]
        self._next += 1
        started = time.perf_counter()
        lexicon_sentiment(message)
        return time.perf_counter() - started


register(SentimentScore, name=SentimentScore.name)
