"""The GMI's history window and reasoning-trace length, pinned through the GMI's own turns.

Spec, Conversation history: a turn records its input, then trims the history to the newest 20
messages, or to the persona's ``conversation_context_config.max_messages``; a cut that falls
inside a tool round also removes that round's remaining tool results. Spec, What a GMI adds: the
reasoning trace keeps the last N entries, 500 by default, the persona's
``reasoning_trace_config.max_entries``, or the runtime's default (``GMIConfig``).

Each test runs real turns on a `ScriptedModel` and asserts exactly what the model received and
how long the trace is, so a changed default or an ignored persona setting fails here.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentos import gmi as gmi_agent
from agentos.core.messages import Message, Role, ToolCall
from agentos.substrate import GMI, ReasoningEntryType
from agentos.testing import ScriptedModel, ScriptStep
from agentos.tools import ToolOrchestrator
from agentos.tools.tool import tool
from fakes.gmi_helpers import make_gmi, persona, run, turn

SYSTEM = "You are P."


@tool
def lookup(q: str) -> str:
    """Look something up.

    Args:
        q: the query
    """
    return f"found {q}"


def label(message: Message) -> str:
    """A message as a short label: its text, ``calls:<ids>`` or ``result:<id>``."""
    if message.tool_result is not None:
        return f"result:{message.tool_result.tool_call_id}"
    if message.tool_calls:
        return "calls:" + ",".join(call.id for call in message.tool_calls)
    return message.text


def sent(model: ScriptedModel, call: int) -> list[str]:
    """The labels of request ``call`` (0-based), its system prompt first."""
    return [label(m) for m in model.requests[call].messages]


def chat(turns: int) -> list[str]:
    """``u1, r1, u2, r2, ...``: what ``turns`` plain text turns leave in the history."""
    return [text for n in range(1, turns + 1) for text in (f"u{n}", f"r{n}")]


async def text_turns(gmi: GMI, first: int, last: int) -> None:
    for n in range(first, last + 1):
        _, output = await run(gmi, turn(f"u{n}", turn_id=f"t{n}"))
        assert output.error is None


# -- the history window ---------------------------------------------------------------------------


async def test_the_default_window_keeps_20_and_drops_the_21st_message_back() -> None:
    model = ScriptedModel([f"r{n}" for n in range(1, 12)])
    gmi = await make_gmi(model)
    await text_turns(gmi, 1, 11)
    # Turn 10 records its input as the 19th message: nothing is cut.
    assert sent(model, 9) == [SYSTEM, *chat(9), "u10"]
    # Turn 11's input is the 21st message: the oldest, u1, goes; 20 remain.
    assert sent(model, 10) == [SYSTEM, *chat(10)[1:], "u11"]
    assert len(model.requests[10].messages) == 1 + 20
    assert [label(m) for m in gmi.history.messages()] == [*chat(11)[1:]]


@pytest.mark.parametrize("window", [1, 5, 12])
async def test_the_personas_max_messages_is_the_window(window: int) -> None:
    turns = 8  # 15 messages when the 8th input is recorded: over every window tried
    model = ScriptedModel([f"r{n}" for n in range(1, turns + 1)])
    chosen = persona(conversation_context_config={"max_messages": window})
    gmi = await make_gmi(model, persona=chosen)
    await text_turns(gmi, 1, turns)
    recorded = [*chat(turns - 1), f"u{turns}"]
    assert sent(model, turns - 1) == [SYSTEM, *recorded[-window:]]


async def test_the_memory_configs_conversation_window_applies_when_the_persona_sets_none() -> None:
    model = ScriptedModel([f"r{n}" for n in range(1, 5)])
    chosen = persona(memory_config={"conversation_context": {"max_messages": 3}})
    gmi = await make_gmi(model, persona=chosen)
    await text_turns(gmi, 1, 4)
    assert sent(model, 3) == [SYSTEM, "u3", "r3", "u4"]


async def test_a_window_above_20_keeps_more_than_the_default() -> None:
    model = ScriptedModel([f"r{n}" for n in range(1, 13)])
    gmi = await make_gmi(model, persona=persona(conversation_context_config={"max_messages": 22}))
    await text_turns(gmi, 1, 12)
    # 23 messages recorded: only u1 goes.
    assert sent(model, 11) == [SYSTEM, *chat(11)[1:], "u12"]


def tool_round_script(turns: int) -> list[ScriptStep | str]:
    """Turn 1 calls ``lookup`` twice in one round then answers r1; later turns answer r<n>."""
    calls = [ToolCall("c1", "lookup", {"q": "a"}), ToolCall("c2", "lookup", {"q": "b"})]
    return [ScriptStep(tool_calls=calls), "r1", *[f"r{n}" for n in range(2, turns + 1)]]


ROUND = ["u1", "calls:c1,c2", "result:c1", "result:c2", "r1"]
"""Turn 1 in the history: its input, the call round, both results and the answer."""


@pytest.mark.parametrize(
    ("window", "kept_of_turn_1"),
    [
        (21, ROUND[1:]),  # the cut takes u1 only: the round stays whole
        (20, ["r1"]),  # the cut takes the calling message: both results go with it
        (19, ["r1"]),  # the cut takes the call and one result: the other result goes too
    ],
    ids=["cut-before-the-round", "cut-at-the-call", "cut-inside-the-results"],
)
async def test_a_cut_inside_a_tool_round_removes_the_rounds_remaining_results(
    window: int, kept_of_turn_1: list[str]
) -> None:
    # Turn 10 records its input as the 22nd message (5 of turn 1, 2 for each of turns 2-9, u10).
    model = ScriptedModel(tool_round_script(10))
    options: dict[str, Any] = {"tool_orchestrator": ToolOrchestrator([lookup])}
    if window != 20:
        options["persona"] = persona(conversation_context_config={"max_messages": window})
    gmi = await make_gmi(model, **options)
    await text_turns(gmi, 1, 9)
    if window == 19:
        # Turn 9's input was the 20th message: u1 went already, the round stayed whole.
        assert sent(model, 9)[1:5] == ["calls:c1,c2", "result:c1", "result:c2", "r1"]
    else:
        assert sent(model, 9)[1:6] == ROUND
    await text_turns(gmi, 10, 10)
    later = [*chat(9)[2:], "u10"]  # u2 .. r9, then u10
    assert sent(model, 10) == [SYSTEM, *kept_of_turn_1, *later]
    history = [label(m) for m in gmi.history.messages()]
    assert history == [*kept_of_turn_1, *later, "r10"]


async def test_a_gmi_agent_session_sends_at_most_the_default_window() -> None:
    model = ScriptedModel([f"r{n}" for n in range(1, 12)])
    session = gmi_agent(model=model).session("s1")
    for n in range(1, 12):
        reply = await session.send(f"u{n}")
        assert reply.text == f"r{n}"
    request = [label(m) for m in model.requests[10].messages if m.role is not Role.SYSTEM]
    assert request == [*chat(10)[1:], "u11"]  # the store keeps all 22; the request 20
    assert len(await session.messages()) == 22


# -- the reasoning trace ---------------------------------------------------------------------------


ENTRIES_PER_TURN = 3
"""A text turn's entries: INTERACTION_START, LLM_CALL_COMPLETE, INTERACTION_END."""


async def trace_after(turns: int, **config: Any) -> GMI:
    """A GMI (initialization: one LIFECYCLE entry) after ``turns`` text turns ``t0``, ``t1``..."""
    gmi = await make_gmi(ScriptedModel(["ok"] * turns), **config)
    for n in range(turns):
        await run(gmi, turn(f"u{n}", turn_id=f"t{n}"))
    return gmi


async def test_the_trace_keeps_every_entry_below_500() -> None:
    gmi = await trace_after(3)
    entries = gmi.trace.entries()
    assert len(entries) == 1 + 3 * ENTRIES_PER_TURN
    assert [(e.type, e.turn_id) for e in entries[:4]] == [
        (ReasoningEntryType.LIFECYCLE, None),
        (ReasoningEntryType.INTERACTION_START, "t0"),
        (ReasoningEntryType.LLM_CALL_COMPLETE, "t0"),
        (ReasoningEntryType.INTERACTION_END, "t0"),
    ]


async def test_the_trace_keeps_the_last_500_entries_by_default() -> None:
    gmi = await trace_after(200)  # 601 entries written
    entries = gmi.trace.entries()
    assert len(gmi.trace) == len(entries) == 500
    # 101 dropped: the LIFECYCLE entry, t0..t32 (99) and t33's INTERACTION_START.
    assert (entries[0].type, entries[0].turn_id) == (ReasoningEntryType.LLM_CALL_COMPLETE, "t33")
    assert (entries[-1].type, entries[-1].turn_id) == (ReasoningEntryType.INTERACTION_END, "t199")


async def test_the_500_boundary_of_the_default_trace() -> None:
    below = await trace_after(166)  # 1 + 498 = 499 entries: all kept
    assert len(below.trace) == 499
    assert below.trace.entries()[0].type is ReasoningEntryType.LIFECYCLE
    above = await trace_after(167)  # 502 written: the two oldest go
    entries = above.trace.entries()
    assert len(entries) == 500
    assert (entries[0].type, entries[0].turn_id) == (ReasoningEntryType.LLM_CALL_COMPLETE, "t0")


@pytest.mark.parametrize("limit", [1, 7, 31])
async def test_the_personas_max_entries_is_the_trace_length(limit: int) -> None:
    chosen = persona(reasoning_trace_config={"max_entries": limit})
    gmi = await trace_after(10, persona=chosen)  # 31 entries written
    entries = gmi.trace.entries()
    assert len(entries) == limit
    assert (entries[-1].type, entries[-1].turn_id) == (ReasoningEntryType.INTERACTION_END, "t9")
    kept_init = limit == 31
    assert (entries[0].type is ReasoningEntryType.LIFECYCLE) is kept_init


async def test_a_persona_max_entries_above_500_keeps_more_than_the_default() -> None:
    chosen = persona(reasoning_trace_config={"max_entries": 600})
    gmi = await trace_after(200, persona=chosen)  # 601 written
    entries = gmi.trace.entries()
    assert len(entries) == 600
    assert (entries[0].type, entries[0].turn_id) == (ReasoningEntryType.INTERACTION_START, "t0")


async def test_the_runtime_default_applies_when_the_persona_sets_none() -> None:
    gmi = await trace_after(10, reasoning_trace_max_entries=9)
    assert len(gmi.trace) == 9


async def test_the_runtime_default_above_500_keeps_more_than_the_default() -> None:
    gmi = await trace_after(200, reasoning_trace_max_entries=550)
    assert len(gmi.trace) == 550


async def test_the_personas_max_entries_wins_over_the_runtime_default() -> None:
    chosen = persona(reasoning_trace_config={"max_entries": 6})
    gmi = await trace_after(10, persona=chosen, reasoning_trace_max_entries=9)
    assert len(gmi.trace) == 6
