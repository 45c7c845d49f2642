"""Metering: the global observer, content-safe telemetry and the `MeteredModel` wrapper."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest

from agentos.core import Message, ModelUsage
from agentos.llm import (
    FinishChunk,
    ModelChunk,
    ModelRequest,
    ProviderError,
    TextDelta,
    UsageChunk,
    catalog,
)
from agentos.llm.budget import BudgetedModel, SpendBudget
from agentos.llm.catalog import ModelInfo
from agentos.llm.metering import (
    MeteredModel,
    MeteringContext,
    UsageEvent,
    content_safe_telemetry,
    emit_usage_event,
    get_global_llm_observer,
    set_content_safe_telemetry,
    set_global_llm_observer,
)
from agentos.storage import InMemoryUsageLedger, SQLiteUsageLedger
from agentos.testing import FakeClock, ScriptedModel, ScriptStep

PRICED = ModelInfo(
    provider_id="acme",
    model_id="cheap",
    context_window=8000,
    input_per_million=1.0,
    output_per_million=2.0,
)


@pytest.fixture(autouse=True)
def _clean_globals() -> Iterator[None]:
    """Every test starts and ends with no observer and telemetry not content-safe."""
    set_global_llm_observer(None)
    set_content_safe_telemetry(False)
    with patch.dict(catalog._CATALOG, {("acme", "cheap"): PRICED}):
        yield
    set_global_llm_observer(None)
    set_content_safe_telemetry(False)


@pytest.fixture
def events() -> list[UsageEvent]:
    received: list[UsageEvent] = []
    set_global_llm_observer(received.append)
    return received


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def ask(text: str = "Hi") -> ModelRequest:
    return ModelRequest([Message.user(text)])


async def drain(stream: AsyncIterator[ModelChunk]) -> list[ModelChunk]:
    return [chunk async for chunk in stream]


def acme(*steps: ScriptStep | str) -> ScriptedModel:
    return ScriptedModel(list(steps), provider_id="acme", model_id="cheap")


# --- the observer -----------------------------------------------------------------------------


def test_set_returns_the_observer_it_replaces() -> None:
    def first(event: UsageEvent) -> None: ...

    def second(event: UsageEvent) -> None: ...

    assert get_global_llm_observer() is None
    assert set_global_llm_observer(first) is None
    assert get_global_llm_observer() is first
    assert set_global_llm_observer(second) is first
    assert set_global_llm_observer(None) is second
    assert get_global_llm_observer() is None


def test_an_observer_must_be_callable_or_have_on_usage() -> None:
    with pytest.raises(TypeError, match="on_usage"):
        set_global_llm_observer("print")  # type: ignore[arg-type]
    assert get_global_llm_observer() is None


def test_content_safe_telemetry_is_off_unless_set() -> None:
    assert content_safe_telemetry() is False
    set_content_safe_telemetry(True)
    assert content_safe_telemetry() is True
    with pytest.raises(TypeError):
        set_content_safe_telemetry("yes")  # type: ignore[arg-type]


# --- metering a finished step -----------------------------------------------------------------


async def test_a_finished_step_makes_one_event_and_one_ledger_row(
    events: list[UsageEvent], clock: FakeClock
) -> None:
    inner = acme(ScriptStep("Hello there, friend", usage=ModelUsage(100, 50)))
    ledger = InMemoryUsageLedger()
    context = MeteringContext(
        session_id="s1", persona_id="v_researcher", user_id="u7", hop=1, source="gmi.step"
    )
    model = MeteredModel(inner, ledger=ledger, clock=clock, context=context)
    clock.advance(timedelta(minutes=5))
    chunks = await drain(model.stream(ask()))

    plain = await drain(
        acme(ScriptStep("Hello there, friend", usage=ModelUsage(100, 50))).stream(ask())
    )
    assert chunks == plain  # streamed unchanged
    expected = UsageEvent(
        recorded_at=clock.now(),
        provider_id="acme",
        model_id="cheap",
        prompt_tokens=100,
        completion_tokens=50,
        total_tokens=150,
        cost_usd=0.0002,  # priced by the catalog: 100 * $1/M + 50 * $2/M
        finish_reason="stop",
        attempt_failed=False,
        hop=1,
        session_id="s1",
        persona_id="v_researcher",
        user_id="u7",
        source="gmi.step",
    )
    assert events == [expected]
    assert await ledger.rows() == [expected]


async def test_the_ledger_row_is_written_before_the_stream_ends(tmp_path: Path) -> None:
    ledger = SQLiteUsageLedger(path=tmp_path / "agentos.db")
    model = MeteredModel(acme(ScriptStep("ok", usage=ModelUsage(3, 1))), ledger=ledger)
    await drain(model.stream(ask()))
    # No await between the stream's end and this read: the row is already committed.
    [row] = ledger.database.fetchall("SELECT prompt_tokens, completion_tokens FROM usage_ledger")
    assert tuple(row) == (3, 1)
    ledger.close()


async def test_the_last_usage_report_wins(events: list[UsageEvent]) -> None:
    class RunningTotals:
        provider_id = "acme"
        model_id = "cheap"

        async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
            yield UsageChunk(ModelUsage(10, 1))
            yield TextDelta("a")
            yield UsageChunk(ModelUsage(10, 2))
            yield FinishChunk("length")
            yield UsageChunk(ModelUsage(10, 3, cost_usd=0.5))

    await drain(MeteredModel(RunningTotals()).stream(ask()))
    [event] = events
    assert (event.completion_tokens, event.cost_usd, event.finish_reason) == (3, 0.5, "length")


async def test_an_unpriced_model_meters_an_unknown_cost(tmp_path: Path) -> None:
    ledger = SQLiteUsageLedger(path=tmp_path / "agentos.db")
    inner = ScriptedModel(
        [ScriptStep("x", usage=ModelUsage(4, 4))], provider_id="acme", model_id="mystery"
    )
    await drain(MeteredModel(inner, ledger=ledger).stream(ask()))
    [row] = await ledger.rows()
    assert row.cost_usd is None
    [raw] = ledger.database.fetchall("SELECT cost_usd IS NULL FROM usage_ledger")
    assert raw[0] == 1
    ledger.close()


async def test_a_step_that_reports_no_usage_is_not_metered(events: list[UsageEvent]) -> None:
    ledger = InMemoryUsageLedger()
    await drain(
        MeteredModel(acme(ScriptStep("x", report_usage=False)), ledger=ledger).stream(ask())
    )
    assert events == []
    assert await ledger.rows() == []


async def test_no_ledger_by_default(events: list[UsageEvent]) -> None:
    model = MeteredModel(acme("hi"))
    assert model.ledger is None
    await drain(model.stream(ask()))
    assert len(events) == 1


async def test_each_step_is_metered_once(events: list[UsageEvent], clock: FakeClock) -> None:
    model = MeteredModel(acme("one", "two"), clock=clock)
    await drain(model.stream(ask()))
    clock.advance(1)
    await drain(model.stream(ask()))
    assert [e.recorded_at - events[0].recorded_at for e in events] == [
        timedelta(0),
        timedelta(seconds=1),
    ]


# --- billed failures --------------------------------------------------------------------------


async def test_a_billed_failure_is_metered_with_finish_reason_error(
    events: list[UsageEvent],
) -> None:
    ledger = InMemoryUsageLedger()
    inner = acme(ScriptStep.fail(400, "refused", after_text="partial", usage=ModelUsage(20, 2)))
    model = MeteredModel(inner, ledger=ledger, context=MeteringContext(hop=2))
    seen: list[ModelChunk] = []

    async def read() -> None:
        async for chunk in model.stream(ask()):
            seen.append(chunk)

    with pytest.raises(ProviderError, match="refused"):
        await read()
    assert seen == [TextDelta("partial")]
    [event] = events
    assert (event.finish_reason, event.attempt_failed, event.hop) == ("error", True, 2)
    assert (event.prompt_tokens, event.completion_tokens) == (20, 2)
    assert event.cost_usd == 0.000024
    assert await ledger.rows() == [event]


async def test_a_failure_bills_the_last_reported_usage_when_the_error_has_none(
    events: list[UsageEvent],
) -> None:
    class CutAfterUsage:
        provider_id = "acme"
        model_id = "cheap"

        async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
            yield TextDelta("a")
            yield UsageChunk(ModelUsage(8, 1))
            raise ProviderError("stream cut", kind="stream", after_output=True)

    with pytest.raises(ProviderError):
        await drain(MeteredModel(CutAfterUsage()).stream(ask()))
    [event] = events
    assert (event.prompt_tokens, event.attempt_failed) == (8, True)


async def test_an_unbilled_failure_is_not_metered(events: list[UsageEvent]) -> None:
    with pytest.raises(ProviderError):
        await drain(MeteredModel(acme(ScriptStep.fail(503))).stream(ask()))
    assert events == []


async def test_a_failing_ledger_does_not_hide_the_provider_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class BrokenLedger(InMemoryUsageLedger):
        async def append(self, event: UsageEvent) -> None:
            raise OSError("disk full")

    model = MeteredModel(
        acme(ScriptStep.fail(400, "refused", usage=ModelUsage(1, 0))), ledger=BrokenLedger()
    )
    with caplog.at_level(logging.ERROR), pytest.raises(ProviderError, match="refused"):
        await drain(model.stream(ask()))
    assert "failed attempt" in caplog.text


async def test_a_failing_ledger_fails_a_finished_step() -> None:
    class BrokenLedger(InMemoryUsageLedger):
        async def append(self, event: UsageEvent) -> None:
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        await drain(MeteredModel(acme("ok"), ledger=BrokenLedger()).stream(ask()))


# --- aborts -----------------------------------------------------------------------------------


async def test_a_step_closed_before_it_finished_is_metered_with_an_estimate(
    events: list[UsageEvent],
) -> None:
    # DESIGN §5.19: the prompt "Hi" is 1 token, the delta "one " 1; no finish reason.
    stream = MeteredModel(acme("one two three")).stream(ask())
    assert isinstance(await anext(stream), TextDelta)
    await stream.aclose()  # type: ignore[attr-defined]
    [event] = events
    assert (event.prompt_tokens, event.completion_tokens, event.finish_reason) == (1, 1, None)
    assert event.estimated is True


async def test_a_finished_step_closed_early_is_still_metered(events: list[UsageEvent]) -> None:
    class UsageBeforeFinish:
        provider_id = "acme"
        model_id = "cheap"

        async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
            yield UsageChunk(ModelUsage(6, 6))
            yield FinishChunk("stop")
            yield TextDelta("unread")

    stream = MeteredModel(UsageBeforeFinish()).stream(ask())
    async for chunk in stream:
        if isinstance(chunk, FinishChunk):
            break
    await stream.aclose()  # type: ignore[attr-defined]
    [event] = events
    assert (event.total_tokens, event.finish_reason) == (12, "stop")


# --- the observer's forms and content-safe telemetry ------------------------------------------


async def test_content_safe_telemetry_silences_the_observer_not_the_ledger(
    events: list[UsageEvent],
) -> None:
    set_content_safe_telemetry(True)
    ledger = InMemoryUsageLedger()
    await drain(MeteredModel(acme("hi"), ledger=ledger).stream(ask()))
    assert events == []
    assert len(await ledger.rows()) == 1


async def test_an_async_observer_is_awaited() -> None:
    received: list[UsageEvent] = []

    async def observe(event: UsageEvent) -> None:
        received.append(event)

    set_global_llm_observer(observe)
    await drain(MeteredModel(acme("hi")).stream(ask()))
    assert len(received) == 1


async def test_an_observer_object_receives_on_usage() -> None:
    class Collector:
        def __init__(self) -> None:
            self.received: list[UsageEvent] = []

        def on_usage(self, event: UsageEvent) -> None:
            self.received.append(event)

    collector = Collector()
    set_global_llm_observer(collector)
    await drain(MeteredModel(acme("hi")).stream(ask()))
    assert len(collector.received) == 1


async def test_a_failing_observer_never_fails_the_call(caplog: pytest.LogCaptureFixture) -> None:
    def explode(event: UsageEvent) -> None:
        raise RuntimeError("observer bug")

    set_global_llm_observer(explode)
    ledger = InMemoryUsageLedger()
    with caplog.at_level(logging.ERROR):
        chunks = await drain(MeteredModel(acme("hi"), ledger=ledger).stream(ask()))
    assert isinstance(chunks[-1], UsageChunk)
    assert len(await ledger.rows()) == 1
    assert "observer" in caplog.text


async def test_emit_usage_event_without_an_observer_does_nothing(clock: FakeClock) -> None:
    await emit_usage_event(UsageEvent(recorded_at=clock.now(), provider_id="p", model_id="m"))


# --- the wrapper's shape ----------------------------------------------------------------------


async def test_bind_replaces_context_fields(events: list[UsageEvent]) -> None:
    ledger = InMemoryUsageLedger()
    base = MeteredModel(acme("a", "b"), ledger=ledger, context=MeteringContext(source="gmi.step"))
    bound = base.bind(session_id="s9", user_id="u1")
    assert bound.inner is base.inner
    assert bound.ledger is ledger
    assert bound.context == MeteringContext(session_id="s9", user_id="u1", source="gmi.step")
    await drain(bound.stream(ask()))
    assert (events[0].session_id, events[0].user_id, events[0].source) == ("s9", "u1", "gmi.step")
    with pytest.raises(TypeError):
        base.bind(colour="red")


def test_metered_model_passes_identity_and_attributes_through() -> None:
    inner = acme("x")
    model = MeteredModel(inner)
    assert (model.provider_id, model.model_id) == ("acme", "cheap")
    assert model.requests is inner.requests


async def test_metering_and_budget_wrappers_compose(events: list[UsageEvent]) -> None:
    budget = SpendBudget(max_cost_usd=1)
    model = MeteredModel(BudgetedModel(acme(ScriptStep("hi", usage=ModelUsage(100, 50))), budget))
    chunks: list[Any] = await drain(model.stream(ask()))
    assert isinstance(chunks[-1], UsageChunk)
    assert budget.spent_tokens == events[0].total_tokens == 150
    assert budget.spent_usd == events[0].cost_usd == 0.0002
