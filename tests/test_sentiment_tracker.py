"""SentimentTracker through the GMI: thresholds at and around their boundaries, runs of turns,
severities, metadata, confusion phrases, languages, the working-memory history (reference §1.5,
case 33; spec: Sentiment scoring and events)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from agentos.core.messages import Message
from agentos.nlp import SentimentResult
from agentos.substrate import GMI, GMIEvent, GMIEventType, SentimentThresholds, SentimentTracker
from agentos.substrate.sentiment_tracker import SENTIMENT_HISTORY_KEY, matched_confusion_phrases
from agentos.testing import ScriptedModel, ScriptStep
from fakes.gmi_helpers import FakeUtility, make_gmi, persona, run, sentiment, turn

E = GMIEventType


result = sentiment


async def tracked_gmi(
    results: Sequence[SentimentResult], replies: int | None = None, **tracking: Any
) -> tuple[GMI, FakeUtility]:
    utility = FakeUtility(list(results))
    count = replies if replies is not None else len(results)
    chosen = persona(sentiment_tracking={"enabled": True, **tracking})
    gmi = await make_gmi(ScriptedModel(["ok"] * count), persona=chosen, utility_ai=utility)
    return gmi, utility


async def events_per_turn(gmi: GMI, texts: Sequence[str]) -> list[list[GMIEvent]]:
    per_turn: list[list[GMIEvent]] = []
    for index, text in enumerate(texts):
        before = len(gmi.events.events())
        await run(gmi, turn(text, turn_id=f"t{index + 1}"))
        per_turn.append(gmi.events.events()[before:])
    return per_turn


def types(events: Sequence[GMIEvent]) -> list[GMIEventType]:
    return [event.event_type for event in events]


# -- USER_FRUSTRATED ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("score", "intensity", "fires"),
    [
        (-0.31, 0.61, True),
        (-0.30, 0.90, False),  # not below the threshold
        (-0.31, 0.60, False),  # intensity not above 0.6
        (-0.90, 0.61, True),
    ],
)
async def test_frustration_on_one_strong_turn(score: float, intensity: float, fires: bool) -> None:
    gmi, _ = await tracked_gmi([result(score, intensity)])
    [events] = await events_per_turn(gmi, ["grr"])
    assert (E.USER_FRUSTRATED in types(events)) is fires


async def test_frustration_on_the_second_turn_in_a_row_with_its_severity_and_metadata() -> None:
    gmi, _ = await tracked_gmi([result(-0.31, 0.1), result(-0.5, 0.1), result(-0.4, 0.1)])
    first, second, third = await events_per_turn(gmi, ["meh", "this is bad", "still bad"])
    assert types(first) == []
    [event] = second
    assert (event.event_type, event.severity, event.turn_id) == (E.USER_FRUSTRATED, "high", "t2")
    metadata = event.metadata
    assert metadata.sentiment_score == -0.5
    assert metadata.sentiment_polarity == "negative"
    assert metadata.sentiment_intensity == 0.1
    assert metadata.consecutive_turns == 2
    assert metadata.triggered_by == "sentiment"
    assert metadata.evidence_preview == "this is bad"
    assert types(third) == [E.USER_FRUSTRATED]


async def test_a_single_strong_frustrated_turn_is_medium() -> None:
    gmi, _ = await tracked_gmi([result(-0.8, 0.8)])
    [[event]] = await events_per_turn(gmi, ["awful"])
    assert event.severity == "medium"


# -- USER_SATISFIED -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("score", "intensity", "fires"),
    [(0.31, 0.51, True), (0.30, 0.9, False), (0.31, 0.50, False)],
)
async def test_satisfaction_on_one_strong_turn(score: float, intensity: float, fires: bool) -> None:
    gmi, _ = await tracked_gmi([result(score, intensity)])
    [events] = await events_per_turn(gmi, ["nice"])
    assert (E.USER_SATISFIED in types(events)) is fires
    if fires:
        assert events[0].severity == "low"


async def test_satisfaction_on_the_third_turn_in_a_row() -> None:
    gmi, _ = await tracked_gmi([result(0.31, 0.1)] * 3)
    runs = await events_per_turn(gmi, ["good", "good", "good"])
    assert [types(events) for events in runs] == [[], [], [E.USER_SATISFIED]]
    assert runs[2][0].metadata.consecutive_turns == 3


# -- USER_CONFUSED ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "phrases"),
    [
        ("I don't understand this", ["don't understand"]),
        ("I don\u2019t understand", ["don't understand"]),
        ("Wait, what??", ["??"]),
        ("HUH. Not sure what you mean", ["huh", "not sure"]),
        ("Can you explain recursion?", ["explain"]),
        ("The nuclear option", []),
        ("I explained it already", []),
        ("That is perfectly clear", []),
    ],
)
def test_confusion_phrases_match_whole_words(text: str, phrases: list[str]) -> None:
    assert matched_confusion_phrases(text) == phrases


async def test_confusion_by_phrase_and_by_negative_tokens_on_a_neutral_turn() -> None:
    gmi, _ = await tracked_gmi(
        [result(0.0), result(0.0, negatives=3), result(0.0, negatives=2), result(0.2, negatives=5)]
    )
    runs = await events_per_turn(gmi, ["I'm confused", "hmm", "hmm", "hmm"])
    keyword, pattern, two_tokens, not_neutral = runs
    [event] = keyword
    assert (event.event_type, event.severity) == (E.USER_CONFUSED, "medium")
    assert event.metadata.triggered_by == "keyword"
    assert event.metadata.trigger_keywords == ("confused",)
    [event] = pattern
    assert (event.event_type, event.severity) == (E.USER_CONFUSED, "high")  # 2nd neutral turn
    assert event.metadata.triggered_by == "pattern"
    assert two_tokens == []
    # Polarity positive (0.2 > 0.05): not confused, though its 4th neutral-run turn is disengaged.
    assert types(not_neutral) == [E.LOW_ENGAGEMENT]


# -- LOW_ENGAGEMENT -----------------------------------------------------------------------------


async def test_low_engagement_from_the_fourth_neutral_turn_with_short_messages() -> None:
    gmi, _ = await tracked_gmi([result(0.1)] * 5)
    runs = await events_per_turn(gmi, ["ok", "sure", "fine", "k", "yes"])
    engaged: list[GMIEventType] = []
    low = [E.LOW_ENGAGEMENT]
    assert [types(events) for events in runs] == [engaged, engaged, engaged, low, low]
    assert runs[3][0].severity == "medium"
    assert runs[3][0].metadata.consecutive_turns == 4


async def test_no_low_engagement_when_recent_user_messages_are_long() -> None:
    long = "x" * 60
    gmi, _ = await tracked_gmi([result(0.1)] * 4)
    runs = await events_per_turn(gmi, [long] * 4)
    assert all(events == [] for events in runs)


# -- ERROR_THRESHOLD_EXCEEDED -------------------------------------------------------------------


async def test_error_threshold_after_two_errors_in_the_last_ten_trace_entries() -> None:
    utility = FakeUtility([result(0.0), result(0.0), result(0.0)])
    model = ScriptedModel([ScriptStep.fail(400, "bad"), ScriptStep.fail(400, "bad"), "ok"])
    chosen = persona(sentiment_tracking={"enabled": True})
    gmi = await make_gmi(model, persona=chosen, utility_ai=utility)
    runs = await events_per_turn(gmi, ["a b c d e f", "a b c d e f", "a b c d e f"])
    assert types(runs[1]) == []  # one error so far
    [event] = runs[2]
    assert (event.event_type, event.severity) == (E.ERROR_THRESHOLD_EXCEEDED, "high")
    assert event.metadata.triggered_by == "error"
    assert event.metadata.error_count == 2


# -- configuration, history, context, languages -------------------------------------------------


async def test_persona_thresholds_replace_the_defaults() -> None:
    gmi, _ = await tracked_gmi(
        [result(-0.2, 0.1), result(-0.2, 0.1)],
        frustration_threshold=-0.1,
        consecutive_turns_for_trigger=2,
    )
    runs = await events_per_turn(gmi, ["hm", "hm"])
    assert [types(events) for events in runs] == [[], [E.USER_FRUSTRATED]]
    tracker = SentimentTracker(thresholds=SentimentThresholds(frustration_intensity=0.1))
    assert tracker.thresholds.frustration_intensity == 0.1


async def test_case_33_history_keeps_ten_trends_and_the_context_has_the_last_polarity() -> None:
    scores = [0.0] * 11 + [-0.5]
    gmi, _ = await tracked_gmi([result(s, 0.1) for s in scores])
    await events_per_turn(gmi, [f"message {i}" for i in range(12)])
    history = await gmi.working_memory.get(SENTIMENT_HISTORY_KEY)
    assert len(history["trends"]) == 10
    assert [t["turn_id"] for t in history["trends"]] == [f"t{i}" for i in range(3, 13)]
    assert history["trends"][-1]["polarity"] == "negative"
    assert history["last_analyzed_turn_id"] == "t12"
    assert gmi.user_context["current_sentiment"] == "negative"


async def test_language_from_user_context_then_persona_then_default() -> None:
    utility = FakeUtility([result(0.0)] * 3)
    chosen = persona(sentiment_tracking={"enabled": True}, default_language="es-MX")
    gmi = await make_gmi(ScriptedModel(["a"] * 3), persona=chosen, utility_ai=utility)
    await run(gmi, turn("hola"))
    await run(gmi, turn("bonjour", user_context_override={"language": "fr"}))
    assert utility.languages == ["es-MX", "fr"]
    plain = await make_gmi(
        ScriptedModel(["a"]),
        persona=persona(sentiment_tracking={"enabled": True}),
        utility_ai=utility,
    )
    await run(plain, turn("hello"))
    assert utility.languages[-1] is None  # the utility's own default (English)


async def test_the_default_tracker_scores_with_the_lexicon_and_no_model_call() -> None:
    model = ScriptedModel(["Sorry about that."])
    gmi = await make_gmi(model, persona=persona(sentiment_tracking={"enabled": True}))
    await run(gmi, turn("This is terrible"))
    [event] = gmi.events.events()
    assert event.event_type is E.USER_FRUSTRATED  # score -1.0, intensity 1.0
    assert event.metadata.sentiment_score == -1.0
    assert len(model.requests) == 1  # the turn's own call only


async def test_no_tracking_without_the_persona_switch_or_on_a_continuation() -> None:
    utility = FakeUtility([result(-0.9, 0.9)])
    gmi = await make_gmi(ScriptedModel(["ok"]), utility_ai=utility)
    await run(gmi, turn("This is terrible"))
    assert utility.languages == []
    assert gmi.events.events() == []

    from agentos.core.messages import ToolCall, ToolResult

    tracked, utility = await tracked_gmi([result(-0.9, 0.9)])
    tracked.hydrate_conversation_history(
        [Message.user("run it"), Message.assistant(tool_calls=[ToolCall("c1", "ext", {})])]
    )
    stream = await tracked.handle_tool_results([ToolResult("c1", "ext", "done")])
    await stream.output()
    assert utility.languages == []  # the latest message was a tool result, not the user's


async def test_a_replaced_history_blanks_the_dropped_turns_trend_context_and_evidence() -> None:
    gmi, _ = await tracked_gmi([result(-0.8, 0.8), result(0.0)])
    await events_per_turn(gmi, ["my secret is bad", "kept"])
    await gmi.replace_history([Message.user("kept"), Message.assistant("ok")])
    history = await gmi.working_memory.get(SENTIMENT_HISTORY_KEY)
    assert [t["context"] for t in history["trends"]] == ["", "kept"]
    [event] = gmi.events.events()
    assert event.metadata.evidence_preview is None
    assert event.metadata.sentiment_score == -0.8  # the scores stay


@pytest.mark.parametrize(("length", "fires"), [(49, True), (50, False)])
async def test_low_engagement_boundary_on_the_average_length(length: int, fires: bool) -> None:
    gmi, _ = await tracked_gmi([result(0.0)] * 4)
    runs = await events_per_turn(gmi, ["y" * length] * 4)
    assert (E.LOW_ENGAGEMENT in types(runs[3])) is fires


@pytest.mark.parametrize(("score", "fires"), [(0.05, True), (-0.05, True), (0.051, False)])
async def test_confusion_by_tokens_needs_neutral_polarity(score: float, fires: bool) -> None:
    gmi, _ = await tracked_gmi([result(score, negatives=3)])
    [events] = await events_per_turn(gmi, ["hm"])
    assert (E.USER_CONFUSED in types(events)) is fires


@pytest.mark.parametrize(("runs", "fires"), [(3, False), (4, True)])
async def test_low_engagement_needs_the_fourth_turn_of_the_run(runs: int, fires: bool) -> None:
    gmi, _ = await tracked_gmi([result(0.3)] * runs)  # 0.3 is not above the threshold: neutral run
    per_turn = await events_per_turn(gmi, ["k"] * runs)
    assert (E.LOW_ENGAGEMENT in types(per_turn[-1])) is fires
