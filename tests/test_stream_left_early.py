"""A stream left early is charged (issue 11, item 8; DESIGN §5.19).

The provider bills the tokens it generated whether or not anyone read them. A step whose reader
stops before it finished with a usage report is charged an estimate, marked ``estimated``: the
prompt estimated (characters / 4, rounded up), the completion counted from the deltas that
arrived with the same estimator, never more than the ``max_tokens`` sent. The same figures go to
the budget, the usage ledger, the observer and ``await stream.usage``.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator, Awaitable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentos import GMIError, GMIErrorCode, ModelUsage, SpendBudget, gmi, stream_text
from agentos.core.messages import ToolCall
from agentos.llm import ModelChunk, ModelRequest, TextDelta, UsageChunk
from agentos.llm.metering import set_global_llm_observer
from agentos.storage.ledger import (
    USAGE_LEDGER_MIGRATIONS,
    USAGE_LEDGER_STORE,
    InMemoryUsageLedger,
    SQLiteUsageLedger,
    UsageEvent,
    UsageTotals,
)
from agentos.storage.sqlite import open_database
from agentos.testing import ScriptedModel, ScriptStep
from fakes.priced_model import price, priced_catalog

T = TypeVar("T")


@pytest.fixture(autouse=True)
def _priced_model() -> Iterator[None]:
    with priced_catalog():
        yield


@pytest.fixture
def events() -> Iterator[list[UsageEvent]]:
    received: list[UsageEvent] = []
    previous = set_global_llm_observer(received.append)
    yield received
    set_global_llm_observer(previous)


def priced(prompt: int, completion: int) -> float:
    return price(ModelUsage(prompt, completion))


def held_model(
    *deltas: str, then: list[ScriptStep] | None = None
) -> tuple[ScriptedModel, asyncio.Event]:
    """A model that streams ``deltas``, holding back the second until the event is set."""
    go_on = asyncio.Event()
    script = [ScriptStep(text=list(deltas), wait=go_on, wait_at=1), *(then or [])]
    return ScriptedModel(script, provider_id="acme", model_id="cheap"), go_on


async def soon(awaitable: Awaitable[T]) -> T:
    async with asyncio.timeout(5):
        return await awaitable


# --- stream_text -----------------------------------------------------------------------------


async def test_breaking_out_of_stream_text_charges_the_estimate_everywhere(
    events: list[UsageEvent],
) -> None:
    model, go_on = held_model("Once upon ", "a time, ", "far away.")
    budget = SpendBudget(max_cost_usd=1)
    ledger = InMemoryUsageLedger()
    stream = stream_text(
        "Tell me a story", model=model, budget=budget, usage_ledger=ledger, max_tokens=50
    )
    async for delta in stream.text_stream:
        assert delta == "Once upon "
        break
    go_on.set()

    # "Tell me a story": 15 characters, 4 tokens; "Once upon ": 10 characters, 3 tokens.
    usage = await soon(stream.usage)
    assert usage == ModelUsage(prompt_tokens=4, completion_tokens=3, estimated=True)
    assert (budget.spent_tokens, budget.spent_usd, budget.reserved_tokens) == (7, priced(4, 3), 0)
    [row] = await ledger.rows()
    assert (row.prompt_tokens, row.completion_tokens, row.cost_usd) == (4, 3, priced(4, 3))
    assert (row.estimated, row.finish_reason, row.source) == (True, None, "generate_text")
    assert events == [row]
    # The reply itself was never finished: its text and result stay refused.
    with pytest.raises(GMIError) as caught:
        await soon(stream.text)
    assert caught.value.code is GMIErrorCode.ABORTED


async def test_a_cancelled_reader_charges_the_estimate() -> None:
    model, _ = held_model("Once upon ", "a time.")
    budget = SpendBudget()
    stream = stream_text("Tell me a story", model=model, budget=budget)
    first = asyncio.Event()

    async def read() -> None:
        async for _ in stream.text_stream:
            first.set()

    reader = asyncio.create_task(read())
    await first.wait()
    reader.cancel()  # the reader waits for the held delta: its task is cancelled
    with pytest.raises(asyncio.CancelledError):
        await reader
    assert await soon(stream.usage) == ModelUsage(4, 3, estimated=True)
    assert budget.spent_tokens == 7


async def test_the_estimate_never_passes_the_max_tokens_sent() -> None:
    model, _ = held_model("x" * 400, "never")
    stream = stream_text("Hi", model=model, max_tokens=20)
    async for _ in stream.text_stream:
        break
    assert await soon(stream.usage) == ModelUsage(1, 20, estimated=True)  # not 100


async def test_tool_calls_that_arrived_count_in_the_estimate() -> None:
    call = ToolCall("c1", "lookup", {"key": "abc"})  # "lookup" + '{"key":"abc"}': 19 characters
    go_on = asyncio.Event()
    model = ScriptedModel(
        [ScriptStep(text=["Let me see."], tool_calls=[call], wait=go_on, wait_at=1)],
        provider_id="acme",
        model_id="cheap",
    )
    stream = stream_text("Hi", model=model)
    async for _ in stream.full_stream:
        break  # the first delta "Let me see." (11 characters) arrived
    assert (await soon(stream.usage)).completion_tokens == 3


async def test_a_running_usage_report_raises_the_estimate_to_what_it_says() -> None:
    class ReportsAtTheStart:  # as Anthropic's message_start: the prompt's size, 1 output token
        provider_id = "acme"
        model_id = "cheap"

        async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
            yield UsageChunk(ModelUsage(50, 1, cost_usd=0.5))
            yield TextDelta("abcdefgh")
            await asyncio.Event().wait()  # the rest never comes
            yield TextDelta("never")

    budget = SpendBudget()
    stream = stream_text("Hi", model=ReportsAtTheStart(), budget=budget)
    async for _ in stream.text_stream:
        break
    # The prompt as reported (50, not the estimate's 1); "abcdefgh" is 2 output tokens; the
    # provider's cost was for fewer tokens, so the catalog prices the estimate.
    assert await soon(stream.usage) == ModelUsage(50, 2, estimated=True)
    assert (budget.spent_tokens, budget.spent_usd) == (52, priced(50, 2))


async def test_a_step_that_had_finished_keeps_its_reported_usage() -> None:
    budget = SpendBudget()
    model = ScriptedModel(
        [ScriptStep(text="Hello.", usage=ModelUsage(9, 4))], provider_id="acme", model_id="cheap"
    )
    stream = stream_text("Hi", model=model, budget=budget)
    async for _ in stream.full_stream:
        pass
    assert await stream.usage == ModelUsage(9, 4)
    assert budget.spent_tokens == 13


async def test_earlier_steps_keep_their_reported_usage_and_the_sum_is_estimated() -> None:
    def lookup(key: str) -> str:
        """Look a key up."""
        return key.upper()

    go_on = asyncio.Event()
    model = ScriptedModel(
        [
            ScriptStep(tool_calls=[ToolCall("c1", "lookup", {"key": "a"})], usage=ModelUsage(5, 5)),
            ScriptStep(text=["It is ", "A."], wait=go_on, wait_at=1),
        ],
        provider_id="acme",
        model_id="cheap",
    )
    ledger = InMemoryUsageLedger()
    stream = stream_text("What is a?", model=model, tools=[lookup], usage_ledger=ledger)
    async for delta in stream.text_stream:
        assert delta == "It is "
        break
    usage = await soon(stream.usage)
    second_prompt = (await ledger.rows())[1].prompt_tokens
    assert usage == ModelUsage(5 + second_prompt, 5 + 2, estimated=True)
    assert [row.estimated for row in await ledger.rows()] == [False, True]
    totals = await ledger.totals()
    assert (totals.estimated_calls, totals.usage.estimated) == (1, True)


# --- a gmi() session's stream() --------------------------------------------------------------


async def test_breaking_out_of_a_session_stream_charges_the_estimate() -> None:
    model, go_on = held_model(
        "Once upon ", "a time.", then=[ScriptStep("ok", usage=ModelUsage(10, 2))]
    )
    budget = SpendBudget(max_cost_usd=1)
    ledger = InMemoryUsageLedger()
    agent = gmi(model=model, budget=budget, usage_ledger=ledger)
    session = agent.session("s1")
    stream = session.stream("Tell me a story")
    async for delta in stream.text_stream:
        assert delta == "Once upon "
        break
    go_on.set()

    usage = await soon(stream.usage)
    prompt = 4  # "Tell me a story": the default persona sends no system prompt of its own
    assert usage == ModelUsage(prompt, 3, estimated=True)
    [row] = await ledger.rows()
    assert (row.session_id, row.completion_tokens, row.estimated) == ("s1", 3, True)
    assert budget.spent_tokens == prompt + 3
    assert (session.usage().total_tokens, session.usage().estimated) == (prompt + 3, True)
    # The session goes on: the next turn is charged what its provider reports.
    await session.send("Go on")
    assert budget.spent_tokens == prompt + 3 + 12
    assert session.usage().total_tokens == prompt + 3 + 12
    assert [row.estimated for row in await ledger.rows()] == [True, False]
    await agent.close()


async def test_an_aborted_send_charges_the_estimate() -> None:
    model, _ = held_model("Once upon ", "a time.")
    budget = SpendBudget()
    agent = gmi(model=model, budget=budget)
    signal = asyncio.Event()
    first = asyncio.Event()
    session = agent.session("s1")
    stream = session.stream("Tell me a story", abort_signal=signal)

    async def read() -> None:
        async for _ in stream.text_stream:
            first.set()

    reader = asyncio.create_task(read())
    await first.wait()
    signal.set()  # the held delta never comes: the signal stops the turn
    with pytest.raises(GMIError):
        await soon(reader)
    assert budget.spent_tokens > 3
    assert session.usage().estimated
    assert session.usage().total_tokens == budget.spent_tokens
    await agent.close()


# --- the figures: sums, totals and the SQLite row ----------------------------------------------


def test_a_sum_with_an_estimated_usage_is_estimated() -> None:
    exact, guess = ModelUsage(3, 4), ModelUsage(1, 1, estimated=True)
    assert not (exact + exact).estimated
    assert (exact + guess).estimated
    assert (guess + exact).estimated
    assert ModelUsage.sum([exact, guess, exact]) == ModelUsage(7, 9, cost_usd=None, estimated=True)
    assert not ModelUsage.zero().estimated
    assert not UsageTotals().usage.estimated


async def test_the_sqlite_ledger_keeps_the_mark(tmp_path: Path) -> None:
    path = tmp_path / "agentos.db"
    ledger = SQLiteUsageLedger(path=path)
    when = datetime(2026, 1, 1, tzinfo=UTC)
    rows = [
        UsageEvent(when, "acme", "cheap", 4, 3, cost_usd=0.1, estimated=True),
        UsageEvent(when, "acme", "cheap", 5, 5, cost_usd=0.2),
    ]
    for row in rows:
        await ledger.append(row)
    ledger.close()
    again = SQLiteUsageLedger(path=path)
    assert await again.rows() == rows
    totals = await again.totals()
    assert (totals.calls, totals.estimated_calls, totals.usage.estimated) == (2, 1, True)
    again.close()


async def test_a_ledger_written_before_the_mark_reads_as_reported(tmp_path: Path) -> None:
    path = tmp_path / "agentos.db"
    # A database at the ledger's first schema version, with one row, as an earlier agentos left it.
    database = open_database(path)
    database.migrate(USAGE_LEDGER_STORE, USAGE_LEDGER_MIGRATIONS[:1])
    database.execute(
        "INSERT INTO usage_ledger (recorded_at, provider_id, model_id, prompt_tokens, "
        "completion_tokens, total_tokens, cost_usd) VALUES "
        "('2026-01-01T00:00:00.000000+00:00', 'acme', 'cheap', 1, 2, 3, 0.5)"
    )
    database.close()
    ledger = SQLiteUsageLedger(path=path)
    [row] = await ledger.rows()
    assert (row.total_tokens, row.estimated) == (3, False)
    assert ledger.database.schema_version("usage_ledger") == 2
    ledger.close()


# --- the property: the estimate is the one estimator's, wherever the reader stops --------------


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    prompt=st.text(alphabet="abc xyz", min_size=1, max_size=60).filter(str.strip),
    deltas=st.lists(st.text(alphabet="abcdé ", min_size=1, max_size=30), min_size=2, max_size=8),
    read=st.integers(min_value=1, max_value=7),
    max_tokens=st.none() | st.integers(min_value=1, max_value=40),
)
def test_the_budget_ledger_and_usage_agree_on_the_estimate(
    prompt: str, deltas: list[str], read: int, max_tokens: int | None
) -> None:
    read = min(read, len(deltas) - 1)

    async def run() -> None:
        go_on = asyncio.Event()
        model = ScriptedModel(
            [ScriptStep(text=deltas, wait=go_on, wait_at=read)],
            provider_id="acme",
            model_id="cheap",
        )
        budget = SpendBudget()
        ledger = InMemoryUsageLedger()
        stream = stream_text(
            prompt, model=model, budget=budget, usage_ledger=ledger, max_tokens=max_tokens
        )
        seen: list[str] = []
        async for delta in stream.text_stream:
            seen.append(delta)
            if len(seen) == read:
                break
        completion = math.ceil(len("".join(deltas[:read])) / 4)
        if max_tokens is not None:
            completion = min(completion, max_tokens)
        expected = ModelUsage(math.ceil(len(prompt) / 4), completion, estimated=True)
        assert await soon(stream.usage) == expected
        [row] = await ledger.rows()
        assert row.usage == ModelUsage(
            expected.prompt_tokens,
            completion,
            cost_usd=priced(expected.prompt_tokens, completion),
            estimated=True,
        )
        assert (budget.spent_tokens, budget.spent_usd) == (expected.total_tokens, row.cost_usd)

    asyncio.run(run())
