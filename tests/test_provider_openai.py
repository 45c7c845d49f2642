"""The OpenAI Chat Completions adapter, through the real ``openai`` SDK against a loopback server.

Each test scripts what the server answers (tests/fakes/openai_server.py speaks OpenAI's wire
format) and checks both what the caller gets and what the server received.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import json
import socket
import sys
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import replace
from typing import Any, Literal

import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
from agentos.llm.errors import ProviderError
from agentos.llm.gateway import is_retryable_error
from agentos.llm.model import (
    CompletionOptions,
    FinishChunk,
    ModelChunk,
    ModelRequest,
    TextDelta,
    ToolCallChunk,
    ToolDefinition,
    UsageChunk,
    closing_stream,
)
from agentos.llm.providers._openai_strict import strict_mode_problem
from agentos.llm.providers.openai import NO_KEY, OpenAIEmbedder, OpenAIModel
from agentos.llm.schema_prompt import schema_instruction
from fakes.loopback import LoopbackServer, RecordedRequest, Reply
from fakes.model_streams import collect, fail, text_of
from fakes.openai_server import (
    DONE,
    CallSpec,
    ChunkMaker,
    OpenAIServer,
    content_policy_400,
    embeddings_reply,
    error_body,
    error_reply,
    invalid_key_401,
    overloaded_529,
    quota_429,
    rate_limit_429,
    server_error_500,
    stream_error_event,
    stream_reply,
)

MODEL = "gpt-4o-mini"
KEY = "sk-test-7f3a"
CHUNKS = ChunkMaker()
WEATHER = ToolDefinition(
    "get_weather",
    "The weather in a city.",
    {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
)
LOOKUP = ToolDefinition("lookup", "Look a key up.", {"type": "object", "properties": {}})
HELLO = ModelRequest([Message.user("Hello")])


@contextmanager
def serving(replies: Sequence[Reply]) -> Iterator[LoopbackServer]:
    with OpenAIServer(replies) as server:
        yield server


@asynccontextmanager
async def openai_model(server: LoopbackServer, **kwargs: Any) -> AsyncIterator[OpenAIModel]:
    kwargs.setdefault("api_key", KEY)
    kwargs.setdefault("base_url", f"{server.url}/v1")
    model = OpenAIModel(kwargs.pop("model_id", MODEL), **kwargs)
    try:
        yield model
    finally:
        await model.aclose()


async def run(
    replies: Sequence[Reply], request: ModelRequest = HELLO, **kwargs: Any
) -> tuple[list[ModelChunk], LoopbackServer]:
    with serving(replies) as server:
        async with openai_model(server, **kwargs) as model:
            return await collect(model, request), server


async def failure(
    replies: Sequence[Reply], request: ModelRequest = HELLO, **kwargs: Any
) -> tuple[ProviderError, list[ModelChunk], LoopbackServer]:
    """The error a call raises, the chunks it yielded first, and the server."""
    with serving(replies) as server:
        async with openai_model(server, **kwargs) as model:
            error, seen = await fail(model, request)
            return error, seen, server


def body_of(server: LoopbackServer, index: int = 0) -> dict[str, Any]:
    request: RecordedRequest = server.requests[index]
    body: dict[str, Any] = request.json
    return body


# --- streaming text and usage -------------------------------------------------------------------


async def test_streams_non_ascii_text_then_finish_then_priced_usage() -> None:
    pieces = ["Grüße, ", "日本語 ", "und 🙂", " — fin"]
    events = [
        CHUNKS.role(),
        *map(CHUNKS.text, pieces),
        CHUNKS.finish(),
        CHUNKS.usage(1000, 200, cached=400),
        DONE,
    ]
    chunks, server = await run([stream_reply(events)])
    assert chunks[:4] == [TextDelta(piece) for piece in pieces]
    assert chunks[4] == FinishChunk(
        "stop", response_model="gpt-4o-mini-2024-07-18", provider_message_id="chatcmpl-9xYzAbC"
    )
    usage = chunks[5]
    assert isinstance(usage, UsageChunk)
    # OpenAI's prompt_tokens counts the cached tokens too; the catalog prices them apart.
    unpriced = ModelUsage(1000, 200, 1200, cache_read_tokens=400)
    assert replace(usage.usage, cost_usd=None) == unpriced
    assert usage.usage.cost_usd == catalog.cost_usd("openai", MODEL, unpriced)
    assert len(chunks) == 6
    assert len(server.requests) == 1


async def test_unknown_model_has_unknown_cost() -> None:
    chunks, _ = await run([stream_reply(CHUNKS.text_events(["hi"]))], model_id="my-finetune")
    usage = chunks[-1]
    assert isinstance(usage, UsageChunk)
    assert usage.usage == ModelUsage(12, 5, 17, cost_usd=None)


async def test_request_line_headers_and_minimal_body() -> None:
    _, server = await run([stream_reply(CHUNKS.text_events(["ok"]))])
    request = server.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.headers["content-type"] == "application/json"
    # Nothing the caller left unset is sent: the provider's defaults apply.
    assert request.json == {
        "model": MODEL,
        "messages": [{"role": "user", "content": "Hello"}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }


async def test_every_message_role_maps_to_chat_completions() -> None:
    call = ToolCall("call_w1", "get_weather", {"city": "Zürich"})
    messages = [
        Message.system("You are terse."),
        Message(Role.SUMMARY, content="Earlier: the user asked about Zürich."),
        Message.user(
            [TextPart("What is in this picture?"), ImagePart("https://img.example/cat.png")],
            name="ana",
        ),
        Message.assistant(
            "",
            tool_calls=[call],
            replay_blocks=[ReplayBlock("anthropic", "thinking", {"thinking": "x"})],
        ),
        Message.tool(ToolResult("call_w1", "get_weather", {"temp_c": 21, "sky": "klar ☀"})),
        Message.assistant("It is sunny.", tool_calls=[ToolCall("call_l2", "lookup", {})]),
        Message.tool(
            ToolResult(
                "call_l2", "lookup", "no such key", is_error=True, error_details={"code": 404}
            )
        ),
        Message(Role.ERROR, content="[500] earlier failure"),
        Message(Role.THOUGHT, content="thinking aloud"),
        Message(Role.ASSISTANT, content="An answer cut sho", metadata={"partial": True}),
        Message.assistant("Anything else?"),
        Message.user("And tomorrow?"),
    ]
    _, server = await run([stream_reply(CHUNKS.text_events(["ok"]))], ModelRequest(messages))
    assert body_of(server)["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "system", "content": "Earlier: the user asked about Zürich."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in this picture?"},
                {"type": "image_url", "image_url": {"url": "https://img.example/cat.png"}},
            ],
            "name": "ana",
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_w1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Zürich"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_w1", "content": '{"temp_c": 21, "sky": "klar ☀"}'},
        {
            "role": "assistant",
            "content": "It is sunny.",
            "tool_calls": [
                {
                    "id": "call_l2",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": "{}"},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_l2",
            "content": '{"error": "no such key", "details": {"code": 404}}',
        },
        {"role": "assistant", "content": "Anything else?"},
        {"role": "user", "content": "And tomorrow?"},
    ]


async def test_options_tools_and_user_are_sent_when_set() -> None:
    options = CompletionOptions(
        temperature=0.2,
        max_tokens=300,
        top_p=0.9,
        frequency_penalty=0.1,
        presence_penalty=-0.2,
        stop_sequences=("\n\n", "END"),
        seed=7,
        tool_choice="required",
        user_id="user-42",
        custom_model_params={"logit_bias": {"50256": -100}, "parallel_tool_calls": False},
        thinking_budget_tokens=2048,
    )
    request = ModelRequest([Message.user("Weather?")], [WEATHER, LOOKUP], options)
    _, server = await run([stream_reply(CHUNKS.text_events(["ok"]))], request)
    body = body_of(server)
    assert body == {
        "model": MODEL,
        "messages": [{"role": "user", "content": "Weather?"}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "The weather in a city.",
                    "parameters": WEATHER.parameters,
                },
            },
            {
                "type": "function",
                "function": {
                    "name": "lookup",
                    "description": "Look a key up.",
                    "parameters": {"type": "object", "properties": {}},
                },
            },
        ],
        "tool_choice": "required",
        "temperature": 0.2,
        # A compatible server (a base_url) gets max_tokens, which they all take.
        "max_tokens": 300,
        "top_p": 0.9,
        "frequency_penalty": 0.1,
        "presence_penalty": -0.2,
        "seed": 7,
        "user": "user-42",
        "stop": ["\n\n", "END"],
        "logit_bias": {"50256": -100},
        "parallel_tool_calls": False,
    }


async def test_effort_goes_as_reasoning_effort() -> None:
    request = ModelRequest(HELLO.messages, options=CompletionOptions(effort="low"))
    _, server = await run([stream_reply(CHUNKS.text_events(["ok"]))], request)
    assert body_of(server) == {
        "model": MODEL,
        "messages": [{"role": "user", "content": "Hello"}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "reasoning_effort": "low",
    }


@pytest.mark.parametrize("cache", [True, False, "5m", "1h"])
async def test_cache_is_never_sent_openai_caches_on_its_own(
    cache: bool | Literal["5m", "1h"],
) -> None:
    # No Chat Completions field takes on/off or a 5m/1h lifetime (prompt_cache_retention takes
    # in_memory/24h, prompt_cache_options.ttl 30m): the body is the one without the option.
    options = CompletionOptions(cache=cache)
    request = ModelRequest(HELLO.messages, options=options)
    _, server = await run([stream_reply(CHUNKS.text_events(["ok"]))], request)
    assert body_of(server) == {
        "model": MODEL,
        "messages": [{"role": "user", "content": "Hello"}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }


async def test_effort_and_cache_on_openai_itself() -> None:
    with serving([stream_reply(CHUNKS.text_events(["ok"]))]) as server:
        client = openai.AsyncOpenAI(api_key="sk-own", base_url=f"{server.url}/v1", max_retries=0)
        model = OpenAIModel("o4-mini", client=client)
        options = CompletionOptions(effort="high", cache="1h", max_tokens=64)
        await collect(model, ModelRequest(HELLO.messages, options=options))
        await client.close()
    assert body_of(server) == {
        "model": "o4-mini",
        "messages": [{"role": "user", "content": "Hello"}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_completion_tokens": 64,
        "reasoning_effort": "high",
    }


PLAIN_BODY: dict[str, Any] = {
    "model": MODEL,
    "messages": [{"role": "user", "content": "Hello"}],
    "stream": True,
    "stream_options": {"include_usage": True},
}


def finish_of(chunks: Sequence[ModelChunk]) -> FinishChunk:
    return next(chunk for chunk in chunks if isinstance(chunk, FinishChunk))


async def test_prompt_cache_key_retention_and_service_tier_go_under_their_own_names() -> None:
    options = CompletionOptions(
        prompt_cache_key="user-7f3a", prompt_cache_retention="24h", service_tier="flex"
    )
    request = ModelRequest(HELLO.messages, options=options)
    _, server = await run([stream_reply(CHUNKS.text_events(["ok"]))], request)
    assert body_of(server) == {
        **PLAIN_BODY,
        "prompt_cache_key": "user-7f3a",
        "prompt_cache_retention": "24h",
        "service_tier": "flex",
    }


async def test_a_compatible_server_s_own_tier_name_is_sent_as_given() -> None:
    # Groq's "on_demand" is no OpenAI tier: the adapter passes it on, the server judges it.
    options = CompletionOptions(service_tier="on_demand")
    request = ModelRequest(HELLO.messages, options=options)
    _, server = await run([stream_reply(CHUNKS.text_events(["ok"]))], request, provider_id="groq")
    assert body_of(server) == {**PLAIN_BODY, "service_tier": "on_demand"}


async def test_json_mode_goes_as_a_json_object_response_format() -> None:
    request = ModelRequest(HELLO.messages, options=CompletionOptions(json_mode=True))
    _, server = await run([stream_reply(CHUNKS.text_events(['{"ok": true}']))], request)
    assert body_of(server) == {**PLAIN_BODY, "response_format": {"type": "json_object"}}


@pytest.mark.parametrize("json_mode", [False, None])
async def test_json_mode_off_or_unset_sends_no_response_format(json_mode: bool | None) -> None:
    request = ModelRequest(HELLO.messages, options=CompletionOptions(json_mode=json_mode))
    _, server = await run([stream_reply(CHUNKS.text_events(["ok"]))], request)
    assert body_of(server) == PLAIN_BODY


async def test_json_mode_goes_beside_the_tools() -> None:
    options = CompletionOptions(json_mode=True, tool_choice="auto")
    request = ModelRequest(HELLO.messages, [WEATHER], options)
    chunks, server = await run([stream_reply(CHUNKS.text_events(['{"ok": true}']))], request)
    body = body_of(server)
    assert body["response_format"] == {"type": "json_object"}
    assert [tool["function"]["name"] for tool in body["tools"]] == ["get_weather"]
    assert body["tool_choice"] == "auto"
    # No schema was asked for: the step says no schema route.
    assert finish_of(chunks).schema_route is None


async def test_a_schema_wins_over_json_mode() -> None:
    options = CompletionOptions(json_mode=True, response_schema=STRICT_SCHEMA)
    request = ModelRequest(HELLO.messages, options=options)
    _, server = await run([stream_reply(CHUNKS.text_events(["{}"]))], request)
    assert body_of(server)["response_format"]["type"] == "json_schema"


async def test_the_tier_openai_served_the_request_at_reaches_the_finish_chunk() -> None:
    # Asked for priority, served at default: the finish reports what OpenAI says it served.
    served = ChunkMaker(service_tier="default")
    request = ModelRequest(HELLO.messages, options=CompletionOptions(service_tier="priority"))
    chunks, _ = await run([stream_reply(served.text_events(["ok"]))], request)
    assert finish_of(chunks) == FinishChunk(
        "stop",
        response_model="gpt-4o-mini-2024-07-18",
        provider_message_id="chatcmpl-9xYzAbC",
        service_tier="default",
    )


async def test_no_reported_tier_leaves_the_finish_chunk_s_tier_unset() -> None:
    chunks, _ = await run([stream_reply(CHUNKS.text_events(["ok"]))])
    assert finish_of(chunks).service_tier is None


async def test_the_tier_reported_last_before_the_finish_wins() -> None:
    first = ChunkMaker(service_tier="priority")
    last = ChunkMaker(service_tier="default")
    events = [first.role(), first.text("ok"), last.finish(), last.usage(), DONE]
    chunks, _ = await run([stream_reply(events)])
    assert finish_of(chunks).service_tier == "default"


@pytest.mark.parametrize(
    ("choice", "sent"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "required"),
        ("lookup", {"type": "function", "function": {"name": "lookup"}}),
    ],
)
async def test_tool_choice_maps_to_openai(choice: str, sent: object) -> None:
    request = ModelRequest(HELLO.messages, [WEATHER, LOOKUP], CompletionOptions(tool_choice=choice))
    _, server = await run([stream_reply(CHUNKS.text_events(["ok"]))], request)
    assert body_of(server)["tool_choice"] == sent


async def test_tool_choice_is_never_sent_without_tools() -> None:
    request = ModelRequest(HELLO.messages, (), CompletionOptions(tool_choice="required"))
    _, server = await run([stream_reply(CHUNKS.text_events(["ok"]))], request)
    assert "tool_choice" not in body_of(server)
    assert "tools" not in body_of(server)


async def test_tool_choice_naming_a_tool_not_offered_is_refused_before_sending() -> None:
    request = ModelRequest(HELLO.messages, [WEATHER], CompletionOptions(tool_choice="lookup"))
    with serving([]) as server:
        async with openai_model(server) as model:
            with pytest.raises(GMIError) as caught:
                await collect(model, request)
    assert caught.value.code == GMIErrorCode.INVALID_ARGUMENT
    assert caught.value.details["option"] == "tool_choice"
    assert server.requests == []


async def test_openai_itself_gets_max_completion_tokens_and_the_request_timeout() -> None:
    # A client passed in is used as it is: here it points at the loopback server, while the
    # model, given no base_url, treats it as OpenAI itself.
    with serving([stream_reply(CHUNKS.text_events(["ok"]))]) as server:
        client = openai.AsyncOpenAI(api_key="sk-own", base_url=f"{server.url}/v1", max_retries=0)
        model = OpenAIModel("o4-mini", client=client)
        options = CompletionOptions(max_tokens=64, request_timeout=7.5)
        await collect(model, ModelRequest(HELLO.messages, options=options))
        await client.close()
    body = body_of(server)
    assert body["max_completion_tokens"] == 64
    assert "max_tokens" not in body
    assert server.requests[0].headers["authorization"] == "Bearer sk-own"
    # The SDK tells the server the read timeout it applies: the request_timeout.
    assert server.requests[0].headers["x-stainless-read-timeout"] == "7.5"


# --- tool calls ---------------------------------------------------------------------------------


async def test_parallel_tool_calls_are_assembled_from_interleaved_fragments() -> None:
    calls = [
        CallSpec("call_a1", "get_weather", ['{"ci', 'ty": "Mü', 'nchen"}']),
        CallSpec("call_b2", "get_weather", ['{"city"', ': "東京"', "}"]),
        CallSpec("call_c3", "lookup", []),
    ]
    events = CHUNKS.tool_events(calls, interleave=True, text=["Checking "])
    chunks, _ = await run([stream_reply(events)], ModelRequest(HELLO.messages, [WEATHER, LOOKUP]))
    assert chunks[:5] == [
        TextDelta("Checking "),
        ToolCallChunk(ToolCall("call_a1", "get_weather", {"city": "München"})),
        ToolCallChunk(ToolCall("call_b2", "get_weather", {"city": "東京"})),
        ToolCallChunk(ToolCall("call_c3", "lookup", {})),
        FinishChunk(
            "tool_calls",
            response_model="gpt-4o-mini-2024-07-18",
            provider_message_id="chatcmpl-9xYzAbC",
        ),
    ]
    assert isinstance(chunks[5], UsageChunk)


async def test_tool_calls_a_server_finishes_as_stop_finish_as_tool_calls() -> None:
    events = CHUNKS.tool_events([CallSpec("call_1", "lookup", ["{}"])])
    events[-3] = CHUNKS.finish("stop")
    chunks, _ = await run([stream_reply(events)])
    finishes = [chunk for chunk in chunks if isinstance(chunk, FinishChunk)]
    assert [finish.finish_reason for finish in finishes] == ["tool_calls"]


async def test_a_server_that_leaves_out_indexes_and_call_ids() -> None:
    whole_calls = {
        "delta": {
            "role": "assistant",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}},
                {"type": "function", "function": {"name": "get_weather", "arguments": ""}},
                {"function": {"arguments": '{"city": "Oslo"}'}},
            ],
        },
        "finish_reason": "tool_calls",
    }
    events = [CHUNKS.chunk(choices=[whole_calls]), DONE]
    chunks, _ = await run([stream_reply(events)])
    calls = [chunk.tool_call for chunk in chunks if isinstance(chunk, ToolCallChunk)]
    assert [(call.name, call.arguments) for call in calls] == [
        ("lookup", {}),
        ("get_weather", {"city": "Oslo"}),
    ]
    assert calls[0].id == "c1"
    assert calls[1].id.startswith("call_")  # made up, so the result can still be paired


async def test_tool_call_arguments_that_are_not_json_are_kept_for_the_tool_round() -> None:
    # The model's mistake, not the stream's (issue 11): the call is answered with an error.
    events = CHUNKS.tool_events([CallSpec("call_1", "get_weather", ['{"city": "Pa'])])
    chunks, _ = await run([stream_reply(events)])
    calls = [chunk.tool_call for chunk in chunks if isinstance(chunk, ToolCallChunk)]
    assert calls == [ToolCall("call_1", "get_weather", {}, unparsed_arguments='{"city": "Pa')]
    finishes = [chunk for chunk in chunks if isinstance(chunk, FinishChunk)]
    assert [finish.finish_reason for finish in finishes] == ["tool_calls"]


async def test_a_tool_call_cut_by_the_output_limit_is_never_emitted() -> None:
    events = [
        CHUNKS.role(),
        CHUNKS.tool_start(0, CallSpec("call_1", "get_weather", [])),
        CHUNKS.tool_args(0, '{"city": "Par'),
        CHUNKS.finish("length"),
        CHUNKS.usage(),
        DONE,
    ]
    chunks, _ = await run([stream_reply(events)])
    assert not any(isinstance(chunk, ToolCallChunk) for chunk in chunks)
    assert [c.finish_reason for c in chunks if isinstance(c, FinishChunk)] == ["length"]


@pytest.mark.parametrize(
    ("sent", "normalised"),
    [
        ("stop", "stop"),
        ("length", "length"),
        ("content_filter", "content_filter"),
        ("function_call", "tool_calls"),
        ("eos_token", "other"),
    ],
)
async def test_finish_reasons_are_normalised(sent: str, normalised: str) -> None:
    chunks, _ = await run([stream_reply(CHUNKS.text_events(["x"], finish=sent))])
    assert [c.finish_reason for c in chunks if isinstance(c, FinishChunk)] == [normalised]


# --- HTTP errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "status", "kind", "error_type", "error_code", "start"),
    [
        (rate_limit_429(), 429, "http", "requests", "rate_limit_exceeded", "[429] Rate limit"),
        (
            quota_429(),
            429,
            "http",
            "insufficient_quota",
            "insufficient_quota",
            "[429] You exceeded",
        ),
        (server_error_500(), 500, "http", "server_error", None, "[500] The server had an error"),
        (overloaded_529(), 529, "http", "overloaded", None, "[529] The engine"),
        (
            invalid_key_401(),
            401,
            "http",
            "invalid_request_error",
            "invalid_api_key",
            "[401] Incorrect",
        ),
        (
            content_policy_400(),
            400,
            "refusal",
            "invalid_request_error",
            "content_policy_violation",
            "[400] Your request was rejected",
        ),
    ],
)
async def test_http_errors_become_provider_errors(
    reply: Reply,
    status: int,
    kind: str,
    error_type: str,
    error_code: str | None,
    start: str,
) -> None:
    error, seen, server = await failure([reply])
    assert error.status_code == status
    assert error.kind == kind
    assert error.message.startswith(start)
    assert error.code == GMIErrorCode.LLM_PROVIDER_ERROR
    assert error.details["error_type"] == error_type
    assert error.details.get("error_code") == error_code
    assert error.details["provider_id"] == "openai"
    assert error.details["model_id"] == MODEL
    assert error.details["request_id"] == "req_err_1"
    assert error.after_output is False
    assert error.usage is None
    assert seen == []
    # Never retried by the SDK: falling back is the gateway's decision.
    assert len(server.requests) == 1
    # Every one of these may move to the next hop (the refusal included, whatever its status).
    assert is_retryable_error(error)


async def test_a_bad_request_is_not_retryable() -> None:
    body = error_body("Unrecognized request argument supplied: foo", "invalid_request_error", None)
    error, _, _ = await failure([error_reply(400, body)])
    assert (error.kind, error.status_code) == ("http", 400)
    assert not is_retryable_error(error)


async def test_azure_content_filter_and_openrouter_moderation_are_refusals() -> None:
    azure = error_reply(
        400,
        {
            "error": {
                "message": "The response was filtered due to the prompt triggering Azure "
                "OpenAI's content management policy.",
                "type": None,
                "param": "prompt",
                "code": "content_filter",
                "status": 400,
            }
        },
    )
    openrouter = error_reply(
        403,
        {
            "error": {
                "code": 403,
                "message": "meta-llama/llama-guard flagged your input",
                "metadata": {"reasons": ["S1"], "flagged_input": "…", "provider_name": "x"},
            }
        },
    )
    for reply, status in ((azure, 400), (openrouter, 403)):
        error, _, _ = await failure([reply])
        assert (error.kind, error.status_code) == ("refusal", status)


# --- broken streams -----------------------------------------------------------------------------


async def test_an_error_event_before_any_text_fails_before_output() -> None:
    events = [CHUNKS.role(), stream_error_event("The server had an error.", "server_error", None)]
    error, seen, _ = await failure([stream_reply(events)])
    assert error.kind == "stream"
    assert error.after_output is False
    assert error.details["error_type"] == "server_error"
    assert "The server had an error." in error.message
    assert seen == []
    assert is_retryable_error(error)


async def test_an_error_event_after_text_fails_after_output() -> None:
    events = [
        CHUNKS.role(),
        CHUNKS.text("Half of "),
        stream_error_event("Upstream failed", "server_error", "stream_interrupted"),
    ]
    error, seen, _ = await failure([stream_reply(events)])
    assert (error.kind, error.after_output) == ("stream", True)
    assert error.details["error_code"] == "stream_interrupted"
    assert seen == [TextDelta("Half of ")]


async def test_an_error_event_reporting_a_content_filter_is_a_refusal() -> None:
    events = [CHUNKS.role(), stream_error_event("Output blocked", None, "content_filter")]
    error, _, _ = await failure([stream_reply(events)])
    assert error.kind == "refusal"


async def test_a_reset_mid_stream_is_a_network_failure_after_output() -> None:
    events = [CHUNKS.role(), CHUNKS.text("Once upon "), CHUNKS.text("a time")]
    error, seen, _ = await failure([stream_reply(events, reset_after=3)])
    assert (error.kind, error.after_output) == ("network", True)
    assert text_of(seen) == "Once upon a time"
    assert is_retryable_error(error)  # by kind; the gateway never retries after output anyway


async def test_a_reset_before_any_text_is_a_network_failure_before_output() -> None:
    error, seen, _ = await failure([stream_reply([CHUNKS.role()], reset_after=1)])
    assert (error.kind, error.after_output) == ("network", False)
    assert seen == []


async def test_a_stream_that_ends_without_a_finish_reason_is_never_a_silent_partial() -> None:
    events = [CHUNKS.role(), CHUNKS.text("Partial"), CHUNKS.usage(9, 1), DONE]
    error, seen, _ = await failure([stream_reply(events)])
    assert (error.kind, error.after_output) == ("stream", True)
    assert "without a finish reason" in error.message
    # The billed usage the stream reported travels on the error, not as a chunk.
    assert error.usage is not None
    assert replace(error.usage, cost_usd=None) == ModelUsage(9, 1, 10)
    assert seen == [TextDelta("Partial")]


async def test_a_connection_closed_without_done_or_finish_fails() -> None:
    error, _, _ = await failure([stream_reply([CHUNKS.role(), CHUNKS.text("x")])])
    assert (error.kind, error.after_output) == ("stream", True)


async def test_a_cut_after_the_finish_reason_only_loses_the_usage() -> None:
    events = [CHUNKS.role(), CHUNKS.text("Done."), CHUNKS.finish(), CHUNKS.usage()]
    chunks, _ = await run([stream_reply(events, reset_after=3)])
    assert text_of(chunks) == "Done."
    assert isinstance(chunks[-1], FinishChunk)
    assert not any(isinstance(chunk, UsageChunk) for chunk in chunks)


async def test_a_malformed_event_and_a_vllm_error_object_are_stream_failures() -> None:
    malformed = [CHUNKS.role(), "data: {not json\n\n"]
    vllm = [CHUNKS.role(), 'data: {"object": "error", "message": "CUDA out of memory"}\n\n']
    for events in (malformed, vllm):
        error, _, _ = await failure([stream_reply(events)])
        assert error.kind == "stream"
    assert "CUDA out of memory" in error.message


async def test_a_refusal_delta_is_a_refusal_error_carrying_the_usage() -> None:
    events = [
        CHUNKS.role(),
        CHUNKS.chunk({"refusal": "I'm sorry, "}),
        CHUNKS.chunk({"refusal": "I can't help with that."}),
        CHUNKS.finish("stop"),
        CHUNKS.usage(30, 9),
        DONE,
    ]
    error, seen, _ = await failure([stream_reply(events)])
    assert error.kind == "refusal"
    assert error.details["refusal"] == "I'm sorry, I can't help with that."
    assert error.usage is not None
    assert replace(error.usage, cost_usd=None) == ModelUsage(30, 9, 39)
    assert (error.after_output, seen) == (False, [])


async def test_a_read_timeout_is_a_timeout() -> None:
    reply = stream_reply([CHUNKS.role(), CHUNKS.text("slow")], hold_after=1)
    request = ModelRequest(HELLO.messages, options=CompletionOptions(request_timeout=0.05))
    error, seen, _ = await failure([reply], request)
    reply.release.set()
    assert (error.kind, error.after_output, seen) == ("timeout", False, [])
    assert is_retryable_error(error)


async def test_a_refused_connection_is_a_network_failure() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = OpenAIModel(MODEL, api_key=KEY, base_url=f"http://127.0.0.1:{port}/v1")
    with pytest.raises(ProviderError) as caught:
        await collect(model, HELLO)
    await model.aclose()
    assert caught.value.kind == "network"
    assert caught.value.status_code is None
    assert is_retryable_error(caught.value)


# --- cancellation -------------------------------------------------------------------------------


async def test_closing_the_stream_early_closes_the_connection() -> None:
    reply = stream_reply([CHUNKS.role(), CHUNKS.text("first"), CHUNKS.text("never")], hold_after=2)
    with serving([reply]) as server:
        async with openai_model(server) as model:
            stream = model.stream(HELLO)
            assert await anext(stream) == TextDelta("first")
            await stream.aclose()  # type: ignore[attr-defined]
            disconnected = await asyncio.to_thread(server.client_disconnected.wait, 5)
        reply.release.set()
    assert disconnected


async def test_breaking_out_of_a_closing_stream_closes_the_connection() -> None:
    reply = stream_reply([CHUNKS.role(), CHUNKS.text("first")], hold_after=2)
    with serving([reply]) as server:
        async with openai_model(server) as model:
            async with closing_stream(model.stream(HELLO)) as chunks:
                async for _ in chunks:
                    break
            disconnected = await asyncio.to_thread(server.client_disconnected.wait, 5)
        reply.release.set()
    assert disconnected


async def test_cancelling_the_consuming_task_closes_the_connection() -> None:
    reply = stream_reply([CHUNKS.role(), CHUNKS.text("first")], hold_after=2)
    got_text = asyncio.Event()

    async def consume(model: OpenAIModel) -> None:
        async with closing_stream(model.stream(HELLO)) as chunks:
            async for _ in chunks:
                got_text.set()

    with serving([reply]) as server:
        async with openai_model(server) as model:
            task = asyncio.create_task(consume(model))
            await got_text.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            disconnected = await asyncio.to_thread(server.client_disconnected.wait, 5)
        reply.release.set()
    assert disconnected


# --- structured output --------------------------------------------------------------------------

STRICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "Who"},
        "age": {"type": ["integer", "null"]},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
        "address": {"$ref": "#/$defs/address"},
    },
    "required": ["name", "age", "tags", "address"],
    "additionalProperties": False,
    "$defs": {
        "address": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "zip": {"type": "string", "pattern": "^\\d+$"},
            },
            "required": ["city", "zip"],
            "additionalProperties": False,
        }
    },
}


async def test_a_schema_that_fits_strict_mode_goes_as_a_strict_json_schema() -> None:
    options = CompletionOptions(
        response_schema=STRICT_SCHEMA, schema_name="person card!", tool_choice="auto"
    )
    request = ModelRequest(
        [Message.system("Extract."), Message.user("Ana, 31")], [WEATHER], options
    )
    events = CHUNKS.text_events(['{"name": "Ana", ', '"age": 31, "tags": [], "address": null}'])
    chunks, server = await run([stream_reply(events)], request)
    body = body_of(server)
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "person_card_", "schema": STRICT_SCHEMA, "strict": True},
    }
    # A structured step offers no tools, so no tool_choice either; the prompt is untouched.
    assert "tools" not in body
    assert "tool_choice" not in body
    assert body["messages"] == [
        {"role": "system", "content": "Extract."},
        {"role": "user", "content": "Ana, 31"},
    ]
    finish = next(chunk for chunk in chunks if isinstance(chunk, FinishChunk))
    assert finish.schema_route == "json_schema"


async def test_a_schema_strict_mode_cannot_take_goes_to_json_mode_and_the_prompt() -> None:
    loose = {"type": "object", "properties": {"name": {"type": "string", "minLength": 1}}}
    options = CompletionOptions(response_schema=loose, schema_name="person")
    request = ModelRequest(
        [
            Message.system("Extract."),
            Message(Role.SUMMARY, content="Earlier turns."),
            Message.user("Ana"),
            Message.system("A late system note."),
        ],
        options=options,
    )
    chunks, server = await run([stream_reply(CHUNKS.text_events(['{"name": "Ana"}']))], request)
    body = body_of(server)
    assert body["response_format"] == {"type": "json_object"}
    assert body["messages"] == [
        {"role": "system", "content": "Extract."},
        {"role": "system", "content": "Earlier turns."},
        {"role": "system", "content": schema_instruction(loose)},
        {"role": "user", "content": "Ana"},
        {"role": "system", "content": "A late system note."},
    ]
    assert "JSON" in schema_instruction(loose)  # JSON mode needs the word in the prompt
    finish = next(chunk for chunk in chunks if isinstance(chunk, FinishChunk))
    assert finish.schema_route == "json_mode"
    assert text_of(chunks) == '{"name": "Ana"}'


def _obj(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
        **extra,
    }


@pytest.mark.parametrize(
    ("schema", "fits"),
    [
        (STRICT_SCHEMA, True),
        (_obj({}), True),
        (_obj({"v": {"anyOf": [{"type": "string"}, _obj({"n": {"type": "number"}})]}}), True),
        (_obj({"child": {"$ref": "#"}}), True),
        (_obj({"when": {"type": "string", "format": "date-time"}}), True),
        (_obj({"n": {"type": "integer", "minimum": 0, "maximum": 9, "multipleOf": 3}}), True),
        (_obj({"k": {"const": "x"}}), True),
        ({"anyOf": [_obj({})], "type": "object"}, False),
        ({"type": "array", "items": {"type": "string"}}, False),
        ({**_obj({"a": {"type": "string"}}), "required": []}, False),
        ({**_obj({}), "additionalProperties": True}, False),
        ({"type": "object", "properties": {}, "required": []}, False),
        (_obj({"inner": {"type": "object", "properties": {"x": {"type": "string"}}}}), False),
        (_obj({"s": {"type": "string", "minLength": 2}}), False),
        (_obj({"s": {"type": "string", "format": "uri"}}), False),
        (_obj({"l": {"type": "array"}}), False),
        (_obj({"l": {"type": "array", "prefixItems": [{"type": "string"}]}}), False),
        (_obj({"r": {"$ref": "#/$defs/x", "description": "with a sibling"}}), False),
        (_obj({"x": {}}), False),
        (_obj({"x": {"type": "date"}}), False),
        (_obj({"x": {"allOf": [{"type": "string"}]}}), False),
        (_obj({"r": {"$ref": "#/$defs/bad"}}, **{"$defs": {"bad": {"type": "object"}}}), False),
        (_obj({"e": {"type": "string", "enum": [str(i) for i in range(1001)]}}), False),
    ],
)
def test_strict_mode_check(schema: dict[str, Any], fits: bool) -> None:
    assert (strict_mode_problem(schema) is None) is fits


def test_strict_mode_limits_nesting_to_ten_levels() -> None:
    schema = _obj({"leaf": {"type": "string"}})
    for _ in range(8):
        schema = _obj({"next": schema})
    assert strict_mode_problem(schema) is None  # nine objects and a leaf: ten levels
    assert strict_mode_problem(_obj({"next": schema})) is not None


_LEAVES = st.sampled_from(
    [{"type": "string"}, {"type": "integer"}, {"type": ["number", "null"]}, {"type": "boolean"}]
)
_NAMES = st.text("abcdefgh", min_size=1, max_size=4)
_STRICT = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        st.dictionaries(_NAMES, inner, max_size=3).map(_obj),
        inner.map(lambda items: {"type": "array", "items": items}),
    ),
    max_leaves=8,
)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(_NAMES, _STRICT, min_size=1, max_size=3), st.data())
def test_strict_mode_accepts_strict_schemas_and_refuses_any_dropped_requirement(
    properties: dict[str, Any], data: st.DataObject
) -> None:
    schema = _obj(properties)
    assert strict_mode_problem(schema) is None
    objects = [node for node in _nodes(schema) if node.get("type") == "object" and node["required"]]
    target = data.draw(st.sampled_from(objects))
    target["required"] = target["required"][1:]
    assert strict_mode_problem(schema) is not None


def _nodes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("properties", {}).values():
        yield from _nodes(child)
    if isinstance(node.get("items"), dict):
        yield from _nodes(node["items"])


# --- options a provider cannot take -------------------------------------------------------------


async def test_check_options_refuses_what_the_adapter_owns_and_too_many_stops() -> None:
    official = OpenAIModel(MODEL, api_key=KEY)
    with pytest.raises(GMIError) as caught:
        official.check_options(CompletionOptions(custom_model_params={"stream": False, "n": 2}))
    assert caught.value.code == GMIErrorCode.INVALID_ARGUMENT
    assert caught.value.details == {"option": "custom_model_params", "reserved": ["n", "stream"]}
    five = CompletionOptions(stop_sequences=("a", "b", "c", "d", "e"))
    with pytest.raises(GMIError) as caught:
        official.check_options(five)
    assert caught.value.details == {"option": "stop_sequences"}
    for bad, option in (
        (CompletionOptions(request_timeout=0), "request_timeout"),
        (CompletionOptions(tool_choice=""), "tool_choice"),
    ):
        with pytest.raises(GMIError) as caught:
            official.check_options(bad)
        assert caught.value.details["option"] == option
    # A compatible server decides its own limits.
    OpenAIModel(MODEL, provider_id="groq", api_key=KEY).check_options(five)


# --- setup: SDK, keys and endpoints -------------------------------------------------------------


def test_a_missing_key_names_the_variable() -> None:
    with pytest.raises(ProviderError) as caught:
        OpenAIModel(MODEL)
    assert caught.value.kind == "setup"
    assert "OPENAI_API_KEY" in caught.value.message
    with pytest.raises(ProviderError) as caught:
        OpenAIModel("llama-3.3-70b-versatile", provider_id="groq")
    assert "GROQ_API_KEY" in caught.value.message
    with pytest.raises(ProviderError) as caught:
        OpenAIModel("m", provider_id="my-vllm")
    assert (caught.value.kind, caught.value.details["option"]) == ("setup", "base_url")


async def test_the_key_comes_from_the_providers_own_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    monkeypatch.setenv("GROQ_API_KEY", "gsk-groq")
    replies = [stream_reply(CHUNKS.text_events(["ok"])) for _ in range(3)]
    with serving(replies) as server:
        for provider_id in ("openai", "groq"):
            async with openai_model(server, api_key=None, provider_id=provider_id) as model:
                await collect(model, HELLO)
        monkeypatch.delenv("GROQ_API_KEY")
        # A server of one's own needs no key, and never gets OpenAI's.
        async with openai_model(server, api_key=None, provider_id="groq") as model:
            await collect(model, HELLO)
    keys = [request.headers["authorization"] for request in server.requests]
    assert keys == ["Bearer sk-from-env", "Bearer gsk-groq", f"Bearer {NO_KEY}"]


async def test_ollama_takes_its_server_from_ollama_base_url(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with serving([stream_reply(CHUNKS.text_events(["ok"]))]) as server:
        monkeypatch.setenv("OLLAMA_BASE_URL", server.url)
        model = OpenAIModel("llama3.2", provider_id="ollama")
        assert model.base_url == f"{server.url}/v1"
        await collect(model, HELLO)
        await model.aclose()
    assert server.requests[0].path == "/v1/chat/completions"
    assert server.requests[0].headers["authorization"] == f"Bearer {NO_KEY}"


async def test_openrouter_style_base_url_headers_comments_and_reported_cost() -> None:
    router = ChunkMaker(id="gen-1733-abc", model="openai/gpt-4o-mini")
    events = [
        ": OPENROUTER PROCESSING\n\n",
        router.role(),
        ": OPENROUTER PROCESSING\n\n",
        router.text("Hola"),
        router.finish(),
        router.chunk(
            choices=[],
            usage={"prompt_tokens": 8, "completion_tokens": 2, "total_tokens": 10, "cost": 0.00042},
        ),
        DONE,
    ]
    headers = {"HTTP-Referer": "https://agentos.example", "X-Title": "agentos tests"}
    with serving([stream_reply(events)]) as server:
        model = OpenAIModel(
            "openai/gpt-4o-mini",
            provider_id="openrouter",
            api_key="sk-or-v1-test",
            base_url=f"{server.url}/api/v1",
            default_headers=headers,
        )
        chunks = await collect(
            model, ModelRequest(HELLO.messages, options=CompletionOptions(max_tokens=50))
        )
        await model.aclose()
    request = server.requests[0]
    assert request.path == "/api/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-or-v1-test"
    assert request.headers["http-referer"] == "https://agentos.example"
    assert request.headers["x-title"] == "agentos tests"
    assert request.json["model"] == "openai/gpt-4o-mini"
    assert request.json["max_tokens"] == 50
    assert text_of(chunks) == "Hola"
    assert chunks[-2] == FinishChunk(
        "stop", response_model="openai/gpt-4o-mini", provider_message_id="gen-1733-abc"
    )
    assert chunks[-1] == UsageChunk(ModelUsage(8, 2, 10, cost_usd=0.00042))


async def test_an_openrouter_mid_stream_error_with_a_numeric_code() -> None:
    router = ChunkMaker(id="gen-1", model="openai/gpt-4o-mini")
    error_chunk = router.chunk(
        {"content": ""},
        finish_reason="error",
        error={"code": 502, "message": "Provider disconnected unexpectedly"},
    )
    error, _, _ = await failure(
        [stream_reply([router.role(), router.text("Hi"), error_chunk])],
        provider_id="openrouter",
        model_id="openai/gpt-4o-mini",
    )
    assert (error.kind, error.status_code, error.after_output) == ("stream", 502, True)
    assert error.message.startswith("[502] openrouter reported an error in the stream")


def test_a_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in sys.modules if n == "openai" or n.startswith("openai.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "openai", None)
    for name in [n for n in sys.modules if n.startswith("agentos.llm.providers")]:
        monkeypatch.delitem(sys.modules, name)
    # The module imports without the SDK; building a model names what to install.
    module = importlib.import_module("agentos.llm.providers.openai")
    with pytest.raises(ProviderError) as caught:
        module.OpenAIModel(MODEL, api_key=KEY)
    assert caught.value.kind == "setup"
    assert "pip install 'agentos[openai]'" in caught.value.message
    with pytest.raises(ProviderError):
        module.OpenAIEmbedder(api_key=KEY)


# --- embeddings ---------------------------------------------------------------------------------


def _vector(size: int, seed: int) -> list[float]:
    return [float((i * seed) % 7 + 1) for i in range(size)]


async def test_embeddings_are_unit_length_in_input_order() -> None:
    vectors = [_vector(1536, 3), _vector(1536, 5)]
    with serving([embeddings_reply(vectors, order="reversed")]) as server:
        embedder = OpenAIEmbedder(api_key=KEY, base_url=f"{server.url}/v1")
        assert (embedder.model_id, embedder.dimension) == ("text-embedding-3-small", 1536)
        out = await embedder.embed(["erste Zeile", "二行目"])
        await embedder.aclose()
    request = server.requests[0]
    assert request.path == "/v1/embeddings"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.json == {
        "model": "text-embedding-3-small",
        "input": ["erste Zeile", "二行目"],
        "encoding_format": "float",
    }
    for got, raw in zip(out, vectors, strict=True):
        norm = sum(x * x for x in raw) ** 0.5
        assert got == pytest.approx([x / norm for x in raw])
        assert sum(x * x for x in got) == pytest.approx(1.0)


async def test_a_shorter_dimension_is_requested_from_text_embedding_3() -> None:
    with serving([embeddings_reply([_vector(256, 2)], model="text-embedding-3-large")]) as server:
        embedder = OpenAIEmbedder(
            "text-embedding-3-large", api_key=KEY, base_url=f"{server.url}/v1", dimension=256
        )
        assert embedder.dimension == 256
        assert len((await embedder.embed(["x"]))[0]) == 256
        await embedder.aclose()
    assert server.requests[0].json["dimensions"] == 256


async def test_ollama_nomic_embed_text() -> None:
    with serving([embeddings_reply([_vector(768, 4)], model="nomic-embed-text")]) as server:
        embedder = OpenAIEmbedder(
            "nomic-embed-text:latest", provider_id="ollama", base_url=f"{server.url}/v1"
        )
        assert embedder.dimension == 768
        [vector] = await embedder.embed(["hello"])
        await embedder.aclose()
    assert len(vector) == 768
    assert "dimensions" not in server.requests[0].json


def test_embedding_sizes_agentos_cannot_honour_are_refused() -> None:
    cases: list[tuple[str, dict[str, Any]]] = [
        ("my-embedder", {}),
        ("text-embedding-ada-002", {"dimension": 256}),
        ("text-embedding-3-small", {"dimension": 4096}),
        ("text-embedding-3-small", {"dimension": 0}),
    ]
    for model_id, extra in cases:
        with pytest.raises(GMIError) as caught:
            OpenAIEmbedder(model_id, api_key=KEY, **extra)
        assert caught.value.details["option"] == "dimension"
    assert OpenAIEmbedder("my-embedder", api_key=KEY, dimension=384).dimension == 384


async def test_embedding_errors_and_wrong_sizes_are_provider_errors() -> None:
    with serving([rate_limit_429(), embeddings_reply([_vector(10, 1)])]) as server:
        embedder = OpenAIEmbedder(api_key=KEY, base_url=f"{server.url}/v1")
        assert await embedder.embed([]) == []  # nothing to embed: no request
        with pytest.raises(ProviderError) as caught:
            await embedder.embed(["a"])
        assert (caught.value.kind, caught.value.status_code) == ("http", 429)
        with pytest.raises(ProviderError) as caught:
            await embedder.embed(["a"])
        assert "1536" in caught.value.message
        await embedder.aclose()
    assert len(server.requests) == 2


# A finished loop's pooled connection cannot be closed from another loop: the garbage collector
# closes it, with the ResourceWarning Python gives an unclosed socket.
@pytest.mark.filterwarnings("ignore::ResourceWarning")
def test_a_model_serves_calls_from_successive_event_loops() -> None:
    # asyncio.run() per call (the sync wrappers do this): a pooled keep-alive connection of the
    # first loop must not be reused by the second, where it fails with "Event loop is closed".
    replies = [embeddings_reply([_vector(1536, 1)]), embeddings_reply([_vector(1536, 2)])]
    with serving(replies) as server:
        embedder = OpenAIEmbedder(api_key=KEY, base_url=f"{server.url}/v1")
        first = asyncio.run(embedder.embed(["a"]))
        second = asyncio.run(embedder.embed(["b"]))
        asyncio.run(embedder.aclose())
    assert len(first[0]) == len(second[0]) == 1536
    assert len(server.requests) == 2
    del embedder
    gc.collect()  # here, under this test's warning filter


def test_sse_helpers_follow_the_documented_shapes() -> None:
    events = CHUNKS.text_events(["a"])
    payloads = [json.loads(e.removeprefix("data: ")) for e in events[:-1]]
    assert events[-1] == DONE
    assert {p["object"] for p in payloads} == {"chat.completion.chunk"}
    assert payloads[-1]["choices"] == []
    assert payloads[-1]["usage"]["total_tokens"] == 17


# --- the schema message a caller puts in the prompt itself (spec: Completion options) ---------


def test_schema_prompt_names_the_json_mode_message_and_nothing_for_a_strict_schema() -> None:
    model = OpenAIModel("gpt-4o", api_key=KEY)
    loose = {"type": "object", "properties": {"name": {"type": "string", "minLength": 1}}}
    assert model.schema_prompt(CompletionOptions(response_schema=loose)) == schema_instruction(
        loose
    )
    assert model.schema_prompt(CompletionOptions(response_schema=STRICT_SCHEMA)) is None
    assert model.schema_prompt(CompletionOptions()) is None
    assert model.schema_prompt(CompletionOptions(json_mode=True)) is None


async def test_a_given_schema_prompt_is_not_added_again_and_json_mode_still_goes() -> None:
    loose = {"type": "object", "properties": {"name": {"type": "string", "minLength": 1}}}
    options = CompletionOptions(response_schema=loose, schema_prompt_given=True)
    request = ModelRequest(
        [Message.system("Extract."), Message.system("Mine."), Message.user("Ana")],
        options=options,
    )
    chunks, server = await run([stream_reply(CHUNKS.text_events(['{"name": "Ana"}']))], request)
    body = body_of(server)
    assert body["response_format"] == {"type": "json_object"}
    assert body["messages"] == [
        {"role": "system", "content": "Extract."},
        {"role": "system", "content": "Mine."},
        {"role": "user", "content": "Ana"},
    ]
    assert finish_of(chunks).schema_route == "json_mode"


async def test_a_given_schema_prompt_leaves_a_strict_schema_as_it_was() -> None:
    options = CompletionOptions(response_schema=STRICT_SCHEMA, schema_prompt_given=True)
    request = ModelRequest([Message.user("Ana, 31")], options=options)
    _, server = await run([stream_reply(CHUNKS.text_events(["{}"]))], request)
    body = body_of(server)
    assert body["response_format"]["type"] == "json_schema"
    assert body["messages"] == [{"role": "user", "content": "Ana, 31"}]
