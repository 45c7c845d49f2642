"""agentos.nlp: tokenizer, Porter stemmer and lexicon sentiment as reference/sentiment.md says."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentos.nlp import (
    LANGUAGES,
    SentimentResult,
    TokenScore,
    lexicon_sentiment,
    load_lexicon,
    polarity_of,
    resolve_language,
    stem,
    tokenize,
    tokenize_for,
)
from agentos.nlp.tokenizer import tokenize_reference

# --- the examples of sentiment.md, exactly -----------------------------------------------------


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ("This is terrible", -1.0),
        ("This is not good", -0.75),
        ("wrong wrong wrong", -2.0),
        ("I love it", 1.0),
        ("This is fine", 2 / 3),
        ("The table is in the room next to the door", 0.0),
        ("", 0.0),
        ("   ", 0.0),
        (":) :-(", 0.0),
    ],
)
def test_sentiment_md_examples(text: str, score: float) -> None:
    result = lexicon_sentiment(text)
    assert result.score == score
    assert result.comparative == score
    assert result.intensity == abs(score)
    assert not math.isnan(result.score)


def test_fine_scores_two_thirds_to_three_places() -> None:
    assert round(lexicon_sentiment("This is fine").score, 3) == 0.667


def test_stems_of_this_is_terrible() -> None:
    assert [stem(t) for t in tokenize("This is terrible")] == ["thi", "is", "terribl"]


def test_result_fields_for_a_mixed_text() -> None:
    result = lexicon_sentiment("I love it but the build is not good")
    assert isinstance(result, SentimentResult)
    assert result.positive_tokens == (TokenScore("love", 3),)
    assert result.negative_tokens == (TokenScore("good", -3),)  # after "not": negated
    assert "not" in result.neutral_tokens
    assert result.score == 0.0
    assert result.polarity == "neutral"
    assert result.language == "en"


def test_negation_holds_for_the_rest_of_the_text() -> None:
    result = lexicon_sentiment("never mind, great work, thanks")
    assert [t.token for t in result.negative_tokens] == ["great", "thanks"]
    assert result.positive_tokens == ()


def test_unstemmed_afinn_word_wins_over_its_stem_key() -> None:
    # natural keys "fine" by stem and "fined" (-2) overwrites "fine" (2); agentos reads "fine".
    lexicon = load_lexicon("en")
    assert lexicon.vocabulary["fine"] == -2
    assert lexicon.words["fine"] == 2
    assert lexicon_sentiment("fine").score == 2
    assert lexicon_sentiment("fined").score == -2


# --- tokenizer ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("I don't understand", ["i", "don", "t", "understand"]),
        ("café", ["caf"]),
        ("Hello :) world!!!", ["hello", "world"]),
        ("Привет good", ["good"]),
        ("abcжdef", ["abcdef"]),
        ("well-being e_mail 42", ["well", "being", "e_mail", "42"]),
        ("", []),
    ],
)
def test_tokenize_examples(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens
    assert tokenize_reference(text) == tokens


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text())
def test_fast_tokenizer_equals_the_literal_steps(text: str) -> None:
    assert tokenize(text) == tokenize_reference(text)


def test_other_language_tokenizers_keep_accents() -> None:
    assert tokenize_for("Me encanta, es fantástico", "es") == ["me", "encanta", "es", "fantástico"]
    assert tokenize_for("Não gosto", "pt") == ["não", "gosto"]
    assert tokenize_for("Größer", "de") == ["größer"]
    assert tokenize_for("perché", "it") == ["perch"]  # natural's Italian splits on ASCII \W
    assert tokenize_for("café", "xx") == ["caf"]


# --- Porter --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("is", "is"),
        ("No", "No"),  # shorter than 3: unchanged, not even lower-cased
        ("horribly", "horribl"),
        ("possibly", "possibl"),
        ("analogy", "analog"),
        ("loving", "love"),
        ("Running", "run"),
        ("caresses", "caress"),
    ],
)
def test_porter_examples(word: str, expected: str) -> None:
    assert stem(word) == expected


# --- polarity ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("score", "polarity"),
    [
        (0.05, "neutral"),
        (0.0500001, "positive"),
        (-0.05, "neutral"),
        (-0.0500001, "negative"),
        (0.0, "neutral"),
        (1.0, "positive"),
        (-1.0, "negative"),
    ],
)
def test_polarity_boundaries(score: float, polarity: str) -> None:
    assert polarity_of(score) == polarity


def test_polarity_boundary_through_the_scorer() -> None:
    # "yes" is AFINN 1. Among 20 tokens: exactly 0.05 -> neutral; among 19 -> positive.
    filler = " ".join(["table"] * 19)
    assert lexicon_sentiment(f"{filler} yes").score == 0.05
    assert lexicon_sentiment(f"{filler} yes").polarity == "neutral"
    shorter = " ".join(["table"] * 18)
    assert lexicon_sentiment(f"{shorter} yes").polarity == "positive"
    assert lexicon_sentiment(f"{shorter} not yes").score == -0.05  # 20 tokens
    assert lexicon_sentiment(f"{shorter} not yes").polarity == "neutral"
    assert lexicon_sentiment(f"{' '.join(['table'] * 17)} not yes").polarity == "negative"


# --- languages ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tag", "code"),
    [
        ("en", "en"),
        ("en-US", "en"),
        ("es", "es"),
        ("es-MX", "es"),
        ("pt_BR", "pt"),
        ("PT-br", "pt"),
        ("nl-BE", "nl"),
        ("fr-CA", "fr"),
        ("de-AT", "de"),
        ("it", "it"),
        ("Spanish", "es"),
        ("German", "de"),
        (None, "en"),
        ("", "en"),
        ("ja-JP", "en"),
        ("x-klingon", "en"),
        ("eu", "en"),  # Basque: natural ships only Senticon, whose licence is unstated
    ],
)
def test_resolve_language(tag: str | None, code: str) -> None:
    assert resolve_language(tag) == code


def test_es_mx_uses_the_spanish_lexicon() -> None:
    spanish = lexicon_sentiment("Es fantástico", "es")
    assert lexicon_sentiment("Es fantástico", "es-MX") == spanish
    assert spanish.language == "es"
    assert spanish.positive_tokens == (TokenScore("fantástico", 4),)
    assert lexicon_sentiment("Es fantástico", "en").score == 0.0  # English splits "fant", "stico"


def test_unknown_language_scores_in_english_without_raising() -> None:
    assert lexicon_sentiment("This is terrible", "tlh").score == -1.0
    assert lexicon_sentiment("This is terrible", "tlh").language == "en"


@pytest.mark.parametrize(
    ("language", "text", "polarity"),
    [
        ("es", "Me encanta, es fantástico", "positive"),
        ("es", "nunca feliz", "negative"),
        ("pt", "Adoro, é fantástico", "positive"),
        ("nl", "Het is een mooie dag", "positive"),
        ("nl", "niet mooi", "negative"),
        ("fr", "C'est magnifique", "positive"),
        ("de", "Das ist schlecht", "negative"),
        ("de", "nicht gut", "negative"),
        ("it", "Una giornata orribile", "negative"),
    ],
)
def test_other_languages_score(language: str, text: str, polarity: str) -> None:
    result = lexicon_sentiment(text, language)
    assert result.language == language
    assert result.polarity == polarity


def test_every_lexicon_names_its_licence_file() -> None:
    for code in LANGUAGES:
        lexicon = load_lexicon(code)
        assert lexicon.licence in ("AFINN-LICENSE.txt", "PATTERN-LICENSE.txt")
        assert lexicon.words


# --- properties --------------------------------------------------------------------------------

LANGUAGE_TAGS = st.sampled_from([*LANGUAGES, "es-MX", "zz", None])


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.text(), LANGUAGE_TAGS)
def test_score_is_finite_and_consistent(text: str, language: str | None) -> None:
    result = lexicon_sentiment(text, language)
    assert math.isfinite(result.score)
    assert result.comparative == result.score
    assert result.intensity == abs(result.score)
    assert result.polarity == polarity_of(result.score)
    assert all(t.score is not None and t.score > 0 for t in result.positive_tokens)
    assert all(t.score is not None and t.score < 0 for t in result.negative_tokens)


AFINN_WORDS = sorted(load_lexicon("en").words)
WORDS = st.lists(st.sampled_from([*AFINN_WORDS, "the", "table", "not", "never"]), max_size=12)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(WORDS)
def test_english_score_is_the_mean_of_the_contributions(words: list[str]) -> None:
    text = " ".join(words)
    result = lexicon_sentiment(text)
    tokens = tokenize(text)
    total = sum(t.score or 0 for t in result.positive_tokens + result.negative_tokens)
    expected = total / len(tokens) if tokens else 0.0
    assert result.score == pytest.approx(expected)
    assert len(result.positive_tokens) + len(result.negative_tokens) + len(
        result.neutral_tokens
    ) == len(tokens)
    assert abs(result.score) <= 5
