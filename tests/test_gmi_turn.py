from __future__ import annotations

import asyncio
from typing import Any

from agentos.core.messages import Role, ToolCall
from agentos.core.usage import ModelUsage
from agentos.substrate import (
    GMI,
    GMIConfig,
    GMIOutputChunk,
    GMIOutputChunkType,
    GMIPrimeState,
    GMITurnInput,
    ModelCallInfo,
    ReasoningEntryType,
    ReasoningTrace,
    StepFinishedPayload,
    ToolResultPayload,
    TurnOptions,
)
from agentos.testing import ScriptedModel, ScriptStep
from agentos.tools import ToolOrchestrator
from agentos.tools.tool import tool
from fakes.gmi_helpers import make_gmi, persona, run, turn

T = GMIOutputChunkType


def _input(text: str = "hi", **options: Any) -> GMITurnInput:
    return turn(text, options=TurnOptions(**options))


@tool
def lookup(q: str) -> str:
    """Look something up.

    Args:
        q: the query
    """
    return f"found {q}"


U1 = ModelUsage(prompt_tokens=10, completion_tokens=2)
U2 = ModelUsage(prompt_tokens=20, completion_tokens=3)


async def test_text_turn_chunk_order_and_output() -> None:
    model = ScriptedModel([ScriptStep(text=["Hel", "lo"], usage=U1)])
    gmi = await make_gmi(model)
    chunks, output = await run(gmi, _input())
    assert [c.type for c in chunks] == [
        T.TEXT_DELTA,
        T.TEXT_DELTA,
        T.USAGE_UPDATE,
        T.STEP_FINISHED,
        T.FINAL_RESPONSE_MARKER,
    ]
    step = chunks[3].content
    assert isinstance(step, StepFinishedPayload)
    assert (step.step_index, step.text, step.finish_reason, step.hop) == (0, "Hello", "stop", 0)
    assert (step.provider_id, step.model_id, step.usage) == ("scripted", "scripted-model", U1)
    assert chunks[-1].is_final
    assert chunks[-1].content == output
    assert output.response_text == "Hello"
    assert output.error is None
    assert output.usage.total_tokens == U1.total_tokens  # the usage-only chunk counted once
    assert [m.role for m in gmi.history.messages()] == [Role.USER, Role.ASSISTANT]
    sent = model.requests[0].messages
    assert [(m.role, m.text) for m in sent] == [(Role.SYSTEM, "You are P."), (Role.USER, "hi")]
    assert gmi.state is GMIPrimeState.READY


async def test_two_round_tool_turn() -> None:
    model = ScriptedModel(
        [
            ScriptStep(tool_calls=[ToolCall("c1", "lookup", {"q": "a"})], usage=U1),
            ScriptStep(tool_calls=[ToolCall("c2", "nope", {})], usage=U1),
            ScriptStep(text="done", usage=U2),
        ]
    )
    gmi = await make_gmi(model, tool_orchestrator=ToolOrchestrator([lookup]))
    chunks, output = await run(gmi, _input())
    assert [c.type for c in chunks] == [
        T.TOOL_CALL_REQUEST,
        T.USAGE_UPDATE,
        T.STEP_FINISHED,
        T.TOOL_RESULT,
        T.TOOL_CALL_REQUEST,
        T.USAGE_UPDATE,
        T.STEP_FINISHED,
        T.TOOL_RESULT,
        T.TEXT_DELTA,
        T.USAGE_UPDATE,
        T.STEP_FINISHED,
        T.FINAL_RESPONSE_MARKER,
    ]
    results = [c.content for c in chunks if c.type is T.TOOL_RESULT]
    assert all(isinstance(r, ToolResultPayload) for r in results)
    assert (results[0].result, results[0].is_error) == ("found a", False)
    assert results[1].is_error
    assert results[1].error_details is not None
    assert results[1].error_details["code"] == "TOOL_NOT_FOUND"
    steps = [c.content.step_index for c in chunks if c.type is T.STEP_FINISHED]
    assert steps == [0, 1, 2]
    assert [c.id for c in output.tool_calls] == ["c1", "c2"]
    assert output.response_text == "done"
    assert output.usage == U1 + U1 + U2
    # the second request carries the first round whole
    second = model.requests[1].messages
    assert [m.role for m in second][-3:] == [Role.USER, Role.ASSISTANT, Role.TOOL]


async def test_tool_loop_stops_at_max_iterations() -> None:
    calls = [ScriptStep(tool_calls=[ToolCall(f"c{i}", "lookup", {"q": "x"})]) for i in range(5)]
    model = ScriptedModel(calls)
    gmi = await make_gmi(model, tool_orchestrator=ToolOrchestrator([lookup]))
    chunks, output = await run(gmi, _input())
    assert model.calls == 5
    assert len([c for c in chunks if c.type is T.STEP_FINISHED]) == 5
    assert output.error is None


async def test_turn_failing_before_output() -> None:
    billed = ModelUsage(prompt_tokens=7, completion_tokens=0)
    model = ScriptedModel([ScriptStep.fail(500, "boom", usage=billed)])
    gmi = await make_gmi(model)
    chunks, output = await run(gmi, _input())
    assert [c.type for c in chunks] == [T.USAGE_UPDATE, T.ERROR, T.FINAL_RESPONSE_MARKER]
    assert chunks[0].metadata == {
        "attempt_failed": True,
        "hop": 0,
        "provider_id": "scripted",
        "model_id": "scripted-model",
    }
    assert chunks[1].error_details is not None
    assert chunks[1].error_details["code"] == "LLM_PROVIDER_ERROR"
    assert output.error is not None
    assert output.error["code"] == "LLM_PROVIDER_ERROR"
    assert output.response_text is None
    assert output.usage == ModelUsage.zero() + billed
    assert gmi.state is GMIPrimeState.READY
    assert any(e.type is ReasoningEntryType.ERROR for e in gmi.trace.entries())


async def test_turn_failing_after_output() -> None:
    model = ScriptedModel(
        [
            ScriptStep(tool_calls=[ToolCall("c1", "lookup", {"q": "a"})], usage=U1),
            ScriptStep.fail(502, "cut", after_text="partial ", usage=U2),
        ]
    )
    gmi = await make_gmi(model, tool_orchestrator=ToolOrchestrator([lookup]))
    chunks, output = await run(gmi, _input())
    assert [c.type for c in chunks] == [
        T.TOOL_CALL_REQUEST,
        T.USAGE_UPDATE,
        T.STEP_FINISHED,
        T.TOOL_RESULT,
        T.TEXT_DELTA,
        T.USAGE_UPDATE,
        T.ERROR,
        T.FINAL_RESPONSE_MARKER,
    ]
    assert chunks[5].metadata["attempt_failed"] is True
    assert len([c for c in chunks if c.type is T.STEP_FINISHED]) == 1  # none for the failed step
    assert output.error is not None
    assert output.error["code"] == "LLM_PROVIDER_ERROR"
    assert output.usage == ModelUsage.zero() + U1 + U2
    assert [c.id for c in output.tool_calls] == ["c1"]


async def test_forwarded_options_turn_over_persona_and_nothing_of_its_own() -> None:
    chosen = persona(
        default_model_completion_options={"temperature": 0.2, "topP": 0.9, "toolChoice": "none"}
    )
    model = ScriptedModel(["a", "b"])
    gmi = await make_gmi(model, persona=chosen)
    await run(gmi, _input(temperature=0.5, max_tokens=99))  # seed: not a TurnOptions field
    sent = model.requests[0]
    assert sent.tools == []
    options = sent.options
    assert (options.temperature, options.top_p, options.max_tokens) == (0.5, 0.9, 99)
    assert options.tool_choice is None  # never sent without tools
    assert options.seed is None  # not a forwarded key
    await run(gmi, _input("again"))
    options = model.requests[1].options
    assert (options.temperature, options.max_tokens) == (0.2, None)  # no defaults of the GMI


async def test_tool_choice_auto_only_with_tools() -> None:
    model = ScriptedModel(["a", "b"])
    gmi = await make_gmi(model, tool_orchestrator=ToolOrchestrator([lookup]))
    await run(gmi, _input())
    assert model.requests[0].options.tool_choice == "auto"
    await run(gmi, _input("x", tool_choice="required"))
    assert model.requests[1].options.tool_choice == "required"


async def test_personality_section_only_when_configured() -> None:
    traits = {"honesty": 0.9}
    model = ScriptedModel(["a"])
    gmi = await make_gmi(model, persona=persona(personality_traits=traits))
    await run(gmi, _input())
    assert all("Personality" not in m.text for m in model.requests[0].messages)
    model2 = ScriptedModel(["a"])
    gmi2 = await make_gmi(model2, persona=persona(personality_traits=traits), persona_traits=traits)
    await run(gmi2, _input())
    system = [m.text for m in model2.requests[0].messages if m.role is Role.SYSTEM]
    assert system[0] == "You are P."
    assert "## Personality" in system[1]


async def test_shutdown_aborts_a_streaming_turn() -> None:
    gate = asyncio.Event()
    model = ScriptedModel([ScriptStep(text="one two three", wait=gate, wait_at=1)])
    gmi = await make_gmi(model)
    stream = gmi.process_turn_stream(_input())
    seen: list[GMIOutputChunk] = []
    first = asyncio.Event()

    async def consume() -> None:
        async for chunk in stream:
            seen.append(chunk)
            first.set()

    consumer = asyncio.create_task(consume())
    await first.wait()
    await asyncio.gather(gmi.shutdown(), gmi.shutdown())
    await consumer
    assert [c.type for c in seen] == [T.TEXT_DELTA, T.ERROR, T.FINAL_RESPONSE_MARKER]
    output = await stream.output()
    assert output.error is not None
    assert output.error["code"] == "SYS_ABORTED"
    assert gmi.state is GMIPrimeState.SHUTDOWN
    assert gmi.working_memory.closed


async def test_handle_tool_results_continues_without_tool_result_chunks() -> None:
    from agentos.core.messages import Message, ToolResult

    model = ScriptedModel(["thanks"])
    gmi = await make_gmi(model)
    gmi.history.replace_history(
        [Message.user("q"), Message.assistant(tool_calls=[ToolCall("c9", "ext", {})])]
    )
    stream = await gmi.handle_tool_results([ToolResult("c9", "ext", "42")])
    chunks = [c async for c in stream]
    assert T.TOOL_RESULT not in [c.type for c in chunks]
    assert (await stream.output()).response_text == "thanks"
    roles = [m.role for m in model.requests[0].messages]
    assert roles == [Role.SYSTEM, Role.USER, Role.ASSISTANT, Role.TOOL]


def test_reasoning_trace_keeps_last_entries_and_copies_details() -> None:
    trace = ReasoningTrace("g", max_entries=3)
    details = {"a": [1]}
    for i in range(5):
        trace.add(ReasoningEntryType.DEBUG, "x" * 2000, details, timestamp=float(i), turn_id="t")
    details["a"].append(2)
    entries = trace.entries()
    assert [e.timestamp for e in entries] == [2.0, 3.0, 4.0]
    assert len(entries[0].message) == 1000
    assert entries[0].details == {"a": [1]}
    trace.forget_turns(["t"])
    assert all(e.details is None for e in trace.entries())


async def test_gateway_fallback_hop_serves_and_billed_failure_counts() -> None:
    from agentos.llm.gateway import CompletionGateway, FallbackLeg, GatewayDefaults
    from agentos.llm.model import ChatModel

    billed = ModelUsage(prompt_tokens=5)
    primary = ScriptedModel([ScriptStep.fail(529, "overloaded", usage=billed)], provider_id="a")
    backup = ScriptedModel([ScriptStep(text="ok", usage=U1)], provider_id="b")

    def resolver(provider: str | None, model: str | None, **_: object) -> ChatModel:
        return backup if provider == "b" else primary

    gateway = CompletionGateway(
        GatewayDefaults(provider="a", model="m", fallback_providers=[FallbackLeg("b", "m")]),
        resolver=resolver,
    )
    gmi = GMI("g2")
    seen: list[tuple[int, str]] = []

    def hook(info: ModelCallInfo) -> None:
        seen.append((info.hop, info.provider_id))

    await gmi.initialize(
        persona(),
        GMIConfig(
            gateway=gateway,
            before_model_call=hook,
        ),
    )
    chunks, output = await run(gmi, _input())
    assert [c.type for c in chunks] == [
        T.USAGE_UPDATE,
        T.TEXT_DELTA,
        T.USAGE_UPDATE,
        T.STEP_FINISHED,
        T.FINAL_RESPONSE_MARKER,
    ]
    assert chunks[0].metadata["provider_id"] == "a"
    assert chunks[3].content.hop == 1
    assert output.usage == ModelUsage.zero() + billed + U1
    assert seen == [(0, "a"), (1, "b")]
    assert any(e.type is ReasoningEntryType.WARNING for e in gmi.trace.entries())


async def test_a_continuation_stays_on_the_serving_hop_and_a_new_turn_starts_at_the_primary() -> (
    None
):
    from agentos.core.messages import Message, ToolResult
    from agentos.llm.gateway import CompletionGateway, FallbackLeg, GatewayDefaults
    from agentos.llm.model import ChatModel

    external = ToolCall("x1", "ext", {})
    primary = ScriptedModel([ScriptStep.fail(503, "down"), "primary again"], provider_id="a")
    backup = ScriptedModel(
        [ScriptStep(tool_calls=[external]), "first turn done", "continued on the backup"],
        provider_id="b",
    )

    def resolver(provider: str | None, model: str | None, **_: object) -> ChatModel:
        return backup if provider == "b" else primary

    gateway = CompletionGateway(
        GatewayDefaults(provider="a", model="m", fallback_providers=[FallbackLeg("b", "m")]),
        resolver=resolver,
    )
    gmi = GMI("g3")
    await gmi.initialize(persona(), GMIConfig(gateway=gateway))
    await run(gmi, _input("use the external tool"))
    # The runtime resumes a stored pause by hydrating the history up to the paused round.
    gmi.history.hydrate_conversation_history(
        [Message.user("use the external tool"), Message.assistant(tool_calls=[external])]
    )
    stream = await gmi.handle_tool_results([ToolResult("x1", "ext", "done")])
    async for _ in stream:
        pass
    assert (await stream.output()).response_text == "continued on the backup"
    assert primary.calls == 1  # the continuation did not go back to the primary
    _, output = await run(gmi, _input("next question"))
    assert output.response_text == "primary again"


async def test_replacing_the_history_drops_the_trace_details_of_turns_it_no_longer_holds() -> None:
    from agentos.core.messages import Message

    gmi = await make_gmi(ScriptedModel(["one", "two"]))
    await run(gmi, turn("secret plan", turn_id="t1"))
    await run(gmi, turn("kept question", turn_id="t2"))
    await gmi.replace_history([Message.user("kept question"), Message.assistant("two")])
    by_turn = {(e.turn_id, e.type): e for e in gmi.trace.entries()}
    dropped = by_turn[("t1", ReasoningEntryType.INTERACTION_START)]
    kept = by_turn[("t2", ReasoningEntryType.INTERACTION_START)]
    assert dropped.details is None
    assert dropped.message == "turn t1 started"  # type and message stay
    assert kept.details == {"input_preview": "kept question"}
    await gmi.clear_history()
    assert gmi.history.messages() == []
    assert all(e.details is None for e in gmi.trace.entries() if e.turn_id == "t2")
    gmi.hydrate_conversation_history([Message.user("x")])
    assert [m.text for m in gmi.history.messages()] == ["x"]
