"""More of the spec's session rules on gmi() (GMIs from agent() → Sessions, Usage, Spend
budget, Closing), each test named after the sentence it pins."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agentos.api.abort import AbortSignal
from agentos.api.gmi_agent import gmi
from agentos.api.results import ErrorPart, FinishPart
from agentos.core.errors import ContextWindowExceededError, GMIError
from agentos.core.messages import Message, Role, ToolCall
from agentos.core.usage import ModelUsage
from agentos.llm.budget import SpendBudget
from agentos.storage.ledger import InMemoryUsageLedger
from agentos.storage.unfinished_turns import is_partial
from agentos.testing import ScriptedModel, ScriptStep
from agentos.tools.tool import Tool
from fakes.tools import add


def known(script: list[str]) -> ScriptedModel:
    """A scripted model the catalog knows: gpt-4o-mini, a 128,000-token window."""
    return ScriptedModel(script, provider_id="openai", model_id="gpt-4o-mini")


async def test_the_35_percent_budget_sends_the_newest_history_and_messages_lists_all() -> None:
    model = known(["ok"])
    session = gmi(model=model, history={"max_tokens": 1_000_000}).session("s")
    old = [
        message
        for i in range(12)
        for message in (Message.user(f"q{i} " + "x" * 20_000), Message.assistant(f"a{i}"))
    ]
    await session.reseed(old)  # about 60,000 tokens of history
    await session.send("the question")
    sent = model.requests[0].messages
    sent_tokens = sum(len(m.text) for m in sent) / 4
    assert sent_tokens <= 0.35 * 128_000 + 100
    assert sent[-1].text == "the question"  # the turn's own messages stay whole
    assert sent[-2].text == "a11"  # the newest earlier messages are kept, the oldest dropped
    assert len(await session.messages()) == 26  # the store keeps what the request left out


async def test_a_first_request_that_cannot_fit_a_known_window_raises_before_any_call() -> None:
    model = known(["never"])
    session = gmi(model=model).session("s")
    with pytest.raises(ContextWindowExceededError):
        await session.send("x" * 600_000)
    assert model.requests == []


async def test_history_max_tokens_bounds_the_store() -> None:
    model = ScriptedModel(lambda messages, tools, options: "short answer")
    session = gmi(model=model, history={"max_tokens": 1_000}).session("s")
    for i in range(12):
        await session.send(f"message {i} " + "y" * 400)
    kept = await session.messages()
    assert len(kept) < 24
    assert kept[-1].text == "short answer"
    assert [e.kind.value for e in session.drain_history_events()].count("evicted") >= 1


@pytest.mark.parametrize(
    ("action", "left"), [("clear", []), ("reseed", ["earlier", "seeded"])], ids=["clear", "reseed"]
)
async def test_a_clear_or_reseed_during_a_turn_discards_that_turns_writes(
    action: str, left: list[str]
) -> None:
    gate = asyncio.Event()
    model = ScriptedModel([ScriptStep(text="late", wait=gate)])
    session = gmi(model=model).session("s")
    turn = asyncio.create_task(session.send("hello"))
    while not model.requests:  # noqa: ASYNC110 - waiting for the scripted model's first call
        await asyncio.sleep(0)
    if action == "clear":
        await session.clear()
    else:
        await session.reseed([Message.user("earlier"), Message.assistant("seeded")])
    gate.set()
    await turn
    assert [m.text for m in await session.messages()] == left


async def test_stream_settles_after_the_store_is_written() -> None:
    model = ScriptedModel(["first", "second"])
    session = gmi(model=model).session("s")
    stream = session.stream("one")
    assert await stream.text == "first"
    assert [m.text for m in await session.messages()] == ["one", "first"]
    await session.send("two")
    assert [m.text for m in model.requests[1].messages][-3:] == ["one", "first", "two"]


async def test_a_failed_stream_ends_with_an_error_part_and_the_error_finish() -> None:
    session = gmi(model=ScriptedModel([ScriptStep.fail(400, "bad")])).session("s")
    parts = [part async for part in session.stream("x").full_stream]
    assert isinstance(parts[-2], ErrorPart)
    assert parts[-2].error.code == "LLM_PROVIDER_ERROR"  # type: ignore[attr-defined]
    assert isinstance(parts[-1], FinishPart)
    assert parts[-1].finish_reason == "error"


async def test_a_billed_failed_attempt_gets_its_ledger_row_and_counts_in_usage() -> None:
    ledger = InMemoryUsageLedger()
    billed = ModelUsage(prompt_tokens=7)
    model = ScriptedModel([ScriptStep.fail(400, "refused", usage=billed)])
    agent = gmi(model=model, usage_ledger=ledger)
    with pytest.raises(GMIError):
        await agent.session("s").send("x")
    [row] = await ledger.rows()
    assert (row.prompt_tokens, row.finish_reason) == (7, "error")
    assert agent.usage("s").total_tokens == 7  # what the ledger holds for the session


async def test_the_budget_records_each_finished_step() -> None:
    u = ModelUsage(prompt_tokens=10, completion_tokens=2)
    model = ScriptedModel(
        [
            ScriptStep(tool_calls=[ToolCall("c", "add", {"a": 1, "b": 2})], usage=u),
            ScriptStep(text="3", usage=u),
        ]
    )
    budget = SpendBudget(max_total_tokens=100_000)
    agent = gmi(model=model, tools=[add], budget=budget)
    session = agent.session("s")
    await session.send("1+2")
    assert budget.spent_tokens == 24
    session.record_external_cost(0.0, tokens=6)
    assert budget.spent_tokens == 30


async def test_close_stops_a_running_turn_and_keeps_its_steps_marked_partial() -> None:
    gate = asyncio.Event()
    model = ScriptedModel(
        [
            ScriptStep(tool_calls=[ToolCall("c", "add", {"a": 1, "b": 1})]),
            ScriptStep(text="x", wait=gate),
        ]
    )
    session = gmi(model=model, tools=[add]).session("s")
    turn = asyncio.create_task(session.send("count"))
    while len(model.requests) < 2:  # noqa: ASYNC110 - waiting for the second model call
        await asyncio.sleep(0)
    await session.close()
    with pytest.raises(GMIError) as caught:
        await turn
    assert caught.value.code == "SYS_ABORTED"
    stored = await session.messages()
    assert [m.role for m in stored] == [Role.USER, Role.ASSISTANT, Role.TOOL]
    assert is_partial(stored[-1])


async def test_a_metaprompt_call_stays_out_of_the_ledger_and_the_turns_usage() -> None:
    import json
    from collections.abc import Sequence

    from agentos.core.messages import Message as M
    from agentos.llm.model import CompletionOptions, ToolDefinition

    def script(
        messages: Sequence[M], tools: Sequence[ToolDefinition], options: CompletionOptions
    ) -> ScriptStep:
        if options.json_mode:  # the frustration-recovery metaprompt
            reply = {"adjustmentRationale": "calm", "recoveryStrategy": "s"}
            return ScriptStep(text=[json.dumps(reply)], usage=ModelUsage(prompt_tokens=500))
        return ScriptStep(text="Sorry to hear that.", usage=ModelUsage(prompt_tokens=10))

    ledger = InMemoryUsageLedger()
    model = ScriptedModel(script)
    agent = gmi(model=model, cognition="full", usage_ledger=ledger, memory=False)
    session = agent.session("s")
    result = await session.send("This is terrible, awful and wrong!")
    assert session.gmi is not None
    await session.gmi.wait_for_metaprompts()
    assert any(r.options.json_mode for r in model.requests)  # the metaprompt ran
    assert [row.prompt_tokens for row in await ledger.rows()] == [10]
    assert result.usage.prompt_tokens == 10


async def test_with_a_durable_ledger_usage_reads_what_earlier_processes_wrote(
    tmp_path: Path,
) -> None:
    from agentos.storage.ledger import SQLiteUsageLedger

    path = tmp_path / "ledger.db"
    u = ModelUsage(prompt_tokens=10, completion_tokens=2)
    first = SQLiteUsageLedger(path=path)
    await (
        gmi(model=ScriptedModel([ScriptStep(text="a", usage=u)]), usage_ledger=first)
        .session("s")
        .send("one")
    )
    first.close()
    second = SQLiteUsageLedger(path=path)
    agent = gmi(model=ScriptedModel([ScriptStep(text="b", usage=u)]), usage_ledger=second)
    await agent.session("s").send("two")
    assert agent.usage("s").total_tokens == 24  # the earlier process's row and this one's
    assert (await second.totals("s")).total_tokens == 24
    second.close()


async def test_an_abort_signal_ends_a_sessions_stream_with_an_error_part() -> None:
    gate = asyncio.Event()
    model = ScriptedModel([ScriptStep(text="never", wait=gate), "next"])
    session = gmi(model=model).session("s")
    signal = AbortSignal()

    async def abort_once_called() -> None:
        while not model.requests:  # noqa: ASYNC110 - waiting for the scripted model's call
            await asyncio.sleep(0)
        signal.abort(TimeoutError("user left"))

    aborter = asyncio.create_task(abort_once_called())
    parts = [part async for part in session.stream("hello", abort_signal=signal).full_stream]
    await aborter
    assert isinstance(parts[-2], ErrorPart)
    assert isinstance(parts[-2].error, TimeoutError)
    assert isinstance(parts[-1], FinishPart)
    assert parts[-1].finish_reason == "error"
    assert (await session.send("again")).text == "next"  # the session stays open


async def test_an_abort_signal_stops_generate_and_agent_stream() -> None:
    gate = asyncio.Event()
    model = ScriptedModel([ScriptStep(text="never", wait=gate)] * 2)
    agent = gmi(model=model)
    signal = AbortSignal()
    call = asyncio.create_task(agent.generate("hello", abort_signal=signal))
    while not model.requests:  # noqa: ASYNC110 - waiting for the scripted model's first call
        await asyncio.sleep(0)
    signal.abort(TimeoutError("user left"))
    with pytest.raises(TimeoutError, match="user left"):
        await call
    already = AbortSignal()
    already.abort("too late")
    parts = [part async for part in agent.stream("hello", abort_signal=already).full_stream]
    assert isinstance(parts[-2], ErrorPart)
    assert "too late" in str(parts[-2].error)
    assert len(model.requests) == 1  # the already-aborted call started no turn


async def test_agent_close_does_not_shut_down_the_agents_tools() -> None:
    class Calculator:
        def __init__(self) -> None:
            self.shut = False

        def add(self, a: int, b: int) -> int:
            """Add two numbers."""
            return a + b

        async def aclose(self) -> None:
            self.shut = True

        def shutdown(self) -> None:
            self.shut = True

        close = shutdown

    calculator = Calculator()
    adder = Tool.from_function(calculator.add)
    model = ScriptedModel(
        [
            ScriptStep(tool_calls=[ToolCall("c1", "add", {"a": 1, "b": 1})]),
            "2",
            ScriptStep(tool_calls=[ToolCall("c2", "add", {"a": 2, "b": 2})]),
            "4",
        ]
    )
    agent = gmi(model=model, tools=[adder])
    await agent.session("s").send("1+1")
    await agent.close()
    assert not calculator.shut
    result = await agent.session("s").send("2+2")  # a session opened afterwards runs the tool
    assert [r.output for r in result.tool_results] == [4]
    await agent.close()
