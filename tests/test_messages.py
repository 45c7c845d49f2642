"""`agentos.core.messages`: roles, constructors, refusals, text and the JSON round trip."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentos.core import (
    ContentPart,
    ImagePart,
    Message,
    MessageHistoryAdapter,
    ReplayBlock,
    Role,
    TextPart,
    ToolCall,
    ToolResult,
    dump_messages,
    load_messages,
)

NON_ASSISTANT_ROLES = [role for role in Role if role is not Role.ASSISTANT]
NON_TOOL_ROLES = [role for role in Role if role is not Role.TOOL]


# --- roles -----------------------------------------------------------------------------------


def test_roles_are_exactly_the_seven_with_lowercase_values() -> None:
    assert {role.name: role.value for role in Role} == {
        "SYSTEM": "system",
        "USER": "user",
        "ASSISTANT": "assistant",
        "TOOL": "tool",
        "SUMMARY": "summary",
        "ERROR": "error",
        "THOUGHT": "thought",
    }


def test_role_is_a_str_enum_equal_to_its_value() -> None:
    assert isinstance(Role.USER, str)
    assert str(Role.USER) == "user"
    assert Role("thought") is Role.THOUGHT


def test_message_coerces_a_role_string_to_the_enum() -> None:
    message = Message("summary", "so far")  # type: ignore[arg-type]
    assert message.role is Role.SUMMARY


def test_message_refuses_an_unknown_role() -> None:
    with pytest.raises(ValueError, match="narrator"):
        Message("narrator", "once upon a time")  # type: ignore[arg-type]


# --- constructors ----------------------------------------------------------------------------


def test_system_constructor() -> None:
    message = Message.system("Be brief.")
    assert message == Message(Role.SYSTEM, "Be brief.")
    assert message.tool_calls == []
    assert message.tool_result is None
    assert message.replay_blocks == []
    assert message.name is None
    assert message.metadata == {}


def test_user_constructor_with_text_and_name() -> None:
    message = Message.user("Hello", name="ada")
    assert message.role is Role.USER
    assert message.content == "Hello"
    assert message.name == "ada"


def test_user_constructor_with_text_and_image_parts() -> None:
    parts: list[ContentPart] = [
        TextPart("What is this?"),
        ImagePart("https://example.com/cat.png", media_type="image/png"),
    ]
    message = Message.user(parts)
    assert message.role is Role.USER
    assert message.content == parts
    assert message.name is None


def test_assistant_constructor_defaults_to_empty_text_and_no_calls() -> None:
    message = Message.assistant()
    assert message.role is Role.ASSISTANT
    assert message.content == ""
    assert message.tool_calls == []
    assert message.replay_blocks == []


def test_assistant_constructor_keeps_tool_calls_and_replay_blocks_in_order() -> None:
    calls = [ToolCall("c1", "weather", {"city": "Paris"}), ToolCall("c2", "time")]
    blocks = [
        ReplayBlock("anthropic", "thinking", {"thinking": "hm", "signature": "sig"}),
        ReplayBlock("gemini", "thought_signature", {"signature": "abc"}),
    ]
    message = Message.assistant("Checking.", tool_calls=calls, replay_blocks=blocks)
    assert message.content == "Checking."
    assert message.tool_calls == calls
    assert message.replay_blocks == blocks


def test_assistant_constructor_copies_the_lists_it_is_given() -> None:
    calls = [ToolCall("c1", "weather")]
    blocks = [ReplayBlock("anthropic", "thinking")]
    message = Message.assistant(tool_calls=calls, replay_blocks=blocks)
    calls.append(ToolCall("c2", "time"))
    blocks.clear()
    assert message.tool_calls == [ToolCall("c1", "weather")]
    assert message.replay_blocks == [ReplayBlock("anthropic", "thinking")]


def test_tool_constructor_carries_the_result_and_no_text() -> None:
    result = ToolResult("c1", "weather", {"temp_c": 21})
    message = Message.tool(result)
    assert message.role is Role.TOOL
    assert message.tool_result == result
    assert message.content == ""
    assert message.tool_calls == []


@pytest.mark.parametrize("role", [Role.SUMMARY, Role.ERROR, Role.THOUGHT])
def test_roles_without_a_constructor_are_built_directly(role: Role) -> None:
    message = Message(role, "note", metadata={"turn": 3})
    assert message.role is role
    assert message.text == "note"
    assert message.metadata == {"turn": 3}


def test_field_defaults_of_the_parts() -> None:
    assert TextPart("hi").type == "text"
    image = ImagePart("data:image/png;base64,AAAA")
    assert (image.media_type, image.type) == (None, "image")
    assert ToolCall("c1", "noop").arguments == {}
    result = ToolResult("c1", "noop")
    assert (result.output, result.is_error, result.error_details) == (None, False, None)
    assert ReplayBlock("anthropic", "redacted_thinking").data == {}


def test_messages_are_frozen() -> None:
    message = Message.user("hi")
    with pytest.raises(dataclasses.FrozenInstanceError):
        message.content = "changed"  # type: ignore[misc]


def test_default_lists_and_dicts_are_not_shared_between_messages() -> None:
    first = Message.user("a")
    second = Message.user("b")
    first.metadata["seen"] = True
    assert second.metadata == {}
    assert first.tool_calls is not second.tool_calls


# --- refusals --------------------------------------------------------------------------------


@pytest.mark.parametrize("role", NON_ASSISTANT_ROLES)
def test_only_assistant_messages_carry_tool_calls(role: Role) -> None:
    result = ToolResult("c0", "x") if role is Role.TOOL else None
    with pytest.raises(ValueError, match=f"only assistant messages request tool calls.*'{role}'"):
        Message(role, "", tool_calls=[ToolCall("c1", "weather")], tool_result=result)


def test_tool_message_without_a_tool_result_is_refused() -> None:
    with pytest.raises(ValueError, match="a tool message carries exactly one tool_result"):
        Message(Role.TOOL, "orphan output")


@pytest.mark.parametrize("role", NON_TOOL_ROLES)
def test_only_tool_messages_carry_a_tool_result(role: Role) -> None:
    with pytest.raises(ValueError, match="a tool message carries exactly one tool_result"):
        Message(role, "", tool_result=ToolResult("c1", "weather"))


# --- text ------------------------------------------------------------------------------------


def test_text_of_string_content_is_the_string() -> None:
    assert Message.user("plain words").text == "plain words"


def test_text_joins_text_parts_and_skips_images() -> None:
    message = Message.user(
        [
            TextPart("left "),
            ImagePart("https://example.com/a.png"),
            TextPart("right"),
            ImagePart("data:image/gif;base64,R0lG", "image/gif"),
        ]
    )
    assert message.text == "left right"


def test_text_of_empty_parts_and_of_image_only_content_is_empty() -> None:
    assert Message.user([]).text == ""
    assert Message.user([ImagePart("https://example.com/a.png")]).text == ""


def test_text_of_a_tool_message_is_empty() -> None:
    assert Message.tool(ToolResult("c1", "weather", "sunny")).text == ""


# --- JSON ------------------------------------------------------------------------------------


def test_dump_writes_every_field_with_role_values() -> None:
    assert json.loads(dump_messages([Message.user("hi", name="ada")])) == [
        {
            "role": "user",
            "content": "hi",
            "tool_calls": [],
            "tool_result": None,
            "replay_blocks": [],
            "name": "ada",
            "metadata": {},
        }
    ]


def test_dump_writes_parts_tool_calls_results_and_blocks() -> None:
    history = [
        Message.user([TextPart("see"), ImagePart("https://x.test/i.png", "image/png")]),
        Message.assistant(
            tool_calls=[ToolCall("c1", "look", {"q": [1, 2.5, None]})],
            replay_blocks=[ReplayBlock("gemini", "thought_signature", {"sig": "s"})],
        ),
        Message.tool(ToolResult("c1", "look", None, True, {"code": "TOOL_ERROR"})),
    ]
    data = json.loads(dump_messages(history))
    assert data[0]["content"] == [
        {"text": "see", "type": "text"},
        {"url": "https://x.test/i.png", "media_type": "image/png", "type": "image"},
    ]
    assert data[1]["tool_calls"] == [
        {"id": "c1", "name": "look", "arguments": {"q": [1, 2.5, None]}}
    ]
    assert data[1]["replay_blocks"] == [
        {"provider": "gemini", "type": "thought_signature", "data": {"sig": "s"}}
    ]
    assert data[2]["tool_result"] == {
        "tool_call_id": "c1",
        "tool_name": "look",
        "output": None,
        "is_error": True,
        "error_details": {"code": "TOOL_ERROR"},
    }


def test_dump_of_an_empty_history() -> None:
    assert dump_messages([]) == "[]"
    assert load_messages("[]") == []


def test_dump_with_indent_is_the_same_json_pretty_printed() -> None:
    history = [Message.system("s"), Message.user("u")]
    pretty = dump_messages(history, indent=2)
    assert pretty.startswith('[\n  {\n    "role": "system",')
    assert json.loads(pretty) == json.loads(dump_messages(history))
    assert load_messages(pretty) == history


def test_load_accepts_bytes() -> None:
    history = [Message.user("bytes too")]
    assert load_messages(dump_messages(history).encode()) == history


def test_load_fills_defaults_for_omitted_fields() -> None:
    assert load_messages('[{"role": "user", "content": "hi"}]') == [Message.user("hi")]
    assert load_messages('[{"role": "assistant"}]') == [Message.assistant()]


def test_history_adapter_is_the_one_dump_and_load_use() -> None:
    history = [Message.user("hi")]
    assert MessageHistoryAdapter.dump_json(history).decode() == dump_messages(history)
    assert MessageHistoryAdapter.validate_json(dump_messages(history)) == history


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("[{", id="truncated"),
        pytest.param("not json", id="not-json"),
        pytest.param("", id="empty"),
        pytest.param('{"role": "user"}', id="object-not-list"),
        pytest.param('[{"content": "no role"}]', id="missing-role"),
        pytest.param('[{"role": "narrator", "content": "x"}]', id="unknown-role"),
        pytest.param('[{"role": "user", "content": 42}]', id="content-not-text-or-parts"),
        pytest.param(
            '[{"role": "user", "content": [{"type": "audio", "url": "x"}]}]',
            id="unknown-part-type",
        ),
        pytest.param('[{"role": "user", "content": [{"text": "x"}]}]', id="part-without-type"),
        pytest.param(
            '[{"role": "user", "tool_calls": [{"id": "c1", "name": "f"}]}]',
            id="tool-calls-on-user",
        ),
        pytest.param('[{"role": "tool", "content": "x"}]', id="tool-without-result"),
        pytest.param(
            '[{"role": "user", "tool_result": {"tool_call_id": "c1", "tool_name": "f"}}]',
            id="result-on-user",
        ),
        pytest.param(
            '[{"role": "assistant", "tool_calls": [{"name": "f"}]}]', id="tool-call-without-id"
        ),
        pytest.param(
            '[{"role": "assistant", "tool_calls": [{"id": "c1", "name": "f", "arguments": [1]}]}]',
            id="arguments-not-object",
        ),
        pytest.param('[{"role": "user", "metadata": []}]', id="metadata-not-object"),
    ],
)
def test_load_refuses_what_is_not_a_history(text: str) -> None:
    with pytest.raises(pydantic.ValidationError):
        load_messages(text)


# --- the round trip, as a property -----------------------------------------------------------

# JSON has no NaN or infinities: pydantic writes them as null, and NaN != NaN anyway, so only
# finite floats can round-trip. Integers are unbounded: JSON numbers have no size limit.
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_values: st.SearchStrategy[Any] = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=6,
)
json_objects: st.SearchStrategy[dict[str, Any]] = st.dictionaries(
    st.text(max_size=8), json_values, max_size=3
)

content_parts: st.SearchStrategy[ContentPart] = st.one_of(
    st.builds(TextPart, st.text()),
    st.builds(ImagePart, st.text(), st.none() | st.text()),
)
contents: st.SearchStrategy[str | list[ContentPart]] = st.text() | st.lists(
    content_parts, max_size=4
)
tool_calls = st.builds(ToolCall, st.text(), st.text(), json_objects)
tool_results = st.builds(
    ToolResult, st.text(), st.text(), json_values, st.booleans(), st.none() | json_objects
)
replay_blocks = st.builds(ReplayBlock, st.text(), st.text(), json_objects)


@st.composite
def messages(draw: st.DrawFn) -> Message:
    role = draw(st.sampled_from(Role))
    return Message(
        role,
        draw(contents),
        tool_calls=draw(st.lists(tool_calls, max_size=3)) if role is Role.ASSISTANT else [],
        tool_result=draw(tool_results) if role is Role.TOOL else None,
        replay_blocks=draw(st.lists(replay_blocks, max_size=2)),
        name=draw(st.none() | st.text()),
        metadata=draw(json_objects),
    )


# On a cold Hypothesis cache the first text draw builds the Unicode tables (about a second);
# that is not slow generation, so the too_slow health check stays out of the way.
TEXT_HEAVY = settings(suppress_health_check=[HealthCheck.too_slow])


@settings(TEXT_HEAVY, max_examples=200)
@given(st.lists(messages(), max_size=5))
def test_any_history_round_trips_exactly_through_json(history: list[Message]) -> None:
    dumped = dump_messages(history)
    loaded = load_messages(dumped)
    assert loaded == history
    # Byte-stable too: nothing drifts in type or sign (1.0 stays a float, -0.0 stays -0.0).
    assert dump_messages(loaded) == dumped
    assert [message.text for message in loaded] == [message.text for message in history]


@TEXT_HEAVY
@given(st.lists(messages(), min_size=1, max_size=3))
def test_round_trip_keeps_part_and_role_types(history: list[Message]) -> None:
    for before, after in zip(history, load_messages(dump_messages(history)), strict=True):
        assert after.role is before.role
        assert type(after.content) is type(before.content)
        if isinstance(before.content, list):
            assert isinstance(after.content, list)
            assert [type(part) for part in after.content] == [type(part) for part in before.content]
