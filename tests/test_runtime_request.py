"""A request to the full runtime is checked before any work (issue 13 item 3).

"A request with a missing user_id / session_id, an unknown key (named, with a suggestion) or a
wrong type is refused with INVALID_ARGUMENT before any work."
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentos.core import GMIError, GMIErrorCode
from agentos.runtime.request import AgentOSInput, RequestOptions, parse_request

INVALID = GMIErrorCode.INVALID_ARGUMENT
BASE: dict[str, Any] = {"user_id": "user-42", "session_id": "research-session-1"}
INPUT_KEYS = frozenset(AgentOSInput.__dataclass_fields__)
OPTION_KEYS = frozenset(RequestOptions.__dataclass_fields__)


def _refused(request: object) -> GMIError:
    with pytest.raises(GMIError) as caught:
        parse_request(request)  # type: ignore[arg-type]
    assert caught.value.code is INVALID
    return caught.value


def test_the_spec_example_parses() -> None:
    request = parse_request(
        {
            **BASE,
            "selected_persona_id": "v_researcher",
            "text_input": "Summarize the open incidents from this week.",
        }
    )
    assert request == AgentOSInput(
        user_id="user-42",
        session_id="research-session-1",
        selected_persona_id="v_researcher",
        text_input="Summarize the open incidents from this week.",
    )
    assert request.options == RequestOptions()
    assert request.metadata == {}


def test_every_field_is_carried() -> None:
    request = parse_request(
        {
            **BASE,
            "text_input": "hi",
            "organization_id": "acme",
            "conversation_id": "conv-1",
            "options": {
                "temperature": 0.2,
                "top_p": 1,
                "max_tokens": 256,
                "response_format": {"type": "json_object"},
                "preferred_model_id": "gpt-4o-mini",
                "preferred_provider_id": "openai",
                "max_tool_call_iterations": 3,
                "structured_reply": {"schema": {"type": "object"}},
            },
            "user_context_override": {"skill_level": "expert"},
            "task_context_override": {"domain": "ops"},
            "agency_id": "agency-1",
            "role_id": "reviewer",
            "metadata": {"trace": "abc"},
        }
    )
    assert request.options == RequestOptions(
        temperature=0.2,
        top_p=1,
        max_tokens=256,
        response_format={"type": "json_object"},
        preferred_model_id="gpt-4o-mini",
        preferred_provider_id="openai",
        max_tool_call_iterations=3,
        structured_reply={"schema": {"type": "object"}},
    )
    assert (request.organization_id, request.conversation_id) == ("acme", "conv-1")
    assert (request.agency_id, request.role_id) == ("agency-1", "reviewer")
    assert request.user_context_override == {"skill_level": "expert"}
    assert request.task_context_override == {"domain": "ops"}
    assert request.metadata == {"trace": "abc"}


def test_an_agentos_input_is_checked_too() -> None:
    given_input = AgentOSInput(user_id="u", session_id="s", options=RequestOptions(top_p=0.5))
    assert parse_request(given_input) == given_input
    assert _refused(AgentOSInput(user_id=" ", session_id="s")).details == {"option": "user_id"}
    bad_options = AgentOSInput(user_id="u", session_id="s", options=RequestOptions(temperature=3))
    assert _refused(bad_options).details == {"option": "options.temperature"}


def test_the_mapping_is_copied() -> None:
    metadata = {"a": 1}
    request = parse_request({**BASE, "metadata": metadata})
    metadata["a"] = 2
    assert request.metadata == {"a": 1}


@pytest.mark.parametrize(
    ("request_value", "option", "why"),
    [
        ({"session_id": "s"}, "user_id", "user_id: is required"),
        ({"user_id": "u"}, "session_id", "session_id: is required"),
        ({"user_id": "", "session_id": "s"}, "user_id", "user_id: must not be blank"),
        ({"user_id": "u", "session_id": "  "}, "session_id", "session_id: must not be blank"),
        ({"user_id": 42, "session_id": "s"}, "user_id", "user_id: must be a string, got int"),
        ({**BASE, "text_input": 5}, "text_input", "text_input: must be a string or None"),
        ({**BASE, "text_input": "bad \udc80"}, "text_input", "text_input: is not valid Unicode"),
        ({**BASE, "selected_persona_id": ""}, "selected_persona_id", "selected_persona_id: must"),
        ({**BASE, "organization_id": 1}, "organization_id", "organization_id: must be a str"),
        ({**BASE, "conversation_id": " "}, "conversation_id", "conversation_id: must not"),
        ({**BASE, "role_id": "r"}, "role_id", "role_id: needs an agency_id"),
        ({**BASE, "agency_id": ""}, "agency_id", "agency_id: must not be blank"),
        ({**BASE, "metadata": []}, "metadata", "metadata: must be a mapping"),
        ({**BASE, "metadata": {1: "x"}}, "metadata", "metadata: keys must be strings"),
        ({**BASE, "user_context_override": 3}, "user_context_override", "user_context_override"),
        ({**BASE, "task_context_override": "x"}, "task_context_override", "task_context_override"),
        ({**BASE, "options": "fast"}, "options", "options: must be RequestOptions or a mapping"),
        ({**BASE, "options": {"temperature": "hot"}}, "options.temperature", "must be a number"),
        ({**BASE, "options": {"temperature": 2.5}}, "options.temperature", "between 0.0 and 2.0"),
        ({**BASE, "options": {"temperature": -0.1}}, "options.temperature", "between"),
        ({**BASE, "options": {"temperature": True}}, "options.temperature", "must be a number"),
        ({**BASE, "options": {"top_p": 1.5}}, "options.top_p", "between 0.0 and 1.0"),
        ({**BASE, "options": {"top_p": float("nan")}}, "options.top_p", "must be a number"),
        ({**BASE, "options": {"max_tokens": 0}}, "options.max_tokens", "integer >= 1, got 0"),
        ({**BASE, "options": {"max_tokens": 1.5}}, "options.max_tokens", "integer >= 1"),
        (
            {**BASE, "options": {"max_tool_call_iterations": 0}},
            "options.max_tool_call_iterations",
            "",
        ),
        ({**BASE, "options": {"preferred_model_id": ""}}, "options.preferred_model_id", "blank"),
        ({**BASE, "options": {"preferred_provider_id": 3}}, "options.preferred_provider_id", ""),
        ({**BASE, "options": {"response_format": "json"}}, "options.response_format", "mapping"),
        ({**BASE, "options": {"structured_reply": 1}}, "options.structured_reply", "mapping"),
        ("hello", "request", "request: must be an AgentOSInput or a mapping"),
        (None, "request", "got NoneType"),
    ],
)
def test_each_refusal_names_its_field(request_value: object, option: str, why: str) -> None:
    error = _refused(request_value)
    assert error.details == {"option": option}
    assert error.message.startswith(f"{option}:")
    assert why in error.message


@pytest.mark.parametrize(
    ("key", "suggestion"),
    [
        ("userId", "user_id"),
        ("sessionId", "session_id"),
        ("textInput", "text_input"),
        ("selectedPersonaId", "selected_persona_id"),
        ("userContextOverride", "user_context_override"),
        ("sesion_id", "session_id"),
        ("persona_id", "selected_persona_id"),
        ("visionInputs", None),
    ],
)
def test_an_unknown_key_is_named_with_a_suggestion(key: str, suggestion: str | None) -> None:
    error = _refused({**BASE, key: "x"})
    assert error.details == {"option": key}
    hint = f" (did you mean {suggestion!r}?)" if suggestion else ""
    assert error.message == f"{key}: unknown option {key!r}{hint}"


@pytest.mark.parametrize(
    ("key", "suggestion"),
    [
        ("topP", "top_p"),
        ("maxTokens", "max_tokens"),
        ("preferredModelId", "preferred_model_id"),
        ("temprature", "temperature"),
        ("customFlags", None),
    ],
)
def test_a_nested_options_key_is_named_by_its_dotted_path(key: str, suggestion: str | None) -> None:
    error = _refused({**BASE, "options": {key: 1}})
    assert error.details == {"option": f"options.{key}"}
    hint = f" (did you mean {suggestion!r}?)" if suggestion else ""
    assert error.message == f"options.{key}: unknown option {key!r}{hint}"


def test_a_camel_case_request_is_refused_as_unknown_keys_not_missing_ids() -> None:
    error = _refused({"userId": "u", "sessionId": "s", "textInput": "hi"})
    assert error.details == {"option": "sessionId"}
    for part in (
        "'sessionId' (did you mean 'session_id'?)",
        "'textInput' (did you mean 'text_input'?)",
        "'userId' (did you mean 'user_id'?)",
    ):
        assert part in error.message


def test_a_key_that_is_not_text_is_named_by_its_repr() -> None:
    request: dict[object, object] = {3: "x"}
    request.update(BASE)
    error = _refused(request)
    assert error.details == {"option": "3"}
    assert error.message == "3: unknown key: keys are snake_case strings"


_VALUES = st.none() | st.integers() | st.text(max_size=5) | st.lists(st.booleans(), max_size=2)


@given(
    key=st.text(min_size=1, max_size=30).filter(lambda key: key not in INPUT_KEYS), value=_VALUES
)
def test_any_extra_key_is_refused_naming_it(key: str, value: object) -> None:
    with pytest.raises(GMIError) as caught:
        parse_request({**BASE, "text_input": "hi", key: value})
    assert caught.value.code is INVALID
    assert caught.value.details["option"] == key


@given(
    key=st.text(min_size=1, max_size=30).filter(lambda key: key not in OPTION_KEYS), value=_VALUES
)
def test_any_extra_options_key_is_refused_naming_its_dotted_path(key: str, value: object) -> None:
    with pytest.raises(GMIError) as caught:
        parse_request({**BASE, "options": {"temperature": 0.5, key: value}})
    assert caught.value.code is INVALID
    assert caught.value.details["option"] == f"options.{key}"


@given(
    temperature=st.floats(0, 2),
    top_p=st.floats(0, 1),
    max_tokens=st.integers(1, 1_000_000),
)
def test_any_option_in_range_is_accepted(temperature: float, top_p: float, max_tokens: int) -> None:
    options = {"temperature": temperature, "top_p": top_p, "max_tokens": max_tokens}
    parsed = parse_request({**BASE, "options": options}).options
    assert (parsed.temperature, parsed.top_p, parsed.max_tokens) == (temperature, top_p, max_tokens)
