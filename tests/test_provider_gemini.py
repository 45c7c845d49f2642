"""The Gemini adapter, through the real ``google-genai`` SDK, against a loopback Gemini API."""

from __future__ import annotations

import asyncio
import base64
import json
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, Literal

import google
import pytest
from google import genai
from google.genai import types

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
from agentos.llm.embedding import Embedder
from agentos.llm.errors import ProviderError
from agentos.llm.gateway import is_retryable_error
from agentos.llm.model import (
    ChatModel,
    CompletionOptions,
    FinishChunk,
    ModelRequest,
    ReplayChunk,
    TextDelta,
    ToolCallChunk,
    ToolDefinition,
    UsageChunk,
)
from agentos.llm.providers import _gemini_config
from agentos.llm.providers.gemini import (
    DEFAULT_GEMINI_MODEL,
    GeminiEmbedder,
    GeminiModel,
    create_gemini_model,
)
from fakes.gemini_server import (
    MODEL_VERSION,
    RESPONSE_ID,
    SIGNATURE_B64,
    SIGNATURE_BYTES,
    batch_embed_reply,
    blocked_prompt,
    chunk,
    error_body,
    error_reply,
    function_call_part,
    is_embed_request,
    is_stream_request,
    stream_reply,
    text_part,
    usage,
)
from fakes.loopback import Reply, ScriptedServer, Served
from fakes.model_streams import collect, fail, text_of

KEY = "gemini-test-key"
MODEL = "gemini-2.5-flash"
HELLO = [Message.user("Hello")]
WEATHER = ToolDefinition(
    "get_weather",
    "The weather in a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
CLOCK = ToolDefinition("get_time", "The time in a city.", {"type": "object", "properties": {}})
PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
}
# Wire spelling: the SDK names the fields it converts in camelCase (``functionDeclarations``,
# ``inlineData``) and writes the objects it passes through as they are, by field name
# (``parameters_json_schema``, ``mime_type``, ``thinking_budget``); Google's JSON parser reads
# both spellings. The bodies below are what the installed SDK sends.
#
# What the SDK puts on the wire for SIGNATURE_BYTES: it encodes bytes with the URL-safe
# alphabet, whatever alphabet they arrived in (Google's JSON parser reads both).
SIGNATURE_ON_WIRE = base64.urlsafe_b64encode(SIGNATURE_BYTES).decode("ascii")
SKIP_ON_WIRE = "skip_thought_signature_validator"


def done(*parts: dict[str, Any], finish: str = "STOP", **kwargs: Any) -> dict[str, Any]:
    """The last event of a stream: its parts, a finish reason and the usage."""
    kwargs.setdefault("usage_metadata", usage(12, 7))
    return chunk(*parts, finish=finish, **kwargs)


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


_built: list[GeminiModel | GeminiEmbedder] = []


@pytest.fixture(autouse=True)
async def _close_models() -> AsyncIterator[None]:
    """Close the connections of every model a test built."""
    yield
    while _built:
        await _built.pop().aclose()


@pytest.fixture(autouse=True)
def _vertex_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Vertex AI switched on in the environment must not reroute the adapter's calls."""
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)


def model_for(served: Served, model_id: str = MODEL) -> GeminiModel:
    model = GeminiModel(model_id, api_key=KEY, base_url=served.url)
    _built.append(model)
    return model


async def body_of(serve: Serve, request: ModelRequest) -> dict[str, Any]:
    """The JSON body the server received for ``request``."""
    served = serve(stream_reply(done(text_part("ok"))))
    await collect(model_for(served), request)
    (recorded,) = served.requests
    body: dict[str, Any] = recorded.json
    return body


def embedder_for(served: Served, **kwargs: Any) -> GeminiEmbedder:
    embedder = GeminiEmbedder(api_key=KEY, base_url=served.url, **kwargs)
    _built.append(embedder)
    return embedder


@pytest.fixture
def priced_flash(monkeypatch: pytest.MonkeyPatch) -> ModelInfo:
    info = ModelInfo(
        "gemini",
        MODEL,
        context_window=1_048_576,
        input_per_million=0.30,
        output_per_million=2.50,
        cache_read_per_million=0.03,
    )
    monkeypatch.setitem(catalog._CATALOG, ("gemini", MODEL), info)
    return info


# --- setup ---------------------------------------------------------------------------------------


def test_no_key_is_a_setup_error_naming_the_variable() -> None:
    with pytest.raises(ProviderError) as caught:
        GeminiModel(MODEL)
    assert caught.value.kind == "setup"
    assert caught.value.code == GMIErrorCode.CONFIGURATION_ERROR
    assert "GEMINI_API_KEY" in caught.value.message
    assert caught.value.details["env"] == "GEMINI_API_KEY"
    with pytest.raises(ProviderError, match="GEMINI_API_KEY"):
        GeminiEmbedder()


def test_a_missing_sdk_is_a_setup_error_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "google.genai", None)
    monkeypatch.delattr(google, "genai")
    with pytest.raises(ProviderError) as caught:
        GeminiModel(MODEL, api_key=KEY)
    assert caught.value.kind == "setup"
    assert caught.value.code == GMIErrorCode.MISSING_DEPENDENCY
    assert "pip install 'agentos[gemini]'" in caught.value.message
    with pytest.raises(ProviderError, match=r"agentos\[gemini\]"):
        GeminiEmbedder(api_key=KEY)


async def test_the_key_comes_from_the_environment(
    serve: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "from-env")
    served = serve(stream_reply(done(text_part("hi"))))
    model = GeminiModel(MODEL, base_url=served.url)
    _built.append(model)
    assert isinstance(model, ChatModel)
    assert (model.provider_id, model.model_id) == ("gemini", MODEL)
    assert text_of(await collect(model, ModelRequest(HELLO))) == "hi"
    assert served.requests[0].headers["x-goog-api-key"] == "from-env"


def test_the_factory_builds_the_default_model() -> None:
    model = create_gemini_model(None, KEY, "http://127.0.0.1:9")
    assert isinstance(model, GeminiModel)
    assert model.model_id == DEFAULT_GEMINI_MODEL == "gemini-2.5-flash"
    _built.append(model)


async def test_a_given_client_is_used_as_it_is(serve: Serve) -> None:
    served = serve(stream_reply(done(text_part("hi"))))
    options = types.HttpOptions(base_url=served.url)
    client = genai.Client(api_key="own-key", vertexai=False, http_options=options)
    model = GeminiModel(MODEL, client=client)
    assert text_of(await collect(model, ModelRequest(HELLO))) == "hi"
    await model.aclose()  # not its client: left to its owner
    await client.aio.aclose()
    assert served.requests[0].headers["x-goog-api-key"] == "own-key"


# --- the request ---------------------------------------------------------------------------------


async def test_a_plain_request_sends_the_key_the_path_and_only_what_was_set(serve: Serve) -> None:
    messages = [Message.system("Be brief."), Message.user("Hallo, wie geht's?")]
    served = serve(stream_reply(done(text_part("Gut."))))
    await collect(model_for(served), ModelRequest(messages))
    (request,) = served.requests
    assert is_stream_request(request, MODEL)
    assert request.path == f"/v1/models/{MODEL}:streamGenerateContent?alt=sse"
    assert request.headers["x-goog-api-key"] == KEY
    assert "x-server-timeout" not in request.headers
    assert request.json == {
        "contents": [{"role": "user", "parts": [{"text": "Hallo, wie geht's?"}]}],
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "generationConfig": {},
    }


async def test_completion_options_are_sent_when_set(serve: Serve) -> None:
    options = CompletionOptions(
        temperature=0.2,
        max_tokens=256,
        top_p=0.9,
        stop_sequences=("END",),
        seed=7,
        presence_penalty=0.5,
        frequency_penalty=0.25,
        thinking_budget_tokens=1024,
        user_id="user-42",
        custom_model_params={"topK": 40, "thinking_config": {"include_thoughts": True}},
    )
    body = await body_of(serve, ModelRequest(HELLO, options=options))
    assert body["generationConfig"] == {
        "temperature": 0.2,
        "maxOutputTokens": 256,
        "topP": 0.9,
        "stopSequences": ["END"],
        "seed": 7,
        "presencePenalty": 0.5,
        "frequencyPenalty": 0.25,
        "topK": 40.0,
        "thinkingConfig": {"thinking_budget": 1024, "include_thoughts": True},
    }
    # Gemini has no end-user field: the user id goes nowhere.
    assert "user-42" not in json.dumps(body)


async def test_effort_is_the_thinking_level(serve: Serve) -> None:
    options = CompletionOptions(effort="low")
    body = await body_of(serve, ModelRequest(HELLO, options=options))
    assert body == {
        "contents": [{"role": "user", "parts": [{"text": "Hello"}]}],
        "generationConfig": {"thinkingConfig": {"thinking_level": "LOW"}},
    }


async def test_effort_wins_over_a_thinking_budget(serve: Serve) -> None:
    # The API refuses a level and a budget together: the level goes, the budget does not.
    options = CompletionOptions(
        effort="High",
        thinking_budget_tokens=1024,
        custom_model_params={"thinking_config": {"include_thoughts": True}},
    )
    body = await body_of(serve, ModelRequest(HELLO, options=options))
    assert body["generationConfig"] == {
        "thinkingConfig": {"thinking_level": "HIGH", "include_thoughts": True}
    }


@pytest.mark.parametrize("cache", [True, False, "5m", "1h"])
async def test_cache_is_never_sent_gemini_caches_implicitly(
    serve: Serve, cache: bool | Literal["5m", "1h"]
) -> None:
    options = CompletionOptions(cache=cache)
    body = await body_of(serve, ModelRequest(HELLO, options=options))
    assert body == {
        "contents": [{"role": "user", "parts": [{"text": "Hello"}]}],
        "generationConfig": {},
    }


PLAIN_CONTENTS = [{"role": "user", "parts": [{"text": "Hello"}]}]


@pytest.mark.parametrize(("tier", "sent"), [("flex", "flex"), ("Priority", "priority")])
async def test_service_tier_is_the_request_s_service_tier(
    serve: Serve, tier: str, sent: str
) -> None:
    options = CompletionOptions(service_tier=tier)
    body = await body_of(serve, ModelRequest(HELLO, options=options))
    # The SDK sends the config's service_tier at the request's top level, not in the config.
    assert body == {"contents": PLAIN_CONTENTS, "generationConfig": {}, "serviceTier": sent}


def test_the_service_tiers_are_the_sdks() -> None:
    sdk = {tier.value for tier in types.ServiceTier} - {"unspecified"}
    assert set(_gemini_config._SERVICE_TIERS) == sdk


async def test_prompt_cache_key_and_retention_are_never_sent(serve: Serve) -> None:
    options = CompletionOptions(prompt_cache_key="user-7f3a", prompt_cache_retention="24h")
    body = await body_of(serve, ModelRequest(HELLO, options=options))
    assert body == {"contents": PLAIN_CONTENTS, "generationConfig": {}}


async def test_json_mode_is_the_json_mime_type(serve: Serve) -> None:
    options = CompletionOptions(json_mode=True)
    body = await body_of(serve, ModelRequest(HELLO, options=options))
    assert body == {
        "contents": PLAIN_CONTENTS,
        "generationConfig": {"responseMimeType": "application/json"},
    }


@pytest.mark.parametrize("json_mode", [False, None])
async def test_json_mode_off_or_unset_sends_no_mime_type(
    serve: Serve, json_mode: bool | None
) -> None:
    options = CompletionOptions(json_mode=json_mode)
    body = await body_of(serve, ModelRequest(HELLO, options=options))
    assert body == {"contents": PLAIN_CONTENTS, "generationConfig": {}}


async def test_json_mode_with_a_schema_sends_the_schema(serve: Serve) -> None:
    options = CompletionOptions(json_mode=True, response_schema=PERSON)
    body = await body_of(serve, ModelRequest(HELLO, options=options))
    assert body["generationConfig"] == {
        "responseMimeType": "application/json",
        "responseJsonSchema": PERSON,
    }


async def test_the_served_tier_header_reaches_the_finish_chunk(serve: Serve) -> None:
    # Asked for priority, downgraded to standard: Google says so in a response header.
    served = serve(
        stream_reply(done(text_part("ok")), headers={"x-gemini-service-tier": "standard"})
    )
    options = CompletionOptions(service_tier="priority")
    chunks = await collect(model_for(served), ModelRequest(HELLO, options=options))
    finish = next(item for item in chunks if isinstance(item, FinishChunk))
    assert finish.service_tier == "standard"


async def test_no_served_tier_header_leaves_the_finish_chunk_s_tier_unset(serve: Serve) -> None:
    served = serve(stream_reply(done(text_part("ok"))))
    chunks = await collect(model_for(served), ModelRequest(HELLO))
    finish = next(item for item in chunks if isinstance(item, FinishChunk))
    assert finish.service_tier is None


def test_the_thinking_levels_are_the_sdks() -> None:
    sdk = {level.value for level in types.ThinkingLevel} - {"THINKING_LEVEL_UNSPECIFIED"}
    assert set(_gemini_config._THINKING_LEVELS) == sdk


async def test_system_and_summary_messages_become_the_instruction_in_order(serve: Serve) -> None:
    messages = [
        Message.system("You are terse."),
        Message.user("one"),
        Message(Role.SUMMARY, "Earlier: a greeting."),
        Message(Role.ERROR, "not sent"),
        Message(Role.THOUGHT, "not sent either"),
        Message.assistant("two"),
        Message.user("three"),
    ]
    body = await body_of(serve, ModelRequest(messages))
    assert body["systemInstruction"] == {
        "parts": [{"text": "You are terse."}, {"text": "Earlier: a greeting."}]
    }
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": "one"}]},
        {"role": "model", "parts": [{"text": "two"}]},
        {"role": "user", "parts": [{"text": "three"}]},
    ]


async def test_images_go_inline_from_data_urls_and_by_uri_otherwise(serve: Serve) -> None:
    png = b"\x89PNG\r\n\x1a\n-fake-"
    data_url = "data:image/png;base64," + base64.b64encode(png).decode()
    content: list[TextPart | ImagePart] = [
        TextPart("What is in these?"),
        ImagePart(data_url),
        ImagePart("https://example.com/cat.jpg"),
        ImagePart("https://example.com/photo", media_type="image/webp"),
    ]
    body = await body_of(serve, ModelRequest([Message.user(content)]))
    (turn,) = body["contents"]
    text, inline, by_uri, typed = turn["parts"]
    assert text == {"text": "What is in these?"}
    assert inline["inlineData"]["mime_type"] == "image/png"
    assert base64.urlsafe_b64decode(inline["inlineData"]["data"]) == png
    assert by_uri == {
        "fileData": {"file_uri": "https://example.com/cat.jpg", "mime_type": "image/jpeg"}
    }
    assert typed == {
        "fileData": {"file_uri": "https://example.com/photo", "mime_type": "image/webp"}
    }


async def test_a_bad_data_url_is_refused_before_any_request(serve: Serve) -> None:
    served = serve()
    message = Message.user([ImagePart("data:image/png;base64,not base64!")])
    with pytest.raises(GMIError) as caught:
        await collect(model_for(served), ModelRequest([message]))
    assert caught.value.code == GMIErrorCode.INVALID_ARGUMENT
    assert served.requests == []


@pytest.mark.parametrize(
    ("choice", "config"),
    [
        ("auto", {"mode": "AUTO"}),
        ("none", {"mode": "NONE"}),
        ("required", {"mode": "ANY"}),
        ("get_time", {"mode": "ANY", "allowedFunctionNames": ["get_time"]}),
    ],
)
async def test_tools_are_function_declarations_and_tool_choice_a_calling_mode(
    serve: Serve, choice: str, config: dict[str, Any]
) -> None:
    options = CompletionOptions(tool_choice=choice)
    body = await body_of(serve, ModelRequest(HELLO, tools=[WEATHER, CLOCK], options=options))
    assert body["tools"] == [
        {
            "functionDeclarations": [
                {
                    "name": "get_weather",
                    "description": "The weather in a city.",
                    "parameters_json_schema": WEATHER.parameters,
                },
                {
                    "name": "get_time",
                    "description": "The time in a city.",
                    "parameters_json_schema": CLOCK.parameters,
                },
            ]
        }
    ]
    assert body["toolConfig"] == {"functionCallingConfig": config}


async def test_tool_choice_is_never_sent_without_tools(serve: Serve) -> None:
    options = CompletionOptions(tool_choice="required")
    body = await body_of(serve, ModelRequest(HELLO, options=options))
    assert "toolConfig" not in body
    assert "tools" not in body


async def test_tool_choice_naming_no_offered_tool_is_refused_before_any_request(
    serve: Serve,
) -> None:
    served = serve()
    request = ModelRequest(HELLO, [WEATHER], CompletionOptions(tool_choice="get_time"))
    with pytest.raises(GMIError) as caught:
        await collect(model_for(served), request)
    assert caught.value.details["option"] == "tool_choice"
    assert served.requests == []


async def test_request_timeout_also_reaches_the_server_as_its_deadline(serve: Serve) -> None:
    served = serve(stream_reply(done(text_part("ok"))))
    options = CompletionOptions(request_timeout=2.5)
    await collect(model_for(served), ModelRequest(HELLO, options=options))
    assert served.requests[0].headers["x-server-timeout"] == "3"


def test_check_options_refuses_settings_the_config_cannot_take() -> None:
    model = GeminiModel(MODEL, api_key=KEY, base_url="http://127.0.0.1:9")
    _built.append(model)
    model.check_options(CompletionOptions(custom_model_params={"top_k": 3, "topK": 4}))
    for key in ("not_a_setting", "tools", "toolConfig", "system_instruction", "http_options"):
        with pytest.raises(GMIError) as caught:
            model.check_options(CompletionOptions(custom_model_params={key: 1}))
        assert caught.value.code == GMIErrorCode.INVALID_ARGUMENT
        assert caught.value.details == {"option": "custom_model_params", "key": key}


@pytest.mark.parametrize(
    ("option", "value", "options"),
    [
        ("effort", "max", CompletionOptions(effort="max")),
        ("service_tier", "auto", CompletionOptions(service_tier="auto")),
    ],
)
async def test_a_value_gemini_has_no_setting_for_is_refused_before_any_request(
    serve: Serve, option: str, value: str, options: CompletionOptions
) -> None:
    served = serve()
    model = model_for(served)
    with pytest.raises(GMIError) as caught:
        model.check_options(options)
    assert caught.value.code == GMIErrorCode.INVALID_ARGUMENT
    assert caught.value.details == {"option": option, option: value}
    with pytest.raises(GMIError) as caught:
        await collect(model, ModelRequest(HELLO, options=options))
    assert caught.value.details["option"] == option
    assert served.requests == []


async def test_invalid_custom_values_are_refused_naming_the_option(serve: Serve) -> None:
    served = serve()
    options = CompletionOptions(custom_model_params={"top_k": "many"})
    with pytest.raises(GMIError) as caught:
        await collect(model_for(served), ModelRequest(HELLO, options=options))
    assert caught.value.details["option"] == "custom_model_params"
    assert served.requests == []


# --- streaming -----------------------------------------------------------------------------------


async def test_text_streams_as_deltas_with_usage_and_finish(
    serve: Serve, priced_flash: ModelInfo
) -> None:
    served = serve(
        stream_reply(
            chunk(text_part("Grüße, "), usage_metadata=usage(12)),
            chunk(text_part("世界 🌍")),
            done(
                text_part("", signature=SIGNATURE_B64),
                usage_metadata=usage(1200, 40, cached=1000, thoughts=60),
            ),
        )
    )
    chunks = await collect(model_for(served), ModelRequest(HELLO))
    expected_usage = ModelUsage(
        prompt_tokens=1200,
        completion_tokens=100,
        total_tokens=1300,
        cache_read_tokens=1000,
        cost_usd=(200 * 0.30 + 1000 * 0.03 + 100 * 2.50) / 1_000_000,
    )
    assert chunks == [
        TextDelta("Grüße, "),
        TextDelta("世界 🌍"),
        ReplayChunk(
            ReplayBlock("gemini", "thought_signature", {"signature": SIGNATURE_B64, "part": "text"})
        ),
        FinishChunk("stop", response_model=MODEL_VERSION, provider_message_id=RESPONSE_ID),
        UsageChunk(expected_usage),
    ]


async def test_an_unknown_model_has_an_unknown_cost(serve: Serve) -> None:
    served = serve(stream_reply(done(text_part("ok"))))
    chunks = await collect(model_for(served, "gemini-next-unknown"), ModelRequest(HELLO))
    (reported,) = [c.usage for c in chunks if isinstance(c, UsageChunk)]
    assert reported == ModelUsage(prompt_tokens=12, completion_tokens=7, total_tokens=19)
    assert reported.cost_usd is None


async def test_thought_summaries_stay_out_of_the_text(serve: Serve) -> None:
    served = serve(
        stream_reply(
            chunk(text_part("Let me think about the user's question…", thought=True)),
            chunk(text_part("", thought=True, signature=SIGNATURE_B64)),
            done(text_part("The answer is 42.")),
        )
    )
    chunks = await collect(model_for(served), ModelRequest(HELLO))
    assert text_of(chunks) == "The answer is 42."
    (replay,) = [c.block for c in chunks if isinstance(c, ReplayChunk)]
    assert replay.data == {"signature": SIGNATURE_B64, "part": "thought", "text": ""}


async def test_parallel_function_calls_become_tool_calls_with_ids(serve: Serve) -> None:
    served = serve(
        stream_reply(
            chunk(text_part("Checking both. ")),
            done(
                function_call_part("get_weather", {"city": "Zürich"}, signature=SIGNATURE_B64),
                function_call_part("get_weather", {"city": "東京"}),
                function_call_part("get_time", call_id="fc-from-gemini"),
            ),
        )
    )
    chunks = await collect(model_for(served), ModelRequest(HELLO, tools=[WEATHER, CLOCK]))
    assert chunks[:5] == [
        TextDelta("Checking both. "),
        ToolCallChunk(ToolCall("call_1", "get_weather", {"city": "Zürich"})),
        ReplayChunk(
            ReplayBlock(
                "gemini",
                "thought_signature",
                {
                    "signature": SIGNATURE_B64,
                    "part": "function_call",
                    "tool_call_id": "call_1",
                    "name": "get_weather",
                },
            )
        ),
        ToolCallChunk(ToolCall("call_2", "get_weather", {"city": "東京"})),
        ToolCallChunk(ToolCall("fc-from-gemini", "get_time", {})),
    ]
    finish = chunks[5]
    assert isinstance(finish, FinishChunk)
    assert finish.finish_reason == "tool_calls"


async def test_generated_call_ids_do_not_repeat_across_steps(serve: Serve) -> None:
    step = stream_reply(done(function_call_part("get_time")))
    served = serve(step, step)
    model = model_for(served)
    first = await collect(model, ModelRequest(HELLO, tools=[CLOCK]))
    second = await collect(model, ModelRequest(HELLO, tools=[CLOCK]))
    ids = [c.tool_call.id for c in first + second if isinstance(c, ToolCallChunk)]
    assert ids == ["call_1", "call_2"]


async def test_a_tool_round_replays_calls_signatures_and_results_verbatim(serve: Serve) -> None:
    served = serve(
        stream_reply(
            chunk(text_part("Thinking…", thought=True, signature=SIGNATURE_B64)),
            chunk(text_part("Let me check.")),
            done(
                function_call_part("get_weather", {"city": "Paris"}, signature=SIGNATURE_B64),
                function_call_part("get_time", {}),
            ),
        ),
        stream_reply(done(text_part("Sunny, 14:00."))),
    )
    model = model_for(served)
    chunks = await collect(model, ModelRequest(HELLO, tools=[WEATHER, CLOCK]))
    reply = Message.assistant(
        text_of(chunks),
        tool_calls=[c.tool_call for c in chunks if isinstance(c, ToolCallChunk)],
        replay_blocks=[c.block for c in chunks if isinstance(c, ReplayChunk)],
    )
    failed = ToolResult(
        "call_2",
        "get_time",
        "clock down",
        is_error=True,
        error_details={"code": "TOOL_EXECUTION_FAILED", "message": "clock down"},
    )
    history = [
        *HELLO,
        reply,
        Message.tool(ToolResult("call_1", "get_weather", {"sky": "sunny", "error": None})),
        Message.tool(failed),
    ]
    await collect(model, ModelRequest(history, tools=[WEATHER, CLOCK]))
    assert served.requests[1].json["contents"] == [
        {"role": "user", "parts": [{"text": "Hello"}]},
        {
            "role": "model",
            "parts": [
                {"text": "Thinking…", "thought": True, "thoughtSignature": SIGNATURE_ON_WIRE},
                {"text": "Let me check."},
                {
                    "functionCall": {
                        "id": "call_1",
                        "name": "get_weather",
                        "args": {"city": "Paris"},
                    },
                    "thoughtSignature": SIGNATURE_ON_WIRE,
                },
                {"functionCall": {"id": "call_2", "name": "get_time", "args": {}}},
            ],
        },
        {
            # The results of parallel calls travel together, in one turn.
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "id": "call_1",
                        "name": "get_weather",
                        "response": {"output": {"sky": "sunny", "error": None}},
                    }
                },
                {
                    "functionResponse": {
                        "id": "call_2",
                        "name": "get_time",
                        "response": {
                            "error": {"code": "TOOL_EXECUTION_FAILED", "message": "clock down"}
                        },
                    }
                },
            ],
        },
    ]
    # The signature's bytes come back unchanged, in the SDK's URL-safe spelling.
    assert base64.urlsafe_b64decode(SIGNATURE_ON_WIRE) == SIGNATURE_BYTES


async def test_a_text_signature_returns_on_the_reply_text(serve: Serve) -> None:
    block = ReplayBlock("gemini", "thought_signature", {"signature": SIGNATURE_B64, "part": "text"})
    history = [*HELLO, Message.assistant("Hi there!", replay_blocks=[block]), Message.user("Bye")]
    body = await body_of(serve, ModelRequest(history))
    assert body["contents"][1] == {
        "role": "model",
        "parts": [{"text": "Hi there!", "thoughtSignature": SIGNATURE_ON_WIRE}],
    }


async def test_a_second_text_signature_keeps_an_empty_part_of_its_own(serve: Serve) -> None:
    other = base64.b64encode(b"second-signature").decode()
    blocks = [
        ReplayBlock("gemini", "thought_signature", {"signature": SIGNATURE_B64, "part": "text"}),
        ReplayBlock("gemini", "thought_signature", {"signature": other, "part": "text"}),
    ]
    history = [*HELLO, Message.assistant("Hi!", replay_blocks=blocks), Message.user("Bye")]
    body = await body_of(serve, ModelRequest(history))
    assert body["contents"][1]["parts"] == [
        {"text": "Hi!", "thoughtSignature": SIGNATURE_ON_WIRE},
        {"text": "", "thoughtSignature": base64.urlsafe_b64encode(b"second-signature").decode()},
    ]


async def test_a_broken_signature_block_is_refused_before_any_request(serve: Serve) -> None:
    served = serve()
    block = ReplayBlock("gemini", "thought_signature", {"signature": "*not base64*"})
    history = [*HELLO, Message.assistant("Hi!", replay_blocks=[block]), Message.user("Bye")]
    with pytest.raises(GMIError) as caught:
        await collect(model_for(served), ModelRequest(history))
    assert caught.value.details["option"] == "replay_blocks"
    assert served.requests == []


async def test_calls_gemini_did_not_sign_get_the_documented_stand_in(serve: Serve) -> None:
    foreign = ReplayBlock("anthropic", "thinking", {"thinking": "hmm", "signature": "abc"})
    calls = [ToolCall("toolu_1", "get_weather", {"city": "Oslo"}), ToolCall("toolu_2", "get_time")]
    history = [
        *HELLO,
        Message.assistant("", tool_calls=calls, replay_blocks=[foreign]),
        Message.tool(ToolResult("toolu_1", "get_weather", "rain")),
        Message.tool(ToolResult("toolu_2", "get_time", "09:00")),
    ]
    body = await body_of(serve, ModelRequest(history, tools=[WEATHER, CLOCK]))
    assert body["contents"][1] == {
        "role": "model",
        "parts": [
            {
                "functionCall": {"id": "toolu_1", "name": "get_weather", "args": {"city": "Oslo"}},
                "thoughtSignature": SKIP_ON_WIRE,
            },
            {"functionCall": {"id": "toolu_2", "name": "get_time", "args": {}}},
        ],
    }
    assert "hmm" not in json.dumps(body)  # another provider's block stays home


async def test_structured_output_sends_the_schema_and_says_where(serve: Serve) -> None:
    served = serve(
        stream_reply(chunk(text_part('{"name": "Zoë", ')), done(text_part('"age": 31}')))
    )
    options = CompletionOptions(response_schema=PERSON, schema_name="person")
    chunks = await collect(model_for(served), ModelRequest(HELLO, options=options))
    config = served.requests[0].json["generationConfig"]
    assert config == {"responseMimeType": "application/json", "responseJsonSchema": PERSON}
    assert b"person" not in served.requests[0].raw_body  # Gemini's schema has no name
    assert json.loads(text_of(chunks)) == {"name": "Zoë", "age": 31}
    (finish,) = [c for c in chunks if isinstance(c, FinishChunk)]
    assert finish.schema_route == "response_schema"


@pytest.mark.filterwarnings("ignore:SOMETHING_NEW is not a valid FinishReason")
@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("MAX_TOKENS", "length"),
        ("SAFETY", "content_filter"),
        ("RECITATION", "content_filter"),
        ("PROHIBITED_CONTENT", "content_filter"),
        ("BLOCKLIST", "content_filter"),
        ("SPII", "content_filter"),
        ("MALFORMED_FUNCTION_CALL", "error"),
        ("OTHER", "other"),
        ("SOMETHING_NEW", "other"),
    ],
)
async def test_finish_reasons_are_normalised(serve: Serve, raw: str, reason: str) -> None:
    served = serve(stream_reply(chunk(text_part("Partial")), done(finish=raw)))
    chunks = await collect(model_for(served), ModelRequest(HELLO))
    (finish,) = [c for c in chunks if isinstance(c, FinishChunk)]
    assert finish.finish_reason == reason


# --- refusals ------------------------------------------------------------------------------------


async def test_a_blocked_prompt_is_a_refusal_with_its_usage(serve: Serve) -> None:
    served = serve(stream_reply(blocked_prompt("PROHIBITED_CONTENT", usage_metadata=usage(30))))
    error, seen = await fail(model_for(served), ModelRequest(HELLO))
    assert seen == []
    assert (error.kind, error.status_code, error.after_output) == ("refusal", None, False)
    assert error.details["block_reason"] == "PROHIBITED_CONTENT"
    assert error.usage is not None
    assert error.usage.prompt_tokens == 30


async def test_a_reply_stopped_for_safety_before_any_output_is_a_refusal(serve: Serve) -> None:
    served = serve(stream_reply(done(finish="SAFETY")))
    error, seen = await fail(model_for(served), ModelRequest(HELLO))
    assert seen == []
    assert error.kind == "refusal"
    assert error.details["finish_reason"] == "SAFETY"
    assert error.usage is not None
    assert error.usage.total_tokens == 19


# --- errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "status"),
    [
        (400, "INVALID_ARGUMENT"),
        (403, "PERMISSION_DENIED"),
        (404, "NOT_FOUND"),
        (500, "INTERNAL"),
        (503, "UNAVAILABLE"),
    ],
)
async def test_http_errors_keep_status_and_google_status(
    serve: Serve, code: int, status: str
) -> None:
    served = serve(error_reply(code, status, "it failed"), stream_reply(done(text_part("late"))))
    error, seen = await fail(model_for(served), ModelRequest(HELLO))
    assert seen == []
    assert (error.kind, error.status_code, error.after_output) == ("http", code, False)
    assert error.details["status"] == error.details["error_type"] == status
    assert "it failed" in error.message
    assert len(served.requests) == 1  # the SDK does not retry


async def test_a_rate_limit_carries_its_reason_and_retry_delay(serve: Serve) -> None:
    details = [
        {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "RATE_LIMIT_EXCEEDED"},
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "32s"},
    ]
    served = serve(
        error_reply(429, "RESOURCE_EXHAUSTED", "Quota exceeded.", details),
        stream_reply(done(text_part("late"))),
    )
    error, _ = await fail(model_for(served), ModelRequest(HELLO))
    assert error.status_code == 429
    assert error.details["error_type"] == "RESOURCE_EXHAUSTED"
    assert error.details["error_code"] == "RATE_LIMIT_EXCEEDED"
    assert error.details["retry_after"] == 32.0
    assert len(served.requests) == 1


async def test_an_error_event_after_text_fails_after_output(serve: Serve) -> None:
    events = [chunk(text_part("Half an ")), error_body(500, "INTERNAL", "backend fell over")]
    served = serve(stream_reply(*events))
    error, seen = await fail(model_for(served), ModelRequest(HELLO))
    assert seen == [TextDelta("Half an ")]
    assert (error.kind, error.status_code, error.after_output) == ("http", 500, True)
    assert error.details["status"] == "INTERNAL"


async def test_a_reset_after_text_is_a_network_error_after_output(serve: Serve) -> None:
    served = serve(
        stream_reply(
            chunk(text_part("Half"), usage_metadata=usage(9)),
            chunk(text_part(" more")),
            reset_after=1,
        )
    )
    error, seen = await fail(model_for(served), ModelRequest(HELLO))
    assert seen == [TextDelta("Half")]
    assert (error.kind, error.after_output) == ("network", True)
    assert error.usage is not None  # the usage reported before the cut
    assert (error.usage.prompt_tokens, error.usage.total_tokens) == (9, 9)
    assert len(served.requests) == 1  # no automatic continuation behind the caller's back


async def test_a_reset_before_output_is_a_network_error_and_is_not_resent(serve: Serve) -> None:
    served = serve(stream_reply(done(text_part("never")), reset_after=0))
    error, seen = await fail(model_for(served), ModelRequest(HELLO))
    assert seen == []
    assert (error.kind, error.after_output) == ("network", False)
    assert len(served.requests) == 1


async def test_a_stream_without_a_finish_reason_is_never_a_silent_partial_answer(
    serve: Serve,
) -> None:
    served = serve(
        stream_reply(
            chunk(text_part("Once upon")), chunk(text_part(" a time"), usage_metadata=usage(5))
        )
    )
    error, seen = await fail(model_for(served), ModelRequest(HELLO))
    assert seen == [TextDelta("Once upon"), TextDelta(" a time")]
    assert (error.kind, error.after_output) == ("stream", True)
    assert error.usage is not None
    assert error.usage.prompt_tokens == 5


async def test_an_empty_stream_is_a_stream_error_before_output(serve: Serve) -> None:
    served = serve(stream_reply())
    error, seen = await fail(model_for(served), ModelRequest(HELLO))
    assert seen == []
    assert (error.kind, error.after_output) == ("stream", False)


async def test_an_unreadable_event_is_a_stream_error(serve: Serve) -> None:
    served = serve(Reply(events=["data: {not json}\n\n"]))
    error, _ = await fail(model_for(served), ModelRequest(HELLO))
    assert error.kind == "stream"


async def test_a_silent_stream_times_out_and_is_closed(serve: Serve) -> None:
    reply = stream_reply(chunk(text_part("first")), done(text_part("never")), hold_after=1)
    served = serve(stream_reply(done(text_part("warm"))), reply)
    model = model_for(served)
    await collect(model, ModelRequest(HELLO))  # the client is built: 0.3 s is the stream's alone
    # The server holds the stream until the client leaves, or until `release` ends it 30 s on
    # (with no finish: a stream error). The order of the two, not a stopwatch, is the check.
    release = threading.Timer(30, reply.release.set)
    release.start()
    options = CompletionOptions(request_timeout=0.3)
    try:
        error, seen = await fail(model, ModelRequest(HELLO, options=options))
        assert seen == [TextDelta("first")]
        assert (error.kind, error.after_output) == ("timeout", True)
        assert await asyncio.to_thread(served.client_disconnected.wait, 30)
    finally:
        release.cancel()
    assert not reply.release.is_set()  # the call timed out and left while the server held on


async def test_request_timeout_bounds_the_whole_call_not_each_read(serve: Serve) -> None:
    events = [chunk(text_part(f"{n} ")) for n in range(20)] + [done()]
    served = serve(stream_reply(*events, pace=0.05))
    options = CompletionOptions(request_timeout=0.3)
    error, seen = await fail(model_for(served), ModelRequest(HELLO, options=options))
    assert error.kind == "timeout"
    assert 0 < len(seen) < 20


async def test_failures_are_classified_for_the_gateways_fallback(serve: Serve) -> None:
    served = serve(
        error_reply(429, "RESOURCE_EXHAUSTED", "Quota exceeded."),
        error_reply(400, "INVALID_ARGUMENT", "Bad field."),
        stream_reply(blocked_prompt()),
        stream_reply(reset_after=0),
    )
    model = model_for(served)
    errors = [(await fail(model, ModelRequest(HELLO)))[0] for _ in range(4)]
    assert [is_retryable_error(error) for error in errors] == [True, False, True, True]


# --- cancellation --------------------------------------------------------------------------------


async def test_closing_the_stream_closes_the_connection(serve: Serve) -> None:
    served = serve(stream_reply(chunk(text_part("first")), done(text_part("never")), hold_after=1))
    stream = model_for(served).stream(ModelRequest(HELLO))
    assert await anext(stream) == TextDelta("first")
    await stream.aclose()  # type: ignore[attr-defined]
    assert await asyncio.to_thread(served.client_disconnected.wait, 5)


async def test_cancelling_the_task_closes_the_connection(serve: Serve) -> None:
    served = serve(stream_reply(chunk(text_part("first")), done(text_part("never")), hold_after=1))
    model = model_for(served)
    first = asyncio.Event()

    async def consume() -> None:
        async for _ in model.stream(ModelRequest(HELLO)):
            first.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.to_thread(served.client_disconnected.wait, 5)


# --- embeddings ----------------------------------------------------------------------------------


async def test_embeddings_are_one_normalised_vector_per_text(serve: Serve) -> None:
    served = serve(batch_embed_reply([[3.0, 4.0], [0.0, 2.0], [1.0, 0.0]]))
    texts = ["Grüße", "東京の天気", "plain"]
    embedder = embedder_for(served, dimension=2, task_type="RETRIEVAL_DOCUMENT")
    assert isinstance(embedder, Embedder)
    assert (embedder.model_id, embedder.dimension) == ("gemini-embedding-2", 2)
    assert await embedder.embed(texts) == [[0.6, 0.8], [0.0, 1.0], [1.0, 0.0]]
    (request,) = served.requests
    assert is_embed_request(request, "gemini-embedding-2")
    assert request.headers["x-goog-api-key"] == KEY
    # One content per text: gemini-embedding-2 would merge the parts of one content.
    assert request.json == {
        "requests": [
            {
                "content": {"parts": [{"text": text}]},
                "taskType": "RETRIEVAL_DOCUMENT",
                "outputDimensionality": 2,
                "model": "models/gemini-embedding-2",
            }
            for text in texts
        ]
    }


async def test_the_default_size_is_the_models_own_and_is_not_sent(serve: Serve) -> None:
    vector = [1.0] + [0.0] * 3071
    served = serve(batch_embed_reply([vector]))
    embedder = embedder_for(served)
    assert embedder.dimension == 3072
    assert await embedder.embed(["one"]) == [vector]
    assert "outputDimensionality" not in served.requests[0].json["requests"][0]


async def test_many_texts_go_in_batches_of_a_hundred(serve: Serve) -> None:
    served = serve(batch_embed_reply([[1.0, 0.0]] * 100), batch_embed_reply([[0.0, 1.0]] * 5))
    embedder = embedder_for(served, dimension=2)
    vectors = await embedder.embed([f"text {n}" for n in range(105)])
    assert await embedder.embed([]) == []
    assert len(vectors) == 105
    assert vectors[-1] == [0.0, 1.0]
    assert [len(r.json["requests"]) for r in served.requests] == [100, 5]


async def test_an_embedding_http_error_is_a_provider_error(serve: Serve) -> None:
    served = serve(error_reply(429, "RESOURCE_EXHAUSTED", "Quota exceeded."))
    with pytest.raises(ProviderError) as caught:
        await embedder_for(served, dimension=2).embed(["a"])
    assert (caught.value.kind, caught.value.status_code) == ("http", 429)
    assert len(served.requests) == 1


@pytest.mark.parametrize(
    "vectors", [[[1.0, 0.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]]], ids=["count", "size"]
)
async def test_an_embedding_answer_of_the_wrong_shape_is_refused(
    serve: Serve, vectors: list[list[float]]
) -> None:
    served = serve(batch_embed_reply(vectors))
    with pytest.raises(ProviderError) as caught:
        await embedder_for(served, dimension=3).embed(["a", "b"])
    assert caught.value.kind == "stream"


def test_a_dimension_below_one_is_refused() -> None:
    with pytest.raises(GMIError) as caught:
        GeminiEmbedder(api_key=KEY, dimension=0)
    assert caught.value.details == {"option": "dimension"}
