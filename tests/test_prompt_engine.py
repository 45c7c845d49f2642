from __future__ import annotations

import pytest

from agentos.core.errors import ContextWindowExceededError, GMIError, GMIErrorCode
from agentos.core.messages import Message, Role, ToolCall, ToolResult
from agentos.llm.catalog import context_window
from agentos.substrate import (
    DISCOVERY_PRIORITY,
    FORMAT_PREFERENCE_PRIORITY,
    PERSONA_BASE_PRIORITY,
    PERSONALITY_SECTION_PRIORITY,
    PROFILE_PRIORITY,
    ROLLING_SUMMARY_PRIORITY,
    SKILLS_PRIORITY,
    VERBOSITY_PREFERENCE_PRIORITY,
    PromptEngine,
    SystemPrompt,
    history_budget,
    message_tokens,
)

KNOWN = ("openai", "gpt-4o")  # 128,000 tokens
UNKNOWN = ("openai", "no-such-model-xyz")


def _user(tokens: int, tag: str = "u") -> Message:
    return Message.user(tag + "x" * (tokens * 4 - len(tag)))


def test_priority_constants() -> None:
    assert (PERSONA_BASE_PRIORITY, PERSONALITY_SECTION_PRIORITY) == (1, 2)
    assert (ROLLING_SUMMARY_PRIORITY, DISCOVERY_PRIORITY, SKILLS_PRIORITY) == (50, 55, 57)
    assert PROFILE_PRIORITY == 60
    assert (VERBOSITY_PREFERENCE_PRIORITY, FORMAT_PREFERENCE_PRIORITY) == (90, 91)


def test_budget_is_35_percent_of_the_window() -> None:
    assert context_window(*KNOWN) == 128_000
    assert history_budget(128_000) == 44_800
    assert history_budget(8_192) == 2_867
    engine = PromptEngine()
    known = engine.build(provider=KNOWN[0], model=KNOWN[1], current_turn=[Message.user("hi")])
    assert (known.context_window, known.history_budget, known.window_known) == (
        128_000,
        44_800,
        True,
    )
    unknown = engine.build(provider=UNKNOWN[0], model=UNKNOWN[1])
    assert (unknown.context_window, unknown.history_budget, unknown.window_known) == (
        8_192,
        2_867,
        False,
    )


def test_order_system_prompts_by_priority_then_context_history_turn() -> None:
    history = [Message.user("earlier"), Message.assistant("reply")]
    built = PromptEngine().build(
        provider=KNOWN[0],
        model=KNOWN[1],
        system_prompts=[
            SystemPrompt("pref", VERBOSITY_PREFERENCE_PRIORITY),
            SystemPrompt("base", PERSONA_BASE_PRIORITY),
            SystemPrompt("skills-a", SKILLS_PRIORITY),
            SystemPrompt("   ", PROFILE_PRIORITY),
            SystemPrompt("summary", ROLLING_SUMMARY_PRIORITY),
            SystemPrompt("skills-b", SKILLS_PRIORITY),
            SystemPrompt("personality", PERSONALITY_SECTION_PRIORITY),
        ],
        retrieved_context="facts",
        history=history,
        current_turn=[Message.user("now")],
    )
    assert [(m.role, m.text) for m in built.messages] == [
        (Role.SYSTEM, "base"),
        (Role.SYSTEM, "personality"),
        (Role.SYSTEM, "summary"),
        (Role.SYSTEM, "skills-a"),
        (Role.SYSTEM, "skills-b"),
        (Role.SYSTEM, "pref"),
        (Role.SYSTEM, "facts"),
        (Role.USER, "earlier"),
        (Role.ASSISTANT, "reply"),
        (Role.USER, "now"),
    ]
    assert built.dropped_history == []


def test_128k_model_sends_the_newest_history_within_44800_tokens() -> None:
    history = [_user(1_000, f"h{i}-") for i in range(60)]  # 60,000 tokens
    current = [_user(100, "now")]
    built = PromptEngine().build(
        provider=KNOWN[0], model=KNOWN[1], history=history, current_turn=current
    )
    # 44,800 - 100 for the current turn leaves room for the newest 44 earlier messages
    assert built.kept_history == history[16:]
    assert built.dropped_history == history[:16]
    assert built.messages == [*history[16:], *current]
    assert built.estimated_tokens == 44_100


def test_unknown_model_budget_is_2867_tokens() -> None:
    history = [_user(100, f"h{i}-") for i in range(40)]  # 4,000 tokens
    current = [_user(25, "now")]
    built = PromptEngine().build(
        provider=UNKNOWN[0], model=UNKNOWN[1], history=history, current_turn=current
    )
    # 2,867 - 25 = 2,842: the newest 28 messages (2,800 tokens) fit, a 29th would not
    assert built.messages == [*history[12:], *current]
    assert built.estimated_tokens == 2_825


def test_whole_request_must_fit_the_window_too() -> None:
    history = [_user(1_000, f"h{i}-") for i in range(60)]
    built = PromptEngine().build(
        provider=KNOWN[0],
        model=KNOWN[1],
        system_prompts=[SystemPrompt("s" * 400_000, PERSONA_BASE_PRIORITY)],  # 100,000 tokens
        history=history,
        current_turn=[_user(100)],
    )
    # 128,000 - 100,100 = 27,900 left in the window: 27 earlier messages
    assert built.kept_history == history[33:]
    assert built.estimated_tokens == 127_100


def test_current_turn_stays_whole_over_the_budget() -> None:
    current = [_user(2_000, "a"), Message.assistant("b" * 4_000), _user(1_000, "c")]
    built = PromptEngine().build(
        provider=UNKNOWN[0],
        model=UNKNOWN[1],
        history=[_user(10)],
        current_turn=current,
    )
    assert built.messages == current
    assert len(built.dropped_history) == 1


def test_context_window_exceeded_for_a_known_model() -> None:
    engine = PromptEngine()
    fits = engine.build(
        provider=KNOWN[0],
        model=KNOWN[1],
        system_prompts=[SystemPrompt("s" * 4_000)],
        history=[_user(10)],
        current_turn=[_user(127_000)],
    )
    assert fits.estimated_tokens == 128_000
    assert fits.kept_history == []
    with pytest.raises(ContextWindowExceededError) as caught:
        engine.build(
            provider=KNOWN[0],
            model=KNOWN[1],
            system_prompts=[SystemPrompt("s" * 4_004)],
            current_turn=[_user(127_000)],
        )
    error = caught.value
    assert isinstance(error, GMIError)
    assert error.code is GMIErrorCode.GMI_CONTEXT_ERROR
    assert error.details == {
        "provider": "openai",
        "model": "gpt-4o",
        "context_window": 128_000,
        "required_tokens": 128_001,
    }


def test_unknown_model_never_raises() -> None:
    built = PromptEngine().build(
        provider=UNKNOWN[0],
        model=UNKNOWN[1],
        history=[_user(10)],
        current_turn=[_user(50_000)],
    )
    assert built.messages == [_user(50_000)]
    assert built.estimated_tokens == 50_000


def _round(call_id: str, result_tokens: int) -> list[Message]:
    return [
        Message.assistant("", tool_calls=[ToolCall(call_id, "f", {})]),
        Message.tool(ToolResult(call_id, "f", "r" * (result_tokens * 4 - 2))),
    ]


def test_tool_round_is_dropped_whole() -> None:
    tool_round = [
        Message.assistant("", tool_calls=[ToolCall("c1", "f", {}), ToolCall("c2", "f", {})]),
        Message.tool(ToolResult("c1", "f", "r" * 3_998)),
        Message.tool(ToolResult("c2", "f", "r" * 3_998)),
    ]
    assert [message_tokens(m) for m in tool_round] == [2, 1_000, 1_000]
    history = [_user(1_000, "old"), *tool_round, Message.assistant("a" * 400), _user(100, "u1")]
    current = [_user(1_367, "now")]
    built = PromptEngine().build(
        provider=UNKNOWN[0], model=UNKNOWN[1], history=history, current_turn=current
    )
    # 1,500 left: the last result alone would fit, but its round (2,002) does not
    assert built.kept_history == history[-2:]
    assert built.messages == [*history[-2:], *current]


def test_round_answered_by_the_current_turn_stays_with_it() -> None:
    call, result = _round("c9", 10)
    history = [_user(3_000, "big"), _user(10), call]
    built = PromptEngine().build(
        provider=UNKNOWN[0], model=UNKNOWN[1], history=history, current_turn=[result]
    )
    assert built.messages == [_user(10), call, result]


def test_orphan_error_and_thought_messages_are_left_out() -> None:
    orphan = Message.tool(ToolResult("gone", "f", "x"))
    built = PromptEngine().build(
        provider=UNKNOWN[0],
        model=UNKNOWN[1],
        history=[
            orphan,
            Message(Role.SUMMARY, "earlier talk"),
            Message(Role.ERROR, "e"),
            Message(Role.THOUGHT, "t"),
            Message.user("q"),
        ],
        current_turn=[Message.user("now")],
    )
    assert [(m.role, m.text) for m in built.messages] == [
        (Role.SYSTEM, "[Conversation Summary]\nearlier talk"),
        (Role.USER, "q"),
        (Role.USER, "now"),
    ]
