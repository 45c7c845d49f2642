"""`agentos.loop.StepLoop` on its own: event order, concurrent tool rounds, hooks, stops."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import Message, Role, ToolCall, ToolResult
from agentos.core.usage import ModelUsage
from agentos.llm.gateway import CompletionGateway, GatewayDefaults, GatewayTurn, Hop
from agentos.llm.model import ChatModel, CompletionOptions, ToolDefinition
from agentos.loop import (
    HookFailure,
    LoopEvent,
    LoopHooks,
    ModelCallInfo,
    StepFinishedEvent,
    StepInfo,
    StepLoop,
    TextDeltaEvent,
    ToolResultEvent,
    ToolRunner,
    UsageEvent,
)
from agentos.testing import ScriptedModel, ScriptStep

U = ModelUsage(prompt_tokens=3, completion_tokens=2, total_tokens=5)
TOOLS = [ToolDefinition("t", "a tool", {"type": "object", "properties": {}})]


def _turn(model: ScriptedModel) -> GatewayTurn:
    def resolver(provider: str | None, model_id: str | None, **_: object) -> ChatModel:
        return model

    gateway = CompletionGateway(
        GatewayDefaults(provider="scripted", model="m", fallback_providers=[]), resolver=resolver
    )
    return gateway.begin_turn()


async def _echo(call: ToolCall) -> ToolResult:
    return ToolResult(call.id, call.name, output=f"{call.name} done")


def _loop(
    model: ScriptedModel,
    history: list[Message],
    run_tool: ToolRunner = _echo,
    hooks: LoopHooks | None = None,
) -> StepLoop:
    def prompt(hop: Hop, index: int) -> list[Message]:
        return list(history)

    return StepLoop(
        _turn(model),
        prompt,
        history.append,
        run_tool,
        options=CompletionOptions(),
        max_steps=5,
        tools=TOOLS,
        hooks=hooks,
    )


async def _events(loop: StepLoop) -> list[LoopEvent]:
    return [event async for event in loop.events()]


def _calls(*names: str) -> list[ToolCall]:
    return [ToolCall(f"id-{name}", name, {}) for name in names]


async def test_a_text_step_yields_its_deltas_then_usage_then_its_end() -> None:
    history = [Message.user("hi")]
    events = await _events(_loop(ScriptedModel([ScriptStep(text="Hello there", usage=U)]), history))
    assert events[:3] == [TextDeltaEvent("Hello "), TextDeltaEvent("there"), UsageEvent(U)]
    finished = events[3]
    assert isinstance(finished, StepFinishedEvent)
    assert len(events) == 4
    assert (finished.step_index, finished.text, finished.usage) == (0, "Hello there", U)
    assert finished.finish_reason == "stop"
    assert not finished.will_run_tools
    assert history[1:] == [finished.message]
    assert finished.message.content == "Hello there"


async def test_a_round_of_three_calls_runs_them_at_once_and_reports_in_call_order() -> None:
    started: list[str] = []
    finished: list[str] = []
    all_started = asyncio.Event()
    done = {name: asyncio.Event() for name in "abc"}
    after = {"a": "b", "b": "c"}  # a ends after b, b after c: they finish c, b, a

    async def run_tool(call: ToolCall) -> ToolResult:
        started.append(call.name)
        if len(started) == 3:
            all_started.set()
        # Run one after another, the first call would wait here for ever: the guard fails it.
        await asyncio.wait_for(all_started.wait(), timeout=5)
        if call.name in after:
            await done[after[call.name]].wait()
        finished.append(call.name)
        done[call.name].set()
        return await _echo(call)

    model = ScriptedModel([ScriptStep(tool_calls=_calls("a", "b", "c"), usage=U), "ok"])
    history = [Message.user("hi")]
    events = await _events(_loop(model, history, run_tool))
    kinds = [type(event).__name__ for event in events]
    assert kinds == [
        "ToolCallEvent",
        "ToolCallEvent",
        "ToolCallEvent",
        "UsageEvent",
        "StepFinishedEvent",
        "ToolResultEvent",
        "ToolResultEvent",
        "ToolResultEvent",
        "TextDeltaEvent",
        "UsageEvent",
        "StepFinishedEvent",
    ]
    assert finished == ["c", "b", "a"]
    results = [event.result.tool_name for event in events if isinstance(event, ToolResultEvent)]
    assert results == ["a", "b", "c"]
    assert [m.role for m in history] == [
        Role.USER,
        Role.ASSISTANT,
        *[Role.TOOL] * 3,
        Role.ASSISTANT,
    ]
    assert [m.tool_result.tool_name for m in history[2:5] if m.tool_result] == ["a", "b", "c"]
    second = model.requests[1].messages
    assert [m.tool_result.tool_name for m in second if m.tool_result] == ["a", "b", "c"]


async def test_the_hooks_run_around_steps_and_calls() -> None:
    seen: list[ModelCallInfo] = []
    steps: list[StepInfo] = []
    failures: list[HookFailure] = []

    def before(info: ModelCallInfo) -> list[Message] | None:
        seen.append(info)
        return [Message.user("replaced")] if info.step_index == 0 else []

    async def after(info: StepInfo) -> str | None:
        steps.append(info)
        return "rewritten" if info.step_index == 1 else None

    def vet(call: ToolCall) -> ToolCall | None:
        if call.name == "skip":
            return None
        if call.name == "boom":
            raise RuntimeError("hook broke")
        return ToolCall(call.id, call.name, {"x": 1})

    ran: list[ToolCall] = []

    async def run_tool(call: ToolCall) -> ToolResult:
        ran.append(call)
        return await _echo(call)

    hooks = LoopHooks(
        turn_id="turn-1",
        system="sys",
        before_model_call=before,
        after_model_step=after,
        before_tool_call=vet,
        on_failure=failures.append,
    )
    model = ScriptedModel([ScriptStep(tool_calls=_calls("keep", "skip", "boom")), "original"])
    history = [Message.user("hi")]
    events = await _events(_loop(model, history, run_tool, hooks))
    # before_model_call: a replacement goes to the model only; an empty list sends the prompt.
    assert [m.text for m in model.requests[0].messages] == ["replaced"]
    assert model.requests[1].messages[0].text == "hi"
    assert [(i.turn_id, i.step_index, i.system, i.tools) for i in seen] == [
        ("turn-1", 0, "sys", TOOLS),
        ("turn-1", 1, "sys", TOOLS),
    ]
    # before_tool_call: rewrites, skips, and a hook that raises lets the call run as it was.
    assert [(c.name, c.arguments) for c in ran] == [("keep", {"x": 1}), ("boom", {})]
    results = [e.result for e in events if isinstance(e, ToolResultEvent)]
    assert [r.is_error for r in results] == [False, True, False]
    # after_model_step: the replaced text is the step's text and its history entry.
    last = events[-1]
    assert isinstance(last, StepFinishedEvent)
    assert last.text == "rewritten"
    assert history[-1].content == "rewritten"
    assert [s.text for s in steps] == ["", "original"]
    assert [(f.hook, f.error is None) for f in failures] == [
        ("before_tool_call", False),
        ("before_model_call", True),
    ]


async def test_a_stop_mid_stream_records_nothing_and_charges_the_step() -> None:
    gate = asyncio.Event()  # never set: the step waits after its first delta
    model = ScriptedModel([ScriptStep(text="one two three", wait=gate, wait_at=1)])
    history = [Message.user("hi")]
    loop = _loop(model, history)
    events: AsyncIterator[LoopEvent] = loop.events()
    async with contextlib.aclosing(events):  # type: ignore[type-var]
        first = await anext(events)
    assert first == TextDeltaEvent("one ")
    assert history == [Message.user("hi")]
    assert loop.left_early is not None
    assert loop.left_early.estimated


async def test_a_stop_mid_round_answers_the_unfinished_calls_in_call_order() -> None:
    never = asyncio.Event()

    async def run_tool(call: ToolCall) -> ToolResult:
        if call.name != "a":
            await never.wait()
        return await _echo(call)

    model = ScriptedModel([ScriptStep(tool_calls=_calls("a", "b", "c"))])
    history = [Message.user("hi")]
    loop = _loop(model, history, run_tool)
    events: AsyncIterator[LoopEvent] = loop.events()
    async with contextlib.aclosing(events):  # type: ignore[type-var]
        async for event in events:
            if isinstance(event, ToolResultEvent):
                break
    assert [m.tool_result.tool_name for m in history if m.tool_result] == ["a", "b", "c"]
    assert [(r.tool_name, r.is_error) for r in loop.unannounced] == [("b", True), ("c", True)]
    assert all("was stopped" in str(r.output) for r in loop.unannounced)


async def test_fail_closed_stops_the_round_at_the_first_failed_result() -> None:
    never = asyncio.Event()

    async def run_tool(call: ToolCall) -> ToolResult:
        if call.name == "c":
            await never.wait()
        return ToolResult(call.id, call.name, output="no", is_error=call.name == "a")

    model = ScriptedModel([ScriptStep(tool_calls=_calls("a", "b", "c"))])
    history = [Message.user("hi")]
    loop = StepLoop(
        _turn(model),
        lambda hop, index: list(history),
        history.append,
        run_tool,
        options=CompletionOptions(),
        max_steps=5,
        tools=TOOLS,
        fail_closed=True,
    )
    results: list[ToolResult] = []

    async def read() -> None:
        async for event in loop.events():
            if isinstance(event, ToolResultEvent):
                results.append(event.result)

    with pytest.raises(GMIError) as raised:
        await read()
    assert raised.value.code is GMIErrorCode.TOOL_ERROR
    # b had finished: its own result stays; c was still running: it is answered as not run.
    assert [(r.tool_name, r.is_error) for r in results] == [("a", True), ("b", False), ("c", True)]
    assert "was not run" in str(results[2].output)
    assert [m.tool_result for m in history if m.tool_result] == results
    assert model.calls == 1
