from __future__ import annotations

import pytest

from agentos.core.messages import Message, Role, ToolCall, ToolResult
from agentos.substrate import (
    DEFAULT_MAX_MESSAGES,
    ConversationHistoryManager,
    DroppedTurn,
    trim_history,
)


def _call(call_id: str) -> ToolCall:
    return ToolCall(call_id, "lookup", {"q": call_id})


def _result(call_id: str) -> Message:
    return Message.tool(ToolResult(call_id, "lookup", {"answer": call_id}))


def _texts(messages: list[Message]) -> list[str]:
    return [
        m.tool_result.tool_call_id if m.tool_result is not None else f"{m.role.value}:{m.text}"
        for m in messages
    ]


def test_default_window_keeps_newest_twenty() -> None:
    history = ConversationHistoryManager()
    assert history.max_messages == DEFAULT_MAX_MESSAGES == 20
    for i in range(25):
        history.record_input(Message.user(f"m{i}"))
    assert _texts(history.messages()) == [f"user:m{i}" for i in range(5, 25)]


def test_given_window_and_add_does_not_trim() -> None:
    history = ConversationHistoryManager(max_messages=3)
    for i in range(5):
        history.add(Message.assistant(f"a{i}"))
    assert len(history) == 5
    history.record_input(Message.user("u"))
    assert _texts(history.messages()) == ["assistant:a3", "assistant:a4", "user:u"]


def test_window_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_messages"):
        ConversationHistoryManager(max_messages=0)
    history = ConversationHistoryManager()
    with pytest.raises(ValueError, match="max_messages"):
        history.max_messages = 0


def _round_history() -> list[Message]:
    return [
        Message.user("u1"),
        Message.assistant("", tool_calls=[_call("c1"), _call("c2")]),
        _result("c1"),
        _result("c2"),
        Message.assistant("reply"),
    ]


@pytest.mark.parametrize(
    ("max_messages", "expected"),
    [
        # the cut falls just before the round: the round stays whole
        (5, ["assistant:", "c1", "c2", "assistant:reply", "user:u2"]),
        # the cut removes the calling message: both its results go too
        (4, ["assistant:reply", "user:u2"]),
        # the cut falls between the results: the remaining result goes too
        (3, ["assistant:reply", "user:u2"]),
        # the cut falls right after the round: nothing else removed
        (2, ["assistant:reply", "user:u2"]),
    ],
)
def test_cut_inside_a_tool_round_drops_its_remaining_results(
    max_messages: int, expected: list[str]
) -> None:
    history = ConversationHistoryManager(max_messages=max_messages)
    history.replace_history(_round_history())
    history.record_input(Message.user("u2"))
    assert _texts(history.messages()) == expected


def test_trim_keeps_results_of_calls_that_were_not_cut() -> None:
    messages = [
        Message.assistant("", tool_calls=[_call("old")]),
        Message.user("x"),
        Message.assistant("", tool_calls=[_call("new")]),
        _result("new"),
    ]
    assert _texts(trim_history(messages, 3)) == ["user:x", "assistant:", "new"]
    assert trim_history(messages, 10) == messages


def test_replace_normalises_and_does_not_trim() -> None:
    history = ConversationHistoryManager(max_messages=2)
    history.replace_history(
        [
            Message(Role.SUMMARY, "they talked about cats"),
            Message(Role.ERROR, "boom"),
            Message(Role.THOUGHT, "hmm"),
            Message.user("a"),
            Message.assistant("b"),
            Message.user("c"),
        ]
    )
    messages = history.messages()
    assert _texts(messages) == [
        "system:[Conversation Summary]\nthey talked about cats",
        "user:a",
        "assistant:b",
        "user:c",
    ]
    assert messages[0].role is Role.SYSTEM
    history.replace_history([])
    assert history.messages() == []


def test_hydrate_normalises_the_same_way_and_does_not_trim() -> None:
    history = ConversationHistoryManager(max_messages=1)
    history.hydrate_conversation_history(
        [Message(Role.SUMMARY, "s"), Message(Role.THOUGHT, "t"), Message.user("u")]
    )
    assert _texts(history.messages()) == ["system:[Conversation Summary]\ns", "user:u"]
    history.hydrate_conversation_history([])
    assert history.messages() == []


def test_replace_and_clear_report_turns_no_longer_held() -> None:
    history = ConversationHistoryManager()
    reports: list[list[DroppedTurn]] = []
    history.on_turns_dropped(reports.append)
    history.record_input(Message.user("hello"), turn_id="t1")
    history.add(Message.assistant("hi"))
    history.record_input(Message.user("weather?"), turn_id="t2")
    history.record_input(_result("c9"), turn_id="t3")  # no user input: not recorded
    assert history.recorded_turns() == {"t1": "hello", "t2": "weather?"}

    history.replace_history([Message.user("weather?"), Message.assistant("sunny")])
    assert reports == [[DroppedTurn("t1", "hello")]]
    assert history.recorded_turns() == {"t2": "weather?"}

    # an assistant message with the same text does not hold the turn
    history.replace_history([Message.assistant("weather?")])
    assert reports[-1] == [DroppedTurn("t2", "weather?")]

    history.record_input(Message.user("again"), turn_id="t4")
    history.clear_history()
    assert history.messages() == []
    assert reports[-1] == [DroppedTurn("t4", "again")]
    assert history.recorded_turns() == {}
    assert len(reports) == 3

    # nothing left to drop: no call
    history.clear_history()
    assert len(reports) == 3


def test_hydrate_drops_no_turn_and_unsubscribe_stops_reports() -> None:
    history = ConversationHistoryManager()
    reports: list[list[DroppedTurn]] = []
    unsubscribe = history.on_turns_dropped(reports.append)
    history.record_input(Message.user("hello"), turn_id="t1")
    history.hydrate_conversation_history([])
    assert reports == []
    assert history.recorded_turns() == {"t1": "hello"}
    unsubscribe()
    unsubscribe()
    history.clear_history()
    assert reports == []
    assert history.recorded_turns() == {}


def test_turn_recorded_from_several_input_messages_uses_the_user_text() -> None:
    history = ConversationHistoryManager()
    history.record_input([Message.system("note"), Message.user("question")], turn_id="t")
    assert history.recorded_turns() == {"t": "question"}
    assert _texts(history.messages()) == ["system:note", "user:question"]
