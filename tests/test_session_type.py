"""One session type over two engines (issue 12, item 3), through the public API.

`agent()` returns an `Agent`; a plain agent and a `gmi()` agent both hand out `AgentSession`, so
code written against the `Session` protocol runs on either. A GMI's turn tells its ``record``
sink of each message it adds after its input, in order, and a session stores exactly those:
each once, in the order the turn added them (no reading back from the GMI's history).
"""

from __future__ import annotations

from typing import Literal

import pytest

from agentos import (
    Agent,
    AgentSession,
    GmiAgent,
    Message,
    PlainAgent,
    Role,
    Session,
    SpendBudget,
    ToolCall,
    agent,
    gmi,
)
from agentos.storage.session_store import InMemorySessionStore, SessionChanges
from agentos.testing import ScriptedModel, ScriptStep
from agentos.tools import ToolOrchestrator
from agentos.tools.tool import tool
from fakes.gmi_helpers import make_gmi, turn


@tool(name="double")
def double(x: int) -> int:
    """Twice ``x``."""
    return 2 * x


def _tool_then_text() -> list[ScriptStep | str]:
    return [ScriptStep(tool_calls=[ToolCall("c1", "double", {"x": 21})]), "It is 42."]


def _said(message: Message) -> str:
    result = message.tool_result
    return str(result.output) if result is not None else message.text


def _roles(messages: list[Message]) -> list[tuple[str, str]]:
    return [(m.role.value, _said(m)) for m in messages]


async def _converse(session: Session) -> list[tuple[str, str]]:
    """What a user writes against the protocol: two turns, then the history."""
    first = await session.send("What is double 21?")
    assert first.text == "It is 42."
    assert [r.output for r in first.tool_results] == [42]
    await session.send("Thanks.")
    return _roles(await session.messages())


@pytest.mark.parametrize("runtime", ["legacy", "gmi"])
async def test_code_written_against_session_runs_on_both_engines(
    runtime: Literal["legacy", "gmi"],
) -> None:
    model = ScriptedModel([*_tool_then_text(), "You are welcome."])
    built: Agent = agent(runtime=runtime, model=model, tools=[double])
    assert isinstance(built, GmiAgent if runtime == "gmi" else PlainAgent)
    session = built.session("s1", user_id="u1")
    assert type(session) is AgentSession
    assert (session.id, session.user_id, session.closed) == ("s1", "u1", False)
    assert await _converse(session) == [
        ("user", "What is double 21?"),
        ("assistant", ""),
        ("tool", "42"),
        ("assistant", "It is 42."),
        ("user", "Thanks."),
        ("assistant", "You are welcome."),
    ]
    assert built.usage("s1") == session.usage()
    assert session.usage().total_tokens > 0
    await built.close()
    assert session.closed


async def test_a_session_without_an_id_gets_a_new_one_on_both_engines() -> None:
    for built in (agent(model=ScriptedModel([])), gmi(model=ScriptedModel([]))):
        first, second = built.session(), built.session()
        assert first.id != second.id
        assert len(first.id) == 32


async def test_the_gmi_property_is_the_engines() -> None:
    plain = agent(model=ScriptedModel(["Hi."])).session("s")
    assert isinstance(plain, AgentSession)
    await plain.send("hi")
    assert plain.gmi is None  # a plain agent has no GMI
    session = gmi(model=ScriptedModel(["Hi."]), cognition="light").session("s")
    assert session.gmi is None  # built on the first turn
    await session.send("hi")
    assert session.gmi is not None
    assert _roles(session.gmi.history.messages()) == [("user", "hi"), ("assistant", "Hi.")]


async def test_record_external_cost_charges_the_agents_budget_on_both_engines() -> None:
    runtimes: tuple[Literal["legacy", "gmi"], ...] = ("legacy", "gmi")
    for runtime in runtimes:
        budget = SpendBudget(max_cost_usd=1.0)
        built = agent(runtime=runtime, model=ScriptedModel([]), budget=budget)
        built.session("s").record_external_cost(0.25, tokens=10)
        assert budget.spent_usd == pytest.approx(0.25), runtime


async def test_a_gmi_turn_records_each_message_it_adds_after_its_input_in_order() -> None:
    recorded: list[Message] = []
    engine_gmi = await make_gmi(ScriptedModel(_tool_then_text()), tool_orchestrator=_orchestrator())
    stream = engine_gmi.process_turn_stream(turn("What is double 21?"), record=recorded.append)
    async for _ in stream:
        pass
    await stream.output()
    # The input is the caller's own; the rest is exactly what the turn added to the history.
    history = engine_gmi.history.messages()
    assert history[0].role is Role.USER
    assert recorded == history[1:]
    assert _roles(recorded) == [("assistant", ""), ("tool", "42"), ("assistant", "It is 42.")]
    assert all(a is b for a, b in zip(recorded, history[1:], strict=True))


def _orchestrator() -> ToolOrchestrator:
    return ToolOrchestrator([double])


class _CountingStore(InMemorySessionStore):
    """Keeps every write the store is handed."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[SessionChanges] = []

    def write(self, session_id: str, changes: SessionChanges) -> None:
        self.writes.append(changes)
        super().write(session_id, changes)


async def test_a_gmi_session_stores_each_message_once_in_turn_order() -> None:
    store = _CountingStore()
    built = gmi(model=ScriptedModel(_tool_then_text()), tools=[double], store=store)
    session = built.session("s1")
    result = await session.send("What is double 21?", block_label="b1")
    stored = await session.messages()
    assert _roles(stored) == [
        ("user", "What is double 21?"),
        ("assistant", ""),
        ("tool", "42"),
        ("assistant", "It is 42."),
    ]
    assert {m.metadata.get("block_label") for m in stored} == {"b1"}
    assert result.response_messages == stored[1:]
    # Written once: each message appended by exactly one write, none rewritten, in turn order.
    appended = [stored for changes in store.writes for stored in changes.append]
    assert [stored.message for stored in appended] == stored
    assert [stored.position for stored in appended] == sorted(
        stored.position for stored in appended
    )
    assert not any(changes.replace or changes.reset is not None for changes in store.writes)
