"""agency(): sessions (history, usage, durability) and streaming (events, text as generated)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agentos import (
    AgencyFinished,
    AgentFinished,
    AgentStarted,
    AgentTextDelta,
    GMIError,
    GMIErrorCode,
    ModelUsage,
    ToolCall,
    agency,
    agent,
    tool,
)
from agentos.api.approvals import ApprovalDecision
from agentos.storage.session_records import SessionChanges
from agentos.storage.session_store import InMemorySessionStore, SQLiteSessionStore
from agentos.testing import ScriptedModel, ScriptStep
from fakes.agency_models import conversation, model

# -- sessions --------------------------------------------------------------------------------


async def test_earlier_turns_reach_each_members_first_call_as_earlier_messages() -> None:
    a, b = model("A1", "A2"), model("B1", "B2")
    team = agency(agents={"a": {"model": a}, "b": {"model": b}})
    session = team.session("s1")
    first = await session.send("P1")
    second = await session.send("P2")
    assert (first.text, second.text) == ("B1", "B2")
    earlier = [("user", "P1"), ("assistant", "B1")]
    assert conversation(a.requests[1].messages) == [*earlier, ("user", "P2")]
    assert conversation(b.requests[1].messages) == [
        *earlier,
        ("user", "Original task: P2\n\nPrevious agent (a) output:\nA2"),
    ]
    assert conversation(a.requests[0].messages) == [("user", "P1")]
    assert conversation(await session.messages()) == [*earlier, ("user", "P2"), ("assistant", "B2")]
    assert session.usage() == ModelUsage(40, 20)
    assert session.id == "s1"
    assert team.session("s1") is session


async def test_only_the_first_call_of_a_member_in_a_send_gets_the_history() -> None:
    producer = model("draft 1", "draft 2", "draft 3")
    reviewer = model('{"approved": true, "feedback": ""}', '{"approved": false, "feedback": "x"}')
    team = agency(agents={"p": {"model": producer}, "r": {"model": reviewer}}, strategy="graph")
    session = team.session()
    await session.send("first")
    await session.send("second")
    assert conversation(producer.requests[1].messages) == [
        ("user", "first"),
        ("assistant", '[p]:\ndraft 1\n\n[r]:\n{"approved": true, "feedback": ""}'),
        ("user", "second"),
    ]


async def test_generate_keeps_no_history() -> None:
    a = model("A1", "A2")
    team = agency(agents={"a": {"model": a}})
    await team.generate("P1")
    await team.generate("P2")
    assert conversation(a.requests[1].messages) == [("user", "P2")]


async def test_clear_empties_the_history_and_close_refuses_later_turns() -> None:
    a = model("A1", "A2")
    team = agency(agents={"a": {"model": a}})
    session = team.session("s")
    await session.send("P1")
    await session.clear()
    assert await session.messages() == []
    await session.send("P2")
    assert conversation(a.requests[1].messages) == [("user", "P2")]
    await session.close()
    with pytest.raises(GMIError) as caught:
        await session.send("P3")
    assert caught.value.code is GMIErrorCode.INVALID_STATE
    assert team.session("s") is not session


async def test_a_session_is_durable_with_a_store(tmp_path: Path) -> None:
    path = tmp_path / "agency.db"
    first = agency(agents={"a": {"model": model("A1")}}, store=SQLiteSessionStore(path=path))
    await first.session("kept").send("P1")
    later = model("A2")
    second = agency(agents={"a": {"model": later}}, store=SQLiteSessionStore(path=path))
    result = await second.session("kept").send("P2")
    assert result.text == "A2"
    assert conversation(later.requests[0].messages) == [
        ("user", "P1"),
        ("assistant", "A1"),
        ("user", "P2"),
    ]


async def test_a_failed_send_keeps_nothing() -> None:
    a = ScriptedModel([ScriptStep.fail(400, "bad"), ScriptStep("ok")])
    team = agency(agents={"a": {"model": a}})
    session = team.session("s")
    with pytest.raises(GMIError):
        await session.send("P1")
    assert await session.messages() == []


# -- streaming -------------------------------------------------------------------------------


async def test_stream_events_come_in_order_with_each_calls_deltas() -> None:
    a = ScriptedModel([ScriptStep(["A ", "one"], usage=ModelUsage(3, 2))])
    b = ScriptedModel([ScriptStep(["B ", "two"], usage=ModelUsage(4, 1))])
    team = agency(agents={"a": {"model": a}, "b": {"model": b}})
    stream = team.stream("P")
    events = [event async for event in stream.events]
    second_input = "Original task: P\n\nPrevious agent (a) output:\nA one"
    shapes: list[tuple[Any, ...]] = []
    for event in events:
        match event:
            case AgentStarted(agent=name, input=given):
                shapes.append(("start", name, given))
            case AgentTextDelta(agent=name, text=text, result=result):
                shapes.append(("delta", name, text, result))
            case AgentFinished(call=call):
                shapes.append(("end", call.agent, call.output))
            case AgencyFinished(result=done):
                shapes.append(("finished", done.text))
    assert shapes == [
        ("start", "a", "P"),
        ("delta", "a", "A ", False),
        ("delta", "a", "one", False),
        ("end", "a", "A one"),
        ("start", "b", second_input),
        ("delta", "b", "B ", True),
        ("delta", "b", "two", True),
        ("end", "b", "B two"),
        ("finished", "B two"),
    ]
    final = await stream.result()
    assert final.usage == ModelUsage(7, 3)


async def test_text_stream_yields_the_result_calls_deltas_as_they_are_generated() -> None:
    gate = asyncio.Event()
    b = ScriptedModel([ScriptStep(["first ", "second"], wait=gate, wait_at=1)])
    team = agency(agents={"a": {"model": model("A")}, "b": {"model": b}})
    stream = team.stream("P")
    texts = stream.text_stream
    assert await anext(texts) == "first "  # before the member's call has finished
    gate.set()
    assert [text async for text in texts] == ["second"]
    assert (await stream.result()).text == "first second"


async def test_text_stream_falls_back_to_the_result_text_when_nothing_streamed() -> None:
    team = agency(agents={"a": {"model": model("A")}, "b": {"model": model("B")}}, strategy="graph")
    stream = team.stream("P")
    assert [text async for text in stream.text_stream] == ["[a]:\nA\n\n[b]:\nB"]


async def test_a_session_stream_keeps_the_turn() -> None:
    a = model("A1", "A2")
    team = agency(agents={"a": {"model": a}})
    session = team.session("s")
    assert [t async for t in session.stream("P1").text_stream] == ["A1"]
    assert (await session.send("P2")).text == "A2"
    assert conversation(a.requests[1].messages) == [
        ("user", "P1"),
        ("assistant", "A1"),
        ("user", "P2"),
    ]
    assert session.usage() == ModelUsage(20, 10)


async def test_a_stream_raises_the_agency_error_at_the_end() -> None:
    team = agency(agents={"a": {"model": ScriptedModel([ScriptStep.fail(400, "bad")])}})
    stream = team.stream("P")
    with pytest.raises(GMIError):
        async for _ in stream.events:
            pass
    with pytest.raises(RuntimeError):
        _ = stream.text_stream  # a stream is read once


async def test_a_gmi_member_gets_the_earlier_turns_too() -> None:
    member = model("G1", "G2")
    team = agency(agents={"g": {"model": member, "runtime": "gmi"}})
    assert type(team.plan.members[0].agent).__name__ == "GmiAgent"
    session = team.session("s")
    await session.send("P1")
    assert (await session.send("P2")).text == "G2"
    assert conversation(member.requests[1].messages) == [
        ("user", "P1"),
        ("assistant", "G1"),
        ("user", "P2"),
    ]


async def test_the_synthesizer_and_the_members_of_a_parallel_session_get_the_history() -> None:
    a, b, synth = model("A1", "A2"), model("B1", "B2"), model("S1", "S2")
    team = agency(agents={"a": {"model": a}, "b": {"model": b}}, strategy="parallel", model=synth)
    session = team.session("s")
    await session.send("P1")
    await session.send("P2")
    earlier = [("user", "P1"), ("assistant", "S1")]
    assert conversation(a.requests[1].messages) == [*earlier, ("user", "P2")]
    assert conversation(b.requests[1].messages) == [*earlier, ("user", "P2")]
    assert conversation(synth.requests[1].messages)[:2] == earlier
    assert session.usage() == ModelUsage(60, 30)


async def test_a_tool_refused_by_before_tool_in_a_session_turn() -> None:
    @tool
    def remove(path: str) -> str:
        """Remove a file."""
        return "removed"

    call = ToolCall(id="t1", name="remove", arguments={"path": "x"})
    member = ScriptedModel([ScriptStep("first"), ScriptStep(tool_calls=[call]), ScriptStep("ok")])
    team = agency(
        agents={"ops": {"model": member, "tools": [remove]}},
        hitl={"approvals": {"before_tool": lambda request: ApprovalDecision(False, "no")}},
    )
    session = team.session("s")
    await session.send("a")
    result = await session.send("b")
    refused = member.requests[2].messages[-1].tool_result
    assert refused is not None
    assert refused.output == "Tool call 'remove' was not approved: no"
    assert result.text == "ok"


async def test_a_stream_stopped_early_cancels_the_call_and_its_result_is_aborted() -> None:
    never = asyncio.Event()
    b = ScriptedModel([ScriptStep(["one ", "two"], wait=never, wait_at=1)])
    team = agency(agents={"a": {"model": model("A")}, "b": {"model": b}})
    stream = team.stream("P")
    texts = stream.text_stream
    assert await anext(texts) == "one "
    await texts.aclose()
    with pytest.raises(GMIError) as caught:
        await stream.result()
    assert caught.value.code is GMIErrorCode.ABORTED
    assert asyncio.all_tasks() == {asyncio.current_task()}


async def test_a_member_built_with_history_false_gets_the_prompt_alone() -> None:
    member = model("A1", "A2")
    team = agency(agents={"a": {"model": member, "history": False}})
    session = team.session("s")
    await session.send("P1")
    assert (await session.send("P2")).text == "A2"
    assert conversation(member.requests[1].messages) == [("user", "P2")]


class RecordingStore(InMemorySessionStore):
    """An in-memory session store that remembers which sessions were written."""

    def __init__(self) -> None:
        super().__init__()
        self.written: set[str] = set()

    def write(self, session_id: str, changes: SessionChanges) -> None:
        self.written.add(session_id)
        super().write(session_id, changes)


async def test_the_throwaway_member_session_leaves_nothing_in_the_members_store() -> None:
    store = RecordingStore()
    member = agent(model=model("A1", "A2"), name="a", store=store)
    team = agency(agents=[member])
    session = team.session("s")
    await session.send("P1")
    await session.send("P2")
    assert len(store.written) == 1
    assert [store.load_messages(opened) for opened in store.written] == [[]]
