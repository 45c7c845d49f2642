"""gmi() agents and their sessions through the public API, on the scripted model (spec: GMIs
from agent() → Construction, Tools and model calls, Sessions, Hooks, Usage, Spend budget,
Closing)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from agentos.api.agent_hooks import SKIP_TOOL, HookWarning
from agentos.api.gmi_agent import create_gmi, gmi
from agentos.api.warnings import UnappliedOptionsWarning
from agentos.core.errors import GMIError
from agentos.core.messages import Message, Role, ToolCall
from agentos.storage.ledger import InMemoryUsageLedger
from agentos.storage.session_store import SQLiteSessionStore
from agentos.storage.unfinished_turns import is_partial
from agentos.testing import ScriptedModel, ScriptStep
from fakes.tools import add


def texts(messages: Sequence[Message]) -> list[tuple[str, str]]:
    return [(m.role.value, m.text) for m in messages]


# -- construction --------------------------------------------------------------------------------


def test_construction_refuses_what_the_gmi_path_does_not_run_and_warns_once() -> None:
    with pytest.raises(GMIError) as caught:
        gmi(model=ScriptedModel([]), voice={"provider": "x"})
    assert caught.value.details["option"] == "voice"
    gmi(model=ScriptedModel([]), voice={"enabled": False})  # counts as unset
    with pytest.warns(UnappliedOptionsWarning) as record:
        gmi(model=ScriptedModel([]), rag={"enabled": True}, guardrails=["pii"])
    assert len(record) == 1
    assert "rag, guardrails" in str(record[0].message) or "guardrails, rag" in str(
        record[0].message
    )
    assert create_gmi is gmi


async def test_the_build_happens_on_first_use_and_a_failed_build_is_not_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    agent = gmi(provider="anthropic", instructions="Be brief.")  # no key yet: no error
    session = agent.session("s1")
    with pytest.raises(GMIError, match="ANTHROPIC_API_KEY"):
        await session.send("hi")
    assert await session.messages() == []  # the failed build left nothing behind


# -- sessions ------------------------------------------------------------------------------------


async def test_the_store_is_the_source_of_truth_for_each_turn() -> None:
    model = ScriptedModel(["one", "two"])
    session = gmi(model=model, instructions="Tutor.").session("s1")
    await session.send("first")
    await session.reseed([Message.user("rewritten"), Message.assistant("earlier answer")])
    await session.send("second")
    assert texts(model.requests[1].messages)[1:] == [
        ("user", "rewritten"),
        ("assistant", "earlier answer"),
        ("user", "second"),
    ]
    assert texts(await session.messages()) == [
        ("user", "rewritten"),
        ("assistant", "earlier answer"),
        ("user", "second"),
        ("assistant", "two"),
    ]
    events = session.drain_history_events()
    assert [e.kind.value for e in events] == ["reseeded"]
    assert session.drain_history_events() == []


async def test_each_finished_step_is_stored_and_a_failure_keeps_them_marked_partial() -> None:
    model = ScriptedModel(
        [
            ScriptStep(tool_calls=[ToolCall("c1", "add", {"a": 2, "b": 3})]),
            ScriptStep.fail(500, "server down", after_text="The sum"),
            "fine",
        ]
    )
    session = gmi(model=model, tools=[add], fallback_providers=[]).session("s1")
    with pytest.raises(GMIError) as caught:
        await session.send("what is 2+3?")
    assert caught.value.code == "LLM_PROVIDER_ERROR"
    stored = await session.messages()
    assert [m.role for m in stored] == [Role.USER, Role.ASSISTANT, Role.TOOL]
    assert is_partial(stored[-1])
    await session.send("again")
    sent = model.requests[-1].messages
    assert all(m.role is not Role.TOOL for m in sent)  # the partial round is never sent
    assert texts(sent)[-1] == ("user", "again")


async def test_a_turn_that_fails_before_any_step_keeps_nothing() -> None:
    session = gmi(model=ScriptedModel([ScriptStep.fail(400, "bad request")])).session("s1")
    with pytest.raises(GMIError):
        await session.send("hello")
    assert await session.messages() == []


async def test_one_turn_at_a_time_per_session() -> None:
    model = ScriptedModel(["first answer", "second answer"])
    session = gmi(model=model).session("s1")
    await asyncio.gather(session.send("one"), session.send("two"))
    assert texts(model.requests[1].messages)[-3:] == [
        ("user", "one"),
        ("assistant", "first answer"),
        ("user", "two"),
    ]


async def test_a_consumer_that_stops_reading_stops_the_turn() -> None:
    gate = asyncio.Event()
    model = ScriptedModel(
        [
            ScriptStep(tool_calls=[ToolCall("c1", "add", {"a": 1, "b": 1})]),
            ScriptStep(text=["a ", "b"], wait=gate, wait_at=1),
        ]
    )
    session = gmi(model=model, tools=[add]).session("s1")
    stream = session.stream("count")
    seen = []
    async for delta in stream.text_stream:
        seen.append(delta)
        break
    with pytest.raises(GMIError) as caught:
        await stream.text
    assert caught.value.code == "SYS_ABORTED"
    stored = await session.messages()
    assert [m.role for m in stored] == [Role.USER, Role.ASSISTANT, Role.TOOL]
    assert is_partial(stored[-1])


async def test_history_false_keeps_nothing_and_reseed_raises() -> None:
    session = gmi(model=ScriptedModel(["a"]), history=False).session("s1")
    await session.send("hi")
    assert await session.messages() == []
    with pytest.raises(GMIError, match="history=False"):
        await session.reseed([])


async def test_user_id_is_sent_and_reopening_with_another_user_raises() -> None:
    model = ScriptedModel(["a", "b"])
    agent = gmi(model=model)
    session = agent.session("s1", user_id="student-7f3a")
    await session.send("hi")
    assert model.requests[0].options.user_id == "student-7f3a"
    with pytest.raises(GMIError, match="student-7f3a"):
        agent.session("s1", user_id="someone-else")
    assert agent.session("s1") is session
    await agent.session("s2").send("no user")
    assert model.requests[1].options.user_id is None


async def test_close_ends_the_session_and_the_id_starts_empty_again() -> None:
    agent = gmi(model=ScriptedModel(["a", "b"]))
    session = agent.session("s1")
    await session.send("hi")
    await session.close()
    with pytest.raises(GMIError, match="closed"):
        session.stream("again")
    again = agent.session("s1")
    assert again is not session
    assert await again.messages() == []
    await agent.close()  # every session closed; the agent stays usable
    assert again.closed
    fresh = agent.session("s1")
    assert await fresh.messages() == []
    assert fresh.scope_id == "s1"  # a new memory: the id's next opening is its first


# -- tools, chain of thought, hooks ---------------------------------------------------------------


async def test_chain_of_thought_goes_first_when_tools_are_offered() -> None:
    model = ScriptedModel(["x", "y"])
    await gmi(model=model, tools=[add], instructions="Calc.").session("s").send("2+2?")
    assert model.requests[0].messages[0].role is Role.SYSTEM
    assert model.requests[0].messages[0].text.startswith("Before you act")
    await gmi(model=model, instructions="Calc.").session("s").send("2+2?")
    assert model.requests[1].messages[0].text == "Calc."


async def test_hooks_replace_the_prompt_the_text_and_the_tool_call() -> None:
    def before(ctx: Any) -> list[Message]:
        return [Message.system("Replaced."), Message.user(ctx.prompt.upper())]

    def after(ctx: Any) -> str | None:
        return ctx.text.replace("secret", "[redacted]") if ctx.text else None

    def vet(ctx: Any) -> Any:
        if ctx.args.get("a") == 0:
            return SKIP_TOOL
        return {"a": ctx.args["a"], "b": 100}

    model = ScriptedModel(
        [
            ScriptStep(
                tool_calls=[
                    ToolCall("c1", "add", {"a": 0, "b": 1}),
                    ToolCall("c2", "add", {"a": 1, "b": 1}),
                ]
            ),
            "the secret sum",
        ]
    )
    agent = gmi(
        model=model,
        tools=[add],
        on_before_generation=before,
        on_after_generation=after,
        on_before_tool_execution=vet,
    )
    session = agent.session("s1")
    result = await session.send("add things")
    assert texts(model.requests[0].messages) == [("system", "Replaced."), ("user", "ADD THINGS")]
    assert result.text == "the [redacted] sum"
    assert [r.is_error for r in result.tool_results] == [True, False]
    assert result.tool_results[1].output == 101
    stored = await session.messages()
    assert stored[0].text == "add things"  # the hook's messages did not enter the history
    assert stored[-1].text == "the [redacted] sum"


async def test_a_hook_that_raises_is_warned_about_and_ignored() -> None:
    def boom(ctx: Any) -> None:
        raise RuntimeError("hook bug")

    agent = gmi(model=ScriptedModel(["fine"]), on_after_generation=boom)
    with pytest.warns(HookWarning, match="on_after_generation"):
        result = await agent.session("s").send("hi")
    assert result.text == "fine"


# -- usage and budget ----------------------------------------------------------------------------


async def test_usage_per_session_and_agent_and_one_ledger_row_per_step() -> None:
    from agentos.core.usage import ModelUsage

    u = ModelUsage(prompt_tokens=10, completion_tokens=2)
    ledger = InMemoryUsageLedger()
    model = ScriptedModel(
        [
            ScriptStep(tool_calls=[ToolCall("c", "add", {"a": 1, "b": 2})], usage=u),
            ScriptStep(text="3", usage=u),
            ScriptStep(text="ok", usage=u),
        ]
    )
    agent = gmi(model=model, tools=[add], usage_ledger=ledger)
    await agent.session("s1").send("1+2")
    await agent.session("s2").send("hi")
    assert agent.usage("s1").total_tokens == 24
    assert agent.usage("s2").total_tokens == 12
    assert agent.usage().total_tokens == 36
    rows = await ledger.rows()
    assert [(r.session_id, r.total_tokens) for r in rows] == [("s1", 12), ("s1", 12), ("s2", 12)]


async def test_a_refused_step_ends_the_turn_with_llm_provider_error() -> None:
    seen: list[str] = []
    model = ScriptedModel(["never sent"])
    agent = gmi(
        model=model,
        budget={"max_total_tokens": 1, "on_limit_reached": lambda i: seen.append(i.call)},
    )
    with pytest.raises(GMIError) as caught:
        await agent.session("s").send("hello there")
    assert caught.value.code == "LLM_PROVIDER_ERROR"
    assert seen == ["gmi.step"]
    assert model.requests == []


# -- durable sessions ----------------------------------------------------------------------------


async def test_a_sqlite_session_resumes_in_another_process(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    store = SQLiteSessionStore(path=path)
    agent = gmi(model=ScriptedModel(["Nice to meet you, Ada.", "Noted."]), store=store)
    await agent.session("chat-1", user_id="ada").send("My name is Ada.")
    await agent.session("chat-2", user_id="ada").send("Something else.")
    await agent.session("chat-2").close()  # closed: its next opening starts empty
    store.close()  # the process "exits" without closing chat-1: it stays resumable
    script = f"""
import asyncio, json
from agentos.api.gmi_agent import gmi
from agentos.storage.session_store import SQLiteSessionStore
from agentos.testing import ScriptedModel
async def main():
    model = ScriptedModel(["You are Ada.", "New start."])
    agent = gmi(model=model, store=SQLiteSessionStore(path={str(path)!r}))
    await agent.session("chat-1").send("What is my name?")
    await agent.session("chat-2").send("Anything?")
    print(json.dumps([[m.text for m in r.messages] for r in model.requests]))
asyncio.run(main())
"""
    done = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    resumed, fresh = json.loads(done.stdout)
    assert resumed[-3:] == ["My name is Ada.", "Nice to meet you, Ada.", "What is my name?"]
    assert fresh == ["Anything?"]
