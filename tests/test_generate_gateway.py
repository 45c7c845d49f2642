"""generate_text / stream_text through the completion gateway: fallback, budget, metering,
structured output."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from agentos import (
    FinishPart,
    GMIErrorCode,
    ModelUsage,
    ProviderError,
    SpendBudget,
    generate_text,
    set_global_llm_observer,
    stream_text,
    tool,
)
from agentos.api.structured import ObjectGenerationError
from agentos.llm import KNOWN_PROVIDERS, ProviderInfo, SpendLimitError
from agentos.llm.metering import UsageEvent
from agentos.storage.ledger import InMemoryUsageLedger
from agentos.testing import ScriptedModel, ScriptStep


@pytest.fixture
def backup(monkeypatch: pytest.MonkeyPatch) -> ScriptedModel:
    """A provider named 'backup' whose every call is served by one scripted model."""
    model = ScriptedModel(
        ["Served by the backup.", "Again the backup."], provider_id="backup", model_id="b-1"
    )
    monkeypatch.setitem(
        KNOWN_PROVIDERS, "backup", ProviderInfo("backup", None, None, lambda m, k, u: model)
    )
    return model


@pytest.fixture
def events() -> Iterator[list[UsageEvent]]:
    seen: list[UsageEvent] = []
    set_global_llm_observer(seen.append)
    yield seen
    set_global_llm_observer(None)


async def test_a_retryable_failure_before_output_falls_back(backup: ScriptedModel) -> None:
    billed = ModelUsage(prompt_tokens=7, completion_tokens=0)
    primary = ScriptedModel([ScriptStep.fail(503, "unavailable", usage=billed)])
    fallbacks: list[tuple[str, str]] = []
    result = await generate_text(
        "Hi",
        model=primary,
        fallback_providers=[{"provider": "backup"}],
        on_fallback=lambda error, provider: fallbacks.append((str(error), provider)),
    )
    assert result.text == "Served by the backup."
    assert (result.provider_id, result.model_id) == ("backup", "b-1")
    assert fallbacks == [("[503] unavailable", "backup")]
    # The billed failed attempt counts in the call's usage.
    step_usage = result.steps[0].usage
    assert step_usage is not None
    assert result.usage.prompt_tokens == step_usage.prompt_tokens + 7


async def test_an_error_after_output_does_not_fall_back(backup: ScriptedModel) -> None:
    primary = ScriptedModel([ScriptStep.fail(503, "gone", after_text="Half an ")])
    with pytest.raises(ProviderError) as caught:
        await generate_text("Hi", model=primary, fallback_providers=[{"provider": "backup"}])
    assert caught.value.status_code == 503
    assert backup.calls == 0


async def test_without_fallback_providers_and_no_keys_there_is_no_fallback() -> None:
    primary = ScriptedModel([ScriptStep.fail(503, "down")])
    with pytest.raises(ProviderError):
        await generate_text("Hi", model=primary)


async def test_a_budget_refuses_before_anything_is_sent() -> None:
    model = ScriptedModel(["never"])
    with pytest.raises(SpendLimitError) as caught:
        await generate_text("Hi", model=model, budget=SpendBudget(max_total_tokens=1))
    assert caught.value.code is GMIErrorCode.LLM_PROVIDER_ERROR
    assert model.calls == 0


async def test_a_budget_records_each_step() -> None:
    budget = SpendBudget(max_total_tokens=10_000)
    result = await generate_text("Hi", model=ScriptedModel(["Hello there"]), budget=budget)
    assert budget.spent_tokens == result.usage.total_tokens


async def test_a_bad_budget_is_refused_naming_it() -> None:
    with pytest.raises(Exception, match="budget") as caught:
        await generate_text("Hi", model=ScriptedModel(["x"]), budget=5)  # type: ignore[arg-type]
    assert getattr(caught.value, "details", {}).get("option") == "budget"


async def test_each_step_is_metered_and_written_to_the_ledger(events: list[UsageEvent]) -> None:
    ledger = InMemoryUsageLedger()
    await generate_text("Hi", model=ScriptedModel(["Hello"]), usage_ledger=ledger)
    rows = await ledger.rows()
    assert [(r.provider_id, r.model_id, r.finish_reason, r.source) for r in rows] == [
        ("scripted", "scripted-model", "stop", "generate_text")
    ]
    assert [(e.provider_id, e.attempt_failed) for e in events] == [("scripted", False)]


async def test_a_billed_failure_is_metered_as_an_error(events: list[UsageEvent]) -> None:
    failing = ScriptStep.fail(500, "boom", usage=ModelUsage(prompt_tokens=4))
    with pytest.raises(ProviderError):
        await generate_text("Hi", model=ScriptedModel([failing]))
    assert [(e.finish_reason, e.attempt_failed, e.prompt_tokens) for e in events] == [
        ("error", True, 4)
    ]


class City(BaseModel):
    name: str
    population: int


async def test_a_structured_answer_is_parsed_and_validated() -> None:
    model = ScriptedModel(['{"name": "Oslo", "population": 709000}'])
    result = await generate_text("Biggest city in Norway?", model=model, response_schema=City)
    assert result.object == City(name="Oslo", population=709000)
    options = model.requests[0].options
    assert options.schema_name == "City"
    assert options.response_schema == City.model_json_schema()


async def test_a_structured_step_is_sent_without_tools() -> None:
    @tool
    def lookup(q: str) -> str:
        """Look something up."""
        return q

    model = ScriptedModel(['{"name": "Oslo", "population": 1}'])
    await generate_text("x", model=model, tools=[lookup], response_schema=City, schema_name="c")
    assert model.requests[0].tools == []
    assert model.requests[0].options.tool_choice is None
    assert model.requests[0].options.schema_name == "c"


@pytest.mark.parametrize(
    ("step", "message"),
    [
        (ScriptStep(text="not json"), "does not match City"),
        (ScriptStep(text='{"name": "Oslo"}'), "does not match City"),
        (
            ScriptStep(text='{"name": "Oslo", "population": 1}', finish_reason="length"),
            "cut off by the output limit",
        ),
    ],
)
async def test_an_unusable_structured_answer_is_an_object_generation_error(
    step: ScriptStep, message: str
) -> None:
    with pytest.raises(ObjectGenerationError, match=message) as caught:
        await generate_text("x", model=ScriptedModel([step]), response_schema=City)
    assert caught.value.code is GMIErrorCode.PARSING_ERROR


async def test_a_json_schema_dict_is_validated_with_jsonschema() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"],
    }
    result = await generate_text("x", model=ScriptedModel(['{"ok": true}']), response_schema=schema)
    assert result.object == {"ok": True}
    with pytest.raises(ObjectGenerationError, match="at ok"):
        await generate_text("x", model=ScriptedModel(['{"ok": 1}']), response_schema=schema)


@pytest.mark.parametrize("schema", [str, {"type": "array"}, {"type": 5}])
async def test_a_bad_response_schema_is_refused_naming_it(schema: Any) -> None:
    model = ScriptedModel(["never"])
    with pytest.raises(Exception, match="response_schema") as caught:
        await generate_text("x", model=model, response_schema=schema)
    assert getattr(caught.value, "details", {}) == {"option": "response_schema"}
    assert model.calls == 0


async def test_stream_text_falls_back_too(backup: ScriptedModel) -> None:
    primary = ScriptedModel([ScriptStep.fail(429, "slow down")])
    stream = stream_text("Hi", model=primary, fallback_providers=[{"provider": "backup"}])
    parts = [part async for part in stream.full_stream]
    assert isinstance(parts[-1], FinishPart)
    assert await stream.text == "Served by the backup."
