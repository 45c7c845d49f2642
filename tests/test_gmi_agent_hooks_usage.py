"""The rest of a gmi() agent's Hooks, Usage and Spend budget sentences, through the public API
on the scripted model (spec: GMIs from agent() → Hooks, Usage, Spend budget)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from agentos.api.agent_hooks import HookWarning
from agentos.api.gmi_agent import gmi
from agentos.api.results import ErrorPart, FinishPart
from agentos.core.errors import GMIError
from agentos.core.messages import ToolCall
from agentos.core.usage import ModelUsage
from agentos.llm.budget import SpendBudget, SpendLimitInfo
from agentos.llm.metering import set_content_safe_telemetry, set_global_llm_observer
from agentos.storage.ledger import UsageEvent
from agentos.testing import HashEmbedder, ScriptedModel, ScriptStep
from fakes.tools import add

U = ModelUsage(prompt_tokens=10, completion_tokens=2)


def tool_then_text(text: str = "3") -> ScriptedModel:
    return ScriptedModel(
        [
            ScriptStep(tool_calls=[ToolCall("c", "add", {"a": 1, "b": 2})], usage=U),
            ScriptStep(text=text, usage=U),
        ]
    )


# -- hooks ---------------------------------------------------------------------------------------


async def test_on_before_generation_is_told_each_attempts_messages_system_tools_and_step() -> None:
    seen: list[Any] = []
    model = tool_then_text()
    agent = gmi(
        model=model,
        tools=[add],
        instructions="You add.",
        on_before_generation=seen.append,
    )
    await agent.session("s").send("1+2?")
    assert [ctx.step for ctx in seen] == [0, 1]
    first, second = seen
    assert first.system == "You add."  # the persona's base prompt
    assert [t.name for t in first.tools] == ["add"]
    assert (first.model, first.provider, first.prompt) == ("scripted-model", "scripted", "1+2?")
    # The attempt's messages, system messages included, are what the model was then sent.
    assert [m.text for m in first.messages] == [m.text for m in model.requests[0].messages]
    assert [m.role.value for m in second.messages][-2:] == ["assistant", "tool"]


async def test_changes_to_tool_calls_in_on_after_generation_are_not_applied() -> None:
    def after(ctx: Any) -> None:
        ctx.tool_calls.clear()
        ctx.tool_calls.append(ToolCall("c", "add", {"a": 40, "b": 2}))

    agent = gmi(model=tool_then_text(), tools=[add], on_after_generation=after)
    result = await agent.session("s").send("1+2?")
    assert [r.output for r in result.tool_results] == [3]  # the GMI had already run the call


async def test_a_tool_hook_returning_nothing_is_warned_about_and_the_call_runs_as_asked() -> None:
    agent = gmi(model=tool_then_text(), tools=[add], on_before_tool_execution=lambda ctx: None)
    with pytest.warns(HookWarning, match="on_before_tool_execution returned nothing"):
        result = await agent.session("s").send("1+2?")
    assert [r.output for r in result.tool_results] == [3]
    assert result.text == "3"


# -- usage ---------------------------------------------------------------------------------------


@pytest.fixture
def observed() -> Iterator[list[UsageEvent]]:
    events: list[UsageEvent] = []
    previous = set_global_llm_observer(events.append)
    try:
        yield events
    finally:
        set_global_llm_observer(previous)
        set_content_safe_telemetry(False)


async def test_one_observer_event_per_finished_step_and_per_billed_failed_attempt(
    observed: list[UsageEvent],
) -> None:
    agent = gmi(model=tool_then_text(), tools=[add])
    await agent.session("s", user_id="u-7").send("1+2?")
    failing = gmi(model=ScriptedModel([ScriptStep.fail(400, "no", usage=ModelUsage(7))]))
    with pytest.raises(GMIError):
        await failing.session("f").send("x")
    assert [(e.session_id, e.user_id, e.total_tokens, e.finish_reason) for e in observed] == [
        ("s", "u-7", 12, "tool_calls"),
        ("s", "u-7", 12, "stop"),
        ("f", None, 7, "error"),
    ]
    assert [e.source for e in observed] == ["gmi.step"] * 3
    assert observed[-1].attempt_failed


async def test_no_observer_event_while_content_safe_telemetry_is_on(
    observed: list[UsageEvent],
) -> None:
    set_content_safe_telemetry(True)
    agent = gmi(model=tool_then_text(), tools=[add])
    await agent.session("s").send("1+2?")
    assert observed == []
    assert agent.usage("s").total_tokens == 24  # the session's usage still counts the steps


async def test_agent_usage_adds_sessions_and_generate_and_stream_calls() -> None:
    model = ScriptedModel([ScriptStep(text=t, usage=U) for t in ("a", "b", "c", "d")])
    agent = gmi(model=model)
    await agent.session("s1").send("one")
    await agent.session("s2").send("two")
    await agent.generate("three")
    assert await agent.stream("four").text == "d"
    assert (agent.usage("s1").total_tokens, agent.usage("s2").total_tokens) == (12, 12)
    assert agent.usage().total_tokens == 48


# -- spend budget --------------------------------------------------------------------------------


async def test_the_budget_records_a_billed_failed_attempt() -> None:
    budget = SpendBudget(max_total_tokens=10_000)
    model = ScriptedModel([ScriptStep.fail(400, "refused", usage=ModelUsage(prompt_tokens=7))])
    with pytest.raises(GMIError):
        await gmi(model=model, budget=budget).session("s").send("x")
    assert budget.spent_tokens == 7


async def test_a_refused_step_ends_a_stream_with_an_error_part_and_generate_rejects() -> None:
    agent = gmi(model=ScriptedModel(["never"]), budget={"max_total_tokens": 1})
    parts = [part async for part in agent.session("s").stream("hello").full_stream]
    assert isinstance(parts[-2], ErrorPart)
    assert parts[-2].error.code == "LLM_PROVIDER_ERROR"  # type: ignore[attr-defined]
    assert "max_total_tokens" in str(parts[-2].error)
    assert isinstance(parts[-1], FinishPart)
    assert parts[-1].finish_reason == "error"
    with pytest.raises(GMIError) as caught:
        await agent.generate("hello")
    assert caught.value.code == "LLM_PROVIDER_ERROR"


class _CountingEmbedder(HashEmbedder):
    def __init__(self) -> None:
        super().__init__(64)
        self.texts = 0

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.texts += len(texts)
        return await super().embed(texts)


async def test_the_cognitive_memorys_embedding_calls_are_not_checked_or_counted() -> None:
    embedder = _CountingEmbedder()
    refused: list[str] = []

    def refuse(info: SpendLimitInfo) -> None:
        refused.append(info.call)

    budget = SpendBudget(max_total_tokens=24, on_limit_reached=refuse)
    model = ScriptedModel([ScriptStep(text="noted", usage=U)] * 2)
    agent = gmi(model=model, memory={"embedder": embedder}, budget=budget, max_tokens=10)
    session = agent.session("s", user_id="ada")
    await session.send("I like tea.")
    assert embedder.texts > 0
    assert budget.spent_tokens == 12  # the step alone
    with pytest.raises(GMIError):
        await session.send("What do I like?")  # the memory embeds; only the step is refused
    assert refused == ["gmi.step"]
    await agent.close()
