"""`stream_text()`: text and typed streams, awaitables, errors, stopping early, refusals."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from typing import Any, TypeVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentos import (
    ErrorPart,
    FinishPart,
    GMIError,
    GMIErrorCode,
    Message,
    ModelUsage,
    ProviderError,
    StepFinishPart,
    StepResult,
    StreamPart,
    StreamTextResult,
    TextDeltaPart,
    ToolCall,
    ToolCallPart,
    ToolResult,
    ToolResultPart,
    generate_text,
    stream_text,
    tool,
)
from agentos.llm import ModelChunk, ModelRequest, TextDelta
from agentos.llm.model import closing_stream
from agentos.testing import ScriptedModel, ScriptStep

T = TypeVar("T")

LOOKUPS: list[str] = []


@tool
def lookup(key: str) -> dict[str, str]:
    """Look a key up."""
    LOOKUPS.append(key)
    return {"key": key, "value": key.upper()}


@pytest.fixture(autouse=True)
def _clear_lookups() -> None:
    LOOKUPS.clear()


class WatchedModel:
    """A `ChatModel` around a `ScriptedModel` that records each stream's chunks and its ending."""

    def __init__(self, inner: ScriptedModel) -> None:
        self.inner = inner
        self.chunks: list[ModelChunk] = []
        self.endings: list[str] = []

    @property
    def provider_id(self) -> str:
        return self.inner.provider_id

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        return self._watch(self.inner.stream(request))

    async def _watch(self, stream: AsyncIterator[ModelChunk]) -> AsyncIterator[ModelChunk]:
        ending = "closed early"
        try:
            async with closing_stream(stream) as chunks:
                async for chunk in chunks:
                    self.chunks.append(chunk)
                    yield chunk
            ending = "completed"
        except asyncio.CancelledError:
            ending = "cancelled"
            raise
        except Exception:
            ending = "failed"
            raise
        finally:
            self.endings.append(ending)


async def soon(awaitable: Awaitable[T]) -> T:
    """Await something that must finish at once: a hang fails the test instead of stalling it."""
    async with asyncio.timeout(5):
        return await awaitable


async def read_all(result: StreamTextResult) -> list[StreamPart]:
    return [part async for part in result.full_stream]


def tool_round_model() -> ScriptedModel:
    return ScriptedModel(
        [
            ScriptStep(
                text=["Let ", "me ", "check."],
                tool_calls=[ToolCall("c1", "lookup", {"key": "abc"})],
                usage=ModelUsage(prompt_tokens=10, completion_tokens=4, cost_usd=0.25),
            ),
            ScriptStep(
                text=["It ", "is ", "ABC."],
                usage=ModelUsage(prompt_tokens=30, completion_tokens=3, cost_usd=0.5),
            ),
        ]
    )


CALL = ToolCall("c1", "lookup", {"key": "abc"})
RESULT = ToolResult("c1", "lookup", {"key": "abc", "value": "ABC"})
STEP_0 = StepResult(
    index=0,
    text="Let me check.",
    tool_calls=[CALL],
    tool_results=[RESULT],
    finish_reason="tool_calls",
    usage=ModelUsage(prompt_tokens=10, completion_tokens=4, cost_usd=0.25),
    provider_id="scripted",
    model_id="scripted-model",
    response_model="scripted-model",
)
STEP_1 = StepResult(
    index=1,
    text="It is ABC.",
    tool_calls=[],
    tool_results=[],
    finish_reason="stop",
    usage=ModelUsage(prompt_tokens=30, completion_tokens=3, cost_usd=0.5),
    provider_id="scripted",
    model_id="scripted-model",
    response_model="scripted-model",
)
TOTAL = ModelUsage(prompt_tokens=40, completion_tokens=7, cost_usd=0.75)


# --- text_stream -----------------------------------------------------------------------------


async def test_text_stream_deltas_join_to_the_final_text() -> None:
    model = ScriptedModel([ScriptStep(text=["Hel", "lo, ", "", "world", "!"])])
    result = stream_text("Hi", model=model)

    deltas = [delta async for delta in result.text_stream]

    assert deltas == ["Hel", "lo, ", "world", "!"]
    assert await result.text == "Hello, world!" == "".join(deltas)


async def test_text_stream_carries_the_text_of_every_step() -> None:
    result = stream_text("What is abc?", model=tool_round_model(), tools=[lookup])
    deltas = [delta async for delta in result.text_stream]
    assert deltas == ["Let ", "me ", "check.", "It ", "is ", "ABC."]
    # The result's text is the last step's.
    assert await result.text == "It is ABC."


@given(st.lists(st.text(max_size=6), max_size=8))
async def test_text_stream_deltas_always_join_to_the_text(deltas: list[str]) -> None:
    result = stream_text("Hi", model=ScriptedModel([ScriptStep(text=deltas)]))
    streamed = [delta async for delta in result.text_stream]
    assert streamed == [delta for delta in deltas if delta]
    assert await result.text == "".join(streamed) == "".join(deltas)


# --- full_stream -----------------------------------------------------------------------------


async def test_full_stream_yields_the_typed_parts_in_order() -> None:
    result = stream_text("What is abc?", model=tool_round_model(), tools=[lookup])

    assert await read_all(result) == [
        TextDeltaPart("Let "),
        TextDeltaPart("me "),
        TextDeltaPart("check."),
        ToolCallPart(CALL),
        StepFinishPart(STEP_0),
        ToolResultPart(RESULT),
        TextDeltaPart("It "),
        TextDeltaPart("is "),
        TextDeltaPart("ABC."),
        StepFinishPart(STEP_1),
        FinishPart("stop", TOTAL),
    ]
    assert LOOKUPS == ["abc"]


async def test_full_stream_read_with_match() -> None:
    result = stream_text("What is abc?", model=tool_round_model(), tools=[lookup])
    events: list[str] = []

    async for part in result.full_stream:
        match part:
            case TextDeltaPart(text=text):
                events.append(f"text {text!r}")
            case ToolCallPart(tool_call=ToolCall(name=name, arguments=arguments)):
                events.append(f"call {name} {arguments}")
            case StepFinishPart(step=StepResult(index=index, finish_reason=reason)):
                events.append(f"step {index} {reason}")
            case ToolResultPart(tool_result=ToolResult(tool_name=name, output=output)):
                events.append(f"result {name} {output}")
            case ErrorPart(error=error):
                events.append(f"error {error}")
            case FinishPart(finish_reason=reason, usage=usage):
                events.append(f"finish {reason} {usage.total_tokens}")

    assert events == [
        "text 'Let '",
        "text 'me '",
        "text 'check.'",
        "call lookup {'key': 'abc'}",
        "step 0 tool_calls",
        "result lookup {'key': 'abc', 'value': 'ABC'}",
        "text 'It '",
        "text 'is '",
        "text 'ABC.'",
        "step 1 stop",
        "finish stop 47",
    ]


async def test_full_stream_shows_a_failed_tool_as_an_error_result() -> None:
    call = ToolCall("c1", "lookup", {})
    model = ScriptedModel([ScriptStep(tool_calls=[call]), "Which key?"])
    result = stream_text("Look up", model=model, tools=[lookup])

    parts = await read_all(result)

    message = "Invalid arguments for tool 'lookup': key: Field required"
    assert parts[2] == ToolResultPart(
        ToolResult(
            "c1",
            "lookup",
            output=message,
            is_error=True,
            error_details={
                "code": "SYS_VALIDATION_ERROR",
                "message": message,
                "details": {"tool_name": "lookup", "problems": ["key: Field required"]},
            },
        )
    )
    assert parts[-1] == FinishPart("stop", (await result.result).usage)


async def test_the_finish_part_carries_the_last_finish_reason_and_the_usage() -> None:
    model = ScriptedModel([ScriptStep(text="cut", finish_reason="length")])
    parts = await read_all(stream_text("Hi", model=model))
    # ScriptedModel's estimate: ceil(2 / 4) = 1 prompt token, ceil(3 / 4) = 1 completion token.
    assert parts[-1] == FinishPart("length", ModelUsage(prompt_tokens=1, completion_tokens=1))


# --- the awaitables --------------------------------------------------------------------------


async def test_awaitables_after_the_stream_is_read() -> None:
    result = stream_text("What is abc?", model=tool_round_model(), tools=[lookup])
    await read_all(result)

    assert await result.text == "It is ABC."
    assert await result.usage == TOTAL
    assert await result.finish_reason == "stop"
    final = await result.result
    assert final.steps == [STEP_0, STEP_1]
    assert final.tool_calls == [CALL]
    assert final.tool_results == [RESULT]
    assert final.response_messages == [
        Message.assistant("Let me check.", tool_calls=[CALL]),
        Message.tool(RESULT),
        Message.assistant("It is ABC."),
    ]


async def test_awaiting_without_reading_runs_the_stream_to_its_end() -> None:
    model = tool_round_model()
    result = stream_text("What is abc?", model=model, tools=[lookup])

    assert await result.text == "It is ABC."
    assert model.calls == 2
    assert LOOKUPS == ["abc"]
    assert await result.usage == TOTAL
    assert await result.finish_reason == "stop"
    assert (await result.result).steps == [STEP_0, STEP_1]
    # The generation ran once.
    assert model.calls == 2


async def test_awaitables_awaited_together_share_one_run() -> None:
    model = tool_round_model()
    result = stream_text("What is abc?", model=model, tools=[lookup])
    text, usage, reason = await asyncio.gather(result.text, result.usage, result.finish_reason)
    assert (text, usage, reason) == ("It is ABC.", TOTAL, "stop")
    assert model.calls == 2
    assert LOOKUPS == ["abc"]


async def test_awaiting_while_another_task_reads_waits_for_the_reader() -> None:
    go_on = asyncio.Event()
    model = ScriptedModel([ScriptStep(text=["One ", "two."], wait=go_on, wait_at=1)])
    result = stream_text("Count", model=model)
    received: list[str] = []

    async def read() -> None:
        async for delta in result.text_stream:
            received.append(delta)

    reader = asyncio.create_task(read())
    text = asyncio.create_task(soon(result.text))
    await asyncio.sleep(0)
    assert not text.done()
    go_on.set()
    assert await text == "One two."
    await reader
    assert received == ["One ", "two."]
    assert model.calls == 1


async def test_the_streamed_result_equals_generate_texts() -> None:
    streamed = stream_text("What is abc?", model=tool_round_model(), tools=[lookup])
    generated = await generate_text("What is abc?", model=tool_round_model(), tools=[lookup])
    assert await streamed.result == generated


async def test_the_model_is_not_called_before_the_stream_is_read() -> None:
    model = ScriptedModel(["Hi!"])
    result = stream_text("Hi", model=model)
    assert model.calls == 0
    assert await result.text == "Hi!"
    assert model.calls == 1


# --- one reading -----------------------------------------------------------------------------


async def test_the_full_stream_cannot_be_read_twice() -> None:
    result = stream_text("Hi", model=ScriptedModel(["Hi!"]))
    await read_all(result)
    with pytest.raises(RuntimeError, match="can be read only once"):
        _ = result.full_stream


async def test_the_text_stream_cannot_be_read_after_the_full_stream() -> None:
    result = stream_text("Hi", model=ScriptedModel(["Hi!"]))
    _ = result.full_stream
    with pytest.raises(RuntimeError, match="can be read only once"):
        _ = result.text_stream


async def test_no_stream_can_be_read_after_an_awaitable_drained_it() -> None:
    result = stream_text("Hi", model=ScriptedModel(["Hi!"]))
    assert await result.text == "Hi!"
    with pytest.raises(RuntimeError, match="can be read only once"):
        _ = result.text_stream
    with pytest.raises(RuntimeError, match="can be read only once"):
        _ = result.full_stream


# --- errors ----------------------------------------------------------------------------------


async def test_an_error_before_output_ends_the_full_stream_with_error_and_finish() -> None:
    result = stream_text("Hi", model=ScriptedModel([ScriptStep.fail(503, "overloaded")]))

    parts = await read_all(result)

    match parts:
        case [ErrorPart(error=ProviderError() as error), FinishPart("error", usage)]:
            assert error.code is GMIErrorCode.LLM_PROVIDER_ERROR
            assert error.status_code == 503
            assert error.message == "[503] overloaded"
            assert error.after_output is False
            # No step finished: the usage is that of no steps.
            assert usage == ModelUsage.zero()
        case _:
            pytest.fail(f"unexpected parts: {parts}")


async def test_an_error_after_output_ends_the_full_stream_with_error_and_finish() -> None:
    model = ScriptedModel([ScriptStep.fail(500, after_text=["The ", "answer"])])
    result = stream_text("Hi", model=model)

    parts = await read_all(result)

    match parts:
        case [
            TextDeltaPart("The "),
            TextDeltaPart("answer"),
            ErrorPart(error=ProviderError(status_code=500, after_output=True)),
            FinishPart("error", usage),
        ]:
            assert usage == ModelUsage.zero()
        case _:
            pytest.fail(f"unexpected parts: {parts}")


async def test_an_error_after_a_tool_round_keeps_the_finished_steps_usage() -> None:
    model = ScriptedModel(
        [
            ScriptStep(
                tool_calls=[CALL],
                usage=ModelUsage(prompt_tokens=10, completion_tokens=4, cost_usd=0.25),
            ),
            ScriptStep.fail(429, "rate limited"),
        ]
    )
    result = stream_text("Hi", model=model, tools=[lookup])

    parts = await read_all(result)

    assert [type(part) for part in parts] == [
        ToolCallPart,
        StepFinishPart,
        ToolResultPart,
        ErrorPart,
        FinishPart,
    ]
    assert parts[-1] == FinishPart(
        "error", ModelUsage(prompt_tokens=10, completion_tokens=4, cost_usd=0.25)
    )


async def test_the_text_stream_raises_the_error_after_the_text_before_it() -> None:
    model = ScriptedModel([ScriptStep.fail(500, after_text=["The ", "answer"])])
    result = stream_text("Hi", model=model)
    received: list[str] = []

    async def read() -> None:
        async for delta in result.text_stream:
            received.append(delta)

    with pytest.raises(ProviderError) as caught:
        await read()

    assert received == ["The ", "answer"]
    assert caught.value.status_code == 500
    with pytest.raises(ProviderError) as again:
        await result.text
    assert again.value is caught.value


async def test_awaiting_the_text_raises_the_error() -> None:
    result = stream_text("Hi", model=ScriptedModel([ScriptStep.fail(503)]))
    with pytest.raises(ProviderError) as caught:
        await result.text
    assert caught.value.code is GMIErrorCode.LLM_PROVIDER_ERROR
    assert caught.value.status_code == 503
    for awaitable in (result.usage, result.finish_reason, result.result):
        with pytest.raises(ProviderError) as again:
            await awaitable
        assert again.value is caught.value


async def test_awaiting_after_reading_a_failed_stream_raises_the_streamed_error() -> None:
    result = stream_text("Hi", model=ScriptedModel([ScriptStep.fail(503)]))
    parts = await read_all(result)
    assert isinstance(parts[0], ErrorPart)
    with pytest.raises(ProviderError) as caught:
        await result.text
    assert caught.value is parts[0].error


async def test_another_exception_in_the_model_streams_as_a_provider_error() -> None:
    cause = ConnectionResetError("socket closed")
    result = stream_text("Hi", model=ScriptedModel([ScriptStep(text="Half", error=cause)]))

    parts = await read_all(result)

    match parts:
        case [
            TextDeltaPart("Half"),
            ErrorPart(error=ProviderError() as error),
            FinishPart("error"),
        ]:
            assert error.message == "scripted model call failed: socket closed"
            assert error.__cause__ is cause
            assert error.after_output is True
        case _:
            pytest.fail(f"unexpected parts: {parts}")


# --- stopping early --------------------------------------------------------------------------


async def test_breaking_out_of_the_full_stream_closes_the_model_stream() -> None:
    go_on = asyncio.Event()
    model = WatchedModel(
        ScriptedModel([ScriptStep(text=["Once ", "upon ", "a time."], wait=go_on, wait_at=1)])
    )
    result = stream_text("Tell me a story", model=model)

    async for part in result.full_stream:
        assert part == TextDeltaPart("Once ")
        break
    go_on.set()  # the model could go on now, were its stream still open

    with pytest.raises(GMIError) as caught:
        await soon(result.text)

    assert caught.value.code is GMIErrorCode.ABORTED
    assert caught.value.message == "the stream was stopped before the generation finished"
    assert model.chunks == [TextDelta("Once ")]
    assert model.endings == ["closed early"]
    for _ in range(5):
        await asyncio.sleep(0)
    assert model.chunks == [TextDelta("Once ")]


async def test_breaking_out_of_the_text_stream_closes_the_model_stream() -> None:
    go_on = asyncio.Event()
    model = WatchedModel(
        ScriptedModel([ScriptStep(text=["Once ", "upon ", "a time."], wait=go_on, wait_at=1)])
    )
    result = stream_text("Tell me a story", model=model)

    async for delta in result.text_stream:
        assert delta == "Once "
        break
    go_on.set()

    # DESIGN §5.19: the usage is estimated from the prompt and the delta that arrived.
    usage = await soon(result.usage)
    assert (usage.completion_tokens, usage.estimated) == (2, True)
    with pytest.raises(GMIError) as caught:
        await soon(result.text)
    assert caught.value.code is GMIErrorCode.ABORTED
    assert model.chunks == [TextDelta("Once ")]
    assert model.endings == ["closed early"]


async def test_aclose_on_the_full_stream_closes_the_model_stream() -> None:
    go_on = asyncio.Event()
    model = WatchedModel(ScriptedModel([ScriptStep(text=["Once ", "upon"], wait=go_on, wait_at=1)]))
    result = stream_text("Tell me a story", model=model)
    stream = result.full_stream

    assert await anext(stream) == TextDeltaPart("Once ")
    await stream.aclose()

    assert model.endings == ["closed early"]
    with pytest.raises(GMIError) as caught:
        await soon(result.result)
    assert caught.value.code is GMIErrorCode.ABORTED


async def test_cancelling_the_reader_while_the_model_waits_aborts_the_model_call() -> None:
    go_on = asyncio.Event()
    model = WatchedModel(ScriptedModel([ScriptStep(text=["Once ", "upon"], wait=go_on, wait_at=1)]))
    result = stream_text("Tell me a story", model=model)
    received: list[str] = []
    first_delta = asyncio.Event()

    async def read() -> None:
        async for delta in result.text_stream:
            received.append(delta)
            first_delta.set()

    reader = asyncio.create_task(read())
    await first_delta.wait()
    # The reader now waits for the next delta, which the model holds back until go_on is set.
    assert model.endings == []
    reader.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reader

    assert model.endings == ["cancelled"]
    go_on.set()
    with pytest.raises(GMIError) as caught:
        await soon(result.text)
    assert caught.value.code is GMIErrorCode.ABORTED
    assert received == ["Once "]
    assert model.chunks == [TextDelta("Once ")]


async def test_stopping_before_the_tool_round_runs_no_tool() -> None:
    model = tool_round_model()
    result = stream_text("What is abc?", model=model, tools=[lookup])

    async for part in result.full_stream:
        if isinstance(part, ToolCallPart):
            break

    with pytest.raises(GMIError) as caught:
        await soon(result.text)
    assert caught.value.code is GMIErrorCode.ABORTED
    assert LOOKUPS == []
    assert model.calls == 1


async def test_stopping_after_the_finish_part_keeps_the_result() -> None:
    result = stream_text("Hi", model=ScriptedModel(["Hello."]))
    async for part in result.full_stream:
        if isinstance(part, FinishPart):
            break
    assert await soon(result.text) == "Hello."


# --- refusals at call time -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "option"),
    [
        ({}, "prompt"),
        ({"prompt": "Hi", "max_steps": 0}, "max_steps"),
        ({"prompt": "Hi", "temperature": 3}, "temperature"),
        ({"prompt": "Hi", "stop": "END"}, "stop"),
        ({"prompt": "Hi", "tools": [lookup, lookup]}, "tools"),
        ({"prompt": "Hi", "tool_choice": "lookup"}, "tool_choice"),
        ({"prompt": "Hi", "messages": ["Hi"]}, "messages"),
    ],
)
def test_a_bad_option_raises_when_stream_text_is_called(
    options: dict[str, Any], option: str
) -> None:
    model = ScriptedModel(["never sent"])
    with pytest.raises(GMIError) as caught:
        stream_text(model=model, **options)
    assert caught.value.code is GMIErrorCode.INVALID_ARGUMENT
    assert caught.value.details == {"option": option}
    assert model.calls == 0


def test_an_unknown_provider_raises_when_stream_text_is_called() -> None:
    # Through the gateway, a primary that does not resolve is a configuration error (spec).
    with pytest.raises(GMIError) as caught:
        stream_text("Hi", provider="nowhere")
    assert caught.value.code is GMIErrorCode.CONFIGURATION_ERROR
    assert caught.value.details == {"option": "provider", "provider": "nowhere", "hop": 0}
