"""Hooks and the thinking, effort and cache settings on the lightweight path: `agent()` without
a runtime and `generate_text()` (spec: GMIs from agent() → Hooks, "as on agent()"; the persona
table's completion options)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agentos import SKIP_TOOL, GMIError, Message, Role, ToolCall, agent, generate_text
from agentos.api.agent_hooks import HookWarning
from agentos.api.warnings import UnappliedOptionsWarning
from agentos.llm.model import CompletionOptions
from agentos.testing import ScriptedModel, ScriptStep
from fakes.tools import add


class Answer(BaseModel):
    city: str
    country: str


def two_calls_then(text: str) -> ScriptedModel:
    return ScriptedModel(
        [
            ScriptStep(
                tool_calls=[
                    ToolCall("c1", "add", {"a": 0, "b": 1}),
                    ToolCall("c2", "add", {"a": 1, "b": 1}),
                ]
            ),
            text,
        ]
    )


async def test_a_plain_agents_hooks_replace_the_prompt_the_text_and_the_tool_call() -> None:
    seen: list[Any] = []

    def before(ctx: Any) -> list[Message]:
        seen.append(ctx)
        return [Message.system("Replaced."), *ctx.messages[1:]]

    def after(ctx: Any) -> str | None:
        return ctx.text.replace("secret", "[redacted]") if ctx.text else None

    def vet(ctx: Any) -> Any:
        return SKIP_TOOL if ctx.args["a"] == 0 else {"a": ctx.args["a"], "b": 100}

    model = two_calls_then("the secret sum")
    with pytest.warns(UnappliedOptionsWarning) as caught:
        plain = agent(
            model=model,
            tools=[add],
            instructions="You add.",
            on_before_generation=before,
            on_after_generation=after,
            on_before_tool_execution=vet,
            guardrails=["pii"],  # so that one warning is issued, naming only this
        )
    assert [w.message.options for w in caught] == [("guardrails",)]  # type: ignore[union-attr]
    session = plain.session("s")
    result = await session.send("add things")
    assert model.requests[0].messages[0].text == "Replaced."
    assert seen[0].system.endswith("You add.")  # the system prompt agent() sends
    assert [t.name for t in seen[0].tools] == ["add"]
    assert [(ctx.step, ctx.prompt) for ctx in seen] == [(0, "add things"), (1, "add things")]
    assert result.text == "the [redacted] sum"
    assert [r.is_error for r in result.tool_results] == [True, False]
    assert "skipped" in str(result.tool_results[0].output)
    assert result.tool_results[1].output == 101
    stored = await session.messages()
    assert stored[0].role is Role.USER  # the hook's messages did not enter the history
    assert stored[-1].text == "the [redacted] sum"


async def test_generate_text_warns_about_a_hook_that_raises_and_goes_on() -> None:
    def boom(ctx: Any) -> None:
        raise RuntimeError("hook bug")

    with pytest.warns(HookWarning, match="on_after_generation raised"):
        result = await generate_text("hi", model=ScriptedModel(["fine"]), on_after_generation=boom)
    assert result.text == "fine"


async def test_a_structured_call_shows_the_hook_the_schema_message() -> None:
    model = ScriptedModel(['{"city": "Paris", "country": "France"}'], schema_in_payload=False)
    instruction = model.schema_prompt(
        CompletionOptions(response_schema=Answer.model_json_schema(), schema_name="Answer")
    )
    seen: list[list[str]] = []
    result = await generate_text(
        "Where is the Louvre?",
        model=model,
        response_schema=Answer,
        on_before_generation=lambda ctx: seen.append([m.text for m in ctx.messages]),
    )
    assert result.object == Answer(city="Paris", country="France")
    assert instruction in seen[0]
    assert [m.text for m in model.requests[0].messages].count(instruction) == 1


async def test_a_structured_answer_replaced_by_the_after_hook_is_validated() -> None:
    model = ScriptedModel(['{"city": "Paris", "country": "France"}'])

    def after(ctx: Any) -> str:
        return '{"city": "Lyon", "country": "France"}'

    result = await generate_text(
        "Where?", model=model, response_schema=Answer, on_after_generation=after
    )
    assert result.object == Answer(city="Lyon", country="France")


async def test_thinking_effort_and_cache_reach_the_request_of_both_paths() -> None:
    model = ScriptedModel(["a", "b"])
    settings: dict[str, Any] = {
        "thinking": {"budget_tokens": 2048},
        "effort": "high",
        "cache": "5m",
    }
    await generate_text("hi", model=model, **settings)
    await agent(model=model, **settings).session("s").send("hi")
    for request in model.requests:
        options = request.options
        assert (options.thinking_budget_tokens, options.effort, options.cache) == (
            2048,
            "high",
            "5m",
        )


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("effort", ""),
        ("cache", "10m"),
        ("thinking", -1),
        ("on_after_generation", "not a function"),
    ],
)
async def test_bad_settings_are_refused_naming_the_option(option: str, value: object) -> None:
    model = ScriptedModel(["never"])
    with pytest.raises(GMIError, match=option):
        await generate_text("hi", model=model, **{option: value})  # type: ignore[arg-type]
    assert model.requests == []
