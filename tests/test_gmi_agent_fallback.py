"""A gmi() agent's fallback through its gateway, on the real OpenAI SDK and the loopback server
(spec: GMIs from agent() → Tools and model calls, Hooks, Spend budget).

The primary hop is a scripted model that fails before any output; the fallback leg is OpenAI,
reached the way a leg is, through ``OPENAI_API_KEY`` and ``OPENAI_BASE_URL``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from agentos.api.gmi_agent import gmi
from agentos.core.errors import GMIError
from agentos.core.usage import ModelUsage
from agentos.llm.budget import SpendBudget, SpendLimitInfo
from agentos.llm.token_estimate import estimate_prompt_tokens
from agentos.storage.ledger import InMemoryUsageLedger
from agentos.testing import ScriptedModel, ScriptStep
from fakes.openai_server import ChunkMaker, OpenAIServer, stream_reply

LEG = {"provider": "openai", "model": "gpt-4o-mini"}


@pytest.fixture
def openai_leg(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIServer]:
    """A loopback OpenAI server the fallback leg reaches, answering "rescued" (30 + 4 tokens)."""
    events = ChunkMaker().text_events(["res", "cued"], usage=(30, 4))
    server = OpenAIServer([stream_reply(events)])
    with server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        yield server


def down() -> ScriptedModel:
    """A primary that fails with a retryable 503 before any output, billed 5 prompt tokens."""
    return ScriptedModel([ScriptStep.fail(503, "down", usage=ModelUsage(prompt_tokens=5))])


async def test_on_fallback_and_the_before_hook_run_for_the_fallback_hop(
    openai_leg: OpenAIServer,
) -> None:
    fallbacks: list[tuple[str, str]] = []
    attempts: list[tuple[str, str, int]] = []

    def before(ctx: Any) -> None:
        attempts.append((ctx.provider, ctx.model, ctx.step))

    ledger = InMemoryUsageLedger()
    agent = gmi(
        model=down(),
        fallback_providers=[LEG],
        on_fallback=lambda error, provider: fallbacks.append((type(error).__name__, provider)),
        on_before_generation=before,
        usage_ledger=ledger,
    )
    result = await agent.session("s").send("hello")
    await agent.close()
    assert result.text == "rescued"
    assert fallbacks == [("ProviderError", "openai")]
    assert attempts == [("scripted", "scripted-model", 0), ("openai", "gpt-4o-mini", 0)]
    # One row for the billed failed attempt, one for the step the fallback hop finished.
    rows = await ledger.rows()
    assert [(r.provider_id, r.total_tokens, r.finish_reason) for r in rows] == [
        ("scripted", 5, "error"),
        ("openai", 34, "stop"),
    ]
    assert agent.usage("s").total_tokens == 39


async def test_a_fallback_hop_is_checked_at_the_output_cap_that_hop_sends(
    openai_leg: OpenAIServer,
) -> None:
    refusals: list[SpendLimitInfo] = []
    primary = down()
    budget = SpendBudget(max_total_tokens=600, on_limit_reached=refusals.append)
    agent = gmi(
        model=primary,
        fallback_providers=[{**LEG, "max_tokens_headroom": 900}],
        budget=budget,
    )
    with pytest.raises(GMIError) as caught:
        await agent.session("s").send("hello", max_tokens=100)
    await agent.close()
    # The primary fit (prompt + 100); the hop's 100 + 900 did not, so it was never sent.
    [info] = refusals
    prompt = estimate_prompt_tokens(primary.requests[0])
    assert (info.call, info.provider_id, info.requested) == ("gmi.step", "openai", prompt + 1000)
    assert info.spent == 5  # the primary's billed failure was recorded first
    assert caught.value.code == "LLM_PROVIDER_ERROR"
    assert "max_total_tokens" in str(caught.value)
    assert openai_leg.requests == []


async def test_a_refused_step_is_not_tried_on_a_fallback_hop(openai_leg: OpenAIServer) -> None:
    primary = ScriptedModel(["never sent"])
    agent = gmi(model=primary, fallback_providers=[LEG], budget={"max_total_tokens": 1})
    with pytest.raises(GMIError) as caught:
        await agent.session("s").send("hello")
    await agent.close()
    assert caught.value.code == "LLM_PROVIDER_ERROR"
    assert primary.requests == []
    assert openai_leg.requests == []
