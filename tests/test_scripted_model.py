"""`agentos.testing.ScriptedModel` and `ScriptStep`: every behaviour a test can lean on."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentos.core import Message, ModelUsage, ReplayBlock, Role, TextPart, ToolCall, ToolResult
from agentos.llm import (
    ChatModel,
    CompletionOptions,
    FinishChunk,
    ModelChunk,
    ModelRequest,
    ProviderError,
    ReplayChunk,
    TextDelta,
    ToolCallChunk,
    ToolDefinition,
    UsageChunk,
)
from agentos.testing import FakeClock, ScriptedModel, ScriptStep, estimate_tokens

WEATHER = ToolDefinition(
    "weather",
    "The weather in a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
CALL = ToolCall("call_1", "weather", {"city": "Paris"})
THINKING = ReplayBlock("anthropic", "thinking", {"thinking": "hmm", "signature": "s1"})
SIGNATURE = ReplayBlock("gemini", "thought_signature", {"signature": "s2"})


def stop(model_id: str = "scripted-model") -> FinishChunk:
    return FinishChunk("stop", response_model=model_id)


def ask(*texts: str) -> ModelRequest:
    """A request with one user message per text."""
    return ModelRequest([Message.user(text) for text in texts])


def open_stream(model: ScriptedModel, request: ModelRequest) -> AsyncGenerator[ModelChunk, None]:
    """Start a call and return its stream as the async generator it is (it has ``aclose``)."""
    stream = model.stream(request)
    assert isinstance(stream, AsyncGenerator)
    return stream


async def play(model: ScriptedModel, request: ModelRequest | None = None) -> list[ModelChunk]:
    """Every chunk of one call."""
    return [chunk async for chunk in model.stream(request or ask("Hi"))]


def next_chunk(stream: AsyncIterator[ModelChunk]) -> asyncio.Task[ModelChunk]:
    """Ask for the next chunk in a task, so the test can see whether it is held back."""

    async def read() -> ModelChunk:
        return await anext(stream)

    return asyncio.create_task(read())


async def drain(stream: AsyncIterator[ModelChunk], into: list[ModelChunk]) -> None:
    """Read every chunk into ``into``, so what came before an error stays visible."""
    async for chunk in stream:
        into.append(chunk)


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


# --- identity --------------------------------------------------------------------------------


def test_reports_default_provider_and_model_ids() -> None:
    model = ScriptedModel([])
    assert (model.provider_id, model.model_id) == ("scripted", "scripted-model")


def test_provider_and_model_ids_can_be_set() -> None:
    model = ScriptedModel([], provider_id="openai", model_id="gpt-4o-mini")
    assert (model.provider_id, model.model_id) == ("openai", "gpt-4o-mini")


def test_is_a_chat_model() -> None:
    assert isinstance(ScriptedModel([]), ChatModel)


def test_a_lone_string_script_is_refused() -> None:
    with pytest.raises(TypeError, match="list of steps or a function, not a str"):
        ScriptedModel("Hello")


# --- the chunks of a step --------------------------------------------------------------------


async def test_a_string_step_streams_word_deltas_then_finish_then_usage() -> None:
    model = ScriptedModel(["Hello brave new world"])
    request = ModelRequest([Message.system("You are terse."), Message.user("Hi there")])
    assert await play(model, request) == [
        TextDelta("Hello "),
        TextDelta("brave "),
        TextDelta("new "),
        TextDelta("world"),
        FinishChunk("stop", response_model="scripted-model"),
        # prompt: ceil(14 / 4) + ceil(8 / 4) = 4 + 2; reply: ceil(21 / 4) = 6
        UsageChunk(ModelUsage(prompt_tokens=6, completion_tokens=6)),
    ]


async def test_a_step_with_text_streams_the_same_as_the_plain_string() -> None:
    as_string = await play(ScriptedModel(["Two words"]))
    as_step = await play(ScriptedModel([ScriptStep(text="Two words")]))
    assert as_step == as_string


async def test_explicit_deltas_stream_exactly_as_given() -> None:
    model = ScriptedModel([ScriptStep(text=["Hel", "lo", ", wor", "ld", ""])])
    chunks = await play(model)
    assert chunks[:5] == [
        TextDelta("Hel"),
        TextDelta("lo"),
        TextDelta(", wor"),
        TextDelta("ld"),
        TextDelta(""),
    ]
    assert chunks[5:] == [stop(), UsageChunk(ModelUsage(prompt_tokens=1, completion_tokens=3))]


async def test_an_empty_step_streams_only_finish_and_usage() -> None:
    assert await play(ScriptedModel([ScriptStep()])) == [
        stop(),
        UsageChunk(ModelUsage(prompt_tokens=1, completion_tokens=0)),
    ]


async def test_the_finish_chunk_names_the_model_id_it_was_given() -> None:
    chunks = await play(ScriptedModel(["ok"], model_id="claude-haiku"))
    assert chunks[-2] == FinishChunk("stop", response_model="claude-haiku")


async def test_tool_calls_follow_the_text_and_finish_with_tool_calls() -> None:
    second = ToolCall("call_2", "weather", {"city": "Oslo"})
    model = ScriptedModel([ScriptStep(text="Let me check.", tool_calls=[CALL, second])])
    assert await play(model) == [
        TextDelta("Let "),
        TextDelta("me "),
        TextDelta("check."),
        ToolCallChunk(CALL),
        ToolCallChunk(second),
        FinishChunk("tool_calls", response_model="scripted-model"),
        # reply: "Let me check." (13) + "weather{'city': 'Paris'}" (24) + ... (23) = 60 chars
        UsageChunk(ModelUsage(prompt_tokens=1, completion_tokens=15)),
    ]


async def test_replay_blocks_come_first_then_text_then_tool_calls() -> None:
    step = ScriptStep(text="Sunny.", tool_calls=[CALL], replay_blocks=[THINKING, SIGNATURE])
    chunks = await play(ScriptedModel([step]))
    assert chunks[:4] == [
        ReplayChunk(THINKING),
        ReplayChunk(SIGNATURE),
        TextDelta("Sunny."),
        ToolCallChunk(CALL),
    ]
    assert chunks[4] == FinishChunk("tool_calls", response_model="scripted-model")
    assert isinstance(chunks[5], UsageChunk)
    assert len(chunks) == 6


@pytest.mark.parametrize(
    ("step", "reason"),
    [
        (ScriptStep(text="cut", finish_reason="length"), "length"),
        (ScriptStep(text="x", tool_calls=[CALL], finish_reason="stop"), "stop"),
        (ScriptStep(finish_reason="content_filter"), "content_filter"),
        (ScriptStep(text="x", finish_reason="other"), "other"),
    ],
)
async def test_an_explicit_finish_reason_wins(step: ScriptStep, reason: str) -> None:
    finish = [
        chunk for chunk in await play(ScriptedModel([step])) if isinstance(chunk, FinishChunk)
    ]
    assert [chunk.finish_reason for chunk in finish] == [reason]


async def test_explicit_usage_is_reported_last_as_given() -> None:
    usage = ModelUsage(prompt_tokens=1000, completion_tokens=1, cost_usd=0.5, cache_read_tokens=9)
    chunks = await play(ScriptedModel([ScriptStep(text="ok", usage=usage)]))
    assert chunks == [TextDelta("ok"), stop(), UsageChunk(usage)]


async def test_report_usage_false_reports_no_usage() -> None:
    chunks = await play(ScriptedModel([ScriptStep(text="quiet", report_usage=False)]))
    assert chunks == [TextDelta("quiet"), stop()]


async def test_estimated_usage_rounds_up_each_message_and_the_reply() -> None:
    request = ModelRequest(
        [
            Message.system("a"),  # 1 char -> 1
            Message.user("abcd"),  # 4 chars -> 1
            Message.assistant("abcde"),  # 5 chars -> 2
            Message.user([TextPart("abc"), TextPart("defgh")]),  # 8 chars of text parts -> 2
        ]
    )
    chunks = await play(ScriptedModel(["123456789"]), request)  # 9 chars -> 3
    assert chunks[-1] == UsageChunk(ModelUsage(prompt_tokens=6, completion_tokens=3))
    assert chunks[-1].usage.total_tokens == 9
    assert chunks[-1].usage.cost_usd is None


async def test_estimated_usage_counts_tool_calls_and_tool_results_as_json() -> None:
    request = ModelRequest(
        [
            Message.assistant("", tool_calls=[ToolCall("c1", "add", {"a": 1})]),  # add{"a":1}: 3
            Message.tool(ToolResult("c1", "add", {"sum": 10})),  # {"sum": 10}: 11 chars -> 3
        ]
    )
    step = ScriptStep(tool_calls=[ToolCall("c2", "f", {})])  # f{}: 3 chars -> 1
    chunks = await play(ScriptedModel([step]), request)
    assert chunks[-1] == UsageChunk(ModelUsage(prompt_tokens=6, completion_tokens=1))


# --- ScriptStep.deltas ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "deltas"),
    [
        ("", []),
        ("one", ["one"]),
        ("one two", ["one ", "two"]),
        ("  lead and trail  ", ["  lead ", "and ", "trail  "]),
        ("line one\nline two", ["line ", "one\n", "line ", "two"]),
        ("   ", ["   "]),
        ("tabs\tand  doubles", ["tabs\t", "and  ", "doubles"]),
    ],
)
def test_text_is_split_into_one_delta_per_word(text: str, deltas: list[str]) -> None:
    assert ScriptStep(text=text).deltas() == deltas


def test_explicit_deltas_are_kept_even_from_a_tuple() -> None:
    assert ScriptStep(text=("a", "", " b")).deltas() == ["a", "", " b"]


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.text())
def test_word_deltas_join_back_to_the_text(text: str) -> None:
    deltas = ScriptStep(text=text).deltas()
    assert "".join(deltas) == text
    assert all(delta for delta in deltas)
    assert all(len(delta.split()) <= 1 for delta in deltas)


@given(st.text(max_size=200))
def test_estimate_tokens_is_characters_over_four_rounded_up(text: str) -> None:
    assert estimate_tokens(text) == -(-len(text) // 4)


@pytest.mark.parametrize(("text", "tokens"), [("", 0), ("a", 1), ("abcd", 1), ("abcde", 2)])
def test_estimate_tokens_examples(text: str, tokens: int) -> None:
    assert estimate_tokens(text) == tokens


# --- errors ----------------------------------------------------------------------------------


async def test_an_error_step_without_output_fails_before_any_chunk() -> None:
    error = ProviderError("[503] overloaded", status_code=503)
    stream = ScriptedModel([ScriptStep(error=error)]).stream(ask("Hi"))
    with pytest.raises(ProviderError) as caught:
        await anext(stream)
    assert caught.value is error


def test_fail_builds_a_provider_error_step_with_the_status() -> None:
    step = ScriptStep.fail(429)
    assert isinstance(step.error, ProviderError)
    assert step.error.message == "[429] provider error"
    assert step.error.status_code == 429
    assert step.error.http_status == 429
    assert step.error.after_output is False
    assert step.error.usage is None
    assert (step.text, step.report_usage) == ("", False)


def test_fail_without_a_status_keeps_the_message_bare() -> None:
    step = ScriptStep.fail(None, "connection reset")
    assert isinstance(step.error, ProviderError)
    assert (step.error.message, step.error.status_code) == ("connection reset", None)


def test_fail_carries_the_billed_usage() -> None:
    usage = ModelUsage(prompt_tokens=40)
    step = ScriptStep.fail(500, "boom", usage=usage)
    assert isinstance(step.error, ProviderError)
    assert step.error.usage == usage


async def test_fail_before_output_streams_nothing() -> None:
    model = ScriptedModel([ScriptStep.fail(401, "bad key")])
    received: list[ModelChunk] = []
    with pytest.raises(ProviderError, match=r"^\[401\] bad key$") as caught:
        await drain(model.stream(ask("Hi")), received)
    assert received == []
    assert caught.value.status_code == 401
    assert caught.value.after_output is False


async def test_fail_after_output_streams_the_text_then_raises() -> None:
    model = ScriptedModel([ScriptStep.fail(502, "stream cut", after_text="partial answer")])
    received: list[ModelChunk] = []
    with pytest.raises(ProviderError) as caught:
        await drain(model.stream(ask("Hi")), received)
    assert received == [TextDelta("partial "), TextDelta("answer")]
    assert caught.value.message == "[502] stream cut"
    assert caught.value.status_code == 502
    assert caught.value.after_output is True


async def test_fail_after_exact_deltas() -> None:
    model = ScriptedModel([ScriptStep.fail(500, after_text=["par", "tial"])])
    received: list[ModelChunk] = []
    with pytest.raises(ProviderError) as caught:
        await drain(model.stream(ask("Hi")), received)
    assert received == [TextDelta("par"), TextDelta("tial")]
    assert caught.value.after_output is True


async def test_an_error_comes_after_the_tool_calls_and_any_exception_passes_through() -> None:
    step = ScriptStep(text="x", tool_calls=[CALL], error=RuntimeError("boom"))
    received: list[ModelChunk] = []
    with pytest.raises(RuntimeError, match="boom"):
        await drain(ScriptedModel([step]).stream(ask("Hi")), received)
    assert received == [TextDelta("x"), ToolCallChunk(CALL)]


# --- waiting ---------------------------------------------------------------------------------


async def test_waiting_on_an_event_holds_back_the_first_chunk() -> None:
    released = asyncio.Event()
    stream = ScriptedModel([ScriptStep(text="Hello world", wait=released)]).stream(ask("Hi"))
    first = next_chunk(stream)
    await settle()
    assert not first.done()
    released.set()
    assert await first == TextDelta("Hello ")
    assert await anext(stream) == TextDelta("world")


async def test_wait_at_holds_back_that_delta_only() -> None:
    released = asyncio.Event()
    step = ScriptStep(text="one two three", wait=released, wait_at=2)
    stream = ScriptedModel([step]).stream(ask("Hi"))
    assert await anext(stream) == TextDelta("one ")
    assert await anext(stream) == TextDelta("two ")
    third = next_chunk(stream)
    await settle()
    assert not third.done()
    released.set()
    assert await third == TextDelta("three")


@pytest.mark.parametrize("wait_at", [2, 99])
async def test_wait_at_or_past_the_end_holds_back_the_tool_calls(wait_at: int) -> None:
    released = asyncio.Event()
    step = ScriptStep(text="a b", tool_calls=[CALL], wait=released, wait_at=wait_at)
    stream = ScriptedModel([step]).stream(ask("Hi"))
    assert [await anext(stream), await anext(stream)] == [TextDelta("a "), TextDelta("b")]
    call = next_chunk(stream)
    await settle()
    assert not call.done()
    released.set()
    assert await call == ToolCallChunk(CALL)


async def test_wait_at_zero_holds_back_the_replay_blocks_too() -> None:
    released = asyncio.Event()
    step = ScriptStep(text="hi", replay_blocks=[THINKING], wait=released)
    stream = ScriptedModel([step]).stream(ask("Hi"))
    first = next_chunk(stream)
    await settle()
    assert not first.done()
    released.set()
    assert await first == ReplayChunk(THINKING)


async def test_wait_with_a_later_position_lets_replay_blocks_through() -> None:
    released = asyncio.Event()
    step = ScriptStep(text="a b", replay_blocks=[THINKING], wait=released, wait_at=1)
    stream = ScriptedModel([step]).stream(ask("Hi"))
    assert await anext(stream) == ReplayChunk(THINKING)
    assert await anext(stream) == TextDelta("a ")
    second = next_chunk(stream)
    await settle()
    assert not second.done()
    released.set()
    assert await second == TextDelta("b")


async def test_an_empty_step_with_a_later_wait_at_still_waits() -> None:
    released = asyncio.Event()
    stream = ScriptedModel([ScriptStep(wait=released, wait_at=3)]).stream(ask("Hi"))
    finish = next_chunk(stream)
    await settle()
    assert not finish.done()
    released.set()
    assert await finish == stop()


async def test_an_error_step_can_wait_before_failing() -> None:
    released = asyncio.Event()
    step = ScriptStep(error=ProviderError("[504] timeout", status_code=504), wait=released)
    stream = ScriptedModel([step]).stream(ask("Hi"))
    pending = next_chunk(stream)
    await settle()
    assert not pending.done()
    released.set()
    with pytest.raises(ProviderError, match="timeout"):
        await pending


async def test_waiting_on_the_clock_needs_the_clock_to_move() -> None:
    clock = FakeClock()
    model = ScriptedModel([ScriptStep(text="late reply", wait=5.0)], clock=clock)
    stream = model.stream(ask("Hi"))
    first = next_chunk(stream)
    await settle()
    assert not first.done()
    assert clock.sleepers == 1
    await clock.advance_and_settle(4.9)
    assert not first.done()
    await clock.advance_and_settle(0.1)
    assert first.done()
    assert first.result() == TextDelta("late ")
    assert await anext(stream) == TextDelta("reply")


async def test_waiting_on_the_clock_at_a_position() -> None:
    clock = FakeClock()
    step = ScriptStep(text="fast then slow", wait=60, wait_at=1)
    stream = ScriptedModel([step], clock=clock).stream(ask("Hi"))
    assert await anext(stream) == TextDelta("fast ")
    second = next_chunk(stream)
    await settle()
    assert not second.done()
    await clock.advance_and_settle(60)
    assert second.result() == TextDelta("then ")


def test_a_negative_wait_at_is_refused() -> None:
    with pytest.raises(ValueError, match=r"ScriptStep\.wait_at must be >= 0, got -1"):
        ScriptStep(text="x", wait=1.0, wait_at=-1)


# --- requests, calls and remaining -----------------------------------------------------------


async def test_every_request_is_recorded_with_its_messages_tools_and_options() -> None:
    model = ScriptedModel(["first", "second"])
    options = CompletionOptions(temperature=0.2, tool_choice="required", seed=7)
    one = ModelRequest([Message.user("What's the weather?")], [WEATHER], options)
    two = ask("And tomorrow?")
    await play(model, one)
    await play(model, two)
    assert model.requests == [one, two]
    assert model.requests[0].messages == [Message.user("What's the weather?")]
    assert model.requests[0].tools == [WEATHER]
    assert model.requests[0].options is options
    assert model.requests[1].tools == ()
    assert model.requests[1].options == CompletionOptions()


def test_a_call_is_recorded_as_soon_as_the_stream_is_opened() -> None:
    model = ScriptedModel(["a", "b"])
    request = ask("Hi")
    model.stream(request)
    assert model.calls == 1
    assert model.requests == [request]
    assert model.remaining == 1


async def test_calls_and_remaining_count_down_the_list() -> None:
    model = ScriptedModel(["a", ScriptStep(text="b"), "c"])
    assert (model.calls, model.remaining) == (0, 3)
    await play(model)
    assert (model.calls, model.remaining) == (1, 2)
    await play(model)
    await play(model)
    assert (model.calls, model.remaining) == (3, 0)


async def test_steps_play_in_call_order_even_when_read_out_of_order() -> None:
    model = ScriptedModel(["first", "second"])
    stream_one = model.stream(ask("1"))
    stream_two = model.stream(ask("2"))
    assert await anext(stream_two) == TextDelta("second")
    assert await anext(stream_one) == TextDelta("first")


async def test_running_out_of_script_names_the_call_number() -> None:
    model = ScriptedModel(["only"])
    await play(model)
    with pytest.raises(AssertionError, match=r"received call 2 but its script has 1 step\(s\)"):
        await play(model)
    assert model.calls == 2
    assert model.remaining == 0


async def test_an_empty_script_fails_on_the_first_call() -> None:
    with pytest.raises(AssertionError, match=r"received call 1 but its script has 0 step\(s\)"):
        await play(ScriptedModel([]))


# --- function scripts ------------------------------------------------------------------------


async def test_a_function_script_gets_messages_tools_and_options_and_may_return_text() -> None:
    seen: list[tuple[Sequence[Message], Sequence[ToolDefinition], CompletionOptions]] = []

    def script(
        messages: Sequence[Message], tools: Sequence[ToolDefinition], options: CompletionOptions
    ) -> str:
        seen.append((messages, tools, options))
        return f"You said: {messages[-1].text}"

    model = ScriptedModel(script)
    request = ModelRequest([Message.user("ping")], [WEATHER], CompletionOptions(max_tokens=5))
    chunks = await play(model, request)
    assert chunks[:3] == [TextDelta("You "), TextDelta("said: "), TextDelta("ping")]
    assert seen == [(request.messages, request.tools, request.options)]
    assert seen[0][0] is request.messages


async def test_a_function_script_decides_from_the_conversation() -> None:
    def script(
        messages: Sequence[Message], tools: Sequence[ToolDefinition], options: CompletionOptions
    ) -> ScriptStep | str:
        if messages[-1].role is Role.TOOL:
            assert messages[-1].tool_result is not None
            return f"It is {messages[-1].tool_result.output}."
        return ScriptStep(tool_calls=[CALL])

    model = ScriptedModel(script)
    first = await play(model, ask("Weather in Paris?"))
    assert first[0] == ToolCallChunk(CALL)
    history = [
        Message.user("Weather in Paris?"),
        Message.assistant(tool_calls=[CALL]),
        Message.tool(ToolResult("call_1", "weather", "sunny")),
    ]
    second = await play(model, ModelRequest(history))
    assert second[:3] == [TextDelta("It "), TextDelta("is "), TextDelta("sunny.")]
    assert model.calls == 2


async def test_an_async_function_script_is_awaited() -> None:
    async def script(
        messages: Sequence[Message], tools: Sequence[ToolDefinition], options: CompletionOptions
    ) -> ScriptStep:
        await asyncio.sleep(0)
        return ScriptStep(text=["async"], report_usage=False)

    assert await play(ScriptedModel(script)) == [TextDelta("async"), stop()]


async def test_an_async_function_script_returning_text() -> None:
    async def script(
        messages: Sequence[Message], tools: Sequence[ToolDefinition], options: CompletionOptions
    ) -> str:
        return "done"

    assert (await play(ScriptedModel(script)))[0] == TextDelta("done")


async def test_a_function_script_never_runs_out_and_has_no_remaining() -> None:
    model = ScriptedModel(lambda messages, tools, options: "again")
    for _ in range(5):
        await play(model)
    assert model.calls == 5
    assert model.remaining is None


async def test_a_function_script_returning_something_else_is_a_type_error() -> None:
    model = ScriptedModel(lambda messages, tools, options: 42)  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError, match="a script must give a ScriptStep or a str, not int"):
        await play(model)


async def test_an_exception_in_the_function_script_comes_out_of_the_stream() -> None:
    def script(
        messages: Sequence[Message], tools: Sequence[ToolDefinition], options: CompletionOptions
    ) -> str:
        raise KeyError("no rule for this request")

    with pytest.raises(KeyError, match="no rule for this request"):
        await play(ScriptedModel(script))


# --- closing early ---------------------------------------------------------------------------


async def test_closing_the_stream_early_stops_it() -> None:
    model = ScriptedModel(["one two three four"])
    stream = open_stream(model, ask("Hi"))
    assert await anext(stream) == TextDelta("one ")
    await stream.aclose()
    with pytest.raises(StopAsyncIteration):
        await anext(stream)


async def test_breaking_out_of_async_for_and_closing_stops_the_call() -> None:
    model = ScriptedModel(["one two three", "next"])
    stream = open_stream(model, ask("Hi"))
    received: list[ModelChunk] = []
    async for chunk in stream:
        received.append(chunk)
        break
    await stream.aclose()
    assert received == [TextDelta("one ")]
    assert (await play(model))[0] == TextDelta("next")


async def test_closing_a_stream_before_reading_it_never_asks_the_function() -> None:
    asked: list[int] = []

    def script(
        messages: Sequence[Message], tools: Sequence[ToolDefinition], options: CompletionOptions
    ) -> str:
        asked.append(1)
        return "unused"

    model = ScriptedModel(script)
    stream = open_stream(model, ask("Hi"))
    await stream.aclose()
    assert asked == []
    assert model.calls == 1
    with pytest.raises(StopAsyncIteration):
        await anext(stream)


async def test_cancelling_a_call_that_waits_on_the_clock_leaves_no_sleeper() -> None:
    clock = FakeClock()
    model = ScriptedModel([ScriptStep(text="never", wait=30)], clock=clock)
    stream = open_stream(model, ask("Hi"))
    pending = next_chunk(stream)
    await settle()
    assert clock.sleepers == 1
    pending.cancel()
    await settle()
    assert pending.cancelled()
    assert clock.sleepers == 0
    with pytest.raises(StopAsyncIteration):
        await anext(stream)


async def test_complete_text_joins_one_steps_deltas_and_closes_the_stream_on_error() -> None:
    from agentos.llm.model import CompletionOptions, ModelRequest, complete_text

    request = ModelRequest(messages=[Message.user("hi")], options=CompletionOptions())
    assert await complete_text(ScriptedModel([ScriptStep(text=["a", "b", "c"])]), request) == "abc"
    closed: list[bool] = []

    class Failing(ScriptedModel):
        def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
            async def chunks() -> AsyncIterator[ModelChunk]:
                try:
                    yield TextDelta("partial")
                    raise RuntimeError("provider broke")
                finally:
                    closed.append(True)

            return chunks()

    with pytest.raises(RuntimeError, match="provider broke"):
        await complete_text(Failing([]), request)
    assert closed == [True]
