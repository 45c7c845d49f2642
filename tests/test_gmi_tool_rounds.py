"""Tool rounds and continuations of a GMI turn (spec: What a turn does step 6, Output stream;
reference cases 37 and 40), and `GMI.set_personality_trait()`."""

from __future__ import annotations

import asyncio

import pytest

from agentos.core.errors import GMIError
from agentos.core.messages import Message, ToolCall, ToolResult
from agentos.substrate import (
    GMIOutputChunkType,
    GMIPrimeState,
    StepFinishedPayload,
    ToolResultPayload,
    TurnOptions,
)
from agentos.testing import ScriptedModel, ScriptStep
from agentos.tools import ToolOrchestrator
from agentos.tools.tool import tool
from fakes.gmi_helpers import make_gmi, persona, run, turn

T = GMIOutputChunkType


@tool
def echo(x: int) -> dict[str, int]:
    """Echo x.

    Args:
        x: the value
    """
    return {"x": x}


@tool
def explode() -> str:
    """Always fails."""
    raise RuntimeError("boom")


def calls(*names: str) -> ScriptStep:
    return ScriptStep(tool_calls=[ToolCall(f"c{i}", name, {}) for i, name in enumerate(names)])


async def test_case_37_tool_loop_chunk_order_and_output() -> None:
    model = ScriptedModel(
        [
            ScriptStep(text="Let me check.", tool_calls=[ToolCall("c1", "echo", {"x": 1})]),
            "It is 1.",
        ]
    )
    gmi = await make_gmi(model, tool_orchestrator=ToolOrchestrator([echo]))
    chunks, output = await run(gmi, turn("what is x?"))
    types = [c.type for c in chunks]
    assert types == [
        T.TEXT_DELTA,
        T.TEXT_DELTA,
        T.TEXT_DELTA,
        T.TOOL_CALL_REQUEST,
        T.USAGE_UPDATE,
        T.STEP_FINISHED,
        T.TOOL_RESULT,
        T.TEXT_DELTA,
        T.TEXT_DELTA,
        T.TEXT_DELTA,
        T.USAGE_UPDATE,
        T.STEP_FINISHED,
        T.FINAL_RESPONSE_MARKER,
    ]
    request = chunks[3]
    assert request.metadata == {
        "execution_mode": "internal",
        "requires_external_tool_result": False,
    }
    finished = [c.content for c in chunks if c.type is T.STEP_FINISHED]
    assert all(isinstance(f, StepFinishedPayload) for f in finished)
    assert [f.step_index for f in finished] == [0, 1]
    assert chunks[6].content == ToolResultPayload("c1", "echo", {"x": 1}, False, None)
    assert output.tool_calls == [ToolCall("c1", "echo", {"x": 1})]
    assert output.response_text == "It is 1."


async def test_case_37_six_tool_requests_stop_after_five_model_calls() -> None:
    model = ScriptedModel([calls("echo") for _ in range(6)])
    gmi = await make_gmi(model, tool_orchestrator=ToolOrchestrator([echo]))
    chunks, output = await run(gmi, turn())
    assert model.calls == 5
    assert [c.type for c in chunks].count(T.STEP_FINISHED) == 5
    assert len(output.tool_calls) == 5


async def test_case_37_fail_closed_tool_error_ends_the_turn_with_tool_error() -> None:
    @tool
    async def echo() -> str:
        """Still running when explode fails (the round's calls run concurrently, DESIGN §5.22)."""
        await asyncio.Event().wait()
        return "never"

    model = ScriptedModel([calls("explode", "echo"), "never"])
    gmi = await make_gmi(model, tool_orchestrator=ToolOrchestrator([explode, echo]))
    policy = TurnOptions(tool_failure_mode="fail_closed")
    chunks, output = await run(gmi, turn(options=policy))
    types = [c.type for c in chunks]
    assert types[-4:] == [T.TOOL_RESULT, T.TOOL_RESULT, T.ERROR, T.FINAL_RESPONSE_MARKER]
    failed, skipped = (c.content for c in chunks if c.type is T.TOOL_RESULT)
    assert (failed.name, failed.is_error) == ("explode", True)
    assert (skipped.name, skipped.is_error) == ("echo", True)  # the round stopped before it
    assert skipped.error_details is not None
    assert skipped.error_details["code"] == "TOOL_ERROR"
    assert output.error is not None
    assert output.error["code"] == "TOOL_ERROR"
    assert model.calls == 1
    # The history answers every call of the round.
    answered = [m.tool_result.tool_call_id for m in gmi.history.messages() if m.tool_result]
    assert answered == ["c0", "c1"]


async def test_fail_open_is_the_default_and_the_model_sees_the_error() -> None:
    model = ScriptedModel([calls("explode"), "sorry"])
    gmi = await make_gmi(model, tool_orchestrator=ToolOrchestrator([explode]))
    _, output = await run(gmi, turn())
    assert output.error is None
    assert output.response_text == "sorry"
    sent = model.requests[1].messages[-1].tool_result
    assert sent is not None
    assert sent.is_error


async def test_shutdown_during_a_tool_round_answers_the_unfinished_calls() -> None:
    started = asyncio.Event()
    release = asyncio.Event()
    quick_done = asyncio.Event()

    @tool
    async def slow() -> str:
        """Waits."""
        started.set()
        await release.wait()
        return "late"

    @tool
    async def quick() -> str:
        """Answers at once."""
        quick_done.set()
        return "early"

    # The round's calls run concurrently (DESIGN §5.22): "quick" has run while "slow" waits.
    model = ScriptedModel([calls("slow", "quick")])
    gmi = await make_gmi(model, tool_orchestrator=ToolOrchestrator([slow, quick]))
    stream = gmi.process_turn_stream(turn())
    seen: list[T] = []

    async def consume() -> None:
        async for chunk in stream:
            seen.append(chunk.type)

    reader = asyncio.create_task(consume())
    await started.wait()
    await quick_done.wait()
    await gmi.shutdown()
    await reader
    assert seen[-4:] == [T.TOOL_RESULT, T.TOOL_RESULT, T.ERROR, T.FINAL_RESPONSE_MARKER]
    results = [m.tool_result for m in gmi.history.messages() if m.tool_result]
    # Every call whose result was not handed on is answered as stopped, "quick" too though it
    # ran: a result counts once handed on in call order, as a killed process would leave it.
    assert [(r.tool_call_id, r.is_error) for r in results] == [("c0", True), ("c1", True)]
    assert gmi.state is GMIPrimeState.SHUTDOWN


# -- case 40: continuations ---------------------------------------------------------------------


async def paused_gmi(model: ScriptedModel, *pending: str) -> object:
    gmi = await make_gmi(model)
    gmi.history.hydrate_conversation_history(
        [
            Message.user("run them"),
            Message.assistant(tool_calls=[ToolCall(call_id, "ext", {}) for call_id in pending]),
        ]
    )
    return gmi


async def test_case_40_empty_results_are_a_validation_error() -> None:
    gmi = await make_gmi(ScriptedModel([]))
    with pytest.raises(GMIError) as caught:
        await gmi.handle_tool_results([])
    assert caught.value.code == "SYS_VALIDATION_ERROR"


async def test_case_40_one_success_result_appends_a_tool_message_and_ends_final() -> None:
    model = ScriptedModel(["Done."])
    gmi = await make_gmi(model)
    gmi.history.hydrate_conversation_history(
        [Message.user("run it"), Message.assistant(tool_calls=[ToolCall("c1", "ext", {})])]
    )
    stream = await gmi.handle_tool_result("c1", "ext", {"type": "success", "result": {"ok": True}})
    chunks = [c async for c in stream]
    output = await stream.output()
    assert output.is_final
    assert output.response_text == "Done."
    assert T.TOOL_RESULT not in [c.type for c in chunks]
    tool_message = model.requests[0].messages[-1]
    assert tool_message.tool_result == ToolResult("c1", "ext", {"ok": True})
    history = gmi.history.messages()
    assert [m.role.value for m in history] == ["user", "assistant", "tool", "assistant"]


async def test_case_40_spec_a_result_for_part_of_a_pause_answers_the_rest_not_run() -> None:
    model = ScriptedModel(["Partly done."])
    gmi = await make_gmi(model)
    gmi.history.hydrate_conversation_history(
        [
            Message.user("run both"),
            Message.assistant(tool_calls=[ToolCall("c1", "ext", {}), ToolCall("c2", "ext", {})]),
        ]
    )
    stream = await gmi.handle_tool_results([ToolResult("c1", "ext", "first")])
    await stream.output()
    results = [m.tool_result for m in gmi.history.messages() if m.tool_result]
    assert [(r.tool_call_id, r.is_error) for r in results] == [("c1", False), ("c2", True)]
    details = results[1].error_details
    assert details is not None
    assert details["code"] == "EXTERNAL_TOOL_NOT_RUN"
    sent = [m.tool_result for m in model.requests[0].messages if m.tool_result]
    assert [r.tool_call_id for r in sent] == ["c1", "c2"]


async def test_continuation_refuses_results_for_calls_that_are_not_pending() -> None:
    gmi = await make_gmi(ScriptedModel(["x"]))
    gmi.history.hydrate_conversation_history(
        [Message.user("q"), Message.assistant(tool_calls=[ToolCall("c1", "ext", {})])]
    )
    before = gmi.history.messages()
    with pytest.raises(GMIError, match="'zz'") as caught:
        await gmi.handle_tool_results([ToolResult("zz", "ext", 1)])
    assert caught.value.details == {"unknown_tool_call_ids": ["zz"]}
    with pytest.raises(GMIError, match="twice"):
        await gmi.handle_tool_results([ToolResult("c1", "ext", 1), ToolResult("c1", "ext", 2)])
    with pytest.raises(GMIError, match="'success' or 'error'"):
        await gmi.handle_tool_result("c1", "ext", {"type": "maybe"})
    assert gmi.history.messages() == before  # nothing was recorded


async def test_an_error_outcome_becomes_an_error_result() -> None:
    gmi = await make_gmi(ScriptedModel(["ok"]))
    gmi.history.hydrate_conversation_history(
        [Message.user("q"), Message.assistant(tool_calls=[ToolCall("c1", "ext", {})])]
    )
    error = {"code": "E_DOWN", "message": "service down"}
    stream = await gmi.handle_tool_result("c1", "ext", {"type": "error", "error": error})
    await stream.output()
    [result] = [m.tool_result for m in gmi.history.messages() if m.tool_result]
    assert result == ToolResult("c1", "ext", error, True, error)


# -- set_personality_trait ----------------------------------------------------------------------


async def test_set_personality_trait_changes_this_gmis_copy_and_no_prompt() -> None:
    authored = persona(personality_traits={"openness": 0.5})
    model = ScriptedModel(["a"])
    gmi = await make_gmi(model, persona=authored, persona_traits={"openness": 0.5})
    assert gmi.set_personality_trait("openness", 0.9) == 0.5
    assert gmi.set_personality_trait("honesty", 1) is None
    assert gmi.persona.hexaco_traits == {"openness": 0.9, "honesty": 1.0}
    assert authored.hexaco_traits == {"openness": 0.5}  # the given persona is untouched
    await run(gmi, turn())
    assert "Personality" not in "".join(m.text for m in model.requests[0].messages)


@pytest.mark.parametrize(
    ("trait", "value", "message"),
    [
        ("charisma", 0.5, "unknown personality trait 'charisma'"),
        ("openness", 1.5, "from 0 to 1"),
        ("openness", float("nan"), "from 0 to 1"),
        ("openness", True, "from 0 to 1"),
    ],
)
async def test_set_personality_trait_refuses_bad_input(
    trait: str, value: float, message: str
) -> None:
    gmi = await make_gmi(ScriptedModel([]))
    with pytest.raises(GMIError, match=message):
        gmi.set_personality_trait(trait, value)


# -- hooks --------------------------------------------------------------------------------------


async def test_after_model_step_replaces_the_steps_text_in_history_and_output() -> None:
    from agentos.substrate import StepInfo

    seen: list[StepInfo] = []

    def after(info: StepInfo) -> str | None:
        seen.append(info)
        return info.text.upper() if info.step_index == 1 else None

    model = ScriptedModel([calls("echo"), "all done"])
    gmi = await make_gmi(model, tool_orchestrator=ToolOrchestrator([echo]), after_model_step=after)
    chunks, output = await run(gmi, turn())
    assert [(i.step_index, i.text, len(i.tool_calls)) for i in seen] == [
        (0, "", 1),
        (1, "all done", 0),
    ]
    assert output.response_text == "ALL DONE"
    assert gmi.history.messages()[-1].text == "ALL DONE"
    finished = [c.content for c in chunks if c.type is T.STEP_FINISHED]
    assert finished[-1].text == "ALL DONE"


async def test_before_tool_call_skips_or_rewrites_calls_and_a_failing_hook_is_ignored() -> None:
    async def vet(call: ToolCall) -> ToolCall | None:
        if call.id == "c0":
            return None
        if call.id == "c1":
            return ToolCall(call.id, call.name, {"x": 42})
        raise RuntimeError("hook bug")

    model = ScriptedModel(
        [
            ScriptStep(
                tool_calls=[
                    ToolCall("c0", "echo", {"x": 1}),
                    ToolCall("c1", "echo", {"x": 2}),
                    ToolCall("c2", "echo", {"x": 3}),
                ]
            ),
            "ok",
        ]
    )
    gmi = await make_gmi(model, tool_orchestrator=ToolOrchestrator([echo]), before_tool_call=vet)
    chunks, _ = await run(gmi, turn())
    results = [c.content for c in chunks if c.type is T.TOOL_RESULT]
    assert (results[0].is_error, results[0].error_details["code"]) == (
        True,
        "AUTH_PERMISSION_DENIED",
    )
    assert results[1].result == {"x": 42}
    assert results[2].result == {"x": 3}  # the hook raised: the call ran as the model asked
    assert any("before_tool_call failed" in e.message for e in gmi.trace.entries())


async def test_on_fallback_is_called_through_the_gmis_own_callback() -> None:
    from agentos.llm.gateway import CompletionGateway, FallbackLeg, GatewayDefaults
    from agentos.llm.model import ChatModel
    from agentos.substrate import GMI, GMIConfig

    primary = ScriptedModel([ScriptStep.fail(503, "down")], provider_id="a")
    backup = ScriptedModel(["served"], provider_id="b")
    told: list[tuple[str, str]] = []
    defaults_told: list[str] = []

    def resolver(provider: str | None, model: str | None, **_: object) -> ChatModel:
        return backup if provider == "b" else primary

    gateway = CompletionGateway(
        GatewayDefaults(
            provider="a",
            model="m",
            fallback_providers=[FallbackLeg("b", "m")],
            on_fallback=lambda error, provider: defaults_told.append(provider),
        ),
        resolver=resolver,
    )
    gmi = GMI("g")
    await gmi.initialize(
        persona(),
        GMIConfig(
            gateway=gateway, on_fallback=lambda error, provider: told.append((provider, str(error)))
        ),
    )
    _, output = await run(gmi, turn())
    assert output.response_text == "served"
    assert [provider for provider, _ in told] == ["b"]
    assert defaults_told == []  # callbacks set in the gateway's defaults do not run for a GMI
