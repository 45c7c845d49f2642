"""`Tool`: schemas from typed functions and docstrings, JSON-schema tools, validation, running."""

from __future__ import annotations

import datetime as dt
import threading
import warnings
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from agentos import GMIError, GMIErrorCode, Tool, ToolArgumentsError, tool
from agentos.llm import ToolDefinition


class Point(BaseModel):
    x: int
    y: int = 0


class Forecast(BaseModel):
    city: str
    day: dt.date
    highs: list[float]


# --- schemas from typed signatures -----------------------------------------------------------


def test_schema_from_a_typed_signature() -> None:
    def search(
        query: str,
        limit: int,
        ratio: float = 0.5,
        exact: bool = False,
        page: int | None = None,
        tags: list[str] | None = None,
        counts: dict[str, int] | None = None,
        unit: Literal["c", "f"] = "c",
        ids: list[int] = [],  # noqa: B006 - a default the schema must show
    ) -> str:
        return query

    assert Tool.from_function(search).parameters == {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "query": {"type": "string"},
            "limit": {"type": "integer"},
            "ratio": {"type": "number", "default": 0.5},
            "exact": {"type": "boolean", "default": False},
            "page": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
            "tags": {
                "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
                "default": None,
            },
            "counts": {
                "anyOf": [
                    {"type": "object", "additionalProperties": {"type": "integer"}},
                    {"type": "null"},
                ],
                "default": None,
            },
            "unit": {"type": "string", "enum": ["c", "f"], "default": "c"},
            "ids": {"type": "array", "items": {"type": "integer"}, "default": []},
        },
        "required": ["query", "limit"],
    }


def test_a_function_without_parameters_takes_an_empty_object() -> None:
    def now() -> str:
        """The time."""
        return "noon"

    assert Tool.from_function(now).parameters == {
        "type": "object",
        "additionalProperties": False,
        "properties": {},
    }


def test_an_unannotated_parameter_accepts_any_value() -> None:
    def echo(value, times: int = 1):  # type: ignore[no-untyped-def]
        return [value] * times

    assert Tool.from_function(echo).parameters == {
        "type": "object",
        "additionalProperties": False,
        "properties": {"value": {}, "times": {"type": "integer", "default": 1}},
        "required": ["value"],
    }


async def test_an_unannotated_parameter_passes_its_value_through() -> None:
    def echo(value, times: int = 1):  # type: ignore[no-untyped-def]
        return [value] * times

    assert await Tool.from_function(echo).run({"value": {"a": [1]}, "times": 2}) == [
        {"a": [1]},
        {"a": [1]},
    ]


def test_pydantic_model_parameters_are_described_by_reference() -> None:
    def plot(point: Point, label: Point | None = None) -> str:
        """Plot a point.

        Args:
            point: Where to plot.
        """
        return ""

    assert Tool.from_function(plot).parameters == {
        "$defs": {
            "Point": {
                "title": "Point",
                "type": "object",
                "properties": {
                    "x": {"title": "X", "type": "integer"},
                    "y": {"title": "Y", "type": "integer", "default": 0},
                },
                "required": ["x"],
            }
        },
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "point": {"$ref": "#/$defs/Point", "description": "Where to plot."},
            "label": {"anyOf": [{"$ref": "#/$defs/Point"}, {"type": "null"}], "default": None},
        },
        "required": ["point"],
    }


def test_annotated_constraints_reach_the_schema() -> None:
    def pick(
        n: Annotated[int, Field(ge=1, le=10, description="How many to pick")],
        code: Annotated[str, Field(max_length=3)] = "ab",
    ) -> int:
        """Pick some.

        Args:
            code: A short code.
        """
        return n

    assert Tool.from_function(pick).parameters == {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            # The docstring does not describe n, so the Field's description stays.
            "n": {
                "type": "integer",
                "minimum": 1,
                "maximum": 10,
                "description": "How many to pick",
            },
            "code": {
                "type": "string",
                "maxLength": 3,
                "default": "ab",
                "description": "A short code.",
            },
        },
        "required": ["n"],
    }


def test_parameters_named_like_pydantic_attributes_work_without_warnings() -> None:
    def query(schema: str, json: bool = False, copy: int = 1) -> str:
        return f"{schema}/{json}/{copy}"

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        made = Tool.from_function(query)
    assert made.parameters["properties"] == {
        "schema": {"type": "string"},
        "json": {"type": "boolean", "default": False},
        "copy": {"type": "integer", "default": 1},
    }
    assert made.validate_arguments({"schema": "s", "json": True}) == {
        "schema": "s",
        "json": True,
        "copy": 1,
    }


# --- descriptions from docstrings ------------------------------------------------------------


def test_google_docstring_gives_the_summary_and_each_parameter() -> None:
    def get_weather(city: str, days: int = 1, unit: str = "c") -> dict[str, Any]:
        """Get the weather forecast for a city.

        Uses the forecast service.

        Args:
            city: The city's name, e.g. Paris.
            days (int): How many days
                ahead to forecast.
            unit (str, optional): Either "c" or "f".

        Returns:
            The forecast.

        Raises:
            ValueError: When the city is unknown.
        """
        return {}

    made = Tool.from_function(get_weather)
    assert made.description == "Get the weather forecast for a city.\n\nUses the forecast service."
    assert made.parameters["properties"] == {
        "city": {"type": "string", "description": "The city's name, e.g. Paris."},
        "days": {
            "type": "integer",
            "default": 1,
            "description": "How many days ahead to forecast.",
        },
        "unit": {"type": "string", "default": "c", "description": 'Either "c" or "f".'},
    }


def test_google_docstring_sections_after_args_do_not_leak_into_descriptions() -> None:
    def lookup(key: str, fresh: bool = False) -> str:
        """Look a key up.

        Args:
            key: The key.

        Keyword Args:
            fresh: Skip the cache.

        Note:
            Slow on a cold cache.
        """
        return key

    made = Tool.from_function(lookup)
    assert made.description == "Look a key up."
    assert made.parameters["properties"] == {
        "key": {"type": "string", "description": "The key."},
        "fresh": {"type": "boolean", "default": False, "description": "Skip the cache."},
    }


def test_sphinx_docstring_gives_the_summary_and_each_parameter() -> None:
    def convert(amount: float, currency: str = "EUR") -> float:
        """Convert an amount of money.

        :param amount: How much to convert.
        :param str currency: The currency to convert
            into.
        :type amount: float
        :returns: The converted amount.
        :raises ValueError: For an unknown currency.
        """
        return amount

    made = Tool.from_function(convert)
    assert made.description == "Convert an amount of money."
    assert made.parameters["properties"] == {
        "amount": {"type": "number", "description": "How much to convert."},
        "currency": {
            "type": "string",
            "default": "EUR",
            "description": "The currency to convert into.",
        },
    }


def test_no_docstring_gives_an_empty_description_and_no_parameter_descriptions() -> None:
    def add(a: int, b: int) -> int:
        return a + b

    made = Tool.from_function(add)
    assert made.description == ""
    assert made.parameters["properties"] == {"a": {"type": "integer"}, "b": {"type": "integer"}}


def test_explicit_description_replaces_the_docstring_summary() -> None:
    def add(a: int, b: int) -> int:
        """Add two numbers.

        Args:
            a: The first.
        """
        return a + b

    assert Tool.from_function(add, description="Sum a and b.").description == "Sum a and b."
    assert Tool.from_function(add, description="").description == ""
    # Parameter descriptions still come from the docstring.
    assert Tool.from_function(add, description="x").parameters["properties"]["a"] == {
        "type": "integer",
        "description": "The first.",
    }


# --- the decorator and definition() ----------------------------------------------------------


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers.

    Args:
        a: The first factor.
        b: The second factor.
    """
    return a * b


@tool(name="web_search", description="Search the web.")
async def search_the_web(query: str) -> list[str]:
    """Ignored summary."""
    return [f"result for {query}"]


def test_bare_decorator_names_the_tool_after_the_function() -> None:
    assert isinstance(multiply, Tool)
    assert multiply.name == "multiply"
    assert multiply.description == "Multiply two integers."
    assert repr(multiply) == "Tool(name='multiply')"


def test_decorator_with_name_and_description() -> None:
    assert search_the_web.name == "web_search"
    assert search_the_web.description == "Search the web."


def test_decorator_with_only_a_name_keeps_the_docstring_summary() -> None:
    @tool(name="times")
    def product(a: int, b: int) -> int:
        """Multiply."""
        return a * b

    assert (product.name, product.description) == ("times", "Multiply.")


def test_definition_is_what_the_model_sees() -> None:
    assert multiply.definition() == ToolDefinition(
        name="multiply",
        description="Multiply two integers.",
        parameters={
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "a": {"type": "integer", "description": "The first factor."},
                "b": {"type": "integer", "description": "The second factor."},
            },
            "required": ["a", "b"],
        },
    )


# --- validation ------------------------------------------------------------------------------


def test_extra_arguments_are_refused() -> None:
    with pytest.raises(ToolArgumentsError) as caught:
        multiply.validate_arguments({"a": 1, "b": 2, "c": 3})
    error = caught.value
    assert isinstance(error, GMIError)
    assert error.code is GMIErrorCode.VALIDATION_ERROR
    assert (
        error.message == "Invalid arguments for tool 'multiply': c: Extra inputs are not permitted"
    )
    assert error.details == {
        "tool_name": "multiply",
        "problems": ["c: Extra inputs are not permitted"],
    }
    assert error.component == "tools"
    assert error.http_status == 400


def test_missing_and_wrongly_typed_arguments_each_name_their_field() -> None:
    with pytest.raises(ToolArgumentsError) as caught:
        multiply.validate_arguments({"a": "many"})
    assert caught.value.details["problems"] == [
        "a: Input should be a valid integer, unable to parse string as an integer",
        "b: Field required",
    ]
    assert str(caught.value) == (
        "Invalid arguments for tool 'multiply': "
        "a: Input should be a valid integer, unable to parse string as an integer; "
        "b: Field required"
    )


def test_a_nested_model_error_names_the_path() -> None:
    def plot(point: Point) -> str:
        return ""

    with pytest.raises(ToolArgumentsError) as caught:
        Tool.from_function(plot).validate_arguments({"point": {"x": 1.5}})
    assert caught.value.details == {
        "tool_name": "plot",
        "problems": [
            "point.x: Input should be a valid integer, got a number with a fractional part"
        ],
    }


def test_a_literal_refuses_other_values() -> None:
    def paint(color: Literal["red", "blue"]) -> str:
        return color

    with pytest.raises(ToolArgumentsError) as caught:
        Tool.from_function(paint).validate_arguments({"color": "green"})
    assert caught.value.details["problems"] == ["color: Input should be 'red' or 'blue'"]


def test_annotated_constraints_are_enforced() -> None:
    def pick(n: Annotated[int, Field(ge=1)]) -> int:
        return n

    with pytest.raises(ToolArgumentsError) as caught:
        Tool.from_function(pick).validate_arguments({"n": 0})
    assert caught.value.details["problems"] == ["n: Input should be greater than or equal to 1"]


def test_a_renamed_tool_names_itself_in_its_errors() -> None:
    @tool(name="times")
    def product(a: int) -> int:
        return a

    with pytest.raises(ToolArgumentsError) as caught:
        product.validate_arguments({})
    assert caught.value.details == {"tool_name": "times", "problems": ["a: Field required"]}


def test_validation_fills_defaults_and_coerces_like_pydantic() -> None:
    def plot(point: Point, scale: float = 1.0, label: str | None = None) -> str:
        return ""

    assert Tool.from_function(plot).validate_arguments({"point": {"x": "3"}}) == {
        "point": Point(x=3, y=0),
        "scale": 1.0,
        "label": None,
    }


# --- running ---------------------------------------------------------------------------------


async def test_run_a_sync_handler_in_a_worker_thread() -> None:
    seen: list[tuple[int, int, int]] = []

    def add(a: int, b: int = 10) -> int:
        seen.append((a, b, threading.get_ident()))
        return a + b

    assert await Tool.from_function(add).run({"a": "2"}) == 12
    assert [(a, b) for a, b, _ in seen] == [(2, 10)]
    assert seen[0][2] != threading.get_ident()


async def test_run_an_async_handler() -> None:
    assert await search_the_web.run({"query": "agents"}) == ["result for agents"]


async def test_run_a_handler_object_whose_call_returns_an_awaitable() -> None:
    class Lookup:
        async def __call__(self, key: str) -> str:
            return key.upper()

    schema = {"type": "object", "properties": {"key": {"type": "string"}}}
    assert await Tool.from_schema("lookup", "", schema, Lookup()).run({"key": "abc"}) == "ABC"


async def test_run_passes_pydantic_models_and_returns_json_ready_data() -> None:
    received: list[Point] = []

    async def forecast(city: str, where: Point) -> list[Forecast]:
        received.append(where)
        return [Forecast(city=city, day=dt.date(2024, 5, 17), highs=[21.5, 19.0])]

    result = await Tool.from_function(forecast).run({"city": "Paris", "where": {"x": 2}})
    assert received == [Point(x=2, y=0)]
    assert result == [{"city": "Paris", "day": "2024-05-17", "highs": [21.5, 19.0]}]


async def test_run_refuses_bad_arguments_before_calling_the_handler() -> None:
    calls: list[int] = []

    def count(n: int) -> int:
        calls.append(n)
        return n

    with pytest.raises(ToolArgumentsError):
        await Tool.from_function(count).run({"n": 1, "extra": True})
    assert calls == []


async def test_run_lets_the_handler_error_through() -> None:
    def explode() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match=r"^boom$"):
        await Tool.from_function(explode).run({})


# --- tools from a JSON schema ----------------------------------------------------------------

WEATHER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "minLength": 1},
        "when": {"type": "string", "format": "date"},
        "options": {
            "type": "object",
            "properties": {"days": {"type": "integer", "minimum": 1}},
        },
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["city"],
    "additionalProperties": False,
}


def _weather(**arguments: Any) -> dict[str, Any]:
    return {"got": arguments}


def test_from_schema_keeps_the_schema_as_given() -> None:
    made = Tool.from_schema("get_weather", "Weather for a city.", WEATHER_SCHEMA, _weather)
    assert made.parameters == WEATHER_SCHEMA
    assert made.parameters is not WEATHER_SCHEMA
    assert made.definition() == ToolDefinition("get_weather", "Weather for a city.", WEATHER_SCHEMA)


async def test_from_schema_passes_valid_arguments_as_keywords() -> None:
    made = Tool.from_schema("get_weather", "", WEATHER_SCHEMA, _weather)
    arguments = {"city": "Paris", "when": "2024-05-17", "options": {"days": 2}}
    assert await made.run(arguments) == {"got": arguments}


async def test_from_schema_accepts_an_async_handler() -> None:
    async def handler(city: str) -> str:
        return f"sunny in {city}"

    made = Tool.from_schema("get_weather", "", WEATHER_SCHEMA, handler)
    assert await made.run({"city": "Oslo"}) == "sunny in Oslo"


@pytest.mark.parametrize(
    ("arguments", "problems"),
    [
        ({"city": 3}, ["city: 3 is not of type 'string'"]),
        ({"city": ""}, ["city: '' should be non-empty"]),
        ({}, ["<root>: 'city' is a required property"]),
        (
            {"city": "Paris", "zone": "x"},
            ["<root>: Additional properties are not allowed ('zone' was unexpected)"],
        ),
        (
            {"city": "Paris", "options": {"days": 0}},
            ["options.days: 0 is less than the minimum of 1"],
        ),
        ({"city": "Paris", "tags": ["a", 2]}, ["tags.1: 2 is not of type 'string'"]),
        ({"city": "Paris", "when": "tomorrow"}, ["when: 'tomorrow' is not a 'date'"]),
        (
            {"city": 1, "options": {"days": "two"}},
            ["city: 1 is not of type 'string'", "options.days: 'two' is not of type 'integer'"],
        ),
    ],
)
def test_from_schema_refuses_bad_arguments_naming_the_path(
    arguments: dict[str, Any], problems: list[str]
) -> None:
    made = Tool.from_schema("get_weather", "", WEATHER_SCHEMA, _weather)
    with pytest.raises(ToolArgumentsError) as caught:
        made.validate_arguments(arguments)
    assert caught.value.code is GMIErrorCode.VALIDATION_ERROR
    assert caught.value.details == {"tool_name": "get_weather", "problems": problems}
    assert caught.value.message == "Invalid arguments for tool 'get_weather': " + "; ".join(
        problems
    )


async def test_from_schema_does_not_call_the_handler_with_bad_arguments() -> None:
    calls: list[dict[str, Any]] = []

    def handler(**arguments: Any) -> None:
        calls.append(arguments)

    with pytest.raises(ToolArgumentsError):
        await Tool.from_schema("get_weather", "", WEATHER_SCHEMA, handler).run({"city": 1})
    assert calls == []


def test_from_schema_refuses_an_invalid_schema_at_construction() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "strin"}}}
    with pytest.raises(
        ValueError, match=r"^tool 'get_weather': parameters is not a valid JSON"
    ) as caught:
        Tool.from_schema("get_weather", "", schema, _weather)
    assert str(caught.value).endswith("(at properties/city/type)")


@pytest.mark.parametrize("kind", ["array", "string"])
def test_from_schema_refuses_parameters_that_are_not_an_object(kind: str) -> None:
    with pytest.raises(
        ValueError, match=r"^tool 'listing': parameters must be a JSON schema of type 'object'$"
    ):
        Tool.from_schema("listing", "", {"type": kind}, _weather)


def test_from_schema_without_a_type_is_taken_as_an_object() -> None:
    made = Tool.from_schema("anything", "", {"properties": {"a": {"type": "integer"}}}, _weather)
    assert made.validate_arguments({"a": 1}) == {"a": 1}


# --- refusals at construction ----------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["", "get weather", "get.weather", "météo", "a" * 65, "x/y", "get_weather\n"]
)
def test_bad_tool_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="must be 1-64 letters, digits, '_' or '-'"):
        Tool.from_schema(name, "", {"type": "object"}, _weather)
    with pytest.raises(ValueError, match="must be 1-64 letters, digits, '_' or '-'"):
        Tool.from_function(multiply_numbers, name=name)


@pytest.mark.parametrize("name", ["a", "get_weather", "get-weather-2", "A" * 64])
def test_good_tool_names_are_kept(name: str) -> None:
    assert Tool.from_schema(name, "", {"type": "object"}, _weather).name == name
    assert Tool.from_function(multiply_numbers, name=name).name == name


def multiply_numbers(a: int, b: int) -> int:
    return a * b


def test_var_positional_parameters_are_refused() -> None:
    def total(*numbers: int) -> int:
        return sum(numbers)

    with pytest.raises(
        TypeError, match=r"^tool 'total': \*args and \*\*kwargs cannot be described$"
    ):
        Tool.from_function(total)


def test_var_keyword_parameters_are_refused() -> None:
    def configure(name: str, **settings: str) -> None:
        return None

    with pytest.raises(TypeError, match=r"^tool 'configure': \*args and \*\*kwargs cannot be"):
        tool(configure)


def test_positional_only_parameters_are_refused() -> None:
    def square(n: int, /) -> int:
        return n * n

    with pytest.raises(TypeError, match=r"^tool 'square': positional-only parameters are not"):
        Tool.from_function(square)


def test_from_schema_refuses_an_invalid_schema_every_time_and_accepts_a_valid_one_again() -> None:
    # A schema check is remembered only for valid schemas (agentos.tools.schema_check).
    bad = {"type": "object", "properties": {"q": {"type": "nonsense"}}}
    for _ in range(2):
        with pytest.raises(ValueError, match=r"tool 'look': parameters is not a valid JSON schema"):
            Tool.from_schema("look", "d", bad, lambda q: q)
    good = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    first = Tool.from_schema("look", "d", good, lambda q: q)
    again = Tool.from_schema("look", "d", dict(good), lambda q: q)
    assert first.parameters == again.parameters == good
    with pytest.raises(ValueError, match="not a valid JSON schema"):  # unencodable: checked too
        Tool.from_schema(
            "look", "d", {"type": "object", "properties": {"q": {"type": object}}}, str
        )
