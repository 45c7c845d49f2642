"""Prompt-cache diagnostics in the step loop of `generate_text()` and `stream_text()`.

With ``cache_diagnostics`` set, every step sends a `CacheDiagnosticsRequest`: the first names the
response the caller gave (none for ``True``), each later one the previous step's response; each
`StepResult` carries the step's ``provider_message_id`` and the diagnostics reported for it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from agentos import (
    GMIError,
    GMIErrorCode,
    ProviderError,
    ToolCall,
    generate_text,
    stream_text,
    tool,
)
from agentos.api.results import StepFinishPart, StepResult
from agentos.llm import KNOWN_PROVIDERS, ProviderInfo
from agentos.llm.model import (
    CacheDiagnosticsRequest,
    FinishChunk,
    ModelChunk,
    ModelRequest,
    TextDelta,
    ToolCallChunk,
)
from agentos.testing import ScriptedModel, ScriptStep
from fakes.anthropic_server import text_stream, tool_use_stream
from fakes.loopback import LoopbackServer, Reply

MISS = {"cache_miss_reason": {"type": "messages_changed", "cache_missed_input_tokens": 1200}}


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


@dataclass(frozen=True)
class Turn:
    """What one step of `RecordingModel` streams."""

    message_id: str | None
    text: str = ""
    call: ToolCall | None = None
    diagnostics: dict[str, Any] | None = None
    fail: int | None = None


@dataclass
class RecordingModel:
    """A `ChatModel` that answers each step as scripted, with a message id, and keeps requests."""

    turns: Sequence[Turn]
    requests: list[ModelRequest] = field(default_factory=list)

    @property
    def provider_id(self) -> str:
        return "recording"

    @property
    def model_id(self) -> str:
        return "recording-1"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        turn = self.turns[len(self.requests)]
        self.requests.append(request)
        if turn.fail is not None:
            raise ProviderError(f"[{turn.fail}] down", status_code=turn.fail)
        if turn.text:
            yield TextDelta(turn.text)
        if turn.call is not None:
            yield ToolCallChunk(turn.call)
        yield FinishChunk(
            "tool_calls" if turn.call is not None else "stop",
            response_model=self.model_id,
            provider_message_id=turn.message_id,
            cache_diagnostics=turn.diagnostics,
        )

    @property
    def sent(self) -> list[CacheDiagnosticsRequest | None]:
        """The diagnostics request each step sent."""
        return [request.options.cache_diagnostics for request in self.requests]


def call(index: int) -> ToolCall:
    return ToolCall(f"call_{index}", "lookup", {"key": f"k{index}"})


def three_steps() -> RecordingModel:
    return RecordingModel(
        [
            Turn("msg_1", call=call(1), diagnostics=None),
            Turn("msg_2", call=call(2), diagnostics=MISS),
            Turn("msg_3", text="done", diagnostics={"cache_miss_reason": None}),
        ]
    )


async def test_true_opts_in_and_each_later_step_names_the_previous_response() -> None:
    model = three_steps()
    result = await generate_text("go", model=model, tools=[lookup], cache_diagnostics=True)
    assert model.sent == [
        CacheDiagnosticsRequest(None),
        CacheDiagnosticsRequest("msg_1"),
        CacheDiagnosticsRequest("msg_2"),
    ]
    assert [step.provider_message_id for step in result.steps] == ["msg_1", "msg_2", "msg_3"]
    assert [step.cache_diagnostics for step in result.steps] == [
        None,
        MISS,
        {"cache_miss_reason": None},
    ]
    assert result.text == "done"


async def test_a_message_id_is_what_the_first_step_compares_with() -> None:
    model = three_steps()
    await generate_text("go", model=model, tools=[lookup], cache_diagnostics="msg_0")
    assert model.sent == [
        CacheDiagnosticsRequest("msg_0"),
        CacheDiagnosticsRequest("msg_1"),
        CacheDiagnosticsRequest("msg_2"),
    ]


@pytest.mark.parametrize("setting", [None, False])
async def test_without_the_option_no_step_asks(setting: bool | None) -> None:
    model = three_steps()
    result = await generate_text("go", model=model, tools=[lookup], cache_diagnostics=setting)
    assert model.sent == [None, None, None]
    # The message id is kept whatever the option; diagnostics are what the provider reported.
    assert [step.provider_message_id for step in result.steps] == ["msg_1", "msg_2", "msg_3"]


async def test_the_option_left_out_asks_nothing() -> None:
    model = three_steps()
    await generate_text("go", model=model, tools=[lookup])
    assert model.sent == [None, None, None]


async def test_a_step_without_a_message_id_leaves_the_next_nothing_to_compare() -> None:
    model = ScriptedModel([ScriptStep(tool_calls=[call(1)]), "done"])
    result = await generate_text("go", model=model, tools=[lookup], cache_diagnostics="msg_0")
    assert [request.options.cache_diagnostics for request in model.requests] == [
        CacheDiagnosticsRequest("msg_0"),
        CacheDiagnosticsRequest(None),
    ]
    assert [(s.provider_message_id, s.cache_diagnostics) for s in result.steps] == [
        (None, None),
        (None, None),
    ]


async def test_stream_text_sends_and_reports_them_too() -> None:
    model = three_steps()
    run = stream_text("go", model=model, tools=[lookup], cache_diagnostics=True)
    steps: list[StepResult] = [
        part.step async for part in run.full_stream if isinstance(part, StepFinishPart)
    ]
    assert model.sent == [
        CacheDiagnosticsRequest(None),
        CacheDiagnosticsRequest("msg_1"),
        CacheDiagnosticsRequest("msg_2"),
    ]
    assert [step.cache_diagnostics for step in steps] == [None, MISS, {"cache_miss_reason": None}]
    assert [step.provider_message_id for step in steps] == ["msg_1", "msg_2", "msg_3"]


@pytest.mark.parametrize(
    ("value", "why"),
    [
        (1, "must be True or a previous message id, got int"),
        (["msg_1"], "must be True or a previous message id, got list"),
        ("  ", "the previous message id is empty"),
    ],
)
async def test_a_bad_value_is_refused_naming_the_option(value: Any, why: str) -> None:
    model = three_steps()
    with pytest.raises(GMIError) as caught:
        await generate_text("go", model=model, cache_diagnostics=value)
    assert caught.value.code == GMIErrorCode.INVALID_ARGUMENT
    assert caught.value.details == {"option": "cache_diagnostics"}
    assert caught.value.message == f"cache_diagnostics: {why}"
    assert model.requests == []  # refused before any model call


def test_stream_text_refuses_a_bad_value_at_once() -> None:
    with pytest.raises(GMIError) as caught:
        stream_text("go", model=three_steps(), cache_diagnostics=2.5)  # type: ignore[arg-type]
    assert caught.value.details == {"option": "cache_diagnostics"}


# --- through the Anthropic adapter ---------------------------------------------------------------


async def test_the_anthropic_adapter_carries_them_step_to_step() -> None:
    replies = [
        Reply(
            events=tool_use_stream(
                [("toolu_01", "lookup", {"key": "a"})], message_id="msg_01A", diagnostics=None
            )
        ),
        Reply(events=text_stream(["done"], message_id="msg_01B", diagnostics=MISS)),
    ]
    with LoopbackServer(replies) as server:
        result = await generate_text(
            "go",
            provider="anthropic",
            model="claude-test-1",
            api_key="sk-ant-test",
            base_url=server.url,
            fallback_providers=[],
            tools=[lookup],
            cache_diagnostics=True,
        )
    bodies = [request.json for request in server.requests]
    assert [body["diagnostics"] for body in bodies] == [
        {"previous_message_id": None},
        {"previous_message_id": "msg_01A"},
    ]
    assert [(s.provider_message_id, s.cache_diagnostics) for s in result.steps] == [
        ("msg_01A", None),
        ("msg_01B", MISS),
    ]
    assert result.text == "done"


async def test_a_step_that_falls_back_to_another_provider_names_no_previous_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = RecordingModel(
        [Turn("msg_1", call=ToolCall("c1", "lookup", {"key": "k"})), Turn(None, fail=503)]
    )
    backup = ScriptedModel(["done"], provider_id="backup", model_id="b")
    monkeypatch.setitem(
        KNOWN_PROVIDERS, "backup", ProviderInfo("backup", None, None, lambda m, k, u: backup)
    )
    await generate_text(
        "Hi",
        model=first,
        tools=[lookup],
        cache_diagnostics=True,
        fallback_providers=[{"provider": "backup"}],
    )
    assert first.sent == [CacheDiagnosticsRequest(None), CacheDiagnosticsRequest("msg_1")]
    # The backup never saw msg_1: another provider's id means nothing to it.
    assert backup.requests[0].options.cache_diagnostics == CacheDiagnosticsRequest(None)
