"""Sentiment lexicons: the word lists natural ships, loaded from ``agentos/nlp/data``.

Each shipped language has one data file, ``data/<code>.json`` (generated from npm ``natural`` by
``scripts/golden/generate.mjs``), holding the words and their scores in natural's key order, the
language's negation words, and the name of the licence file beside it. `Lexicon` re-keys the
words by stem the way natural's ``SentimentAnalyzer`` does: in file order, a later word
overwriting an earlier one with the same stem.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

from agentos.nlp import porter
from agentos.nlp.stemmers import STEMMERS

__all__ = ["LANGUAGES", "Lexicon", "load_lexicon", "resolve_language"]

LANGUAGES: tuple[str, ...] = tuple(STEMMERS)
"""The ISO 639-1 codes of the shipped lexicons (English first)."""

_NAMES = {
    "english": "en",
    "spanish": "es",
    "portuguese": "pt",
    "dutch": "nl",
    "french": "fr",
    "german": "de",
    "italian": "it",
}


def resolve_language(language: str | None) -> str:
    """The shipped lexicon's code for a tag: ``"es-MX"`` -> ``"es"``, anything unknown -> ``"en"``.

    Accepts BCP-47 / POSIX tags (``es-MX``, ``pt_BR``, ``DE``) and natural's language names
    (``"Spanish"``). ``None``, an empty tag, or a language without a shipped lexicon resolves to
    English, as the spec's chain ends in English; it never raises, so a user context with an
    unexpected language cannot break a turn.
    """
    if not language:
        return "en"
    tag = language.strip().lower()
    primary = tag.replace("_", "-").split("-", 1)[0]
    code = _NAMES.get(primary, primary)
    return code if code in STEMMERS else "en"


@dataclass(frozen=True, slots=True)
class Lexicon:
    """One language's lexicon as natural's ``SentimentAnalyzer(language, stemmer, type)`` holds it.

    ``words`` is the lexicon as shipped (word -> score); ``vocabulary`` the same scores keyed by
    ``stemmer(word)``, later words winning; ``negations`` natural's negation words for the
    language (empty for French and Italian, as in natural).
    """

    language: str
    kind: str
    words: Mapping[str, float]
    vocabulary: Mapping[str, float]
    negations: frozenset[str]
    stemmer: Callable[[str], str] = field(repr=False)
    licence: str = ""
    source: str = ""


def _data_text(name: str) -> str:
    return resources.files("agentos.nlp").joinpath("data", name).read_text("utf-8")


@cache
def load_lexicon(language: str) -> Lexicon:
    """The `Lexicon` of a shipped language code (see `LANGUAGES`), loaded once per process.

    Raises `KeyError` for a code that is not shipped; use `resolve_language` first.
    """
    if language not in STEMMERS:
        raise KeyError(f"no sentiment lexicon for {language!r}; shipped: {', '.join(LANGUAGES)}")
    raw = json.loads(_data_text(f"{language}.json"))
    words: dict[str, float] = raw["words"]
    stemmer = STEMMERS[language]
    # English stems through the uncached function so loading does not fill the runtime cache
    # with 3,382 lexicon words.
    key_stemmer = porter.stem_uncached if language == "en" else stemmer
    vocabulary: dict[str, float] = {}
    for word, value in words.items():
        vocabulary[key_stemmer(word)] = value
    return Lexicon(
        language=language,
        kind=raw["type"],
        words=words,
        vocabulary=vocabulary,
        negations=frozenset(raw["negations"]),
        stemmer=stemmer,
        licence=raw.get("licence", ""),
        source=raw.get("source", ""),
    )
