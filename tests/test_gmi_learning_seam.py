"""The GMI side of the learning seam (spec: Learning; What a turn does, steps 4 and 6).

A GMI given a learner session (`GMIConfig.learning`) asks it once per user turn, before the first
model call, for the personality section, and sends that section at priority 2 (right after the
base prompt) on every model step of the turn. A session that raises, answers ``None`` or does not
answer within 2,000 ms on the GMI's clock never fails the turn: the GMI renders the section from
the persona's authored traits, the turn has no learner and the trace holds a WARNING. The turn's
learner and mode reach its tool calls as ``session_data["learning"]``; a tool continuation
reuses the preparation of the turn it continues.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from agentos.core.messages import Message, Role, ToolCall, ToolResult
from agentos.llm.model import ToolDefinition
from agentos.persona.personality import personality_section
from agentos.substrate import (
    GMI,
    LEARNING_KEY,
    PERSONALITY_PRIORITY,
    GMIOutput,
    GMIOutputChunk,
    GMIOutputChunkType,
    GMITurnStream,
    PreparedTurn,
    ReasoningEntryType,
    SystemPrompt,
    TurnPreparation,
)
from agentos.substrate.turn_options import TurnOptions
from agentos.testing import FakeClock, ScriptedModel, ScriptStep
from agentos.tools import Tool, ToolExecutionContext, ToolOrchestrator
from fakes.gmi_helpers import make_gmi, persona, run, turn

AUTHORED = {"honesty": 0.9, "extraversion": 0.2, "openness": 0.5}
AUTHORED_SECTION = personality_section(AUTHORED)
LEARNED = "## Personality & Communication Style\nFrom the learner."
WEATHER = ToolDefinition(
    "weather",
    "Today's weather in a city (the host looks it up).",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


@dataclass
class FakeSession:
    """A learner session of the test's own: answers ``answer`` (or raises / hangs)."""

    answer: PreparedTurn | None = field(
        default_factory=lambda: PreparedTurn(
            (SystemPrompt(LEARNED, PERSONALITY_PRIORITY, "personality"),), "bound", "frozen"
        )
    )
    raises: Exception | None = None
    hangs: bool = False
    turns: list[TurnPreparation] = field(default_factory=list)
    asked: asyncio.Event = field(default_factory=asyncio.Event)
    ended: int = 0
    cancelled: int = 0

    async def prepare_turn(self, turn: TurnPreparation) -> PreparedTurn | None:
        self.turns.append(turn)
        self.asked.set()
        if self.hangs:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.cancelled += 1
                raise
        if self.raises is not None:
            raise self.raises
        return self.answer

    async def end_session(self) -> None:
        self.ended += 1


seen: list[Any] = []


def look(x: int, ctx: ToolExecutionContext) -> int:
    """Record the turn's learning entry; return x."""
    seen.append(ctx.session_data.get(LEARNING_KEY))
    return x


LOOK = Tool.from_function(look)


def systems(model: ScriptedModel) -> list[list[str]]:
    """The system messages of every request the model received, in order."""
    return [[m.text for m in r.messages if m.role is Role.SYSTEM] for r in model.requests]


async def _collect(stream: GMITurnStream) -> list[GMIOutputChunk]:
    return [chunk async for chunk in stream]


async def learning_gmi(model: ScriptedModel, session: FakeSession, **config: Any) -> GMI:
    return await make_gmi(
        model,
        persona=persona(personality_traits=dict(AUTHORED)),
        learning=session,
        tool_orchestrator=ToolOrchestrator([LOOK], external=[WEATHER]),
        **config,
    )


def tool_turn_model() -> ScriptedModel:
    return ScriptedModel([ScriptStep(tool_calls=[ToolCall("c1", "look", {"x": 1})]), "done"])


async def test_the_section_goes_at_priority_2_on_every_step_and_is_prepared_once() -> None:
    seen.clear()
    model = tool_turn_model()
    session = FakeSession()
    gmi = await learning_gmi(model, session)
    _, output = await run(
        gmi, turn("look at 1", turn_id="t1", options=TurnOptions(workflow_id="w9"))
    )
    assert output.response_text == "done"
    assert systems(model) == [["You are P.", LEARNED], ["You are P.", LEARNED]]
    assert session.turns == [
        TurnPreparation(
            turn_id="t1",
            user_id="u1",
            namespace="",
            text="look at 1",
            model_ids=("scripted-model",),
            workflow_id="w9",
        )
    ]
    assert seen == [{"learner": "bound", "mode": "frozen"}]
    assert gmi.session_data[LEARNING_KEY] == {"learner": "bound", "mode": "frozen"}
    assert gmi.get_learner_session() is session
    assert session.ended == 0  # the host ends it, never the GMI


async def test_each_user_turn_is_prepared_and_the_namespace_is_the_turns_organization() -> None:
    model = ScriptedModel(["a", "b"])
    session = FakeSession()
    gmi = await learning_gmi(model, session)
    await run(gmi, turn("one", turn_id="t1", options=TurnOptions(learning_namespace="acme")))
    await run(gmi, turn("two", turn_id="t2", options=TurnOptions(workflow_seat=True)))
    assert [(t.turn_id, t.namespace, t.workflow_seat) for t in session.turns] == [
        ("t1", "acme", False),
        ("t2", "", True),
    ]


async def _falls_back(session: FakeSession, reason: str, clock: FakeClock | None = None) -> None:
    seen.clear()
    model = tool_turn_model()
    extra = {"clock": clock} if clock is not None else {}
    gmi = await learning_gmi(model, session, **extra)
    stream = gmi.process_turn_stream(turn("look at 1"))
    if clock is not None:
        await session.asked.wait()
        await clock.advance_and_settle(1.999)
        assert model.requests == []  # still waiting for the session
        await clock.advance_and_settle(0.001)
    chunks = [chunk async for chunk in stream]
    output: GMIOutput = await stream.output()
    assert output.error is None
    assert output.response_text == "done"
    assert chunks[-1].is_final
    assert systems(model) == [["You are P.", AUTHORED_SECTION]] * 2
    assert seen == [{"learner": "none", "mode": "on"}]
    warnings = [e for e in gmi.trace.entries() if e.type is ReasoningEntryType.WARNING]
    assert len(warnings) == 1
    assert warnings[0].message == (
        f"the learner session did not prepare the turn ({reason}); the personality section is "
        "rendered from the persona's traits and the turn has no learner"
    )
    assert warnings[0].details == {"reason": reason}
    assert session.cancelled == (1 if session.hangs else 0)  # a late answer is not awaited


async def test_a_session_that_raises_falls_back_to_the_authored_section() -> None:
    await _falls_back(
        FakeSession(raises=RuntimeError("store down")), "it raised RuntimeError: store down"
    )


async def test_a_session_that_answers_none_falls_back_to_the_authored_section() -> None:
    await _falls_back(FakeSession(answer=None), "it answered with no preparation")


async def test_a_session_that_never_answers_falls_back_after_2_s_on_the_clock() -> None:
    await _falls_back(FakeSession(hangs=True), "no answer within 2000 ms", FakeClock())


async def test_the_fallback_renders_the_authored_traits_not_a_changed_copy() -> None:
    model = ScriptedModel(["a"])
    gmi = await learning_gmi(model, FakeSession(answer=None))
    gmi.set_personality_trait("extraversion", 0.9)
    await run(gmi, turn("hi"))
    assert systems(model) == [["You are P.", AUTHORED_SECTION]]


async def test_a_continuation_reuses_its_turns_preparation() -> None:
    seen.clear()
    model = ScriptedModel(
        [ScriptStep(tool_calls=[ToolCall("c2", "weather", {"city": "Oslo"})]), "Sunny."]
    )
    session = FakeSession()
    gmi = await learning_gmi(model, session)
    _, paused = await run(gmi, turn("weather?"))
    assert paused.is_final is False
    gmi.session_data[LEARNING_KEY] = "changed by someone"
    stream = await gmi.handle_tool_results([ToolResult("c2", "weather", {"sky": "sunny"})])
    _ = [chunk async for chunk in stream]
    assert (await stream.output()).response_text == "Sunny."
    assert len(session.turns) == 1  # not prepared again
    assert systems(model) == [["You are P.", LEARNED]] * 2
    assert gmi.session_data[LEARNING_KEY] == {"learner": "bound", "mode": "frozen"}


async def test_a_continuation_of_a_turn_this_gmi_did_not_prepare_prepares_as_one() -> None:
    model = ScriptedModel(["Sunny."])
    session = FakeSession()
    gmi = await learning_gmi(model, session)
    gmi.hydrate_conversation_history(
        [
            Message.user("weather?"),
            Message.assistant("", tool_calls=[ToolCall("c2", "weather", {"city": "Oslo"})]),
        ]
    )
    stream = await gmi.handle_tool_results([ToolResult("c2", "weather", {"sky": "sunny"})])
    _ = [chunk async for chunk in stream]
    assert [t.continuation for t in session.turns] == [True]
    assert systems(model) == [["You are P.", LEARNED]]


async def test_without_learning_there_is_no_section_and_no_session_data_entry() -> None:
    seen.clear()
    model = tool_turn_model()
    gmi = await make_gmi(
        model,
        persona=persona(personality_traits=dict(AUTHORED)),
        tool_orchestrator=ToolOrchestrator([LOOK]),
    )
    await run(gmi, turn("look at 1"))
    assert systems(model) == [["You are P."], ["You are P."]]
    assert seen == [None]
    assert LEARNING_KEY not in gmi.session_data
    assert gmi.get_learner_session() is None


async def test_learning_takes_the_place_of_persona_traits_section() -> None:
    model = ScriptedModel(["a"])
    gmi = await learning_gmi(model, FakeSession(), persona_traits={"openness": 0.9})
    await run(gmi, turn("hi"))
    assert systems(model) == [["You are P.", LEARNED]]


async def test_aborting_a_turn_that_waits_for_its_preparation_cancels_the_preparation() -> None:
    model = ScriptedModel(["a"])
    session = FakeSession(hangs=True)
    gmi = await learning_gmi(model, session, clock=FakeClock())
    stream = gmi.process_turn_stream(turn("hi"))
    consumer = asyncio.ensure_future(_collect(stream))
    await session.asked.wait()
    await gmi.abort_turn()
    chunks = await consumer
    assert [c.type for c in chunks][-2:] == [
        GMIOutputChunkType.ERROR,
        GMIOutputChunkType.FINAL_RESPONSE_MARKER,
    ]
    assert session.cancelled == 1
    assert model.requests == []
