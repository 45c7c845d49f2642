"""The Anthropic adapter, through the real ``anthropic`` SDK, against a loopback Messages API."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, Literal

import anthropic
import pytest

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import (
    ImagePart,
    Message,
    ReplayBlock,
    Role,
    TextPart,
    ToolCall,
    ToolResult,
)
from agentos.core.usage import ModelUsage
from agentos.llm import catalog
from agentos.llm.catalog import ModelInfo
from agentos.llm.errors import ProviderError
from agentos.llm.model import (
    CacheDiagnosticsRequest,
    ChatModel,
    CompletionOptions,
    FinishChunk,
    ModelChunk,
    ModelRequest,
    ReplayChunk,
    TextDelta,
    ToolCallChunk,
    ToolDefinition,
    UsageChunk,
)
from agentos.llm.providers import _anthropic_request
from agentos.llm.providers._anthropic_schema import fits_output_format, model_traits
from agentos.llm.providers.anthropic import (
    DEFAULT_ANTHROPIC_MODEL,
    AnthropicModel,
    create_anthropic_model,
)
from fakes.anthropic_server import (
    block_stop,
    error_event,
    error_reply,
    input_json_delta,
    message_delta,
    message_start,
    message_stop,
    overloaded,
    ping,
    redacted_thinking_start,
    signature_delta,
    text_delta,
    text_start,
    text_stream,
    thinking_delta,
    thinking_start,
    tool_use_start,
    tool_use_stream,
)
from fakes.loopback import RecordedRequest, Reply, ScriptedServer, Served
from fakes.model_streams import collect, fail, text_of

KEY = "sk-ant-test"
HELLO = [Message.user("Hello")]
WEATHER = ToolDefinition(
    "get_weather",
    "The weather in a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string", "minLength": 1}, "age": {"type": "integer"}},
    "required": ["name", "age"],
}
RECORD = {"type": "object", "additionalProperties": {"type": "number"}}


Serve = Callable[..., Served]


@pytest.fixture(scope="module")
def loopback() -> Iterator[ScriptedServer]:
    """One server for the module (a server takes a moment to shut down)."""
    with ScriptedServer() as shared:
        yield shared


@pytest.fixture
def serve(loopback: ScriptedServer) -> Serve:
    """Script the shared server's next replies, in order."""
    return loopback.serve


# A current model the catalog does not know, so the catalog's figures do not shape the tests.
MODEL = "claude-test-1"


_built: list[AnthropicModel] = []


@pytest.fixture(autouse=True)
async def _close_models() -> AsyncIterator[None]:
    """Close the connections of every model a test built."""
    yield
    while _built:
        await _built.pop().aclose()


def model_for(server: Served, model_id: str = MODEL) -> AnthropicModel:
    model = AnthropicModel(model_id, api_key=KEY, base_url=server.url)
    _built.append(model)
    return model


def finish_of(chunks: list[ModelChunk]) -> FinishChunk:
    finishes = [chunk for chunk in chunks if isinstance(chunk, FinishChunk)]
    assert len(finishes) == 1
    assert chunks[-1] is finishes[0]
    return finishes[0]


def body(server: Served, index: int = 0) -> dict[str, Any]:
    recorded: RecordedRequest = server.requests[index]
    data = recorded.json
    assert isinstance(data, dict)
    return data


def ok() -> Reply:
    return Reply(events=text_stream(["ok"]))


@pytest.fixture
def catalog_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    """A priced catalog entry with an output limit for the test model."""
    info = ModelInfo(
        "anthropic",
        MODEL,
        context_window=1_000_000,
        max_output_tokens=64_000,
        input_per_million=3.0,
        output_per_million=15.0,
        cache_read_per_million=0.3,
        cache_write_per_million=3.75,
    )
    monkeypatch.setitem(catalog._CATALOG, ("anthropic", MODEL), info)


@pytest.fixture
def no_catalog(monkeypatch: pytest.MonkeyPatch) -> None:
    """The catalog knows no output limit, whatever the model."""
    monkeypatch.setattr(_anthropic_request, "model_info", lambda provider, model: None)


# --- setup ---------------------------------------------------------------------------------------


def test_no_key_is_a_setup_error_naming_the_variable() -> None:
    with pytest.raises(ProviderError) as caught:
        AnthropicModel("claude-sonnet-5")
    assert caught.value.kind == "setup"
    assert "ANTHROPIC_API_KEY" in caught.value.message
    assert caught.value.details["env"] == "ANTHROPIC_API_KEY"


def test_the_key_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    model = AnthropicModel("claude-sonnet-5")
    assert isinstance(model, ChatModel)
    assert (model.provider_id, model.model_id) == ("anthropic", "claude-sonnet-5")


def test_a_missing_sdk_is_a_setup_error_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(ProviderError) as caught:
        AnthropicModel("claude-sonnet-5", api_key=KEY)
    assert caught.value.kind == "setup"
    assert "pip install 'agentos[anthropic]'" in caught.value.message


def test_the_factory_builds_the_default_model() -> None:
    model = create_anthropic_model(None, KEY, "http://127.0.0.1:9")
    assert model.model_id == DEFAULT_ANTHROPIC_MODEL == "claude-sonnet-5"


async def test_a_given_client_is_used_without_retries(serve: Serve) -> None:
    server = serve(Reply(status=500, json={"type": "error"}), ok())
    client = anthropic.AsyncAnthropic(api_key="sk-own", base_url=server.url, max_retries=5)
    model = AnthropicModel("claude-sonnet-5", client=client)
    error, _ = await fail(model, ModelRequest(HELLO))
    assert error.status_code == 500
    assert len(server.requests) == 1  # no SDK retry: fallback is the gateway's decision
    assert server.requests[0].headers["authorization"] == "Bearer sk-own"
    await model.aclose()
    assert not client.is_closed()  # the caller's client stays the caller's to close
    await client.close()


# --- the request ---------------------------------------------------------------------------------


async def test_a_plain_request_and_its_headers(serve: Serve) -> None:
    server = serve(ok())
    chunks = await collect(model_for(server), ModelRequest(HELLO))
    assert text_of(chunks) == "ok"
    recorded = server.requests[0]
    assert (recorded.method, recorded.path) == ("POST", "/v1/messages")
    # SDK 2.x sends the key as a bearer token, no longer as x-api-key.
    assert recorded.headers["authorization"] == f"Bearer {KEY}"
    assert "x-api-key" not in recorded.headers
    assert recorded.headers["anthropic-version"] == anthropic._constants.ANTHROPIC_API_VERSION
    assert body(server) == {
        "model": MODEL,
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hello"}]}],
        "stream": True,
    }


async def test_options_reach_the_body_and_unsupported_ones_do_not(serve: Serve) -> None:
    server = serve(ok())
    options = CompletionOptions(
        temperature=0.2,
        top_p=0.9,
        frequency_penalty=0.5,
        seed=7,
        max_tokens=300,
        user_id="user-42",
        stop_sequences=("END",),
        custom_model_params={"top_k": 5, "service_tier": "standard_only"},
        request_timeout=30,
    )
    await collect(model_for(server), ModelRequest(HELLO, options=options))
    sent = body(server)
    assert sent["max_tokens"] == 300
    assert sent["metadata"] == {"user_id": "user-42"}
    assert sent["stop_sequences"] == ["END"]
    assert sent["top_k"] == 5
    assert sent["service_tier"] == "standard_only"
    # The API version the SDK pins refuses temperature and top_p on every model.
    for absent in ("temperature", "top_p", "frequency_penalty", "seed", "tools", "tool_choice"):
        assert absent not in sent
    assert server.requests[0].headers["x-stainless-read-timeout"] == "30"


async def test_max_tokens_comes_from_the_catalog(serve: Serve, catalog_entry: None) -> None:
    server = serve(ok())
    await collect(model_for(server), ModelRequest(HELLO))
    assert body(server)["max_tokens"] == 64_000


PLAIN_BODY: dict[str, Any] = {
    "model": MODEL,
    "max_tokens": 4096,
    "messages": [{"role": "user", "content": [{"type": "text", "text": "Hello"}]}],
    "stream": True,
}


async def test_effort_goes_in_output_config(serve: Serve) -> None:
    server = serve(ok())
    options = CompletionOptions(effort="medium")
    await collect(model_for(server), ModelRequest(HELLO, options=options))
    assert body(server) == {**PLAIN_BODY, "output_config": {"effort": "medium"}}


@pytest.mark.parametrize(
    ("cache", "sent"),
    [
        (True, {"type": "ephemeral"}),
        ("5m", {"type": "ephemeral", "ttl": "5m"}),
        ("1h", {"type": "ephemeral", "ttl": "1h"}),
    ],
)
async def test_cache_is_the_top_level_automatic_cache_control(
    serve: Serve, cache: bool | Literal["5m", "1h"], sent: dict[str, str]
) -> None:
    server = serve(ok())
    messages = [Message.system("You are terse."), *HELLO]
    options = CompletionOptions(cache=cache)
    await collect(model_for(server), ModelRequest(messages, options=options))
    # One request-level marker: no block of the system prompt or the messages carries one.
    assert body(server) == {**PLAIN_BODY, "system": "You are terse.", "cache_control": sent}


@pytest.mark.parametrize("cache", [False, None])
async def test_no_cache_control_when_cache_is_off_or_unset(
    serve: Serve, cache: Literal[False] | None
) -> None:
    server = serve(ok())
    options = CompletionOptions(cache=cache)
    await collect(model_for(server), ModelRequest(HELLO, options=options))
    assert body(server) == PLAIN_BODY


@pytest.mark.parametrize("tier", ["auto", "standard_only"])
async def test_service_tier_is_the_request_s_service_tier(serve: Serve, tier: str) -> None:
    server = serve(ok())
    options = CompletionOptions(service_tier=tier)
    await collect(model_for(server), ModelRequest(HELLO, options=options))
    assert body(server) == {**PLAIN_BODY, "service_tier": tier}


async def test_a_service_tier_anthropic_does_not_have_is_refused_before_any_request(
    serve: Serve,
) -> None:
    server = serve(ok())
    model = model_for(server)
    options = CompletionOptions(service_tier="flex")
    with pytest.raises(GMIError) as caught:
        model.check_options(options)
    assert caught.value.code is GMIErrorCode.INVALID_ARGUMENT
    assert caught.value.details == {
        "option": "service_tier",
        "provider_id": "anthropic",
        "service_tier": "flex",
    }
    assert "service_tier" in caught.value.message
    with pytest.raises(GMIError) as caught:
        await collect(model, ModelRequest(HELLO, options=options))
    assert caught.value.details["option"] == "service_tier"
    assert server.requests == []


async def test_prompt_cache_key_and_retention_are_not_sent(serve: Serve) -> None:
    # Anthropic has no cache routing key and no in_memory/24h lifetime: the body is the one
    # without them, and the call still runs (a persona's OpenAI setting on a fallback hop).
    server = serve(ok())
    options = CompletionOptions(prompt_cache_key="user-7f3a", prompt_cache_retention="24h")
    chunks = await collect(model_for(server), ModelRequest(HELLO, options=options))
    assert body(server) == PLAIN_BODY
    assert text_of(chunks) == "ok"


async def test_json_mode_is_an_instruction_after_the_leading_system_messages(
    serve: Serve,
) -> None:
    server = serve(Reply(events=text_stream(['{"ok": true}'])))
    messages = [Message.system("You are terse."), *HELLO]
    options = CompletionOptions(json_mode=True)
    chunks = await collect(model_for(server), ModelRequest(messages, options=options))
    assert body(server) == {
        **PLAIN_BODY,
        "system": "You are terse.\n\n" + _anthropic_request.JSON_MODE_INSTRUCTION,
    }
    # No schema was asked for: no schema route, and the text is the answer as it came.
    finish = finish_of(chunks)
    assert finish.schema_route is None
    assert text_of(chunks) == '{"ok": true}'


@pytest.mark.parametrize("json_mode", [False, None])
async def test_json_mode_off_or_unset_adds_nothing(serve: Serve, json_mode: bool | None) -> None:
    server = serve(ok())
    options = CompletionOptions(json_mode=json_mode)
    await collect(model_for(server), ModelRequest(HELLO, options=options))
    assert body(server) == PLAIN_BODY


async def test_a_schema_wins_over_json_mode(serve: Serve) -> None:
    server = serve(Reply(events=text_stream(['{"name": "Ada", "age": 36}'])))
    options = CompletionOptions(json_mode=True, response_schema=PERSON)
    chunks = await collect(model_for(server), ModelRequest(HELLO, options=options))
    sent = body(server)
    assert finish_of(chunks).schema_route == "output_format"
    assert "system" not in sent


async def test_the_tier_the_usage_reports_reaches_the_finish_chunk(serve: Serve) -> None:
    server = serve(Reply(events=text_stream(["ok"], service_tier="priority")))
    options = CompletionOptions(service_tier="auto")
    chunks = await collect(model_for(server), ModelRequest(HELLO, options=options))
    assert finish_of(chunks).service_tier == "priority"


async def test_no_reported_tier_leaves_the_finish_chunk_s_tier_unset(serve: Serve) -> None:
    server = serve(ok())
    chunks = await collect(model_for(server), ModelRequest(HELLO))
    assert finish_of(chunks).service_tier is None


async def test_tools_are_sent_with_their_schema(serve: Serve) -> None:
    server = serve(ok())
    bare = ToolDefinition("now", "", {})
    await collect(model_for(server), ModelRequest(HELLO, tools=[WEATHER, bare]))
    sent = body(server)
    assert sent["tools"] == [
        {
            "name": "get_weather",
            "description": "The weather in a city.",
            "input_schema": WEATHER.parameters,
        },
        {"name": "now", "input_schema": {"type": "object", "properties": {}}},
    ]
    assert "tool_choice" not in sent


@pytest.mark.parametrize(
    ("choice", "sent"),
    [
        ("auto", {"type": "auto"}),
        ("none", {"type": "none"}),
        ("required", {"type": "any"}),
        ("get_weather", {"type": "tool", "name": "get_weather"}),
    ],
)
async def test_tool_choice_is_mapped(serve: Serve, choice: str, sent: dict[str, Any]) -> None:
    server = serve(ok(), ok())
    model = model_for(server)
    options = CompletionOptions(tool_choice=choice)
    await collect(model, ModelRequest(HELLO, tools=[WEATHER], options=options))
    await collect(model, ModelRequest(HELLO, options=options))
    assert body(server, 0)["tool_choice"] == sent
    assert "tool_choice" not in body(server, 1)  # never without tools
    assert "tools" not in body(server, 1)


async def test_the_history_is_converted(serve: Serve) -> None:
    server = serve(ok())
    thinking = {"type": "thinking", "thinking": "Check the weather.", "signature": "sig-Zx9=="}
    redacted = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}
    history = [
        Message.system("You are terse."),
        Message(Role.SUMMARY, "Earlier: the user lives in Oslo."),
        Message.system("Answer in English."),
        Message.user("Weather?"),
        Message.user([TextPart("Also this:"), ImagePart("data:image/png;base64,iVBORw0K")]),
        Message(Role.THOUGHT, "never sent"),
        Message.assistant(
            "Let me check.",
            tool_calls=[
                ToolCall("toolu_1", "get_weather", {"city": "Oslo"}),
                ToolCall("toolu_2", "get_weather", {"city": "Bergen"}),
            ],
            replay_blocks=[
                ReplayBlock("anthropic", "thinking", thinking),
                ReplayBlock("anthropic", "redacted_thinking", redacted),
                ReplayBlock("gemini", "thought_signature", {"signature": "g"}),
            ],
        ),
        Message.tool(ToolResult("toolu_1", "get_weather", {"temp_c": -3})),
        Message.tool(
            ToolResult(
                "toolu_2", "get_weather", "no station", is_error=True, error_details={"code": 404}
            )
        ),
        Message.system("Be brief."),
        Message(Role.ERROR, "never sent either"),
        Message.assistant(""),
        Message.user([ImagePart("https://example.com/ø.png")]),
    ]
    await collect(model_for(server), ModelRequest(history))
    sent = body(server)
    assert sent["system"] == (
        "You are terse.\n\nEarlier: the user lives in Oslo.\n\nAnswer in English."
    )
    assert sent["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Weather?"},
                {"type": "text", "text": "Also this:"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0K"},
                },
            ],
        },
        {
            "role": "assistant",
            "content": [
                thinking,
                redacted,
                {"type": "text", "text": "Let me check."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "get_weather",
                    "input": {"city": "Oslo"},
                },
                {
                    "type": "tool_use",
                    "id": "toolu_2",
                    "name": "get_weather",
                    "input": {"city": "Bergen"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": '{"temp_c": -3}'},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": '{"error": "no station", "details": {"code": 404}}',
                    "is_error": True,
                },
                {"type": "text", "text": "<system>\nBe brief.\n</system>"},
                {"type": "image", "source": {"type": "url", "url": "https://example.com/ø.png"}},
            ],
        },
    ]


async def test_a_data_url_that_is_not_base64_is_encoded(serve: Serve) -> None:
    server = serve(ok())
    image = ImagePart("data:,%89PNG", media_type="image/png")
    await collect(model_for(server), ModelRequest([Message.user([image])]))
    source = body(server)["messages"][0]["content"][0]["source"]
    assert source == {"type": "base64", "media_type": "image/png", "data": "iVBORw=="}


async def test_a_manual_thinking_budget_on_models_that_take_one(
    serve: Serve, no_catalog: None
) -> None:
    server = serve(ok(), ok())
    model = model_for(server, "claude-opus-4-1-20250805")
    await collect(
        model, ModelRequest(HELLO, options=CompletionOptions(thinking_budget_tokens=8000))
    )
    options = CompletionOptions(thinking_budget_tokens=2048, max_tokens=4000)
    await collect(model, ModelRequest(HELLO, options=options))
    assert body(server, 0)["thinking"] == {"type": "enabled", "budget_tokens": 8000}
    assert body(server, 0)["max_tokens"] == 8000 + 4096  # room for the answer after thinking
    assert body(server, 1)["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body(server, 1)["max_tokens"] == 4000


async def test_adaptive_thinking_on_models_that_refuse_a_budget(
    serve: Serve, no_catalog: None
) -> None:
    server = serve(ok())
    options = CompletionOptions(thinking_budget_tokens=4096)
    await collect(model_for(server, "claude-opus-4-8"), ModelRequest(HELLO, options=options))
    assert body(server)["thinking"] == {"type": "adaptive"}
    assert body(server)["max_tokens"] == 4096


def test_check_options_refuses_what_the_api_would() -> None:
    model = AnthropicModel("claude-opus-4-1", api_key=KEY)
    with pytest.raises(GMIError) as caught:
        model.check_options(CompletionOptions(thinking_budget_tokens=500))
    assert caught.value.code is GMIErrorCode.INVALID_ARGUMENT
    assert caught.value.details["option"] == "thinking_budget_tokens"
    with pytest.raises(GMIError) as caught:
        model.check_options(CompletionOptions(thinking_budget_tokens=2048, max_tokens=2048))
    assert caught.value.details["option"] == "max_tokens"
    with pytest.raises(GMIError) as caught:
        model.check_options(CompletionOptions(custom_model_params={"stream": False}))
    assert caught.value.details["option"] == "custom_model_params"
    # Adaptive thinking has no budget for max_tokens to exceed.
    AnthropicModel("claude-fable-5", api_key=KEY).check_options(
        CompletionOptions(thinking_budget_tokens=2048, max_tokens=1500)
    )


async def test_refused_options_send_nothing(serve: Serve) -> None:
    server = serve(ok())
    options = CompletionOptions(thinking_budget_tokens=10)
    with pytest.raises(GMIError):
        await collect(model_for(server), ModelRequest(HELLO, options=options))
    assert server.requests == []


# --- streaming -----------------------------------------------------------------------------------


async def test_text_streams_with_usage_and_finish(serve: Serve) -> None:
    events = [
        message_start(message_id="msg_01Abc", model="claude-sonnet-5-20261101", input_tokens=31),
        ping(),
        text_start(),
        text_delta("Grüß dich, "),
        ping(),
        text_delta("世界 👋"),
        block_stop(),
        message_delta("end_turn", output_tokens=9),
        message_stop(),
    ]
    server = serve(Reply(events=events))
    chunks = await collect(model_for(server), ModelRequest([Message.user("Sag hallo, 世界")]))
    assert [c.text for c in chunks if isinstance(c, TextDelta)] == ["Grüß dich, ", "世界 👋"]
    assert body(server)["messages"][0]["content"][0]["text"] == "Sag hallo, 世界"
    usages = [c.usage for c in chunks if isinstance(c, UsageChunk)]
    assert usages == [ModelUsage(prompt_tokens=31, completion_tokens=9)]
    assert usages[0].cost_usd is None  # not in the catalog: unknown, never 0
    assert finish_of(chunks) == FinishChunk(
        "stop", response_model="claude-sonnet-5-20261101", provider_message_id="msg_01Abc"
    )


@pytest.mark.parametrize(
    ("stop_reason", "finish"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("model_context_window_exceeded", "length"),
        ("tool_use", "tool_calls"),
        ("pause_turn", "other"),
    ],
)
async def test_stop_reasons_are_normalised(serve: Serve, stop_reason: str, finish: str) -> None:
    server = serve(Reply(events=text_stream(["x"], stop_reason=stop_reason)))
    chunks = await collect(model_for(server), ModelRequest(HELLO))
    assert finish_of(chunks).finish_reason == finish


async def test_usage_counts_cache_tokens_and_is_priced(serve: Serve, catalog_entry: None) -> None:
    events = [
        message_start(
            input_tokens=100, cache_read_input_tokens=2000, cache_creation_input_tokens=400
        ),
        text_start(),
        text_delta("hi"),
        block_stop(),
        message_delta(output_tokens=50),
        message_stop(),
    ]
    server = serve(Reply(events=events))
    chunks = await collect(model_for(server), ModelRequest(HELLO))
    (usage,) = [c.usage for c in chunks if isinstance(c, UsageChunk)]
    assert usage.completion_tokens == 50
    assert (usage.cache_read_tokens, usage.cache_write_tokens) == (2000, 400)
    # prompt_tokens counts every input token, cached ones included (the catalog's convention).
    assert (usage.prompt_tokens, usage.total_tokens) == (2500, 2550)
    expected = (100 * 3.0 + 50 * 15.0 + 2000 * 0.3 + 400 * 3.75) / 1_000_000
    assert usage.cost_usd == pytest.approx(expected)


async def test_parallel_tool_calls_are_assembled(serve: Serve) -> None:
    calls = [
        ("toolu_01", "get_weather", {"city": "Zürich", "units": "metric"}),
        ("toolu_02", "get_weather", {"city": "東京"}),
        ("toolu_03", "now", {}),
    ]
    server = serve(Reply(events=tool_use_stream(calls, text="Checking both.", fragment=5)))
    chunks = await collect(model_for(server), ModelRequest(HELLO, tools=[WEATHER]))
    assert text_of(chunks) == "Checking both."
    assert [c.tool_call for c in chunks if isinstance(c, ToolCallChunk)] == [
        ToolCall(*call) for call in calls
    ]
    assert finish_of(chunks).finish_reason == "tool_calls"


async def test_thinking_blocks_are_replayed_verbatim(serve: Serve) -> None:
    events = [
        message_start(),
        thinking_start(0),
        thinking_delta("The user wants ", 0),
        thinking_delta("a greeting.", 0),
        signature_delta("EqQBCgIYAhIM1gbcDa9GJwZA==", 0),
        block_stop(0),
        redacted_thinking_start("EmwKAhgBEgy3va3pzix/LafPsn4a", 1),
        block_stop(1),
        text_start(2),
        text_delta("Hello!", 2),
        block_stop(2),
        message_delta(output_tokens=30),
        message_stop(),
    ]
    server = serve(Reply(events=events), ok())
    model = model_for(server, "claude-opus-4-1")
    options = CompletionOptions(thinking_budget_tokens=1024, max_tokens=2048)
    chunks = await collect(model, ModelRequest(HELLO, options=options))
    blocks = [c.block for c in chunks if isinstance(c, ReplayChunk)]
    thinking = {
        "type": "thinking",
        "thinking": "The user wants a greeting.",
        "signature": "EqQBCgIYAhIM1gbcDa9GJwZA==",
    }
    redacted = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"}
    assert blocks == [
        ReplayBlock("anthropic", "thinking", thinking),
        ReplayBlock("anthropic", "redacted_thinking", redacted),
    ]
    assert text_of(chunks) == "Hello!"
    history = [*HELLO, Message.assistant("Hello!", replay_blocks=blocks), Message.user("Again")]
    await collect(model, ModelRequest(history, options=options))
    assert body(server, 1)["messages"][1] == {
        "role": "assistant",
        "content": [thinking, redacted, {"type": "text", "text": "Hello!"}],
    }


# --- errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "status", "error_type"),
    [
        (
            error_reply(400, "invalid_request_error", "max_tokens: too big"),
            400,
            "invalid_request_error",
        ),
        (
            error_reply(401, "authentication_error", "invalid x-api-key"),
            401,
            "authentication_error",
        ),
        (error_reply(403, "permission_error", "no access"), 403, "permission_error"),
        (error_reply(429, "rate_limit_error", "slow down"), 429, "rate_limit_error"),
        (error_reply(500, "api_error", "internal"), 500, "api_error"),
        (overloaded(), 529, "overloaded_error"),
    ],
)
async def test_http_errors_keep_their_status(
    serve: Serve, reply: Reply, status: int, error_type: str
) -> None:
    server = serve(reply)
    error, seen = await fail(model_for(server), ModelRequest(HELLO))
    assert seen == []
    assert (error.kind, error.status_code) == ("http", status)
    assert error.details["error_type"] == error_type
    assert error.details["request_id"] == "req_011TestRequest"
    assert error.message.startswith(f"Anthropic {MODEL}: [{status}] ")
    assert (error.provider_id, error.model_id) == ("anthropic", MODEL)
    assert error.usage is None
    assert error.after_output is False
    assert len(server.requests) == 1


async def test_an_error_event_after_output_keeps_the_usage_so_far(serve: Serve) -> None:
    events = [
        message_start(input_tokens=40),
        text_start(),
        text_delta("Partial"),
        error_event("overloaded_error", "Overloaded"),
    ]
    server = serve(Reply(events=events))
    error, seen = await fail(model_for(server), ModelRequest(HELLO))
    assert text_of(seen) == "Partial"
    assert (error.kind, error.status_code) == ("http", 529)
    assert error.details["error_type"] == "overloaded_error"
    assert error.after_output is True
    assert error.usage == ModelUsage(prompt_tokens=40, completion_tokens=1)


async def test_an_error_event_before_output(serve: Serve) -> None:
    server = serve(Reply(events=[message_start(), ping(), error_event("api_error", "boom")]))
    error, seen = await fail(model_for(server), ModelRequest(HELLO))
    assert seen == []
    assert (error.kind, error.status_code, error.after_output) == ("http", 500, False)
    assert error.usage == ModelUsage(prompt_tokens=25, completion_tokens=1)


async def test_a_refusal_is_a_billed_refusal_error(serve: Serve) -> None:
    details = {"type": "refusal", "category": "cyber", "explanation": "Declined."}
    events = [
        message_start(input_tokens=60),
        text_start(),
        text_delta("I can"),
        block_stop(),
        message_delta("refusal", output_tokens=7, stop_details=details),
        message_stop(),
    ]
    server = serve(Reply(events=events))
    error, seen = await fail(model_for(server), ModelRequest(HELLO))
    assert text_of(seen) == "I can"
    assert not any(isinstance(c, UsageChunk | FinishChunk) for c in seen)
    assert error.kind == "refusal"
    assert error.status_code is None
    assert error.usage == ModelUsage(prompt_tokens=60, completion_tokens=7)
    assert error.after_output is True
    assert error.details["finish_reason"] == "content_filter"
    assert error.details["stop_details"]["category"] == "cyber"
    assert "(cyber)" in error.message


async def test_a_reset_connection_is_a_network_error(serve: Serve) -> None:
    events = [message_start(), text_start(), text_delta("Hel"), text_delta("lo")]
    server = serve(Reply(events=events, reset_after=3))
    error, seen = await fail(model_for(server), ModelRequest(HELLO))
    assert text_of(seen) == "Hel"
    assert error.kind == "network"
    assert error.after_output is True
    assert error.usage == ModelUsage(prompt_tokens=25, completion_tokens=1)


async def test_a_refused_connection_is_a_network_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = AnthropicModel("claude-sonnet-5", api_key=KEY, base_url=f"http://127.0.0.1:{port}")
    _built.append(model)
    error, _ = await fail(model, ModelRequest(HELLO))
    assert (error.kind, error.after_output, error.usage) == ("network", False, None)


async def test_a_stream_cut_before_its_stop_reason_is_an_error(serve: Serve) -> None:
    events = [message_start(), text_start(), text_delta("Half an ans"), block_stop()]
    server = serve(Reply(events=events))
    error, seen = await fail(model_for(server), ModelRequest(HELLO))
    assert text_of(seen) == "Half an ans"
    assert error.kind == "stream"
    assert error.after_output is True
    assert not any(isinstance(c, FinishChunk) for c in seen)


async def test_a_stream_cut_after_its_stop_reason_is_complete(serve: Serve) -> None:
    server = serve(Reply(events=text_stream(["Whole."])[:-1]))  # no message_stop
    chunks = await collect(model_for(server), ModelRequest(HELLO))
    assert text_of(chunks) == "Whole."
    assert finish_of(chunks).finish_reason == "stop"


def malformed_then_whole(stop_reason: str) -> list[str]:
    return [
        message_start(),
        tool_use_start("toolu_1", "get_weather"),
        input_json_delta('{"city": "Os'),
        block_stop(),
        tool_use_start("toolu_2", "get_weather", index=1),
        input_json_delta('{"city": "Oslo"}', index=1),
        block_stop(index=1),
        message_delta(stop_reason),
        message_stop(),
    ]


async def test_malformed_tool_input_is_kept_for_the_tool_round_in_order(serve: Serve) -> None:
    # The model's mistake, not the stream's (issue 11): the round answers it with an error.
    server = serve(Reply(events=malformed_then_whole("tool_use")))
    chunks = await collect(model_for(server), ModelRequest(HELLO, tools=[WEATHER]))
    assert [c.tool_call for c in chunks if isinstance(c, ToolCallChunk)] == [
        ToolCall("toolu_1", "get_weather", {}, unparsed_arguments='{"city": "Os'),
        ToolCall("toolu_2", "get_weather", {"city": "Oslo"}),
    ]
    assert finish_of(chunks).finish_reason == "tool_calls"


async def test_tool_input_cut_by_the_output_limit_is_never_emitted(serve: Serve) -> None:
    server = serve(Reply(events=malformed_then_whole("max_tokens")))
    chunks = await collect(model_for(server), ModelRequest(HELLO, tools=[WEATHER]))
    assert [c.tool_call for c in chunks if isinstance(c, ToolCallChunk)] == [
        ToolCall("toolu_2", "get_weather", {"city": "Oslo"})
    ]
    assert finish_of(chunks).finish_reason == "length"


async def test_a_silent_stream_times_out_and_is_closed(serve: Serve) -> None:
    server = serve(Reply(events=[message_start(), text_start()], hold_after=2))
    options = CompletionOptions(request_timeout=0.3)
    error, _ = await fail(model_for(server), ModelRequest(HELLO, options=options))
    assert error.kind == "timeout"
    assert await asyncio.to_thread(server.client_disconnected.wait, 5)


class _TakenEvents(list[str]):
    """SSE events that count how many the server has taken to write (no clock involved)."""

    taken = 0

    def __iter__(self) -> Iterator[str]:
        for event in super().__iter__():
            self.taken += 1
            yield event


async def test_a_trickling_stream_times_out_at_request_timeout(serve: Serve) -> None:
    # Pings every 20 ms keep each read short; the text would come after 500 of them (10 s).
    pings = 500
    events = _TakenEvents([message_start(), *[ping() for _ in range(pings)]])
    events.extend(text_stream(["late"])[1:])
    server = serve(ok(), Reply(events=events, pace=0.02))
    model = model_for(server)
    await collect(model, ModelRequest(HELLO))  # the client is built: 0.3 s is the stream's alone
    options = CompletionOptions(request_timeout=0.3)
    error, seen = await fail(model, ModelRequest(HELLO, options=options))
    assert (error.kind, seen) == ("timeout", [])
    assert "timed out" in error.message
    assert await asyncio.to_thread(server.client_disconnected.wait, 30)
    # The order of events, not a stopwatch: the call gave up and left while the server was still
    # trickling pings; the server never got to the text a per-read timeout would have waited for.
    assert events.taken <= 1 + pings


# --- cancellation --------------------------------------------------------------------------------


async def test_closing_the_stream_closes_the_connection(serve: Serve) -> None:
    events = [message_start(), text_start(), text_delta("first"), text_delta("never")]
    server = serve(Reply(events=events, hold_after=3))
    stream = model_for(server).stream(ModelRequest(HELLO))
    assert await anext(stream) == TextDelta("first")
    await stream.aclose()  # type: ignore[attr-defined]
    assert await asyncio.to_thread(server.client_disconnected.wait, 5)


async def test_cancelling_the_task_closes_the_connection(serve: Serve) -> None:
    events = [message_start(), text_start(), text_delta("first")]
    server = serve(Reply(events=events, hold_after=3))
    first = asyncio.Event()

    async def consume() -> None:
        async for _ in model_for(server).stream(ModelRequest(HELLO)):
            first.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.to_thread(server.client_disconnected.wait, 5)


# --- cache diagnostics ---------------------------------------------------------------------------


def diagnosed(diagnostics: dict[str, Any] | None, *, message_id: str = "msg_01Now") -> Reply:
    """A text answer whose message_start carries ``diagnostics`` (``None``: an explicit null)."""
    return Reply(
        events=[
            message_start(message_id=message_id, diagnostics=diagnostics, null_diagnostics=True),
            text_start(),
            text_delta("ok"),
            block_stop(),
            message_delta(),
            message_stop(),
        ]
    )


async def test_first_use_sends_a_null_previous_message_id(serve: Serve) -> None:
    server = serve(diagnosed(None))
    options = CompletionOptions(cache_diagnostics=CacheDiagnosticsRequest())
    chunks = await collect(model_for(server), ModelRequest(HELLO, options=options))
    assert body(server)["diagnostics"] == {"previous_message_id": None}
    assert "anthropic-beta" not in server.requests[0].headers  # GA: no beta header
    finish = finish_of(chunks)
    assert finish.provider_message_id == "msg_01Now"
    assert finish.cache_diagnostics is None  # the API answered null: nothing to compare


async def test_the_previous_message_id_is_sent_and_the_answer_comes_back(serve: Serve) -> None:
    reason = {"type": "messages_changed", "cache_missed_input_tokens": 1840}
    server = serve(diagnosed({"cache_miss_reason": reason}))
    options = CompletionOptions(cache_diagnostics=CacheDiagnosticsRequest("msg_01Before"))
    chunks = await collect(model_for(server), ModelRequest(HELLO, options=options))
    assert body(server)["diagnostics"] == {"previous_message_id": "msg_01Before"}
    assert finish_of(chunks).cache_diagnostics == {"cache_miss_reason": reason}


@pytest.mark.parametrize(
    "diagnostics",
    [
        {"cache_miss_reason": None},  # the comparison was still running
        {"cache_miss_reason": {"type": "unavailable"}},
        {"cache_miss_reason": {"type": "tools_changed", "cache_missed_input_tokens": 52}},
        # A reason this SDK does not know yet, with a field it does not know, kept verbatim.
        {"cache_miss_reason": {"type": "region_changed", "region": "eu"}, "note": "new"},
    ],
)
async def test_diagnostics_are_kept_as_the_api_sent_them(
    serve: Serve, diagnostics: dict[str, Any]
) -> None:
    server = serve(diagnosed(diagnostics))
    options = CompletionOptions(cache_diagnostics=CacheDiagnosticsRequest("msg_01Before"))
    chunks = await collect(model_for(server), ModelRequest(HELLO, options=options))
    assert finish_of(chunks).cache_diagnostics == diagnostics


async def test_no_diagnostics_object_is_sent_unless_asked(serve: Serve) -> None:
    server = serve(ok())
    chunks = await collect(model_for(server), ModelRequest(HELLO))
    assert "diagnostics" not in body(server)
    assert "anthropic-beta" not in server.requests[0].headers
    assert finish_of(chunks).cache_diagnostics is None


async def test_diagnostics_reach_a_tool_calling_step(serve: Serve) -> None:
    reason = {"type": "system_changed", "cache_missed_input_tokens": 900}
    events = tool_use_stream(
        [("toolu_01", "get_weather", {"city": "Oslo"})],
        message_id="msg_01Tool",
        diagnostics={"cache_miss_reason": reason},
    )
    server = serve(Reply(events=events))
    options = CompletionOptions(cache_diagnostics=CacheDiagnosticsRequest("msg_01Before"))
    chunks = await collect(model_for(server), ModelRequest(HELLO, [WEATHER], options))
    finish = finish_of(chunks)
    assert (finish.finish_reason, finish.provider_message_id) == ("tool_calls", "msg_01Tool")
    assert finish.cache_diagnostics == {"cache_miss_reason": reason}
    assert body(server)["diagnostics"] == {"previous_message_id": "msg_01Before"}


# --- structured output ---------------------------------------------------------------------------


async def test_the_output_format_route(serve: Serve) -> None:
    answer = '{"name": "Ada", "age": 36}'
    server = serve(Reply(events=text_stream([answer[:10], answer[10:]])))
    options = CompletionOptions(response_schema=PERSON, schema_name="person")
    chunks = await collect(model_for(server), ModelRequest(HELLO, options=options))
    assert text_of(chunks) == answer
    assert finish_of(chunks).schema_route == "output_format"
    sent = body(server)
    assert sent["output_config"] == {
        "format": {
            "type": "json_schema",
            "schema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "{minLength: 1}"},
                    "age": {"type": "integer"},
                },
                "required": ["name", "age"],
                "additionalProperties": False,
            },
        }
    }
    assert "tools" not in sent
    assert "tool_choice" not in sent
    assert "system" not in sent


async def test_effort_merges_with_the_output_format(serve: Serve) -> None:
    server = serve(Reply(events=text_stream(['{"name": "Ada", "age": 36}'])))
    options = CompletionOptions(response_schema=PERSON, effort="low", cache="1h")
    chunks = await collect(model_for(server), ModelRequest(HELLO, options=options))
    assert finish_of(chunks).schema_route == "output_format"
    sent = body(server)
    assert sent["output_config"]["effort"] == "low"
    assert sent["output_config"]["format"]["type"] == "json_schema"
    assert set(sent["output_config"]) == {"effort", "format"}
    assert sent["cache_control"] == {"type": "ephemeral", "ttl": "1h"}


async def test_the_forced_tool_route_streams_the_answer_as_text(serve: Serve) -> None:
    arguments = {"name": "Åsa", "age": 41}
    server = serve(Reply(events=tool_use_stream([("toolu_9", "person", arguments)], fragment=4)))
    options = CompletionOptions(response_schema=PERSON, schema_name="person")
    model = model_for(server, "claude-opus-4-20250514")  # no output format: always the tool
    chunks = await collect(model, ModelRequest(HELLO, options=options))
    assert json.loads(text_of(chunks)) == arguments
    assert len([c for c in chunks if isinstance(c, TextDelta)]) > 1  # streamed, not at the end
    assert not any(isinstance(c, ToolCallChunk) for c in chunks)
    finish = finish_of(chunks)
    assert (finish.finish_reason, finish.schema_route) == ("stop", "tool")
    sent = body(server)
    assert sent["tools"] == [
        {
            "name": "person",
            "description": "Give your answer as this tool's input.",
            "input_schema": PERSON,
        }
    ]
    assert sent["tool_choice"] == {"type": "tool", "name": "person"}
    assert "output_config" not in sent


async def test_a_record_schema_takes_the_tool_where_the_format_cannot(serve: Serve) -> None:
    server = serve(Reply(events=tool_use_stream([("toolu_1", "scores", {"ann": 3.5})])))
    options = CompletionOptions(response_schema=RECORD, schema_name="scores")
    chunks = await collect(model_for(server), ModelRequest(HELLO, options=options))
    assert json.loads(text_of(chunks)) == {"ann": 3.5}
    assert finish_of(chunks).schema_route == "tool"
    assert body(server)["tool_choice"] == {"type": "tool", "name": "scores"}
    assert body(server)["tools"][0]["input_schema"] == RECORD


async def test_a_cut_schema_answer_keeps_its_length_finish(serve: Serve) -> None:
    events = [
        message_start(),
        tool_use_start("toolu_1", "scores"),
        input_json_delta('{"ann": 3'),
        block_stop(),
        message_delta("max_tokens"),
        message_stop(),
    ]
    server = serve(Reply(events=events))
    options = CompletionOptions(response_schema=RECORD, schema_name="scores")
    chunks = await collect(model_for(server), ModelRequest(HELLO, options=options))
    assert text_of(chunks) == '{"ann": 3'
    assert not any(isinstance(c, ToolCallChunk) for c in chunks)
    assert finish_of(chunks).finish_reason == "length"


async def test_a_record_schema_on_a_model_refusing_forced_tools_goes_in_the_prompt(
    serve: Serve,
) -> None:
    server = serve(Reply(events=text_stream(['{"ann": 1}'])))
    options = CompletionOptions(response_schema=RECORD, schema_name="scores")
    history = [Message.system("You score essays."), Message.user("Score Ann.")]
    chunks = await collect(
        model_for(server, "claude-opus-5-5"), ModelRequest(history, options=options)
    )
    assert finish_of(chunks).schema_route == "prompt"
    sent = body(server)
    assert sent["system"] == (
        "You score essays.\n\nRespond only with JSON that matches this JSON schema (scores), "
        "with no other text and no Markdown code fence:\n" + json.dumps(RECORD)
    )
    for absent in ("tools", "tool_choice", "output_config"):
        assert absent not in sent


@pytest.mark.parametrize(
    "options",
    [
        CompletionOptions(response_schema=RECORD, thinking_budget_tokens=2048, max_tokens=8000),
        CompletionOptions(response_schema=RECORD, tool_choice="auto"),
        CompletionOptions(response_schema=RECORD, tool_choice="get_weather"),
    ],
)
async def test_thinking_or_a_passthrough_tool_choice_puts_the_schema_in_the_prompt(
    serve: Serve, options: CompletionOptions
) -> None:
    server = serve(ok())
    model = model_for(server, "claude-opus-4-1")
    chunks = await collect(model, ModelRequest(HELLO, tools=[WEATHER], options=options))
    assert finish_of(chunks).schema_route == "prompt"
    sent = body(server)
    assert [tool["name"] for tool in sent["tools"]] == ["get_weather"]
    if options.tool_choice is not None:
        assert sent["tool_choice"]["type"] in ("auto", "tool")
    assert "Respond only with JSON" in sent["system"]


def test_which_schemas_the_output_format_carries() -> None:
    assert fits_output_format(PERSON)
    assert fits_output_format({"type": "array", "items": {"type": "string"}})
    assert not fits_output_format(RECORD)
    assert not fits_output_format({"type": "object"})
    assert not fits_output_format(
        {"type": "object", "properties": {}, "patternProperties": {"^x": {"type": "string"}}}
    )
    tree = {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
            }
        },
        "$ref": "#/$defs/node",
    }
    assert not fits_output_format(tree)
    nested_record = {
        "type": "object",
        "properties": {"tags": {"type": "object", "additionalProperties": True}},
    }
    assert not fits_output_format(nested_record)


@pytest.mark.parametrize(
    ("model_id", "output_format", "forced_tool", "manual_budget"),
    [
        ("claude-opus-4-20250514", False, True, True),
        ("claude-sonnet-4-0", False, True, True),
        ("claude-sonnet-4-5", True, True, True),
        ("claude-opus-4-6", True, True, False),
        ("claude-opus-4-8", True, True, False),
        ("claude-sonnet-5", True, True, False),
        ("claude-opus-5-5", True, False, False),
        ("claude-sonnet-5-5", True, False, False),
        ("claude-fable-5-2", True, False, False),
        ("claude-mythos-5-1", True, False, False),
        ("claude-3-7-sonnet-latest", False, True, True),
    ],
)
def test_the_model_table(
    model_id: str, output_format: bool, forced_tool: bool, manual_budget: bool
) -> None:
    traits = model_traits(model_id)
    assert (traits.output_format, traits.forced_tool_choice) == (output_format, forced_tool)
    assert traits.manual_thinking_budget is manual_budget


# --- the schema message a caller puts in the prompt itself (spec: Completion options) ---------


def test_schema_prompt_is_the_prompt_route_s_instruction_and_none_for_a_payload_route() -> None:
    refusing = AnthropicModel("claude-opus-5-5", api_key=KEY)
    current = AnthropicModel(MODEL, api_key=KEY)
    _built.extend([refusing, current])
    record = CompletionOptions(response_schema=RECORD, schema_name="scores")
    assert refusing.schema_prompt(record) == (
        "Respond only with JSON that matches this JSON schema (scores), "
        "with no other text and no Markdown code fence:\n" + json.dumps(RECORD)
    )
    closed = {
        "type": "object",
        "properties": {"n": {"type": "number"}},
        "required": ["n"],
        "additionalProperties": False,
    }
    assert current.schema_prompt(record) is None  # a forced tool carries it
    assert current.schema_prompt(CompletionOptions(response_schema=closed)) is None  # the format
    # A thinking budget sends a forced-tool schema in the prompt instead.
    thinking = CompletionOptions(response_schema=RECORD, thinking_budget_tokens=2048)
    older = AnthropicModel("claude-opus-4-1", api_key=KEY)
    _built.append(older)
    assert older.schema_prompt(thinking) is not None
    assert refusing.schema_prompt(CompletionOptions()) is None


async def test_a_given_schema_prompt_is_not_added_to_the_system_block_again(
    serve: Serve,
) -> None:
    server = serve(Reply(events=text_stream(['{"ann": 1}'])))
    model = model_for(server, "claude-opus-5-5")
    options = CompletionOptions(response_schema=RECORD, schema_name="scores")
    instruction = model.schema_prompt(options)
    assert instruction is not None
    history = [
        Message.system("You score essays."),
        Message.system(instruction),
        Message.user("Score Ann."),
    ]
    given = CompletionOptions(
        response_schema=RECORD, schema_name="scores", schema_prompt_given=True
    )
    chunks = await collect(model, ModelRequest(history, options=given))
    assert finish_of(chunks).schema_route == "prompt"
    assert body(server)["system"] == "You score essays.\n\n" + instruction


async def test_a_given_schema_prompt_a_hook_removed_leaves_no_schema_message(
    serve: Serve,
) -> None:
    server = serve(Reply(events=text_stream(['{"ann": 1}'])))
    options = CompletionOptions(response_schema=RECORD, schema_prompt_given=True)
    history = [Message.system("You score essays."), Message.user("Score Ann.")]
    await collect(model_for(server, "claude-opus-5-5"), ModelRequest(history, options=options))
    assert body(server)["system"] == "You score essays."
