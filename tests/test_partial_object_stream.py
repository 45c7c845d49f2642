"""``partial_object_stream``: the structured answer's object as its JSON streams (DESIGN §5.23).

Through the public API: `stream_text()` and every agent's ``stream()`` on the scripted model,
each provider's structured-output route through its real SDK against a loopback server, and the
real local model's grammar route (marked ``local_model``). A JSON schema yields dicts, a pydantic
model instances; unchanged snapshots are not repeated; the last one is ``result.object``.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Sequence
from contextlib import aclosing
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from agentos import (
    GMIError,
    GMIErrorCode,
    ObjectGenerationError,
    ProviderError,
    StreamTextResult,
    agent,
    gmi,
    stream_text,
)
from agentos.llm.local import local_model_available
from agentos.llm.model import ChatModel
from agentos.llm.resolve import resolve_model
from agentos.testing import ScriptedModel, ScriptStep
from fakes import anthropic_server as anthropic_wire
from fakes.loopback import Reply
from fakes.multi_provider import (
    KEYS,
    AnthropicWire,
    GeminiWire,
    OpenAIWire,
    ProviderServers,
    Wire,
    provider_servers,
)

CITY: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "temp_c": {"type": "integer"}},
    "required": ["city", "temp_c"],
    "additionalProperties": False,
}
"""A JSON schema (strict-mode ready): its snapshots are dicts."""


class City(BaseModel):
    """A model whose fields all have defaults: its snapshots start with the first key."""

    city: str = ""
    temp_c: int = 0


class Forecast(BaseModel):
    """A model with required fields: no snapshot until each of them has begun."""

    city: str
    temp_c: int


DELTAS = ['{"ci', 'ty": "Par', 'is", "temp_', 'c": 2', "1", "}"]
"""The answer ``{"city": "Paris", "temp_c": 21}`` as a model streams it."""

DICT_SNAPSHOTS: list[Any] = [
    {},
    {"city": "Par"},
    {"city": "Paris"},
    {"city": "Paris", "temp_c": 21},
]
"""``2`` is held back until the number ends: a snapshot never shows what the next takes back."""


def scripted(deltas: Sequence[str] = DELTAS, **step: Any) -> ScriptedModel:
    return ScriptedModel([ScriptStep(text=list(deltas), **step)])


async def snapshots(stream: StreamTextResult) -> list[Any]:
    return [snapshot async for snapshot in stream.partial_object_stream]


async def collect(items: AsyncIterator[Any]) -> list[Any]:
    return [item async for item in items]


async def snapshots_and_error(stream: StreamTextResult) -> tuple[list[Any], Exception]:
    """The snapshots a failing stream yields, and the error it raises after them."""
    seen: list[Any] = []
    try:
        async for snapshot in stream.partial_object_stream:
            seen.append(snapshot)
    except Exception as exc:
        return seen, exc
    raise AssertionError("the stream did not fail")


def is_partial(part: Any, whole: Any) -> bool:
    """Whether ``part`` is ``whole`` cut short: fewer keys or items, a string's prefix."""
    if isinstance(whole, dict):
        return isinstance(part, dict) and all(
            key in whole and is_partial(value, whole[key]) for key, value in part.items()
        )
    if isinstance(whole, list):
        return (
            isinstance(part, list)
            and len(part) <= len(whole)
            and all(is_partial(p, w) for p, w in zip(part, whole, strict=False))
        )
    if isinstance(whole, str):
        return isinstance(part, str) and whole.startswith(part)
    return type(part) is type(whole) and part == whole


# --- what is yielded ---------------------------------------------------------------------------


async def test_a_json_schema_yields_each_new_dict_and_the_last_is_the_object() -> None:
    stream = stream_text("Weather in Paris", model=scripted(), response_schema=CITY)

    assert await snapshots(stream) == DICT_SNAPSHOTS
    assert (await stream.result).object == DICT_SNAPSHOTS[-1]


async def test_a_model_class_yields_validated_instances() -> None:
    stream = stream_text("Weather in Paris", model=scripted(), response_schema=City)

    assert await snapshots(stream) == [
        City(),  # "{" validates already: every field has a default
        City(city="Par"),
        City(city="Paris"),
        City(city="Paris", temp_c=21),
    ]
    assert (await stream.result).object == City(city="Paris", temp_c=21)


async def test_a_model_with_required_fields_yields_once_they_have_all_begun() -> None:
    deltas = ['{"city": "Par', 'is", "temp_c": 2', "1, ", '"note": "x"}']
    stream = stream_text("Weather", model=scripted(deltas), response_schema=Forecast)

    # temp_c begins with "2", held back until the number ends.
    assert await snapshots(stream) == [Forecast(city="Paris", temp_c=21)]


async def test_a_delta_that_changes_nothing_yields_nothing() -> None:
    deltas = ["{", " ", '"city"', ": ", '"Rome"', ",", ' "temp_c": ', "25", "\n", "}"]
    stream = stream_text("Weather", model=scripted(deltas), response_schema=CITY)

    assert await snapshots(stream) == [{}, {"city": "Rome"}, {"city": "Rome", "temp_c": 25}]


async def test_the_last_snapshot_is_the_object_a_hook_replaced_the_text_with() -> None:
    stream = stream_text(
        "Weather",
        model=scripted(),
        response_schema=CITY,
        on_after_generation=lambda context: '{"city": "Oslo", "temp_c": -3}',
    )

    assert await snapshots(stream) == [*DICT_SNAPSHOTS, {"city": "Oslo", "temp_c": -3}]
    assert (await stream.text) == '{"city": "Oslo", "temp_c": -3}'


# --- without a schema, one reader, leaving early, errors ---------------------------------------


async def test_without_a_response_schema_the_stream_is_refused_when_asked_for() -> None:
    stream = stream_text("Hi", model=ScriptedModel(["Hello there."]))

    with pytest.raises(GMIError) as caught:
        _ = stream.partial_object_stream
    assert caught.value.code is GMIErrorCode.INVALID_STATE
    assert caught.value.details == {"option": "response_schema"}
    assert "response_schema" in caught.value.message
    # Refused before claiming anything: the text is still there to read.
    assert [delta async for delta in stream.text_stream] == ["Hello ", "there."]


async def test_the_partial_stream_is_one_reading_of_the_stream() -> None:
    stream = stream_text("Weather", model=scripted(), response_schema=CITY)
    objects = stream.partial_object_stream

    with pytest.raises(RuntimeError, match="only once"):
        _ = stream.text_stream
    assert [snapshot async for snapshot in objects][-1] == (await stream.result).object


async def test_leaving_early_stops_the_generation_and_charges_the_estimate() -> None:
    go_on = asyncio.Event()
    model = scripted(['{"city": "Par', 'is", "temp_c": 21}'], wait=go_on, wait_at=1)
    stream = stream_text("Weather in Paris", model=model, response_schema=CITY)

    async with aclosing(stream.partial_object_stream) as objects:
        async for snapshot in objects:
            assert snapshot == {"city": "Par"}
            break
    go_on.set()

    with pytest.raises(GMIError) as caught:
        await asyncio.wait_for(stream.result, 5)
    assert caught.value.code is GMIErrorCode.ABORTED
    assert (await asyncio.wait_for(stream.usage, 5)).estimated


async def test_a_provider_failure_is_raised_after_the_snapshots_as_text_stream_raises_it() -> None:
    def failing() -> ScriptedModel:
        return ScriptedModel([ScriptStep.fail(500, "overloaded", after_text=['{"city": "Pa'])])

    seen, error = await snapshots_and_error(stream_text("W", model=failing(), response_schema=CITY))
    with pytest.raises(ProviderError) as from_text:
        await collect(stream_text("W", model=failing(), response_schema=CITY).text_stream)

    assert seen == [{"city": "Pa"}]
    assert isinstance(error, ProviderError)
    assert (error.message, error.status_code) == (from_text.value.message, 500)


@pytest.mark.parametrize(
    ("deltas", "finish", "why", "expected"),
    [
        (['{"city": ', '"Paris"}'], None, "temp_c", [{}, {"city": "Paris"}]),
        (
            ['{"city": ', '"Paris", "temp_c": 21}'],
            "length",
            "cut off",
            [{}, {"city": "Paris", "temp_c": 21}],
        ),
    ],
    ids=["off-schema", "cut-off"],
)
async def test_an_answer_that_does_not_validate_whole_raises_object_generation_error(
    deltas: list[str], finish: Any, why: str, expected: list[Any]
) -> None:
    model = scripted(deltas, finish_reason=finish)
    stream = stream_text("Weather", model=model, response_schema=CITY)

    seen, error = await snapshots_and_error(stream)

    assert seen == expected  # snapshots show what came, the whole is refused at the end
    assert isinstance(error, ObjectGenerationError)
    assert why in error.message
    with pytest.raises(ObjectGenerationError):
        await stream.result


# --- every agent's stream() ----------------------------------------------------------------------


async def test_a_gmi_session_streams_partial_objects() -> None:
    owner = gmi(model=scripted(), instructions="Answer in JSON.")
    stream = owner.session("s1").stream("Weather in Paris", response_schema=City)

    assert await snapshots(stream) == [
        City(),  # "{" validates already: every field has a default
        City(city="Par"),
        City(city="Paris"),
        City(city="Paris", temp_c=21),
    ]
    assert (await stream.result).object == City(city="Paris", temp_c=21)
    await owner.close()


async def test_a_gmi_agents_one_off_stream_streams_partial_objects() -> None:
    owner = gmi(model=scripted())
    assert await snapshots(owner.stream("Weather", response_schema=CITY)) == DICT_SNAPSHOTS
    await owner.close()


async def test_a_plain_agents_session_and_one_off_stream_partial_objects() -> None:
    owner = agent(model=ScriptedModel([ScriptStep(text=DELTAS), ScriptStep(text=DELTAS)]))
    session_stream = owner.session("s1").stream("Weather", response_schema=CITY)
    assert await snapshots(session_stream) == DICT_SNAPSHOTS
    assert await snapshots(owner.stream("Weather", response_schema=CITY)) == DICT_SNAPSHOTS
    await owner.close()


# --- any split of a document ----------------------------------------------------------------------

_TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=8)
_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _TEXT
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=12,
)


def split(draw: st.DrawFn, document: Any) -> list[str]:
    """``document`` as JSON, written one of several ways and cut into chunks at random places."""
    text = json.dumps(
        document,
        ensure_ascii=draw(st.booleans()),
        indent=draw(st.sampled_from([None, 2])),
    )
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=len(text))))
    bounds = [0, *(cut for cut in cuts if cut < len(text)), len(text)]
    return [text[start:end] for start, end in itertools.pairwise(bounds)]


@st.composite
def split_documents(draw: st.DrawFn) -> tuple[dict[str, Any], list[str]]:
    """Any JSON object, cut into chunks."""
    document = draw(st.dictionaries(_TEXT, _VALUES, max_size=5))
    return document, split(draw, document)


class Card(BaseModel):
    """A model for the property: a string, a list of objects, an optional number."""

    title: str = ""
    entries: list[dict[str, int]] = []
    score: float | None = None


@st.composite
def split_cards(draw: st.DrawFn) -> tuple[Card, list[str]]:
    """A `Card` (some fields left out), cut into chunks."""
    fields = {
        "title": _TEXT,
        "entries": st.lists(st.dictionaries(_TEXT, st.integers(), max_size=3), max_size=3),
        "score": st.none() | st.floats(allow_nan=False, allow_infinity=False),
    }
    document = draw(st.fixed_dictionaries({}, optional=fields))
    return Card.model_validate(document), split(draw, document)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(split_documents())
async def test_any_split_yields_partials_of_the_final_object(
    case: tuple[dict[str, Any], list[str]],
) -> None:
    document, chunks = case
    stream = stream_text("Any", model=scripted(chunks), response_schema={"type": "object"})

    seen = await snapshots(stream)

    final = (await stream.result).object
    assert final == document
    assert seen
    assert seen[-1] == final
    for earlier, later in itertools.pairwise(seen):
        assert earlier != later  # an unchanged snapshot is not yielded again
        assert is_partial(earlier, later)
    assert all(is_partial(snapshot, final) for snapshot in seen)


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(split_cards())
async def test_any_split_of_a_models_answer_yields_instances_set_as_far_as_the_text_goes(
    case: tuple[Card, list[str]],
) -> None:
    card, chunks = case
    stream = stream_text("Any", model=scripted(chunks), response_schema=Card)

    seen = await snapshots(stream)

    final = (await stream.result).object
    assert final == card
    assert seen[-1] == final
    assert all(isinstance(snapshot, Card) for snapshot in seen)
    whole = final.model_dump()
    for earlier, later in itertools.pairwise(seen):
        assert earlier != later
        assert is_partial(earlier.model_dump(exclude_unset=True), later.model_dump())
    # The fields the text has set so far are the final object's, cut short.
    assert all(is_partial(s.model_dump(exclude_unset=True), whole) for s in seen)


# --- each provider's structured-output route ------------------------------------------------------

PIECES = ['{"city": "Par', 'is", "temp_', 'c": 2', "1}"]


def _schema_tool_reply(fragments: Sequence[str]) -> Reply:
    """Claude answering through the forced schema tool (its route before output formats)."""
    return Reply(
        events=[
            anthropic_wire.message_start(model="claude-sonnet-4"),
            anthropic_wire.tool_use_start("toolu_schema", "city"),
            *(anthropic_wire.input_json_delta(fragment) for fragment in fragments),
            anthropic_wire.block_stop(),
            anthropic_wire.message_delta("tool_use", output_tokens=20),
            anthropic_wire.message_stop(),
        ]
    )


ROUTES = [
    pytest.param("openai", OpenAIWire.model, CITY, id="openai-json-schema"),
    pytest.param("openai", OpenAIWire.model, Forecast, id="openai-json-mode"),
    pytest.param("anthropic", AnthropicWire.model, CITY, id="anthropic-output-format"),
    pytest.param("anthropic", "claude-sonnet-4", CITY, id="anthropic-forced-tool"),
    pytest.param("gemini", GeminiWire.model, Forecast, id="gemini-response-schema"),
]


@pytest.fixture(scope="module")
def servers() -> Iterator[ProviderServers]:
    yield from provider_servers()


@pytest.fixture
async def served(
    servers: ProviderServers, monkeypatch: pytest.MonkeyPatch
) -> AsyncGenerator[list[ChatModel], None]:
    """The models a test builds, closed on the test's own loop."""
    servers.isolate(monkeypatch)
    built: list[ChatModel] = []
    yield built
    servers.release()
    for model in built:
        close = getattr(model, "aclose", None)
        if close is not None:
            await close()


@pytest.mark.parametrize(("provider", "model_id", "schema"), ROUTES)
async def test_each_providers_structured_route_streams_partial_objects(
    servers: ProviderServers,
    served: list[ChatModel],
    provider: str,
    model_id: str,
    schema: Any,
) -> None:
    wires: dict[str, Wire] = {
        "openai": OpenAIWire(),
        "anthropic": AnthropicWire(),
        "gemini": GeminiWire(),
    }
    reply = (
        _schema_tool_reply(PIECES)
        if model_id == "claude-sonnet-4"
        else wires[provider].text(*PIECES)
    )
    servers.play(**{provider: [reply]})
    server = servers.by_name(provider)
    model = resolve_model(provider, model_id, api_key=KEYS[provider], base_url=server.base_url)
    served.append(model)

    stream = stream_text(
        "Weather in Paris",
        model=model,
        response_schema=schema,
        schema_name="city",
        fallback_providers=[],
    )

    expected = (
        [{"city": "Par"}, {"city": "Paris"}, {"city": "Paris", "temp_c": 21}]
        if schema is CITY
        else [Forecast(city="Paris", temp_c=21)]
    )
    assert await snapshots(stream) == expected
    assert (await stream.result).object == expected[-1]
    assert len(server.requests) == 1


# --- the real local model -------------------------------------------------------------------------


@pytest.mark.local_model
@pytest.mark.skipif(not local_model_available(), reason="the 'local' extra is not installed")
async def test_the_local_models_grammar_route_streams_partial_objects() -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string", "maxLength": 12}},
        "required": ["city"],
    }
    stream = stream_text(
        "Name a city in France.", provider="local", response_schema=schema, seed=1, max_tokens=32
    )

    seen = await snapshots(stream)

    final = (await stream.result).object
    assert seen[-1] == final
    assert isinstance(final["city"], str)
    assert seen[0] == {}  # the grammar's answer opens the object first
    assert all(is_partial(snapshot, final) for snapshot in seen)
