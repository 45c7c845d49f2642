"""agentos.nlp against golden files that npm natural itself generated (scripts/golden/)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentos.nlp import LANGUAGES, lexicon_sentiment, load_lexicon
from agentos.nlp.porter import stem_uncached
from agentos.nlp.stemmers import STEMMERS
from agentos.nlp.tokenizer import TOKENIZERS, tokenize, tokenize_reference

GOLDEN = Path(__file__).parent / "golden"
OTHER_LANGUAGES = [code for code in LANGUAGES if code != "en"]


def _load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLDEN / name).read_text("utf-8"))
    return data


def test_every_shipped_language_has_golden_files() -> None:
    assert LANGUAGES == ("en", "es", "pt", "nl", "fr", "de", "it")
    for code in LANGUAGES:
        assert (GOLDEN / f"sentiment_{code}.json").is_file()


def test_english_golden_has_the_required_variety() -> None:
    cases = _load("sentiment_en.json")["cases"]
    texts = {case["text"] for case in cases}
    assert len(cases) >= 1000
    assert set(load_lexicon("en").words) <= texts  # every AFINN word alone
    assert any("not" in case["tokens"] for case in cases)
    assert any(not text.isascii() for text in texts)
    assert any(case["score"] != case["natural"] for case in cases)  # the departure shows


def test_porter_stems_match_natural_on_every_afinn_word_and_token() -> None:
    stems = _load("porter_en.json")["stems"]
    assert len(stems) > 3382
    wrong = {word: (stem, stem_uncached(word)) for word, stem in stems.items()}
    wrong = {word: pair for word, pair in wrong.items() if pair[0] != pair[1]}
    assert wrong == {}


def test_english_scores_match_natural_with_the_fix_exactly() -> None:
    mismatches = []
    for case in _load("sentiment_en.json")["cases"]:
        text = case["text"]
        assert tokenize(text) == case["tokens"], text
        assert tokenize_reference(text) == case["tokens"], text
        result = lexicon_sentiment(text)
        scored = [
            [token.token, token.score] for token in result.positive_tokens + result.negative_tokens
        ]
        expected_scored = [pair for pair in case["contributions"] if pair[1] != 0]
        if result.score != case["score"] or sorted(scored) != sorted(expected_scored):
            mismatches.append((text, case["score"], result.score))
    assert mismatches == []


@pytest.mark.parametrize("language", OTHER_LANGUAGES)
def test_stems_match_natural(language: str) -> None:
    load_lexicon(language)  # natural's analyzer stems its lexicon before anything else (Dutch)
    stems = _load(f"stems_{language}.json")["stems"]
    stem = STEMMERS[language]
    wrong = {word: (want, stem(word)) for word, want in stems.items() if stem(word) != want}
    assert wrong == {}


@pytest.mark.parametrize("language", OTHER_LANGUAGES)
def test_scores_match_natural_exactly(language: str) -> None:
    golden = _load(f"sentiment_{language}.json")
    assert golden["language"] == language
    assert len(golden["cases"]) >= 1000
    mismatches = []
    for case in golden["cases"]:
        text = case["text"]
        assert TOKENIZERS[language](text) == case["tokens"], text
        score = lexicon_sentiment(text, language).score
        if score != case["score"]:
            mismatches.append((text, case["score"], score))
    assert mismatches == []
