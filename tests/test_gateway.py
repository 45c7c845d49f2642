"""The completion gateway: hops, fallback before output only, forward within a turn, breakers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from agentos import GMIError, GMIErrorCode, Message, ModelUsage, ProviderError
from agentos.llm import (
    ChatModel,
    CompletionOptions,
    FinishChunk,
    ModelChunk,
    ModelRequest,
    TextDelta,
    UsageChunk,
)
from agentos.llm.gateway import (
    AttemptFailed,
    FallbackLeg,
    GatewayDefaults,
    Hop,
    create_completion_gateway,
)
from agentos.testing import FakeClock, ScriptedModel, ScriptStep

REQUEST = ModelRequest([Message.user("Hi")])


class Models:
    """A resolver over scripted models keyed by provider, recording what it was asked."""

    def __init__(self, **models: ScriptedModel) -> None:
        self.models = models
        self.asked: list[tuple[str | None, str | None, str | None]] = []

    def __call__(
        self,
        provider: str | None,
        model: str | None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        environ: Mapping[str, str] | None = None,
        hop: int = 0,
    ) -> ChatModel:
        self.asked.append((provider, model, api_key))
        key = provider or "primary"
        if key not in self.models:
            raise GMIError(f"no credentials for {key}", GMIErrorCode.CONFIGURATION_ERROR)
        return self.models[key]


def scripted(provider: str, *steps: ScriptStep | str) -> ScriptedModel:
    return ScriptedModel(list(steps), provider_id=provider, model_id=f"{provider}-model")


async def run_step(turn: Any) -> tuple[str, list[AttemptFailed], list[ModelChunk]]:
    text: list[str] = []
    failures: list[AttemptFailed] = []
    chunks: list[ModelChunk] = []
    async for item in turn.stream_step(lambda hop: REQUEST):
        if isinstance(item, AttemptFailed):
            failures.append(item)
            continue
        chunks.append(item)
        if isinstance(item, TextDelta):
            text.append(item.text)
    return "".join(text), failures, chunks


def gateway(models: Models, **defaults: Any) -> Any:
    defaults.setdefault("provider", "openai")
    return create_completion_gateway(GatewayDefaults(environ={}, **defaults), resolver=models)


@pytest.mark.parametrize("status", [429, 500, 529])
async def test_a_retryable_failure_before_output_falls_back(status: int) -> None:
    models = Models(
        openai=scripted("openai", ScriptStep.fail(status, "busy")),
        anthropic=scripted("anthropic", "Hello from the fallback."),
    )
    fallbacks: list[tuple[str, str]] = []
    turn = gateway(
        models,
        fallback_providers=[FallbackLeg("anthropic")],
        on_fallback=lambda error, provider: fallbacks.append((str(error), provider)),
    ).begin_turn()
    text, failures, _ = await run_step(turn)
    assert text == "Hello from the fallback."
    assert [(f.hop.index, f.hop.provider_id, f.after_output) for f in failures] == [
        (0, "openai", False)
    ]
    assert fallbacks == [(f"[{status}] busy", "anthropic")]
    assert turn.serving_hop.provider_id == "anthropic"


async def test_the_failed_attempts_chunks_are_never_emitted() -> None:
    failing = ScriptStep(usage=ModelUsage(3, 0), error=ProviderError("[503] x", status_code=503))
    models = Models(openai=scripted("openai", failing), gemini=scripted("gemini", "ok"))
    turn = gateway(models, fallback_providers=[FallbackLeg("gemini")]).begin_turn()
    _, _, chunks = await run_step(turn)
    assert chunks[0] == TextDelta("ok")


async def test_an_error_after_output_does_not_fall_back_and_reports_billed_usage() -> None:
    billed = ModelUsage(prompt_tokens=10, completion_tokens=2)
    models = Models(
        openai=scripted("openai", ScriptStep.fail(500, "cut", after_text="Half ", usage=billed)),
        anthropic=scripted("anthropic", "never"),
    )
    turn = gateway(models, fallback_providers=[FallbackLeg("anthropic")]).begin_turn()
    seen: list[ModelChunk | AttemptFailed] = []

    async def consume() -> None:
        async for item in turn.stream_step(lambda hop: REQUEST):
            seen.append(item)

    with pytest.raises(ProviderError) as caught:
        await consume()
    assert caught.value.code is GMIErrorCode.LLM_PROVIDER_ERROR
    assert seen[0] == TextDelta("Half ")
    failure = seen[-1]
    assert isinstance(failure, AttemptFailed)
    assert (failure.usage, failure.after_output, failure.hop.provider_id) == (
        billed,
        True,
        "openai",
    )
    assert models.models["anthropic"].calls == 0


async def test_a_400_does_not_fall_back() -> None:
    models = Models(
        openai=scripted("openai", ScriptStep.fail(400, "bad request")),
        anthropic=scripted("anthropic", "never"),
    )
    turn = gateway(models, fallback_providers=[FallbackLeg("anthropic")]).begin_turn()
    with pytest.raises(ProviderError) as caught:
        await run_step(turn)
    assert caught.value.status_code == 400
    assert models.models["anthropic"].calls == 0


async def test_a_content_policy_refusal_as_400_falls_back() -> None:
    refusal = ScriptStep(error=ProviderError("[400] refused", status_code=400, kind="refusal"))
    models = Models(openai=scripted("openai", refusal), anthropic=scripted("anthropic", "ok"))
    turn = gateway(models, fallback_providers=[FallbackLeg("anthropic")]).begin_turn()
    assert (await run_step(turn))[0] == "ok"


async def test_all_hops_down_ends_with_the_last_providers_error() -> None:
    models = Models(
        openai=scripted("openai", ScriptStep.fail(503, "down")),
        anthropic=scripted("anthropic", ScriptStep.fail(529, "overloaded")),
    )
    turn = gateway(models, fallback_providers=[FallbackLeg("anthropic")]).begin_turn()
    with pytest.raises(ProviderError) as caught:
        await run_step(turn)
    assert (caught.value.status_code, caught.value.code) == (529, GMIErrorCode.LLM_PROVIDER_ERROR)


async def test_fallback_providers_empty_turns_fallback_off() -> None:
    models = Models(openai=scripted("openai", ScriptStep.fail(503, "down")))
    turn = gateway(models, fallback_providers=[]).begin_turn()
    with pytest.raises(ProviderError):
        await run_step(turn)
    assert models.asked == [("openai", None, None)]


async def test_a_primary_that_cannot_be_set_up_is_a_configuration_error() -> None:
    turn = gateway(Models(), fallback_providers=[]).begin_turn()
    with pytest.raises(GMIError) as caught:
        await run_step(turn)
    assert caught.value.code is GMIErrorCode.CONFIGURATION_ERROR
    assert caught.value.message == "no credentials for openai"


async def test_no_hop_that_can_start_is_provider_unavailable() -> None:
    clock = FakeClock()
    models = Models(openai=scripted("openai", "never"))
    gw = create_completion_gateway(
        GatewayDefaults(provider="openai", fallback_providers=[FallbackLeg("gemini")], environ={}),
        resolver=models,
        clock=clock,
    )
    gw.health.record_failure("openai", ProviderError("[401] bad key", status_code=401))
    hop_failures: list[str] = []
    turn = gw.begin_turn(on_hop_failure=lambda p, m, e: hop_failures.append(p))
    with pytest.raises(GMIError) as caught:
        await run_step(turn)
    assert caught.value.code is GMIErrorCode.LLM_PROVIDER_UNAVAILABLE
    assert hop_failures == ["openai", "gemini"]
    assert models.models["openai"].calls == 0


async def test_the_next_step_stays_on_the_serving_hop_and_the_next_turn_starts_at_the_primary() -> (
    None
):
    models = Models(
        openai=scripted("openai", ScriptStep.fail(429, "slow down"), "primary again"),
        anthropic=scripted("anthropic", "step one", "step two"),
    )
    gw = gateway(models, fallback_providers=[FallbackLeg("anthropic")])
    turn = gw.begin_turn()
    assert (await run_step(turn))[0] == "step one"
    assert (await run_step(turn))[0] == "step two"
    assert models.models["openai"].calls == 1
    assert (await run_step(gw.begin_turn()))[0] == "primary again"


async def test_a_circuit_opens_and_closes_on_the_clock() -> None:
    clock = FakeClock()
    models = Models(
        openai=scripted("openai", *[ScriptStep.fail(429, "rate") for _ in range(3)], "back"),
        anthropic=scripted("anthropic", "a", "b", "c", "d"),
    )
    gw = create_completion_gateway(
        GatewayDefaults(
            provider="openai", fallback_providers=[FallbackLeg("anthropic")], environ={}
        ),
        resolver=models,
        clock=clock,
    )
    for _ in range(3):
        await run_step(gw.begin_turn())
    assert gw.health.is_open("openai")
    await run_step(gw.begin_turn())  # skipped while open: anthropic serves
    assert models.models["openai"].calls == 3
    clock.advance(30)
    assert (await run_step(gw.begin_turn()))[0] == "back"


async def test_each_hop_gets_a_request_built_for_it() -> None:
    models = Models(
        openai=scripted("openai", ScriptStep.fail(502, "bad gateway")),
        anthropic=scripted("anthropic", "ok"),
    )
    built: list[str] = []

    def build(hop: Hop) -> ModelRequest:
        built.append(hop.model_id)
        return ModelRequest([Message.user(f"for {hop.model_id}")])

    turn = gateway(models, fallback_providers=[FallbackLeg("anthropic")]).begin_turn()
    async for _ in turn.stream_step(build):
        pass
    assert built == ["openai-model", "anthropic-model"]
    assert models.models["anthropic"].requests[0].messages[0].text == "for anthropic-model"


async def test_the_primarys_credentials_go_to_its_provider_only() -> None:
    models = Models(
        openai=scripted("openai", ScriptStep.fail(500, "x")), anthropic=scripted("anthropic", "ok")
    )
    turn = gateway(
        models, api_key="sk-primary", fallback_providers=[FallbackLeg("anthropic")]
    ).begin_turn()
    await run_step(turn)
    assert models.asked == [("openai", None, "sk-primary"), ("anthropic", None, None)]


async def test_a_router_choice_is_tried_first() -> None:
    models = Models(openai=scripted("openai", "never"), gemini=scripted("gemini", "routed"))
    seen: list[tuple[str, list[tuple[str, str]]]] = []

    def router(hint: str, candidates: Any) -> tuple[str, str]:
        seen.append((hint, list(candidates)))
        return ("gemini", "gemini-model")

    gw = gateway(models, router=router, fallback_providers=[])
    assert (await run_step(gw.begin_turn(task_hint="summarise")))[0] == "routed"
    assert seen == [("summarise", [("openai", "openai-model")])]


async def test_a_budget_refusal_before_an_attempt_sends_nothing() -> None:
    models = Models(openai=scripted("openai", "never"))

    def refuse(hop: Hop, request: ModelRequest) -> None:
        raise GMIError("over budget", GMIErrorCode.LLM_PROVIDER_ERROR)

    turn = gateway(models, fallback_providers=[], before_attempt=refuse).begin_turn()
    with pytest.raises(GMIError, match="over budget"):
        await run_step(turn)
    assert models.models["openai"].calls == 0


async def test_usage_before_content_reaches_the_caller_with_the_content() -> None:
    step = ScriptStep(text="hi", usage=ModelUsage(1, 1))
    models = Models(openai=scripted("openai", step))
    _, _, chunks = await run_step(gateway(models, fallback_providers=[]).begin_turn())
    assert chunks == [
        TextDelta("hi"),
        FinishChunk("stop", response_model="openai-model"),
        UsageChunk(ModelUsage(1, 1)),
    ]


async def test_a_fallback_legs_headroom_raises_the_output_cap_of_its_hop() -> None:
    models = Models(
        openai=scripted("openai", ScriptStep.fail(503, "down")),
        anthropic=scripted("anthropic", "ok"),
    )
    turn = gateway(
        models, fallback_providers=[FallbackLeg("anthropic", max_tokens_headroom=512)]
    ).begin_turn()
    request = ModelRequest([Message.user("Hi")], options=CompletionOptions(max_tokens=100))
    async for _ in turn.stream_step(lambda hop: request):
        pass
    assert models.models["openai"].requests[0].options.max_tokens == 100
    assert models.models["anthropic"].requests[0].options.max_tokens == 612


async def test_a_fallback_legs_effort_and_cache_apply_to_its_hop() -> None:
    models = Models(
        openai=scripted("openai", ScriptStep.fail(503, "down")),
        anthropic=scripted("anthropic", "ok"),
    )
    leg = FallbackLeg("anthropic", effort="low", cache=False)
    turn = gateway(models, fallback_providers=[leg]).begin_turn()
    request = ModelRequest([Message.user("Hi")], options=CompletionOptions(effort="high"))
    async for _ in turn.stream_step(lambda hop: request):
        pass
    first = models.models["openai"].requests[0].options
    second = models.models["anthropic"].requests[0].options
    assert (first.effort, first.cache) == ("high", None)
    assert (second.effort, second.cache) == ("low", False)
