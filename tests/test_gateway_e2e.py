"""The completion gateway end to end: the real SDKs against loopback servers, one per wire format.

Spec: "Model calls through a completion gateway" and "Completion options". Each test scripts an
OpenAI, an Anthropic and a Gemini server (`fakes.multi_provider`), runs `generate_text`,
`stream_text` or a `CompletionGateway` turn, and checks both what the caller got and what each
server received. The primary is named in the call (``provider``, ``api_key``, ``base_url``); the
fallback legs are built from the environment, as a host's would be: the provider's key variable
and the base-URL variable its SDK reads (``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``,
``GOOGLE_GEMINI_BASE_URL``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypedDict

import pytest
from pydantic import BaseModel

from agentos import (
    ErrorPart,
    FinishPart,
    GMIError,
    GMIErrorCode,
    Message,
    ModelUsage,
    ProviderError,
    SpendBudget,
    StepFinishPart,
    StreamPart,
    StreamTextResult,
    TextDeltaPart,
    ToolCall,
    ToolResult,
    generate_text,
    stream_text,
    tool,
)
from agentos.api import gateway_factory as generate_module
from agentos.api.structured import ObjectGenerationError
from agentos.llm import (
    AttemptFailed,
    CompletionGateway,
    CompletionOptions,
    FallbackLeg,
    FinishChunk,
    GatewayDefaults,
    GatewayTurn,
    Hop,
    ModelRequest,
    ProviderHealthRegistry,
    SpendLimitError,
    TextDelta,
    ToolCallChunk,
    ToolDefinition,
    UsageChunk,
    create_completion_gateway,
)
from agentos.llm.model import ChatModel, FinishReason
from agentos.llm.resolve import resolve_model
from agentos.storage.ledger import InMemoryUsageLedger
from fakes import anthropic_server as anthropic_wire
from fakes import gemini_server as gemini_wire
from fakes import openai_server as openai_wire
from fakes.loopback import RecordedRequest, Reply
from fakes.multi_provider import (
    KEYS,
    AnthropicWire,
    GeminiWire,
    OpenAIWire,
    ProviderServers,
    ScriptedServer,
    Wire,
    provider_servers,
)

OPENAI = OpenAIWire()
ANTHROPIC = AnthropicWire()
GEMINI = GeminiWire()
WIRES: dict[str, Wire] = {"openai": OPENAI, "anthropic": ANTHROPIC, "gemini": GEMINI}
PROVIDERS = tuple(WIRES)

WEATHER_DEF = ToolDefinition(
    "get_weather",
    "The weather in a city.",
    {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
)

CITY_WEATHER: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "temp_c": {"type": "integer"}},
    "required": ["city", "temp_c"],
    "additionalProperties": False,
}
"""A schema OpenAI's strict mode takes (every property required, closed)."""


class Forecast(BaseModel):
    """A schema strict mode cannot take as pydantic writes it (no ``additionalProperties``)."""

    city: str
    temp_c: int


@tool
def get_weather(city: str) -> dict[str, Any]:
    """The weather in a city.

    Args:
        city: The city's name.
    """
    return {"city": city, "sky": "sunny", "temp_c": 21}


# --- fixtures and helpers -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def shared_servers() -> Iterator[ProviderServers]:
    """One server per wire format for the whole module (each test scripts them afresh)."""
    yield from provider_servers()


@pytest.fixture
def servers(
    shared_servers: ProviderServers, monkeypatch: pytest.MonkeyPatch
) -> Iterator[ProviderServers]:
    """The shared servers with empty scripts, and no SDK variable from the developer's shell."""
    shared_servers.isolate(monkeypatch)
    shared_servers.play()
    yield shared_servers
    shared_servers.release()


class BuiltModels:
    """A resolver that builds models as `resolve_model` does and remembers them, to close them.

    Neither `generate_text` nor the gateway closes the models it resolves, so each call's SDK
    clients would be left to the garbage collector, which closes them from whichever event loop
    runs then (logging "Event loop is closed" for the loop of an earlier test).
    """

    def __init__(self) -> None:
        self.models: list[ChatModel] = []

    def resolve(
        self,
        provider: str | None,
        model: str | None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        environ: Mapping[str, str] | None = None,
        hop: int = 0,
    ) -> ChatModel:
        built = resolve_model(provider, model, api_key=api_key, base_url=base_url, environ=environ)
        self.models.append(built)
        return built

    async def aclose(self) -> None:
        while self.models:
            close = getattr(self.models.pop(), "aclose", None)
            if close is not None:
                await close()


@pytest.fixture(autouse=True)
async def built(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[BuiltModels]:
    """Every model a test's calls resolve, closed on the test's own event loop."""
    models = BuiltModels()
    monkeypatch.setattr(generate_module, "resolve_model", models.resolve)
    yield models
    await models.aclose()


class Primary(TypedDict):
    """The options that name a call's primary: its provider, model, key and endpoint."""

    provider: str
    model: str
    api_key: str
    base_url: str


def primary(servers: ProviderServers, provider: str) -> Primary:
    """The options that make ``provider``'s server the call's primary (its own key and URL)."""
    return Primary(
        provider=provider,
        model=WIRES[provider].model,
        api_key=KEYS[provider],
        base_url=servers.by_name(provider).base_url,
    )


def legs(*providers: str) -> list[FallbackLeg]:
    """Fallback legs on each provider's scripted model."""
    return [FallbackLeg(provider, WIRES[provider].model) for provider in providers]


def others(provider: str) -> tuple[str, str]:
    """The two other providers, in the chain's order."""
    first, second = (p for p in PROVIDERS if p != provider)
    return first, second


@dataclass
class Fallbacks:
    """An ``on_fallback`` that records (error, provider) pairs."""

    calls: list[tuple[BaseException, str]] = field(default_factory=list)

    def __call__(self, error: BaseException, provider: str) -> None:
        self.calls.append((error, provider))

    @property
    def providers(self) -> list[str]:
        return [provider for _, provider in self.calls]

    @property
    def statuses(self) -> list[int | None]:
        return [getattr(error, "status_code", None) for error, _ in self.calls]


async def parts_of(stream: StreamTextResult) -> list[StreamPart]:
    return [part async for part in stream.full_stream]


def texts(parts: Sequence[StreamPart]) -> str:
    return "".join(part.text for part in parts if isinstance(part, TextDeltaPart))


def the_error(parts: Sequence[StreamPart]) -> Exception:
    (error,) = [part.error for part in parts if isinstance(part, ErrorPart)]
    return error


def the_finish(parts: Sequence[StreamPart]) -> FinishPart:
    assert isinstance(parts[-1], FinishPart)
    return parts[-1]


def body(server: ScriptedServer, index: int = 0) -> dict[str, Any]:
    recorded: dict[str, Any] = server.requests[index].json
    return recorded


def api_key_sent(provider: str, request: RecordedRequest) -> str | None:
    """The key a request carried, where its provider's SDK puts it."""
    if provider == "gemini":
        return request.headers.get("x-goog-api-key")
    if provider == "anthropic" and "x-api-key" in request.headers:
        return request.headers["x-api-key"]
    return request.headers.get("authorization", "").removeprefix("Bearer ") or None


def without_cost(usage: ModelUsage | None) -> ModelUsage | None:
    return None if usage is None else replace(usage, cost_usd=None)


def expect_path(provider: str, request: RecordedRequest) -> None:
    """The request went to the provider's streaming chat endpoint."""
    assert request.method == "POST"
    if provider == "openai":
        assert request.path == "/v1/chat/completions"
    elif provider == "anthropic":
        assert request.path == "/v1/messages"
    else:
        assert request.path.endswith(f"/models/{GEMINI.model}:streamGenerateContent?alt=sse"), (
            request.path
        )


# --- gateway turns, driven directly ------------------------------------------------------------


@dataclass
class Step:
    """What one `GatewayTurn.stream_step()` yielded."""

    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    finish: FinishReason | None = None
    usage: ModelUsage | None = None
    failed: list[AttemptFailed] = field(default_factory=list)
    hops: list[int] = field(default_factory=list)


async def run_step(
    turn: GatewayTurn,
    history: Sequence[Message],
    tools: Sequence[ToolDefinition] = (WEATHER_DEF,),
) -> Step:
    step = Step()

    def build(hop: Hop) -> ModelRequest:
        step.hops.append(hop.index)
        return ModelRequest(list(history), tools, CompletionOptions(tool_choice="auto"))

    async for item in turn.stream_step(build):
        match item:
            case AttemptFailed():
                step.failed.append(item)
            case TextDelta(text=text):
                step.text += text
            case ToolCallChunk(tool_call=call):
                step.calls.append(call)
            case FinishChunk(finish_reason=reason):
                step.finish = reason
            case UsageChunk(usage=usage):
                step.usage = usage
    return step


def gateway_on(
    servers: ProviderServers,
    provider: str,
    fallback: Sequence[str],
    *,
    built: BuiltModels,
    health: ProviderHealthRegistry | None = None,
    on_fallback: Fallbacks | None = None,
) -> CompletionGateway:
    """A gateway whose primary is ``provider``'s server and whose legs come from the environment."""
    wire = WIRES[provider]
    return create_completion_gateway(
        GatewayDefaults(
            provider=provider,
            model=wire.model,
            api_key=KEYS[provider],
            base_url=servers.by_name(provider).base_url,
            fallback_providers=legs(*fallback),
            on_fallback=on_fallback,
        ),
        resolver=built.resolve,
        health=health,
    )


# --- fallback before output --------------------------------------------------------------------


@pytest.mark.parametrize("status", [429, 500, 529])
@pytest.mark.parametrize("failing", PROVIDERS)
async def test_a_retryable_status_before_output_falls_back_to_the_next_hop(
    servers: ProviderServers, monkeypatch: pytest.MonkeyPatch, failing: str, status: int
) -> None:
    rescuer, untouched = others(failing)
    servers.as_fallback_legs(monkeypatch, rescuer, untouched)
    scripts: dict[str, list[Reply]] = {
        failing: [WIRES[failing].status(status)],
        rescuer: [WIRES[rescuer].text("Served ", "by the fallback.")],
        untouched: [],
    }
    servers.play(**scripts)
    fallbacks = Fallbacks()

    result = await generate_text(
        "What is the weather?",
        **primary(servers, failing),
        fallback_providers=legs(rescuer, untouched),
        on_fallback=fallbacks,
    )

    assert result.text == "Served by the fallback."
    assert (result.provider_id, result.model_id) == (rescuer, WIRES[rescuer].model)
    assert [step.provider_id for step in result.steps] == [rescuer]
    # on_fallback(error, provider): the primary's error, and the hop that takes over.
    assert fallbacks.providers == [rescuer]
    error = fallbacks.calls[0][0]
    assert isinstance(error, ProviderError)
    assert (error.status_code, error.provider_id, error.after_output) == (status, failing, False)
    # The failed attempt billed nothing, so the call's usage is the rescuing step's.
    assert result.usage == result.steps[0].usage
    # What each server received: one request each for the two hops tried, none for the third.
    (failed_request,) = servers.by_name(failing).requests
    (served_request,) = servers.by_name(rescuer).requests
    assert servers.by_name(untouched).requests == []
    expect_path(failing, failed_request)
    expect_path(rescuer, served_request)
    assert api_key_sent(failing, failed_request) == KEYS[failing]
    assert api_key_sent(rescuer, served_request) == KEYS[rescuer]  # from the environment
    assert "What is the weather?" in served_request.raw_body.decode()


async def test_stream_text_falls_back_before_output_and_streams_only_the_fallbacks_text(
    servers: ProviderServers, monkeypatch: pytest.MonkeyPatch
) -> None:
    servers.as_fallback_legs(monkeypatch, "anthropic")
    servers.play(openai=[OPENAI.status(500)], anthropic=[ANTHROPIC.text("Hello ", "again.")])
    fallbacks = Fallbacks()

    parts = await parts_of(
        stream_text(
            "Hi",
            **primary(servers, "openai"),
            fallback_providers=legs("anthropic"),
            on_fallback=fallbacks,
        )
    )

    assert [type(part) for part in parts] == [
        TextDeltaPart,
        TextDeltaPart,
        StepFinishPart,
        FinishPart,
    ]
    assert texts(parts) == "Hello again."
    step = parts[2]
    assert isinstance(step, StepFinishPart)
    assert (step.step.provider_id, step.step.model_id) == ("anthropic", ANTHROPIC.model)
    assert the_finish(parts).finish_reason == "stop"
    assert (fallbacks.providers, fallbacks.statuses) == (["anthropic"], [500])
    assert len(servers.openai.requests) == len(servers.anthropic.requests) == 1


async def test_a_reset_before_any_output_falls_back(
    servers: ProviderServers, monkeypatch: pytest.MonkeyPatch
) -> None:
    servers.as_fallback_legs(monkeypatch, "gemini")
    reset_early = openai_wire.stream_reply([OPENAI.chunks.role()], reset_after=1)
    servers.play(openai=[reset_early], gemini=[GEMINI.text("Still here.")])
    fallbacks = Fallbacks()

    result = await generate_text(
        "Hi", **primary(servers, "openai"), fallback_providers=legs("gemini"), on_fallback=fallbacks
    )

    assert (result.text, result.provider_id) == ("Still here.", "gemini")
    error = fallbacks.calls[0][0]
    assert isinstance(error, ProviderError)
    assert (error.kind, error.after_output) == ("network", False)
    assert len(servers.openai.requests) == len(servers.gemini.requests) == 1


@pytest.mark.parametrize("cut", ["openai", "anthropic"])
async def test_a_tool_call_cut_before_its_end_is_a_failure_before_output_and_falls_back(
    servers: ProviderServers, monkeypatch: pytest.MonkeyPatch, cut: str
) -> None:
    # A tool call is output only once whole, so a call cut half-way has emitted nothing: the
    # step can still move to the next hop, and the cut call is never run.
    servers.as_fallback_legs(monkeypatch, "gemini")
    if cut == "openai":
        call = openai_wire.CallSpec("call_1", "get_weather", [])
        events = [
            OPENAI.chunks.role(),
            OPENAI.chunks.tool_start(0, call),
            OPENAI.chunks.tool_args(0, '{"ci'),
        ]
        reply = openai_wire.stream_reply(events, reset_after=3)
    else:
        events = [
            anthropic_wire.message_start(model=ANTHROPIC.model),
            anthropic_wire.tool_use_start("toolu_1", "get_weather"),
            anthropic_wire.input_json_delta('{"ci'),
        ]
        reply = Reply(events=events, reset_after=3)
    scripts: dict[str, list[Reply]] = {cut: [reply], "gemini": [GEMINI.text("No tool after all.")]}
    servers.play(**scripts)
    fallbacks = Fallbacks()

    result = await generate_text(
        "Weather?",
        **primary(servers, cut),
        tools=[get_weather],
        fallback_providers=legs("gemini"),
        on_fallback=fallbacks,
    )

    assert (result.text, result.provider_id) == ("No tool after all.", "gemini")
    assert (result.tool_calls, result.tool_results) == ([], [])
    error = fallbacks.calls[0][0]
    assert isinstance(error, ProviderError)
    assert (error.kind, error.after_output) == ("network", False)


async def test_a_leg_without_credentials_is_skipped_and_the_next_leg_serves(
    servers: ProviderServers, monkeypatch: pytest.MonkeyPatch
) -> None:
    servers.as_fallback_legs(monkeypatch, "gemini")  # no ANTHROPIC_API_KEY in the environment
    servers.play(openai=[OPENAI.status(500)], gemini=[GEMINI.text("Gemini steps in.")])
    fallbacks = Fallbacks()

    result = await generate_text(
        "Hi",
        **primary(servers, "openai"),
        fallback_providers=legs("anthropic", "gemini"),
        on_fallback=fallbacks,
    )

    assert (result.text, result.provider_id) == ("Gemini steps in.", "gemini")
    assert (fallbacks.providers, fallbacks.statuses) == (["gemini"], [500])
    assert servers.anthropic.requests == []


def _refusal(provider: str) -> Reply:
    """A refusal before any output that bills 30 prompt and 9 output tokens."""
    if provider == "openai":
        return openai_wire.stream_reply(
            [
                OPENAI.chunks.role(),
                OPENAI.chunks.chunk({"refusal": "I can't help with that."}),
                OPENAI.chunks.finish("stop"),
                OPENAI.chunks.usage(30, 9),
                openai_wire.DONE,
            ]
        )
    if provider == "anthropic":
        return Reply(
            events=[
                anthropic_wire.message_start(model=ANTHROPIC.model, input_tokens=30),
                anthropic_wire.message_delta("refusal", output_tokens=9),
                anthropic_wire.message_stop(),
            ]
        )
    return gemini_wire.stream_reply(
        gemini_wire.blocked_prompt("SAFETY", usage_metadata=gemini_wire.usage(30, 9))
    )


@pytest.mark.parametrize("refuser", PROVIDERS)
async def test_a_billed_refusal_before_output_falls_back_and_its_usage_counts(
    servers: ProviderServers, monkeypatch: pytest.MonkeyPatch, refuser: str
) -> None:
    rescuer, _ = others(refuser)
    servers.as_fallback_legs(monkeypatch, rescuer)
    scripts: dict[str, list[Reply]] = {
        refuser: [_refusal(refuser)],
        rescuer: [WIRES[rescuer].text("Here you go.", usage=(25, 12))],
    }
    servers.play(**scripts)
    ledger = InMemoryUsageLedger()
    budget = SpendBudget(max_total_tokens=1_000_000)
    fallbacks = Fallbacks()

    result = await generate_text(
        "Hi",
        **primary(servers, refuser),
        fallback_providers=legs(rescuer),
        on_fallback=fallbacks,
        usage_ledger=ledger,
        budget=budget,
    )

    assert (result.text, result.provider_id) == ("Here you go.", rescuer)
    error = fallbacks.calls[0][0]
    assert isinstance(error, ProviderError)
    assert (error.kind, error.after_output) == ("refusal", False)
    # The refused attempt was billed (30 + 9) and counts beside the served step (25 + 12).
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (55, 21)
    assert budget.spent_tokens == 76
    rows = await ledger.rows()
    assert [(r.provider_id, r.finish_reason, r.attempt_failed, r.total_tokens) for r in rows] == [
        (refuser, "error", True, 39),
        (rescuer, "stop", False, 37),
    ]


async def test_a_fallback_hops_ledger_row_names_its_hop(
    servers: ProviderServers, monkeypatch: pytest.MonkeyPatch
) -> None:
    servers.as_fallback_legs(monkeypatch, "anthropic", "gemini")
    servers.play(
        openai=[OPENAI.status(500)], anthropic=[ANTHROPIC.status(529)], gemini=[GEMINI.text("ok")]
    )
    ledger = InMemoryUsageLedger()

    await generate_text(
        "Hi",
        **primary(servers, "openai"),
        fallback_providers=legs("anthropic", "gemini"),
        usage_ledger=ledger,
    )

    assert [(row.provider_id, row.hop) for row in await ledger.rows()] == [("gemini", 2)]


async def test_the_environments_chain_reaches_its_legs_without_the_primarys_provider(
    servers: ProviderServers, monkeypatch: pytest.MonkeyPatch
) -> None:
    # fallback_providers unset: the availability chain from the keys in the environment, without
    # the primary's provider (OPENAI_API_KEY is set too, and no OpenAI leg is tried).
    servers.as_fallback_legs(monkeypatch)
    servers.play(
        openai=[OPENAI.status(503)],
        anthropic=[ANTHROPIC.status(529)],
        gemini=[GEMINI.text("From the chain.")],
    )
    fallbacks = Fallbacks()

    result = await generate_text("Hi", **primary(servers, "openai"), on_fallback=fallbacks)

    assert (result.text, result.provider_id) == ("From the chain.", "gemini")
    assert fallbacks.providers == ["anthropic", "gemini"]
    assert len(servers.openai.requests) == 1
    # The chain's own models: Anthropic's pinned leg, Gemini's default model.
    assert body(servers.anthropic)["model"] == "claude-sonnet-5"
    assert servers.gemini.requests[0].path.endswith(
        "/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    )


async def test_fallback_providers_empty_turns_fallback_off(
    servers: ProviderServers, monkeypatch: pytest.MonkeyPatch
) -> None:
    servers.as_fallback_legs(monkeypatch)
    servers.play(openai=[OPENAI.status(429)])

    with pytest.raises(ProviderError) as caught:
        await generate_text("Hi", **primary(servers, "openai"), fallback_providers=[])

    assert caught.value.status_code == 429
    assert servers.anthropic.requests == servers.gemini.requests == []


async def test_a_primary_that_cannot_be_set_up_is_a_configuration_error(
    servers: ProviderServers, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No ANTHROPIC_API_KEY and no api_key: the primary cannot be set up, and the call fails
    # with that error, before any request, even though a leg could have served it.
    servers.as_fallback_legs(monkeypatch, "gemini")
    servers.play(gemini=[GEMINI.text("never")])

    with pytest.raises(GMIError) as caught:
        stream_text("Hi", provider="anthropic", fallback_providers=legs("gemini"))

    assert caught.value.code is GMIErrorCode.CONFIGURATION_ERROR
    assert "ANTHROPIC_API_KEY" in caught.value.message
    for server in servers.all():
        assert server.requests == []


# --- forward within a turn, back to the primary on the next ------------------------------------


@pytest.mark.parametrize("rescuer", ["anthropic", "gemini"])
async def test_a_tool_round_stays_on_the_fallback_hop_that_served_its_first_step(
    servers: ProviderServers, monkeypatch: pytest.MonkeyPatch, rescuer: str
) -> None:
    servers.as_fallback_legs(monkeypatch, rescuer)
    wire = WIRES[rescuer]
    scripts: dict[str, list[Reply]] = {
        "openai": [OPENAI.status(429)],
        rescuer: [
            wire.tool_call("call_w1", "get_weather", {"city": "Paris"}),
            wire.text("It is sunny in Paris."),
        ],
    }
    servers.play(**scripts)
    fallbacks = Fallbacks()

    result = await generate_text(
        "Weather in Paris?",
        **primary(servers, "openai"),
        tools=[get_weather],
        fallback_providers=legs(rescuer),
        on_fallback=fallbacks,
    )

    assert result.text == "It is sunny in Paris."
    assert [step.provider_id for step in result.steps] == [rescuer, rescuer]
    assert [call.name for call in result.tool_calls] == ["get_weather"]
    assert result.tool_results[0].output == {"city": "Paris", "sky": "sunny", "temp_c": 21}
    # One fallback, for the first step; the second step went straight to the serving hop.
    assert fallbacks.providers == [rescuer]
    assert len(servers.openai.requests) == 1
    first, second = servers.by_name(rescuer).bodies
    assert "Weather in Paris?" in json.dumps(first)
    if rescuer == "anthropic":
        (result_block,) = [
            block
            for turn in second["messages"]
            for block in turn["content"]
            if block["type"] == "tool_result"
        ]
        assert result_block["tool_use_id"] == "call_w1"
        assert second["tool_choice"] == {"type": "auto"}
    else:
        responses = [
            part["functionResponse"]
            for content in second["contents"]
            for part in content["parts"]
            if "functionResponse" in part
        ]
        assert [(r["name"], r.get("id")) for r in responses] == [("get_weather", "call_w1")]
        assert second["toolConfig"]["functionCallingConfig"]["mode"] == "AUTO"


async def test_the_next_step_stays_on_its_hop_and_the_next_turn_starts_at_the_primary(
    servers: ProviderServers, monkeypatch: pytest.MonkeyPatch, built: BuiltModels
) -> None:
    servers.as_fallback_legs(monkeypatch, "anthropic")
    servers.play(
        openai=[OPENAI.status(500), OPENAI.text("Back on the primary.")],
        anthropic=[
            ANTHROPIC.tool_call("toolu_01", "get_weather", {"city": "Oslo"}),
            ANTHROPIC.text("Cold in Oslo."),
        ],
    )
    fallbacks = Fallbacks()
    gateway = gateway_on(servers, "openai", ["anthropic"], built=built, on_fallback=fallbacks)
    history = [Message.user("Weather in Oslo?")]

    turn = gateway.begin_turn()
    first = await run_step(turn, history)
    assert (first.calls, first.finish, first.hops) == (
        [ToolCall("toolu_01", "get_weather", {"city": "Oslo"})],
        "tool_calls",
        [0, 1],  # a request built for the primary, then one for the fallback hop
    )
    assert [(f.hop.index, f.after_output) for f in first.failed] == [(0, False)]
    assert turn.serving_hop is not None
    assert turn.serving_hop.provider_id == "anthropic"
    history += [
        Message.assistant("", tool_calls=first.calls),
        Message.tool(ToolResult("toolu_01", "get_weather", {"temp_c": -3})),
    ]
    second = await run_step(turn, history)
    assert (second.text, second.finish, second.failed, second.hops) == (
        "Cold in Oslo.",
        "stop",
        [],
        [1],
    )

    next_turn = gateway.begin_turn()
    third = await run_step(next_turn, [*history, Message.assistant(second.text)])
    assert (third.text, third.hops) == ("Back on the primary.", [0])
    assert next_turn.serving_hop is not None
    assert next_turn.serving_hop.index == 0

    assert fallbacks.providers == ["anthropic"]
    assert len(servers.openai.requests) == 2  # turn 1's failed attempt, then turn 2
    assert len(servers.anthropic.requests) == 2  # both steps of turn 1
    tool_results = [
        block
        for turn_body in body(servers.anthropic, 1)["messages"]
        for block in turn_body["content"]
        if block["type"] == "tool_result"
    ]
    assert [block["tool_use_id"] for block in tool_results] == ["toolu_01"]
    # The primary's request for turn 2 carries the whole conversation, in OpenAI's format.
    roles = [message["role"] for message in body(servers.openai, 1)["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant"]


# --- no fallback after output ------------------------------------------------------------------


EVENT_ERRORS: dict[str, tuple[str, int | None]] = {
    "openai": ("stream", None),  # OpenAI's error event carries no status
    "anthropic": ("http", 529),  # overloaded_error, its status read from its type
    "gemini": ("http", 503),  # Google's error object carries its code
}
"""The kind and status of the error event `Wire.error_after_text` sends, per provider."""


@pytest.mark.parametrize("cut", ["error_event", "reset"])
@pytest.mark.parametrize("failing", PROVIDERS)
async def test_a_failure_after_output_does_not_fall_back_and_reports_the_billed_usage(
    servers: ProviderServers, monkeypatch: pytest.MonkeyPatch, failing: str, cut: str
) -> None:
    wire = WIRES[failing]
    rescuer, untouched = others(failing)
    servers.as_fallback_legs(monkeypatch, rescuer, untouched)
    cut_stream = wire.error_after_text if cut == "error_event" else wire.reset_after_text
    reply = cut_stream("Half an ")
    scripts: dict[str, list[Reply]] = {
        failing: [reply],
        rescuer: [WIRES[rescuer].text("never")],
        untouched: [WIRES[untouched].text("never")],
    }
    servers.play(**scripts)
    fallbacks = Fallbacks()
    ledger = InMemoryUsageLedger()
    budget = SpendBudget(max_total_tokens=1_000_000)

    parts = await parts_of(
        stream_text(
            "Tell me a story",
            **primary(servers, failing),
            fallback_providers=legs(rescuer, untouched),
            on_fallback=fallbacks,
            usage_ledger=ledger,
            budget=budget,
        )
    )

    assert texts(parts) == "Half an "
    assert not any(isinstance(part, StepFinishPart) for part in parts)
    error = the_error(parts)
    assert isinstance(error, ProviderError)
    assert error.code is GMIErrorCode.LLM_PROVIDER_ERROR
    assert (error.provider_id, error.after_output) == (failing, True)
    assert (error.kind, error.status_code) == (
        ("network", None) if cut == "reset" else EVENT_ERRORS[failing]
    )
    # No fallback after output: the other servers never heard of the call.
    assert fallbacks.calls == []
    assert servers.by_name(rescuer).requests == servers.by_name(untouched).requests == []
    assert len(servers.by_name(failing).requests) == 1
    # The billed usage: on the error, in the call's usage, in the ledger and in the budget.
    billed = error.usage
    assert billed is not None
    assert billed.prompt_tokens > 0
    finish = the_finish(parts)
    assert finish.finish_reason == "error"
    assert without_cost(finish.usage) == without_cost(billed)
    rows = await ledger.rows()
    assert [(r.provider_id, r.finish_reason, r.attempt_failed) for r in rows] == [
        (failing, "error", True)
    ]
    assert rows[0].total_tokens == billed.total_tokens == budget.spent_tokens


@pytest.mark.parametrize("failing", PROVIDERS)
async def test_generate_text_raises_the_providers_error_after_output(
    servers: ProviderServers, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    rescuer, untouched = others(failing)
    servers.as_fallback_legs(monkeypatch, rescuer, untouched)
    scripts: dict[str, list[Reply]] = {failing: [WIRES[failing].error_after_text("Half ")]}
    servers.play(**scripts)

    with pytest.raises(ProviderError) as caught:
        await generate_text(
            "Hi", **primary(servers, failing), fallback_providers=legs(rescuer, untouched)
        )

    assert caught.value.code is GMIErrorCode.LLM_PROVIDER_ERROR
    assert caught.value.after_output
    assert servers.by_name(rescuer).requests == servers.by_name(untouched).requests == []


@pytest.mark.parametrize("ending", ["reset", "no_finish"])
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_cut_or_unfinished_stream_is_an_error_never_a_partial_answer(
    servers: ProviderServers, provider: str, ending: str
) -> None:
    wire = WIRES[provider]
    reply = wire.reset_after_text("Partial") if ending == "reset" else wire.no_finish("Partial")
    scripts: dict[str, list[Reply]] = {provider: [reply]}
    servers.play(**scripts)

    stream = stream_text("Hi", **primary(servers, provider), fallback_providers=[])
    parts = await parts_of(stream)

    assert texts(parts) == "Partial"
    assert not any(isinstance(part, StepFinishPart) for part in parts)
    error = the_error(parts)
    assert isinstance(error, ProviderError)
    assert error.code is GMIErrorCode.LLM_PROVIDER_ERROR
    assert error.kind == ("network" if ending == "reset" else "stream")
    assert error.after_output
    assert the_finish(parts).finish_reason == "error"
    with pytest.raises(ProviderError):
        await stream.text  # never the partial text

    servers.play(**{provider: [reply]})
    with pytest.raises(ProviderError):
        await generate_text("Hi", **primary(servers, provider), fallback_providers=[])


# --- failures that end the turn before output ---------------------------------------------------


@pytest.mark.parametrize("failing", PROVIDERS)
async def test_a_400_does_not_fall_back(
    servers: ProviderServers, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    rescuer, untouched = others(failing)
    servers.as_fallback_legs(monkeypatch, rescuer, untouched)
    scripts: dict[str, list[Reply]] = {failing: [WIRES[failing].status(400)]}
    servers.play(**scripts)
    fallbacks = Fallbacks()

    with pytest.raises(ProviderError) as caught:
        await generate_text(
            "Hi",
            **primary(servers, failing),
            fallback_providers=legs(rescuer, untouched),
            on_fallback=fallbacks,
        )

    assert (caught.value.status_code, caught.value.code) == (400, GMIErrorCode.LLM_PROVIDER_ERROR)
    assert not caught.value.after_output
    assert fallbacks.calls == []
    assert len(servers.by_name(failing).requests) == 1
    assert servers.by_name(rescuer).requests == servers.by_name(untouched).requests == []


async def test_all_hops_down_ends_with_the_last_hops_error(
    servers: ProviderServers, monkeypatch: pytest.MonkeyPatch
) -> None:
    servers.as_fallback_legs(monkeypatch, "anthropic", "gemini")
    servers.play(
        openai=[OPENAI.status(500)], anthropic=[ANTHROPIC.status(529)], gemini=[GEMINI.status(503)]
    )
    fallbacks = Fallbacks()

    with pytest.raises(ProviderError) as caught:
        await generate_text(
            "Hi",
            **primary(servers, "openai"),
            fallback_providers=legs("anthropic", "gemini"),
            on_fallback=fallbacks,
        )

    assert caught.value.code is GMIErrorCode.LLM_PROVIDER_ERROR
    assert (caught.value.status_code, caught.value.provider_id) == (503, "gemini")
    assert (fallbacks.providers, fallbacks.statuses) == (["anthropic", "gemini"], [500, 529])
    for server in servers.all():
        assert len(server.requests) == 1


async def test_all_hops_down_ends_a_stream_with_an_error_part_and_no_text(
    servers: ProviderServers, monkeypatch: pytest.MonkeyPatch
) -> None:
    servers.as_fallback_legs(monkeypatch, "openai", "gemini")
    servers.play(
        anthropic=[ANTHROPIC.status(429)], openai=[OPENAI.status(529)], gemini=[GEMINI.status(500)]
    )

    parts = await parts_of(
        stream_text(
            "Hi", **primary(servers, "anthropic"), fallback_providers=legs("openai", "gemini")
        )
    )

    assert [type(part) for part in parts] == [ErrorPart, FinishPart]
    error = the_error(parts)
    assert isinstance(error, ProviderError)
    assert (error.status_code, error.provider_id) == (500, "gemini")
    assert the_finish(parts).usage.total_tokens == 0  # nothing billed
    # The OpenAI leg from the environment got the request an OpenAI leg sends.
    assert body(servers.openai)["stream_options"] == {"include_usage": True}
    assert api_key_sent("openai", servers.openai.requests[0]) == KEYS["openai"]


async def test_no_hop_can_start_when_a_shared_health_registry_has_every_circuit_open(
    servers: ProviderServers, monkeypatch: pytest.MonkeyPatch, built: BuiltModels
) -> None:
    servers.as_fallback_legs(monkeypatch, "anthropic", "gemini")
    # A 401 opens a provider's circuit at once (30 minutes): one turn on gateway A opens all
    # three, and gateway B, sharing the registry, then skips every hop without a request.
    servers.play(
        openai=[OPENAI.status(401)], anthropic=[ANTHROPIC.status(401)], gemini=[GEMINI.status(401)]
    )
    health = ProviderHealthRegistry()
    first = gateway_on(servers, "openai", ["anthropic", "gemini"], built=built, health=health)
    with pytest.raises(ProviderError) as caught:
        await run_step(first.begin_turn(), [Message.user("Hi")])
    assert caught.value.status_code == 401
    assert all(health.is_open(provider) for provider in PROVIDERS)
    servers.play()

    skipped: list[tuple[str, str, BaseException]] = []
    second = gateway_on(servers, "openai", ["anthropic", "gemini"], built=built, health=health)
    turn = second.begin_turn(on_hop_failure=lambda p, m, e: skipped.append((p, m, e)))
    with pytest.raises(GMIError) as unavailable:
        await run_step(turn, [Message.user("Hi again")])

    assert unavailable.value.code is GMIErrorCode.LLM_PROVIDER_UNAVAILABLE
    assert [(provider, model) for provider, model, _ in skipped] == [
        ("openai", OPENAI.model),
        ("anthropic", ANTHROPIC.model),
        ("gemini", GEMINI.model),
    ]
    assert all("circuit open" in str(error) for _, _, error in skipped)
    for server in servers.all():
        assert server.requests == []


async def test_no_hop_can_start_when_the_routed_hop_and_the_legs_have_no_credentials(
    servers: ProviderServers,
) -> None:
    # The router sends the turn to Anthropic, and the one leg is Gemini: neither has a key in
    # the environment, so no hop can start and nothing is sent anywhere.
    def router(hint: str, candidates: Sequence[tuple[str, str]]) -> tuple[str, str]:
        return ("anthropic", ANTHROPIC.model)

    parts = await parts_of(
        stream_text(
            "Hi", **primary(servers, "openai"), router=router, fallback_providers=legs("gemini")
        )
    )

    error = the_error(parts)
    assert isinstance(error, GMIError)
    assert error.code is GMIErrorCode.LLM_PROVIDER_UNAVAILABLE
    assert the_finish(parts).finish_reason == "error"
    for server in servers.all():
        assert server.requests == []


# --- cancellation --------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_cancelling_mid_stream_closes_the_connection(
    servers: ProviderServers, provider: str
) -> None:
    scripts: dict[str, list[Reply]] = {provider: [WIRES[provider].hold_after_text("first")]}
    servers.play(**scripts)
    stream = stream_text("Hi", **primary(servers, provider), fallback_providers=[])
    got_text = asyncio.Event()

    async def read() -> None:
        async for part in stream.full_stream:
            if isinstance(part, TextDeltaPart):
                got_text.set()

    reader = asyncio.create_task(read())
    await asyncio.wait_for(got_text.wait(), 5)
    reader.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reader

    assert await asyncio.to_thread(servers.by_name(provider).client_gone)
    with pytest.raises(GMIError) as caught:
        await stream.text
    assert caught.value.code is GMIErrorCode.ABORTED


async def test_closing_the_stream_on_a_fallback_hop_closes_that_hops_connection(
    servers: ProviderServers, monkeypatch: pytest.MonkeyPatch
) -> None:
    servers.as_fallback_legs(monkeypatch, "anthropic")
    servers.play(openai=[OPENAI.status(503)], anthropic=[ANTHROPIC.hold_after_text("first")])
    stream = stream_text("Hi", **primary(servers, "openai"), fallback_providers=legs("anthropic"))

    parts = stream.full_stream
    first = await anext(parts)
    assert first == TextDeltaPart("first")
    await parts.aclose()

    assert await asyncio.to_thread(servers.anthropic.client_gone)
    assert len(servers.openai.requests) == 1
    # DESIGN §5.19: the hop's step is charged an estimate ("Hi" and the delta "first").
    usage = await stream.usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.estimated) == (1, 2, True)
    with pytest.raises(GMIError) as caught:
        await stream.text
    assert caught.value.code is GMIErrorCode.ABORTED


# --- budgets --------------------------------------------------------------------------------------


async def test_a_budget_refusal_happens_before_any_request_reaches_any_server(
    servers: ProviderServers, monkeypatch: pytest.MonkeyPatch
) -> None:
    servers.as_fallback_legs(monkeypatch, "anthropic", "gemini")
    servers.play(
        openai=[OPENAI.text("never")],
        anthropic=[ANTHROPIC.text("never")],
        gemini=[GEMINI.text("never")],
    )
    fallbacks = Fallbacks()
    budget = SpendBudget(max_total_tokens=5)

    with pytest.raises(SpendLimitError) as caught:
        await generate_text(
            "Hi",
            **primary(servers, "openai"),
            fallback_providers=legs("anthropic", "gemini"),
            on_fallback=fallbacks,
            budget=budget,
        )

    assert caught.value.code is GMIErrorCode.LLM_PROVIDER_ERROR
    assert caught.value.info.provider_id == "openai"
    assert fallbacks.calls == []  # a refused step is not tried on a fallback hop
    for server in servers.all():
        assert server.requests == []
    assert budget.spent_tokens == 0

    parts = await parts_of(
        stream_text(
            "Hi",
            **primary(servers, "openai"),
            fallback_providers=legs("anthropic", "gemini"),
            budget=budget,
        )
    )
    assert [type(part) for part in parts] == [ErrorPart, FinishPart]
    assert isinstance(the_error(parts), SpendLimitError)
    for server in servers.all():
        assert server.requests == []


async def test_a_fallback_hop_is_checked_at_the_output_cap_it_sends(
    servers: ProviderServers, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The primary's 100-token cap fits the budget; the leg's headroom takes its cap to 2,100,
    # which does not: the fallback attempt is refused before it is sent.
    servers.as_fallback_legs(monkeypatch, "anthropic")
    servers.play(openai=[OPENAI.status(429)], anthropic=[ANTHROPIC.text("never")])

    with pytest.raises(SpendLimitError) as caught:
        await generate_text(
            "Hi",
            **primary(servers, "openai"),
            max_tokens=100,
            fallback_providers=[
                FallbackLeg("anthropic", ANTHROPIC.model, max_tokens_headroom=2_000)
            ],
            budget=SpendBudget(max_total_tokens=1_000),
        )

    assert caught.value.info.provider_id == "anthropic"
    assert body(servers.openai)["max_tokens"] == 100
    assert servers.anthropic.requests == []


# --- structured output --------------------------------------------------------------------------


async def test_a_structured_answer_on_the_openai_hop_is_parsed_from_a_strict_json_schema(
    servers: ProviderServers,
) -> None:
    servers.play(openai=[OPENAI.text('{"city": "Paris", ', '"temp_c": 21}')])

    result = await generate_text(
        "Weather in Paris as JSON",
        **primary(servers, "openai"),
        tools=[get_weather],
        response_schema=CITY_WEATHER,
        schema_name="city weather",
        fallback_providers=[],
    )

    assert result.object == {"city": "Paris", "temp_c": 21}
    assert result.text == '{"city": "Paris", "temp_c": 21}'
    sent = body(servers.openai)
    assert sent["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "city_weather", "schema": CITY_WEATHER, "strict": True},
    }
    # A structured step is sent without tools, and so without a tool choice.
    assert "tools" not in sent
    assert "tool_choice" not in sent
    assert sent["messages"] == [{"role": "user", "content": "Weather in Paris as JSON"}]


async def test_a_schema_strict_mode_cannot_take_goes_as_json_mode_with_the_schema_in_the_prompt(
    servers: ProviderServers,
) -> None:
    servers.play(openai=[OPENAI.text('{"city": "Rome", "temp_c": 25}')])

    result = await generate_text(
        "Weather in Rome",
        **primary(servers, "openai"),
        system="Be brief.",
        response_schema=Forecast,
        fallback_providers=[],
    )

    assert result.object == Forecast(city="Rome", temp_c=25)
    sent = body(servers.openai)
    assert sent["response_format"] == {"type": "json_object"}
    roles = [message["role"] for message in sent["messages"]]
    assert roles == ["system", "system", "user"]  # the schema after the leading system prompt
    assert '"temp_c"' in sent["messages"][1]["content"]


@pytest.mark.parametrize(
    ("answer", "finish", "why"),
    [
        ("Sure! {city: Paris}", "stop", "not JSON"),
        ('{"city": "Paris"}', "stop", "temp_c"),
        ('{"city": "Paris", "temp_c": 21}', "length", "cut off"),
    ],
    ids=["unparseable", "off-schema", "cut-off"],
)
async def test_an_unusable_structured_answer_on_the_openai_hop_is_an_object_generation_error(
    servers: ProviderServers, answer: str, finish: str, why: str
) -> None:
    servers.play(openai=[OPENAI.text(answer, finish=finish)])

    with pytest.raises(ObjectGenerationError) as caught:
        await generate_text(
            "Weather in Paris",
            **primary(servers, "openai"),
            response_schema=CITY_WEATHER,
            fallback_providers=[],
        )

    assert why in caught.value.message
    assert (caught.value.text, caught.value.finish_reason) == (answer, finish)
    assert caught.value.code is GMIErrorCode.PARSING_ERROR


def _schema_tool_stream(fragments: Sequence[str], stop_reason: str) -> Reply:
    """Claude answering through the forced schema tool, its input in ``fragments``."""
    return Reply(
        events=[
            anthropic_wire.message_start(model="claude-sonnet-4"),
            anthropic_wire.tool_use_start("toolu_schema", "city_weather"),
            *(anthropic_wire.input_json_delta(fragment) for fragment in fragments),
            anthropic_wire.block_stop(),
            anthropic_wire.message_delta(stop_reason, output_tokens=20),
            anthropic_wire.message_stop(),
        ]
    )


ANTHROPIC_STRUCTURED = [
    pytest.param("claude-sonnet-5", "output_format", id="output-format"),
    pytest.param("claude-sonnet-4", "tool", id="forced-tool"),
]


def _anthropic_answer(model: str, pieces: Sequence[str], stop_reason: str) -> Reply:
    if model == "claude-sonnet-4":
        return _schema_tool_stream(pieces, "tool_use" if stop_reason == "end_turn" else stop_reason)
    return Reply(events=anthropic_wire.text_stream(list(pieces), stop_reason=stop_reason))


@pytest.mark.parametrize(("model", "route"), ANTHROPIC_STRUCTURED)
async def test_a_structured_answer_on_an_anthropic_fallback_hop_is_parsed(
    servers: ProviderServers, monkeypatch: pytest.MonkeyPatch, model: str, route: str
) -> None:
    servers.as_fallback_legs(monkeypatch, "anthropic")
    answer = _anthropic_answer(model, ['{"city": "Par', 'is", "temp_c": 21}'], "end_turn")
    servers.play(openai=[OPENAI.status(429)], anthropic=[answer])

    result = await generate_text(
        "Weather in Paris",
        **primary(servers, "openai"),
        tools=[get_weather],
        response_schema=CITY_WEATHER,
        schema_name="city_weather",
        fallback_providers=[FallbackLeg("anthropic", model)],
    )

    assert result.object == {"city": "Paris", "temp_c": 21}
    assert (result.provider_id, result.finish_reason) == ("anthropic", "stop")
    assert result.tool_calls == []  # the schema's forced call is the answer, never a tool run
    sent = body(servers.anthropic)
    assert sent["model"] == model
    if route == "output_format":
        assert sent["output_config"]["format"]["type"] == "json_schema"
        schema = sent["output_config"]["format"]["schema"]
        assert (schema["required"], schema["additionalProperties"]) == (["city", "temp_c"], False)
        assert "tools" not in sent
        assert "tool_choice" not in sent
    else:
        assert "output_config" not in sent
        assert sent["tool_choice"] == {"type": "tool", "name": "city_weather"}
        assert [t["name"] for t in sent["tools"]] == ["city_weather"]  # get_weather not offered
        assert sent["tools"][0]["input_schema"] == CITY_WEATHER


@pytest.mark.parametrize(("model", "route"), ANTHROPIC_STRUCTURED)
@pytest.mark.parametrize(
    ("pieces", "stop_reason", "finish", "why"),
    [
        (["{city: Paris"], "end_turn", "stop", "not JSON"),
        (['{"city": "Paris", "temp_c": 21}'], "max_tokens", "length", "cut off"),
    ],
    ids=["unparseable", "cut-off"],
)
async def test_an_unusable_structured_answer_on_an_anthropic_hop_is_not_lifted(
    servers: ProviderServers,
    model: str,
    route: str,
    pieces: list[str],
    stop_reason: str,
    finish: str,
    why: str,
) -> None:
    servers.play(anthropic=[_anthropic_answer(model, pieces, stop_reason)])

    with pytest.raises(ObjectGenerationError) as caught:
        await generate_text(
            "Weather in Paris",
            provider="anthropic",
            model=model,
            api_key=KEYS["anthropic"],
            base_url=servers.anthropic.base_url,
            response_schema=CITY_WEATHER,
            schema_name="city_weather",
            fallback_providers=[],
        )

    assert why in caught.value.message
    assert (caught.value.text, caught.value.finish_reason) == ("".join(pieces), finish)
    assert len(servers.anthropic.requests) == 1


async def test_a_structured_answer_on_a_gemini_fallback_hop_is_parsed_from_its_text(
    servers: ProviderServers, monkeypatch: pytest.MonkeyPatch
) -> None:
    servers.as_fallback_legs(monkeypatch, "gemini")
    servers.play(
        openai=[OPENAI.status(529)], gemini=[GEMINI.text('{"city": "Oslo", ', '"temp_c": -3}')]
    )

    result = await generate_text(
        "Weather in Oslo",
        **primary(servers, "openai"),
        tools=[get_weather],
        response_schema=CITY_WEATHER,
        fallback_providers=legs("gemini"),
    )

    assert result.object == {"city": "Oslo", "temp_c": -3}
    sent = body(servers.gemini)
    assert sent["generationConfig"]["responseMimeType"] == "application/json"
    assert sent["generationConfig"]["responseJsonSchema"] == CITY_WEATHER
    assert "tools" not in sent
    assert "toolConfig" not in sent


# --- request bodies ------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_no_tool_choice_is_sent_without_tools(
    servers: ProviderServers, provider: str
) -> None:
    scripts: dict[str, list[Reply]] = {provider: [WIRES[provider].text("ok")]}
    servers.play(**scripts)

    await generate_text(
        "Hi", **primary(servers, provider), tool_choice="required", fallback_providers=[]
    )

    sent = body(servers.by_name(provider))
    if provider == "gemini":
        assert "toolConfig" not in sent
        assert "tools" not in sent
    else:
        assert "tool_choice" not in sent
        assert "tools" not in sent


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_tools_go_with_an_auto_tool_choice(servers: ProviderServers, provider: str) -> None:
    scripts: dict[str, list[Reply]] = {provider: [WIRES[provider].text("No tool needed.")]}
    servers.play(**scripts)

    await generate_text(
        "Hi", **primary(servers, provider), tools=[get_weather], fallback_providers=[]
    )

    sent = body(servers.by_name(provider))
    if provider == "openai":
        assert sent["tool_choice"] == "auto"
        assert [t["function"]["name"] for t in sent["tools"]] == ["get_weather"]
    elif provider == "anthropic":
        assert sent["tool_choice"] == {"type": "auto"}
        assert [t["name"] for t in sent["tools"]] == ["get_weather"]
    else:
        assert sent["toolConfig"]["functionCallingConfig"]["mode"] == "AUTO"
        names = [f["name"] for t in sent["tools"] for f in t["functionDeclarations"]]
        assert names == ["get_weather"]


async def test_every_hop_sends_the_end_users_id_where_its_provider_has_a_field(
    servers: ProviderServers, monkeypatch: pytest.MonkeyPatch
) -> None:
    servers.as_fallback_legs(monkeypatch, "anthropic", "gemini")
    servers.play(
        openai=[OPENAI.status(500)], anthropic=[ANTHROPIC.status(529)], gemini=[GEMINI.text("ok")]
    )

    await generate_text(
        "Hi",
        **primary(servers, "openai"),
        user_id="user-7f3a",
        fallback_providers=legs("anthropic", "gemini"),
    )

    assert body(servers.openai)["user"] == "user-7f3a"
    assert body(servers.anthropic)["metadata"] == {"user_id": "user-7f3a"}
    # Gemini's API has no end-user field: the id is not sent at all.
    assert b"user-7f3a" not in servers.gemini.requests[0].raw_body


async def test_openai_asks_for_the_usage_on_the_primary_and_on_a_fallback_leg(
    servers: ProviderServers, monkeypatch: pytest.MonkeyPatch
) -> None:
    servers.as_fallback_legs(monkeypatch, "openai")
    servers.play(openai=[OPENAI.status(429), OPENAI.text("ok", usage=(8, 2))])
    result = await generate_text(
        "Hi", **primary(servers, "openai"), fallback_providers=legs("openai")
    )

    primary_body, leg_body = servers.openai.bodies
    for sent in (primary_body, leg_body):
        assert sent["stream"] is True
        assert sent["stream_options"] == {"include_usage": True}
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (8, 2)


async def test_an_openai_leg_at_openai_base_url_gets_the_cap_a_compatible_server_takes(
    servers: ProviderServers, monkeypatch: pytest.MonkeyPatch
) -> None:
    servers.as_fallback_legs(monkeypatch, "openai")
    servers.play(anthropic=[ANTHROPIC.status(529)], openai=[OPENAI.text("ok")])

    await generate_text(
        "Hi",
        **primary(servers, "anthropic"),
        max_tokens=50,
        fallback_providers=legs("openai"),
    )

    sent = body(servers.openai)
    assert (sent.get("max_tokens"), sent.get("max_completion_tokens")) == (50, None)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_minimal_call_sends_nothing_the_caller_left_unset(
    servers: ProviderServers, provider: str
) -> None:
    scripts: dict[str, list[Reply]] = {provider: [WIRES[provider].text("ok")]}
    servers.play(**scripts)

    await generate_text("Hi", **primary(servers, provider), fallback_providers=[])

    sent = body(servers.by_name(provider))
    unset = ("temperature", "top_p", "user", "metadata", "tools", "tool_choice", "seed")
    assert not [key for key in unset if key in sent]
    if provider == "gemini":
        assert sent["generationConfig"] == {}
