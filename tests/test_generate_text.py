"""`generate_text()`: requests, options, tool rounds, step limits, provider errors, refusals."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import pytest

from agentos import (
    DEFAULT_COT_INSTRUCTION,
    GenerateTextResult,
    GMIError,
    GMIErrorCode,
    ImagePart,
    Message,
    ModelUsage,
    ProviderError,
    ReplayBlock,
    Role,
    StepResult,
    TextPart,
    ToolCall,
    ToolResult,
    generate_text,
    tool,
)
from agentos.llm import CompletionOptions, ToolDefinition
from agentos.testing import ScriptedModel, ScriptStep

WEATHER_CALLS: list[tuple[str, str]] = []


@tool
def get_weather(city: str, unit: Literal["c", "f"] = "c") -> dict[str, Any]:
    """Get the current temperature in a city.

    Args:
        city: The city's name.
        unit: Celsius or Fahrenheit.
    """
    WEATHER_CALLS.append((city, unit))
    return {"city": city, "temperature": 21 if unit == "c" else 70, "unit": unit}


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def explode(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(reason)


WEATHER_DEFINITION = ToolDefinition(
    "get_weather",
    "Get the current temperature in a city.",
    {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "city": {"type": "string", "description": "The city's name."},
            "unit": {
                "type": "string",
                "enum": ["c", "f"],
                "default": "c",
                "description": "Celsius or Fahrenheit.",
            },
        },
        "required": ["city"],
    },
)


@pytest.fixture(autouse=True)
def _clear_weather_calls() -> None:
    WEATHER_CALLS.clear()


def weather_call(call_id: str = "call_1", **arguments: Any) -> ToolCall:
    return ToolCall(call_id, "get_weather", arguments or {"city": "Paris"})


# --- plain text ------------------------------------------------------------------------------


async def test_plain_text() -> None:
    model = ScriptedModel(["Hello there, friend."])

    result = await generate_text("Hi", model=model)

    # ScriptedModel's estimate: ceil(len("Hi") / 4) = 1, ceil(len("Hello there, friend.") / 4) = 5.
    usage = ModelUsage(prompt_tokens=1, completion_tokens=5)
    assert result == GenerateTextResult(
        text="Hello there, friend.",
        usage=usage,
        finish_reason="stop",
        tool_calls=[],
        tool_results=[],
        steps=[
            StepResult(
                index=0,
                text="Hello there, friend.",
                tool_calls=[],
                tool_results=[],
                finish_reason="stop",
                usage=usage,
                provider_id="scripted",
                model_id="scripted-model",
                replay_blocks=[],
                response_model="scripted-model",
            )
        ],
        response_messages=[Message.assistant("Hello there, friend.")],
        provider_id="scripted",
        model_id="scripted-model",
    )
    assert result.usage.total_tokens == 6
    assert result.usage.cost_usd is None
    assert model.calls == 1


async def test_the_text_joins_every_delta_of_the_step() -> None:
    model = ScriptedModel([ScriptStep(text=["Hel", "lo", "", ", wor", "ld"])])
    assert (await generate_text("Hi", model=model)).text == "Hello, world"


async def test_the_model_ids_come_from_the_model() -> None:
    model = ScriptedModel(["ok"], provider_id="acme", model_id="acme-large")
    result = await generate_text("Hi", model=model)
    assert (result.provider_id, result.model_id) == ("acme", "acme-large")
    assert (result.steps[0].provider_id, result.steps[0].model_id) == ("acme", "acme-large")
    assert result.steps[0].response_model == "acme-large"


@pytest.mark.parametrize("reason", ["length", "content_filter", "other"])
async def test_the_finish_reason_is_the_last_steps(
    reason: Literal["length", "content_filter", "other"],
) -> None:
    model = ScriptedModel([ScriptStep(text="cut sho", finish_reason=reason)])
    result = await generate_text("Hi", model=model)
    assert result.finish_reason == reason
    assert result.steps[0].finish_reason == reason


async def test_the_reported_usage_is_kept_exactly() -> None:
    usage = ModelUsage(prompt_tokens=120, completion_tokens=30, cost_usd=0.5, cache_read_tokens=100)
    model = ScriptedModel([ScriptStep(text="ok", usage=usage)])
    assert (await generate_text("Hi", model=model)).usage == usage


# --- what the model is sent ------------------------------------------------------------------


async def test_system_messages_and_prompt_are_sent_in_order_without_error_or_thought() -> None:
    model = ScriptedModel(["Sure."])
    earlier = [
        Message.user("My name is Ada."),
        Message(Role.THOUGHT, "The user introduced herself."),
        Message.assistant("Hello Ada!"),
        Message(Role.ERROR, "A tool timed out."),
        Message(Role.SUMMARY, "Ada greeted the assistant."),
    ]

    result = await generate_text(
        "What is my name?", model=model, system="Be brief.", messages=earlier
    )

    assert model.requests[0].messages == [
        Message.system("Be brief."),
        Message.user("My name is Ada."),
        Message.assistant("Hello Ada!"),
        Message(Role.SUMMARY, "Ada greeted the assistant."),
        Message.user("What is my name?"),
    ]
    assert model.requests[0].tools == []
    assert model.requests[0].options == CompletionOptions()
    # Only the messages the call added come back.
    assert result.response_messages == [Message.assistant("Sure.")]


async def test_messages_alone_are_the_conversation() -> None:
    model = ScriptedModel(["4"])
    history = [Message.system("You add."), Message.user("2+2?")]
    await generate_text(model=model, messages=history)
    assert model.requests[0].messages == history


async def test_an_empty_system_prompt_adds_no_message() -> None:
    model = ScriptedModel(["ok"])
    await generate_text("Hi", model=model, system="")
    assert model.requests[0].messages == [Message.user("Hi")]


async def test_a_multimodal_prompt_is_one_user_message() -> None:
    model = ScriptedModel(["A cat."])
    parts: list[TextPart | ImagePart] = [
        TextPart("What is this?"),
        ImagePart("https://example.com/cat.png", media_type="image/png"),
    ]
    await generate_text(parts, model=model)
    assert model.requests[0].messages == [Message.user(parts)]


async def test_the_callers_messages_are_not_changed() -> None:
    model = ScriptedModel([ScriptStep(tool_calls=[weather_call()]), "Warm."])
    history = [Message.user("Weather in Paris?")]
    await generate_text(model=model, messages=history, tools=[get_weather])
    assert history == [Message.user("Weather in Paris?")]


async def test_options_reach_the_model_as_completion_options() -> None:
    model = ScriptedModel(["ok"])

    await generate_text(
        "Hi",
        model=model,
        temperature=0.2,
        max_tokens=256,
        top_p=0.9,
        frequency_penalty=0.5,
        presence_penalty=-0.5,
        stop=["\n\n", "END"],
        seed=42,
        user_id="user-7f3a",
        request_timeout=30.0,
        custom_model_params={"top_k": 40, "repeat_penalty": 1.1},
    )

    assert model.requests[0].options == CompletionOptions(
        temperature=0.2,
        max_tokens=256,
        top_p=0.9,
        frequency_penalty=0.5,
        presence_penalty=-0.5,
        stop_sequences=("\n\n", "END"),
        seed=42,
        tool_choice=None,
        user_id="user-7f3a",
        request_timeout=30.0,
        custom_model_params={"top_k": 40, "repeat_penalty": 1.1},
    )


async def test_boundary_option_values_are_accepted() -> None:
    model = ScriptedModel(["a", "b"])
    await generate_text("Hi", model=model, temperature=0, top_p=0, max_tokens=1, max_steps=1)
    await generate_text("Hi", model=model, temperature=2, top_p=1, seed=-1, stop=())
    assert [request.options for request in model.requests] == [
        CompletionOptions(temperature=0, top_p=0, max_tokens=1),
        CompletionOptions(temperature=2, top_p=1, seed=-1, stop_sequences=()),
    ]


async def test_tools_are_offered_with_tool_choice_auto_by_default() -> None:
    model = ScriptedModel(["No tool needed."])
    await generate_text("Hi", model=model, tools=[get_weather, add])
    request = model.requests[0]
    assert request.tools == [WEATHER_DEFINITION, add.definition()]
    assert request.options.tool_choice == "auto"


@pytest.mark.parametrize("choice", ["none", "required", "get_weather"])
async def test_an_explicit_tool_choice_is_sent_on_every_step(choice: str) -> None:
    model = ScriptedModel([ScriptStep(tool_calls=[weather_call()]), "Done."])
    await generate_text("Hi", model=model, tools=[get_weather], tool_choice=choice)
    assert [request.options.tool_choice for request in model.requests] == [choice, choice]


@pytest.mark.parametrize("choice", [None, "auto", "none", "required"])
async def test_without_tools_no_tool_choice_is_sent(choice: str | None) -> None:
    model = ScriptedModel(["ok"])
    await generate_text("Hi", model=model, tools=[], tool_choice=choice)
    assert model.requests[0].tools == []
    assert model.requests[0].options.tool_choice is None


# --- tool rounds -----------------------------------------------------------------------------


async def test_a_tool_round() -> None:
    call = weather_call(city="Paris", unit="f")
    first = ModelUsage(prompt_tokens=50, completion_tokens=12, cost_usd=0.25)
    second = ModelUsage(prompt_tokens=90, completion_tokens=8, cost_usd=0.5)
    model = ScriptedModel(
        [
            ScriptStep(text="Let me check.", tool_calls=[call], usage=first),
            ScriptStep(text="It is 70°F in Paris.", usage=second),
        ]
    )

    result = await generate_text("Weather in Paris?", model=model, tools=[get_weather])

    output = {"city": "Paris", "temperature": 70, "unit": "f"}
    tool_result = ToolResult("call_1", "get_weather", output)
    assert WEATHER_CALLS == [("Paris", "f")]
    assert model.requests[1].messages == [
        Message.user("Weather in Paris?"),
        Message.assistant("Let me check.", tool_calls=[call]),
        Message.tool(tool_result),
    ]
    assert model.requests[1].tools == [WEATHER_DEFINITION]
    assert result.text == "It is 70°F in Paris."
    assert result.finish_reason == "stop"
    assert result.tool_calls == [call]
    assert result.tool_results == [tool_result]
    assert result.usage == ModelUsage(prompt_tokens=140, completion_tokens=20, cost_usd=0.75)
    assert result.steps == [
        StepResult(
            index=0,
            text="Let me check.",
            tool_calls=[call],
            tool_results=[tool_result],
            finish_reason="tool_calls",
            usage=first,
            provider_id="scripted",
            model_id="scripted-model",
            response_model="scripted-model",
        ),
        StepResult(
            index=1,
            text="It is 70°F in Paris.",
            tool_calls=[],
            tool_results=[],
            finish_reason="stop",
            usage=second,
            provider_id="scripted",
            model_id="scripted-model",
            response_model="scripted-model",
        ),
    ]
    assert result.response_messages == [
        Message.assistant("Let me check.", tool_calls=[call]),
        Message.tool(tool_result),
        Message.assistant("It is 70°F in Paris."),
    ]


async def test_the_tool_runs_with_validated_arguments() -> None:
    seen: list[tuple[int, int]] = []

    @tool
    def multiply(a: int, b: int = 2) -> int:
        """Multiply."""
        seen.append((a, b))
        return a * b

    model = ScriptedModel([ScriptStep(tool_calls=[ToolCall("m1", "multiply", {"a": "21"})]), "42."])
    result = await generate_text("21 times 2?", model=model, tools=[multiply])
    assert seen == [(21, 2)]
    assert result.tool_results == [ToolResult("m1", "multiply", 42)]


async def test_several_calls_in_one_step_answer_in_call_order() -> None:
    calls = [
        ToolCall("w", "get_weather", {"city": "Oslo"}),
        ToolCall("s", "add", {"a": 2, "b": 3}),
    ]
    model = ScriptedModel([ScriptStep(tool_calls=calls), "Cold, and 5."])

    result = await generate_text("Go", model=model, tools=[get_weather, add])

    results = [
        ToolResult("w", "get_weather", {"city": "Oslo", "temperature": 21, "unit": "c"}),
        ToolResult("s", "add", 5),
    ]
    assert result.tool_results == results
    assert model.requests[1].messages[1:] == [
        Message.assistant("", tool_calls=calls),
        Message.tool(results[0]),
        Message.tool(results[1]),
    ]


async def test_tool_rounds_chain_until_the_model_answers() -> None:
    model = ScriptedModel(
        [
            ScriptStep(tool_calls=[ToolCall("a1", "add", {"a": 1, "b": 2})]),
            ScriptStep(tool_calls=[ToolCall("a2", "add", {"a": 3, "b": 4})]),
            "3 and 7.",
        ]
    )
    result = await generate_text("Add twice", model=model, tools=[add])
    assert [step.index for step in result.steps] == [0, 1, 2]
    assert result.tool_results == [ToolResult("a1", "add", 3), ToolResult("a2", "add", 7)]
    assert result.text == "3 and 7."
    assert model.calls == 3


async def test_replay_blocks_go_back_with_the_assistant_message() -> None:
    block = ReplayBlock("anthropic", "thinking", {"thinking": "Use the tool.", "signature": "s1"})
    call = weather_call()
    model = ScriptedModel([ScriptStep(tool_calls=[call], replay_blocks=[block]), "Warm."])

    result = await generate_text("Weather?", model=model, tools=[get_weather])

    assert result.steps[0].replay_blocks == [block]
    assert model.requests[1].messages[1] == Message.assistant(
        "", tool_calls=[call], replay_blocks=[block]
    )


async def test_tool_calls_without_tools_end_the_run_with_the_calls() -> None:
    call = weather_call()
    model = ScriptedModel([ScriptStep(tool_calls=[call])])
    result = await generate_text("Weather?", model=model)
    assert model.calls == 1
    assert result.finish_reason == "tool_calls"
    assert result.tool_calls == [call]
    assert result.tool_results == []
    assert result.response_messages == [Message.assistant("", tool_calls=[call])]


# --- tool errors go back to the model --------------------------------------------------------


async def test_an_unknown_tool_gives_the_model_a_tool_not_found_result() -> None:
    call = ToolCall("x1", "get_stock_price", {"symbol": "ACME"})
    model = ScriptedModel([ScriptStep(tool_calls=[call]), "I cannot look that up."])

    result = await generate_text("ACME?", model=model, tools=[get_weather, add])

    message = "Tool 'get_stock_price' is not available. Available tools: get_weather, add."
    error = ToolResult(
        "x1",
        "get_stock_price",
        output=message,
        is_error=True,
        error_details={"code": "TOOL_NOT_FOUND", "message": message},
    )
    assert result.tool_results == [error]
    assert model.requests[1].messages[-1] == Message.tool(error)
    assert result.text == "I cannot look that up."


async def test_bad_arguments_give_the_model_a_validation_error_result() -> None:
    call = ToolCall("w1", "get_weather", {"town": "Paris"})
    model = ScriptedModel([ScriptStep(tool_calls=[call]), "Which city?"])

    result = await generate_text("Weather?", model=model, tools=[get_weather])

    problems = ["city: Field required", "town: Extra inputs are not permitted"]
    message = "Invalid arguments for tool 'get_weather': " + "; ".join(problems)
    error = ToolResult(
        "w1",
        "get_weather",
        output=message,
        is_error=True,
        error_details={
            "code": "SYS_VALIDATION_ERROR",
            "message": message,
            "details": {"tool_name": "get_weather", "problems": problems},
        },
    )
    assert WEATHER_CALLS == []
    assert result.tool_results == [error]
    assert model.requests[1].messages[-1] == Message.tool(error)
    assert result.text == "Which city?"


async def test_a_raising_tool_gives_the_model_an_execution_failed_result() -> None:
    call = ToolCall("e1", "explode", {"reason": "kaboom"})
    model = ScriptedModel([ScriptStep(tool_calls=[call]), "The tool failed."])

    result = await generate_text("Go", model=model, tools=[explode])

    message = "Tool 'explode' failed: RuntimeError: kaboom"
    error = ToolResult(
        "e1",
        "explode",
        output=message,
        is_error=True,
        error_details={
            "code": "TOOL_EXECUTION_FAILED",
            "message": message,
            "details": {"exception_type": "RuntimeError"},
        },
    )
    assert result.tool_results == [error]
    assert model.requests[1].messages[-1] == Message.tool(error)
    assert result.text == "The tool failed."
    assert result.finish_reason == "stop"


async def test_a_tool_raising_a_gmi_error_keeps_its_code_and_details() -> None:
    @tool
    def guarded() -> str:
        """Refuses."""
        raise GMIError("not allowed here", GMIErrorCode.PERMISSION_DENIED, {"scope": "admin"})

    model = ScriptedModel([ScriptStep(tool_calls=[ToolCall("g1", "guarded", {})]), "Denied."])
    result = await generate_text("Go", model=model, tools=[guarded])
    assert result.tool_results == [
        ToolResult(
            "g1",
            "guarded",
            output="not allowed here",
            is_error=True,
            error_details={
                "code": "AUTH_PERMISSION_DENIED",
                "message": "not allowed here",
                "details": {"scope": "admin"},
            },
        )
    ]


async def test_one_failing_call_does_not_stop_the_others() -> None:
    calls = [ToolCall("e", "explode", {"reason": "x"}), ToolCall("s", "add", {"a": 1, "b": 1})]
    model = ScriptedModel([ScriptStep(tool_calls=calls), "Partly done."])
    result = await generate_text("Go", model=model, tools=[explode, add])
    assert [(r.tool_call_id, r.is_error, r.output) for r in result.tool_results] == [
        ("e", True, "Tool 'explode' failed: RuntimeError: x"),
        ("s", False, 2),
    ]


# --- max_steps -------------------------------------------------------------------------------


def always_call_add(
    messages: Sequence[Message], tools: Sequence[ToolDefinition], options: CompletionOptions
) -> ScriptStep:
    return ScriptStep(tool_calls=[ToolCall(f"call_{len(messages)}", "add", {"a": 1, "b": 1})])


async def test_max_steps_defaults_to_five_model_steps() -> None:
    model = ScriptedModel(always_call_add)

    result = await generate_text("Loop", model=model, tools=[add])

    assert model.calls == 5
    assert [step.index for step in result.steps] == [0, 1, 2, 3, 4]
    assert result.finish_reason == "tool_calls"
    assert result.text == ""
    # The last step's calls still run; their results close the response messages.
    assert len(result.tool_results) == 5
    assert result.response_messages[-1] == Message.tool(ToolResult("call_9", "add", 2))
    assert len(result.response_messages) == 10


@pytest.mark.parametrize("max_steps", [1, 2, 7])
async def test_max_steps_bounds_the_model_steps(max_steps: int) -> None:
    model = ScriptedModel(always_call_add)
    result = await generate_text("Loop", model=model, tools=[add], max_steps=max_steps)
    assert model.calls == max_steps
    assert len(result.steps) == max_steps


async def test_an_answer_before_the_limit_ends_the_run() -> None:
    model = ScriptedModel([ScriptStep(tool_calls=[ToolCall("a", "add", {"a": 1, "b": 1})]), "2"])
    result = await generate_text("1+1", model=model, tools=[add], max_steps=10)
    assert model.calls == 2
    assert result.text == "2"


# --- usage -----------------------------------------------------------------------------------


async def test_usage_adds_steps_and_an_unknown_cost_stays_unknown() -> None:
    model = ScriptedModel(
        [
            ScriptStep(
                tool_calls=[ToolCall("a", "add", {"a": 1, "b": 1})],
                usage=ModelUsage(prompt_tokens=10, completion_tokens=5, cost_usd=0.25),
            ),
            ScriptStep(text="2", usage=ModelUsage(prompt_tokens=20, completion_tokens=1)),
        ]
    )
    result = await generate_text("1+1", model=model, tools=[add])
    assert result.usage == ModelUsage(prompt_tokens=30, completion_tokens=6, cost_usd=None)
    assert result.usage.cost_usd is None


async def test_a_step_without_usage_makes_the_cost_unknown() -> None:
    model = ScriptedModel(
        [
            ScriptStep(
                tool_calls=[ToolCall("a", "add", {"a": 1, "b": 1})],
                usage=ModelUsage(prompt_tokens=10, completion_tokens=5, cost_usd=0.25),
            ),
            ScriptStep(text="2", report_usage=False),
        ]
    )
    result = await generate_text("1+1", model=model, tools=[add])
    assert result.steps[1].usage is None
    assert result.usage == ModelUsage(prompt_tokens=10, completion_tokens=5, cost_usd=None)


async def test_known_costs_add_up() -> None:
    model = ScriptedModel(
        [
            ScriptStep(
                tool_calls=[ToolCall("a", "add", {"a": 1, "b": 1})],
                usage=ModelUsage(prompt_tokens=10, completion_tokens=5, cost_usd=0.25),
            ),
            ScriptStep(text="2", usage=ModelUsage(1, 1, cost_usd=0.5, cache_read_tokens=4)),
        ]
    )
    result = await generate_text("1+1", model=model, tools=[add])
    assert result.usage == ModelUsage(
        prompt_tokens=11, completion_tokens=6, cost_usd=0.75, cache_read_tokens=4
    )


# --- provider errors -------------------------------------------------------------------------


async def test_a_provider_error_before_output_raises() -> None:
    model = ScriptedModel([ScriptStep.fail(503, "overloaded")])
    with pytest.raises(ProviderError) as caught:
        await generate_text("Hi", model=model)
    error = caught.value
    assert error.code is GMIErrorCode.LLM_PROVIDER_ERROR
    assert error.message == "[503] overloaded"
    assert error.status_code == 503
    assert error.http_status == 503
    assert error.details["status_code"] == 503
    assert error.after_output is False


async def test_a_provider_error_after_output_raises() -> None:
    model = ScriptedModel([ScriptStep.fail(500, after_text="The answer is")])
    with pytest.raises(ProviderError) as caught:
        await generate_text("Hi", model=model)
    assert caught.value.code is GMIErrorCode.LLM_PROVIDER_ERROR
    assert caught.value.status_code == 500
    assert caught.value.after_output is True


async def test_a_provider_error_after_a_tool_round_raises() -> None:
    model = ScriptedModel(
        [ScriptStep(tool_calls=[weather_call()]), ScriptStep.fail(429, "rate limited")]
    )
    with pytest.raises(ProviderError) as caught:
        await generate_text("Weather?", model=model, tools=[get_weather])
    assert caught.value.status_code == 429
    assert WEATHER_CALLS == [("Paris", "c")]
    assert model.calls == 2


async def test_another_exception_in_the_model_stream_becomes_a_provider_error() -> None:
    cause = ConnectionResetError("socket closed")
    model = ScriptedModel([ScriptStep(text="Half an", error=cause)])

    with pytest.raises(ProviderError) as caught:
        await generate_text("Hi", model=model)

    error = caught.value
    assert error.code is GMIErrorCode.LLM_PROVIDER_ERROR
    assert error.message == "scripted model call failed: socket closed"
    assert error.__cause__ is cause
    assert error.status_code is None
    assert (error.provider_id, error.model_id) == ("scripted", "scripted-model")
    assert error.details == {"provider_id": "scripted", "model_id": "scripted-model"}
    assert error.after_output is True


async def test_another_exception_before_output_is_a_provider_error_before_output() -> None:
    model = ScriptedModel([ScriptStep(error=TimeoutError("read timed out"))])
    with pytest.raises(ProviderError) as caught:
        await generate_text("Hi", model=model)
    assert caught.value.message == "scripted model call failed: read timed out"
    assert caught.value.after_output is False


async def test_a_gmi_error_from_the_model_is_raised_as_it_is() -> None:
    refusal = GMIError("bad custom_model_params", GMIErrorCode.INVALID_ARGUMENT)
    model = ScriptedModel([ScriptStep(error=refusal)])
    with pytest.raises(GMIError) as caught:
        await generate_text("Hi", model=model)
    assert caught.value is refusal


# --- option refusals, before the model is called ---------------------------------------------


def plain_function(city: str) -> str:
    return city


async def assert_refused(options: dict[str, Any], option: str, message: str) -> None:
    model = ScriptedModel(["never sent"])
    with pytest.raises(GMIError) as caught:
        await generate_text(model=model, **options)
    error = caught.value
    assert type(error) is GMIError
    assert error.code is GMIErrorCode.INVALID_ARGUMENT
    assert error.details == {"option": option}
    assert error.message.startswith(message), error.message
    assert model.calls == 0


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "prompt: give a prompt, or messages ending with the turn to answer"),
        ({"prompt": None, "messages": []}, "prompt: give a prompt, or messages ending with"),
        ({"prompt": "  \n"}, "prompt: the prompt is empty"),
        ({"prompt": "", "messages": []}, "prompt: the prompt is empty"),
    ],
)
async def test_a_call_without_a_prompt_or_messages_is_refused(
    options: dict[str, Any], message: str
) -> None:
    await assert_refused(options, "prompt", message)


@pytest.mark.parametrize(
    ("options", "option", "message"),
    [
        ({"max_steps": 0}, "max_steps", "max_steps: must be an integer >= 1, got 0"),
        ({"max_steps": -3}, "max_steps", "max_steps: must be an integer >= 1, got -3"),
        ({"max_steps": True}, "max_steps", "max_steps: must be an integer >= 1, got True"),
        ({"max_steps": 2.0}, "max_steps", "max_steps: must be an integer >= 1, got 2.0"),
        ({"temperature": -0.1}, "temperature", "temperature: must be between 0.0 and 2.0, got"),
        ({"temperature": 2.5}, "temperature", "temperature: must be between 0.0 and 2.0, got 2.5"),
        ({"temperature": float("nan")}, "temperature", "temperature: must be a number, got nan"),
        ({"temperature": "0.7"}, "temperature", "temperature: must be a number, got '0.7'"),
        ({"temperature": True}, "temperature", "temperature: must be a number, got True"),
        ({"top_p": 1.01}, "top_p", "top_p: must be between 0.0 and 1.0, got 1.01"),
        ({"top_p": -0.5}, "top_p", "top_p: must be between 0.0 and 1.0, got -0.5"),
        ({"frequency_penalty": 2.5}, "frequency_penalty", "frequency_penalty: must be between"),
        ({"presence_penalty": -3}, "presence_penalty", "presence_penalty: must be between"),
        ({"max_tokens": 0}, "max_tokens", "max_tokens: must be an integer >= 1, got 0"),
        ({"max_tokens": 10.5}, "max_tokens", "max_tokens: must be an integer >= 1, got 10.5"),
        ({"max_tokens": False}, "max_tokens", "max_tokens: must be an integer >= 1, got False"),
        ({"seed": 1.5}, "seed", "seed: must be an integer, got 1.5"),
        ({"seed": "7"}, "seed", "seed: must be an integer, got '7'"),
        ({"seed": True}, "seed", "seed: must be an integer, got True"),
        ({"stop": "END"}, "stop", "stop: must be a list of strings"),
        ({"stop": ["END", 3]}, "stop", "stop: must be a list of strings"),
        ({"request_timeout": 0}, "request_timeout", "request_timeout: must be > 0.0, got 0"),
        ({"tools": [42]}, "tools", "tools: item 0: int is not a Tool or a function"),
        ({"tools": [add, "add"]}, "tools", "tools: item 1: str is not a Tool or a function"),
        ({"tools": [add, add]}, "tools", "tools: tool names must be unique, got ['add', 'add']"),
        (
            {"tools": [add], "tool_choice": "get_weather"},
            "tool_choice",
            "tool_choice: 'get_weather' is neither auto, none, required nor a tool's name",
        ),
        ({"tool_choice": "add"}, "tool_choice", "tool_choice: 'add' is neither auto, none"),
        ({"tool_choice": "Auto"}, "tool_choice", "tool_choice: 'Auto' is neither auto, none"),
        ({"messages": ["What is 2+2?"]}, "messages", "messages: item 0 is a str, not a Message"),
        ({"chain_of_thought": 1}, "chain_of_thought", "chain_of_thought: must be a bool or"),
        (
            {"temprature": 0.2},
            "temprature",
            "temprature: unknown option 'temprature' (did you mean",
        ),
        ({"maxSteps": 3}, "maxSteps", "maxSteps: unknown option 'maxSteps'"),
        (
            {"messages": [Message.user("Hi"), {"role": "user", "content": "Hi"}]},
            "messages",
            "messages: item 1 is a dict, not a Message",
        ),
    ],
)
async def test_a_bad_option_is_refused_before_the_model_is_called(
    options: dict[str, Any], option: str, message: str
) -> None:
    await assert_refused({"prompt": "Hi", **options}, option, message)


async def test_a_plain_function_in_the_tool_list_is_wrapped_as_a_tool() -> None:
    model = ScriptedModel(
        [ScriptStep(tool_calls=[ToolCall("c1", "plain_function", {"city": "Oslo"})]), "Done."]
    )
    result = await generate_text("Hi", model=model, tools=[plain_function])
    assert [tool.name for tool in model.requests[0].tools] == ["plain_function"]
    assert [(r.tool_name, r.output, r.is_error) for r in result.tool_results] == [
        ("plain_function", "Oslo", False)
    ]


async def test_a_model_instance_and_a_provider_together_are_refused() -> None:
    model = ScriptedModel(["never sent"])
    with pytest.raises(GMIError) as caught:
        await generate_text("Hi", model=model, provider="local")
    assert caught.value.code is GMIErrorCode.INVALID_ARGUMENT
    assert caught.value.details == {"option": "provider"}
    assert model.calls == 0


@pytest.mark.parametrize("prompt", ["", "  "])
async def test_a_blank_prompt_with_messages_adds_no_user_message(prompt: str) -> None:
    model = ScriptedModel(["ok"])
    await generate_text(prompt, model=model, messages=[Message.user("Hi")])
    assert model.requests[0].messages == [Message.user("Hi")]


async def test_chain_of_thought_goes_first_in_the_system_prompt_of_a_call_with_tools() -> None:
    model = ScriptedModel(["Sunny."])
    await generate_text(
        "Weather in Oslo?",
        model=model,
        system="Be brief.",
        tools=[get_weather],
        chain_of_thought=True,
    )
    first = model.requests[0].messages[0]
    assert first.role is Role.SYSTEM
    assert first.text == f"{DEFAULT_COT_INSTRUCTION}\n\nBe brief."


async def test_a_chain_of_thought_instruction_of_your_own_replaces_the_default() -> None:
    model = ScriptedModel(["Sunny."])
    await generate_text(
        "Weather in Oslo?", model=model, tools=[get_weather], chain_of_thought="Think first."
    )
    assert [m.text for m in model.requests[0].messages if m.role is Role.SYSTEM] == ["Think first."]


@pytest.mark.parametrize("chain_of_thought", [False, True])
async def test_chain_of_thought_is_left_out_of_calls_without_tools(chain_of_thought: bool) -> None:
    model = ScriptedModel(["Hi."])
    await generate_text("Hi", model=model, system="Be brief.", chain_of_thought=chain_of_thought)
    assert model.requests[0].messages[0].text == "Be brief."


async def test_chain_of_thought_is_off_by_default() -> None:
    model = ScriptedModel(["Sunny."])
    await generate_text("Weather?", model=model, system="Be brief.", tools=[get_weather])
    assert model.requests[0].messages[0].text == "Be brief."
