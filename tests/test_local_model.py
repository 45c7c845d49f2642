"""The embedded SmolLM2 model for real: determinism, streaming, exact usage, sampling, stopping.

Every test runs the actual GGUF through llama-cpp-python (marked ``local_model``); the model
loads once per process and generations stay a few tokens long, so the file runs in seconds.
Independent checks use llama-cpp-python's own ``create_chat_completion`` on the same instance.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from agentos import (
    GMIError,
    GMIErrorCode,
    generate_text,
    stream_text,
    tool,
)
from agentos.llm._local_llama import bundled_gguf_path, load_gguf
from agentos.llm.local import LOCAL_CONTEXT_WINDOW, local_model_available

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(not local_model_available(), reason="the 'local' extra is not installed"),
]

WORKER = "agentos-local-generate"  # local.py's generation thread
LONG_ANSWER = "Write a short story about a robot who learns to paint."
SHORT_ANSWER = "Say hello."  # with seed 2 the model ends it on its own, in 17 tokens
DEFAULT_SAMPLING: dict[str, Any] = {
    "temperature": 0.7,
    "repeat_penalty": 1.3,
    "top_p": 0.95,
    "top_k": 40,
    "min_p": 0.05,
}


@dataclass
class GenerateCall:
    """One call of ``Llama.generate``: its prompt, its sampling arguments, tokens it yielded."""

    prompt: list[int]
    kwargs: dict[str, Any]
    yielded: int = 0
    closed_after: int | None = None
    """How many tokens it had yielded when it was closed (None while it runs)."""


@dataclass
class LlamaSpy:
    """What the loaded Llama instance was asked to do."""

    generate: list[GenerateCall] = field(default_factory=list)
    seeds: list[int] = field(default_factory=list)


@pytest.fixture(scope="module")
def loaded() -> Any:
    """agentos's own loaded model (the instance every ``provider="local"`` call uses)."""
    return load_gguf(bundled_gguf_path(), LOCAL_CONTEXT_WINDOW)


@pytest.fixture
def spy(loaded: Any) -> Iterator[LlamaSpy]:
    """Record ``generate`` and ``set_seed`` calls on the loaded instance, then remove the spies.

    The wrappers are instance attributes shadowing the class's methods, so deleting them
    afterwards restores the instance exactly.
    """
    llama = loaded.llama
    record = LlamaSpy()
    original_generate = llama.generate
    original_set_seed = llama.set_seed

    def generate(tokens: Any, *args: Any, **kwargs: Any) -> Iterator[int]:
        call = GenerateCall(list(tokens), dict(kwargs))
        record.generate.append(call)
        inner = original_generate(tokens, *args, **kwargs)
        try:
            for token in inner:
                call.yielded += 1
                yield token
        finally:
            inner.close()
            call.closed_after = call.yielded

    def set_seed(seed: int) -> None:
        record.seeds.append(seed)
        original_set_seed(seed)

    llama.generate = generate
    llama.set_seed = set_seed
    try:
        yield record
    finally:
        del llama.generate
        del llama.set_seed


def llama_cpp_chat(loaded: Any, messages: list[dict[str, str]], **kwargs: Any) -> Any:
    """llama-cpp-python's own non-streaming chat completion on the shared instance.

    The KV cache is reset first, as agentos does for a seeded call: llama-cpp-python would
    otherwise reuse the prompt agentos just evaluated and re-evaluate only its last token, alone,
    which gives slightly different logits and, at a near tie, a different sample.
    """
    with loaded.lock:
        loaded.llama.reset()
        return loaded.llama.create_chat_completion(messages, **DEFAULT_SAMPLING, **kwargs)


def workers() -> set[threading.Thread]:
    return {thread for thread in threading.enumerate() if thread.name == WORKER}


async def test_same_seed_gives_the_same_text() -> None:
    first = await generate_text(SHORT_ANSWER, provider="local", seed=2, max_tokens=12)
    again = await generate_text(SHORT_ANSWER, provider="local", seed=2, max_tokens=12)
    assert first.text
    assert again.text == first.text
    assert again.usage == first.usage


async def test_same_seed_gives_the_same_text_whatever_ran_before() -> None:
    """What earlier calls left in the model's KV cache does not change a seeded reply."""
    system = "You are a helpful assistant."
    first = await generate_text(
        SHORT_ANSWER, system=system, provider="local", seed=2, max_tokens=12
    )
    await generate_text(LONG_ANSWER, system=system, provider="local", max_tokens=4)  # same prefix
    after_other = await generate_text(
        SHORT_ANSWER, system=system, provider="local", seed=2, max_tokens=12
    )
    after_same = await generate_text(
        SHORT_ANSWER, system=system, provider="local", seed=2, max_tokens=12
    )
    assert after_other.text == first.text
    assert after_same.text == first.text


async def test_streamed_deltas_join_to_the_final_text() -> None:
    result = stream_text(LONG_ANSWER, provider="local", seed=3, max_tokens=16)
    deltas = [delta async for delta in result.text_stream]
    assert len(deltas) > 1  # it streams, rather than arriving in one piece
    assert all(deltas)
    assert await result.text == "".join(deltas)
    usage = await result.usage
    assert usage.completion_tokens == 16


@pytest.mark.parametrize(
    ("prompt", "seed", "finish"),
    [(LONG_ANSWER, 5, "length"), (SHORT_ANSWER, 2, "stop")],
    ids=["max-tokens", "end-of-generation"],
)
async def test_usage_matches_llama_cpp_own_count(
    loaded: Any, prompt: str, seed: int, finish: str
) -> None:
    system = "You are a helpful assistant."
    ours = await generate_text(prompt, system=system, provider="local", seed=seed, max_tokens=32)
    theirs = llama_cpp_chat(
        loaded,
        [{"role": "system", "content": system}, {"role": "user", "content": prompt}],
        seed=seed,
        max_tokens=32,
    )
    assert ours.text == theirs["choices"][0]["message"]["content"]
    assert ours.finish_reason == theirs["choices"][0]["finish_reason"] == finish
    assert ours.usage.prompt_tokens == theirs["usage"]["prompt_tokens"]
    assert ours.usage.completion_tokens == theirs["usage"]["completion_tokens"]
    assert ours.usage.total_tokens == theirs["usage"]["total_tokens"]
    if finish == "stop":
        assert ours.usage.completion_tokens is not None
        assert ours.usage.completion_tokens < 32


async def test_usage_counts_the_tokens_generated(spy: LlamaSpy) -> None:
    result = await generate_text(LONG_ANSWER, provider="local", seed=11, max_tokens=9)
    (call,) = spy.generate
    assert result.usage.prompt_tokens == len(call.prompt)
    assert result.usage.completion_tokens == call.yielded == 9


async def test_reaching_max_tokens_finishes_with_length() -> None:
    result = await generate_text(LONG_ANSWER, provider="local", seed=1, max_tokens=5)
    assert result.finish_reason == "length"
    assert result.usage.completion_tokens == 5


async def test_default_sampling_reaches_llama_cpp(spy: LlamaSpy) -> None:
    await generate_text(LONG_ANSWER, provider="local", seed=1234, max_tokens=2)
    (call,) = spy.generate
    assert call.kwargs["temp"] == 0.7
    assert call.kwargs["repeat_penalty"] == 1.3
    assert call.kwargs["top_p"] == 0.95
    assert call.kwargs["top_k"] == 40
    assert call.kwargs["min_p"] == 0.05
    assert spy.seeds == [1234]


async def test_caller_sampling_overrides_reach_llama_cpp(spy: LlamaSpy) -> None:
    await generate_text(
        LONG_ANSWER,
        provider="local",
        seed=99,
        max_tokens=2,
        temperature=0.2,
        top_p=0.9,
        custom_model_params={"repeat_penalty": 1.1, "top_k": 20},
    )
    (call,) = spy.generate
    assert call.kwargs["temp"] == 0.2
    assert call.kwargs["top_p"] == 0.9
    assert call.kwargs["repeat_penalty"] == 1.1
    assert call.kwargs["top_k"] == 20
    assert call.kwargs["min_p"] == 0.05  # not overridden: the default stays
    assert spy.seeds == [99]


async def test_without_a_seed_each_call_draws_one(spy: LlamaSpy) -> None:
    await generate_text(LONG_ANSWER, provider="local", max_tokens=1)
    await generate_text(LONG_ANSWER, provider="local", max_tokens=1)
    assert len(spy.seeds) == 2
    assert all(0 <= seed < 2**31 for seed in spy.seeds)


async def test_a_stop_sequence_cuts_the_text(loaded: Any) -> None:
    full = await generate_text(LONG_ANSWER, provider="local", seed=4, max_tokens=24)
    words = full.text.split()
    assert len(words) > 4, full.text
    stop = f" {words[3]}"  # a word well inside the text, with its leading space
    cut = full.text[: full.text.index(stop)]

    result = stream_text(LONG_ANSWER, provider="local", seed=4, max_tokens=24, stop=[stop])
    deltas = [delta async for delta in result.text_stream]
    assert "".join(deltas) == await result.text == cut
    assert await result.finish_reason == "stop"
    theirs = llama_cpp_chat(
        loaded, [{"role": "user", "content": LONG_ANSWER}], seed=4, max_tokens=24, stop=[stop]
    )
    assert theirs["choices"][0]["message"]["content"] == cut
    usage = await result.usage
    assert usage.completion_tokens == theirs["usage"]["completion_tokens"]


@pytest.mark.parametrize("how", ["generate_text", "stream_text"])
async def test_an_unknown_custom_model_param_is_refused_before_generation(
    spy: LlamaSpy, how: str
) -> None:
    async def call() -> str:
        params = {"mirostat_mode": 2}
        if how == "generate_text":
            return (
                await generate_text(LONG_ANSWER, provider="local", custom_model_params=params)
            ).text
        # The refusal comes from stream_text() itself, before any stream is read.
        return await stream_text(LONG_ANSWER, provider="local", custom_model_params=params).text

    with pytest.raises(GMIError) as caught:
        await call()
    error = caught.value
    assert error.code == GMIErrorCode.INVALID_ARGUMENT
    assert error.details["option"] == "custom_model_params"
    assert "custom_model_params" in str(error)
    assert "mirostat_mode" in str(error)
    assert spy.generate == []
    assert spy.seeds == []


@pytest.mark.parametrize("how", ["aclose", "break"])
async def test_a_consumer_stopping_early_stops_generation(
    loaded: Any, spy: LlamaSpy, how: str
) -> None:
    before = workers()
    result = stream_text(LONG_ANSWER, provider="local", seed=8, max_tokens=400)
    received: list[str] = []
    if how == "aclose":
        async with contextlib.aclosing(result.text_stream) as texts:
            async for delta in texts:
                received.append(delta)
                if len(received) == 3:
                    break
    else:
        # A plain break: the abandoned stream is closed by the loop's async-generator hook.
        async for delta in result.text_stream:
            received.append(delta)
            if len(received) == 3:
                break
    assert len(received) == 3
    with pytest.raises(GMIError) as caught:
        await result.text
    assert caught.value.code == GMIErrorCode.ABORTED

    for worker in workers() - before:
        # Joined off the loop: a plain break's stream is closed by a callback the loop runs.
        # The bound only turns a hang into a failure; what is checked is the order below.
        await asyncio.to_thread(worker.join, 60)
        assert not worker.is_alive()
    (call,) = spy.generate
    # llama.cpp's generator was closed, not run out, about one token after the consumer stopped:
    # counted in tokens, not timed.
    assert call.closed_after is not None
    assert call.closed_after == call.yielded < 10

    assert loaded.lock.acquire(timeout=1)  # the model is free again
    loaded.lock.release()
    after = await generate_text(LONG_ANSWER, provider="local", seed=8, max_tokens=3)
    assert after.usage.completion_tokens == 3
    assert after.text.startswith("".join(received))  # same seed, same opening


def test_a_consumer_gone_before_the_model_is_free_generates_nothing(
    loaded: Any, spy: LlamaSpy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker still waiting for the model when its consumer and loop go ends quietly."""
    crashes: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: crashes.append(args.exc_value))

    async def give_up_early() -> set[threading.Thread]:
        before = workers()
        texts = stream_text(LONG_ANSWER, provider="local", seed=1, max_tokens=50).text_stream
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(anext(texts), 0.2)
        await texts.aclose()
        return workers() - before

    with loaded.lock:  # another generation holds the model
        started = asyncio.run(give_up_early())  # its loop is closed when this returns
    assert started
    for worker in started:
        worker.join(timeout=5)
        assert not worker.is_alive()
    assert crashes == []  # no "Event loop is closed" from the worker
    assert spy.generate == []  # the abandoned call never reached the model
    assert spy.seeds == []


async def test_json_mode_constrains_the_reply_to_one_json_object(spy: LlamaSpy) -> None:
    import json

    from agentos.core.messages import Message
    from agentos.llm.local import LocalModel
    from agentos.llm.model import CompletionOptions, ModelRequest, TextDelta, closing_stream

    model = LocalModel()
    request = ModelRequest(
        [Message.user('Reply with a JSON object with the key "greeting".')],
        options=CompletionOptions(json_mode=True, seed=4, max_tokens=300),
    )
    async with closing_stream(model.stream(request)) as chunks:
        text = "".join([c.text async for c in chunks if isinstance(c, TextDelta)])
    assert isinstance(json.loads(text), dict)
    [call] = spy.generate
    assert call.kwargs["grammar"] is not None


async def test_tools_are_not_offered_to_the_local_model(spy: LlamaSpy) -> None:
    calls: list[str] = []

    @tool
    def weather(city: str) -> str:
        """The weather in a city."""
        calls.append(city)
        return "sunny"

    plain = await generate_text(LONG_ANSWER, provider="local", seed=6, max_tokens=6)
    offered = await generate_text(
        LONG_ANSWER, provider="local", seed=6, max_tokens=6, tools=[weather]
    )
    without_tools, with_tools = spy.generate
    assert with_tools.prompt == without_tools.prompt  # nothing about the tool reached the model
    assert offered.usage.prompt_tokens == plain.usage.prompt_tokens
    assert offered.text == plain.text
    assert offered.tool_calls == []
    assert len(offered.steps) == 1
    assert calls == []


def test_stream_text_refuses_an_unknown_custom_model_param_at_call_time() -> None:
    with pytest.raises(GMIError) as caught:
        stream_text(LONG_ANSWER, provider="local", custom_model_params={"mirostat_mode": 2})
    assert caught.value.details["option"] == "custom_model_params"


def test_a_schema_goes_to_the_local_model_as_a_prompt() -> None:
    from agentos.llm.local import LocalModel
    from agentos.llm.model import CompletionOptions

    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    text = LocalModel().schema_prompt(CompletionOptions(response_schema=schema))
    assert text is not None
    assert '"city"' in text
    assert LocalModel().schema_prompt(CompletionOptions()) is None
