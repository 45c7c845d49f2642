"""agentos.nlp.utility: the UtilityAI protocol, StatisticalUtilityAI and LLMUtilityAI."""

from __future__ import annotations

import pytest

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import Role
from agentos.nlp import (
    SENTIMENT_SYSTEM_PROMPT,
    LLMUtilityAI,
    StatisticalUtilityAI,
    TokenScore,
    UtilityAI,
    lexicon_sentiment,
    parse_sentiment_reply,
)
from agentos.testing import ScriptedModel, ScriptStep


def test_both_implement_the_protocol() -> None:
    assert isinstance(StatisticalUtilityAI(), UtilityAI)
    assert isinstance(LLMUtilityAI(ScriptedModel([])), UtilityAI)


async def test_statistical_scores_with_the_lexicon() -> None:
    utility = StatisticalUtilityAI()
    result = await utility.analyze_sentiment("This is not good")
    assert result == lexicon_sentiment("This is not good")
    assert result.score == -0.75
    assert result.polarity == "negative"


async def test_statistical_language_default_and_override() -> None:
    utility = StatisticalUtilityAI(default_language="es-MX")
    assert (await utility.analyze_sentiment("Es fantástico")).language == "es"
    assert (await utility.analyze_sentiment("It is great", language="en")).language == "en"
    assert (await utility.analyze_sentiment("It is great", language="tlh")).language == "en"
    assert (await StatisticalUtilityAI().analyze_sentiment("x")).language == "en"


async def test_case_44_llm_defaults() -> None:
    model = ScriptedModel([ScriptStep(text='{"score":0.1,"polarity":"neutral"}')])
    result = await LLMUtilityAI(model).analyze_sentiment("meh, it works I guess")
    assert result.score == 0.1
    assert result.comparative == 0.1
    assert result.intensity == 0.1
    assert result.polarity == "neutral"
    assert result.positive_tokens == ()
    assert result.negative_tokens == ()
    assert model.calls == 1


async def test_case_44_missing_polarity_is_a_parsing_error() -> None:
    model = ScriptedModel([ScriptStep(text='{"score":0.1}')])
    with pytest.raises(GMIError) as caught:
        await LLMUtilityAI(model).analyze_sentiment("meh")
    assert caught.value.code is GMIErrorCode.PARSING_ERROR
    assert str(caught.value.code) == "SYS_PARSING_ERROR"


@pytest.mark.parametrize(
    "reply",
    [
        '{"polarity":"neutral"}',
        '{"score":"high","polarity":"positive"}',
        '{"score":true,"polarity":"positive"}',
        '{"score":0.5,"polarity":"ecstatic"}',
        '{"score":0.5,"polarity":3}',
        "not json at all",
        "[0.5, 1]",
        "",
    ],
)
def test_unusable_replies_are_parsing_errors(reply: str) -> None:
    with pytest.raises(GMIError) as caught:
        parse_sentiment_reply(reply)
    assert caught.value.code is GMIErrorCode.PARSING_ERROR


async def test_the_request_is_one_call_with_the_prompt_and_temperature() -> None:
    model = ScriptedModel([ScriptStep(text='{"score":-0.6,"polarity":"negative"}')])
    result = await LLMUtilityAI(model).analyze_sentiment("I hate this", language="en-GB")
    assert result.score == -0.6
    assert result.intensity == pytest.approx(0.6)
    (request,) = model.requests
    assert request.options.temperature == 0.3
    assert request.options.json_mode is True
    system, user = request.messages
    assert system.role is Role.SYSTEM
    assert isinstance(system.content, str)
    assert system.content.startswith(SENTIMENT_SYSTEM_PROMPT)
    assert "en-GB" in system.content
    assert user.role is Role.USER
    assert user.content == "I hate this"


def test_full_reply_with_tokens_fenced_and_camel_case() -> None:
    reply = (
        "Here you go:\n```json\n"
        '{"score": 0.8, "polarity": "Positive", "intensity": 0.9,'
        ' "positiveTokens": ["love", {"token": "great", "score": 0.7}], "negativeTokens": []}\n'
        "```"
    )
    result = parse_sentiment_reply(reply)
    assert result.polarity == "positive"
    assert result.intensity == 0.9
    assert result.comparative == 0.8
    assert result.positive_tokens == (TokenScore("love", None), TokenScore("great", 0.7))
    assert result.negative_tokens == ()
    assert result.language is None


def test_snake_case_tokens() -> None:
    result = parse_sentiment_reply(
        '{"score": -0.4, "polarity": "negative", "negative_tokens": ["broken"]}'
    )
    assert result.negative_tokens == (TokenScore("broken", None),)
    assert result.intensity == 0.4
