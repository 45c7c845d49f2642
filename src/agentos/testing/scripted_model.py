"""`ScriptedModel`: a `ChatModel` whose every step is written by the test.

Give it a list of `ScriptStep`s (one per model call, in order) or a function of
``(messages, tools, options)`` that returns the step to play. A step streams its replay blocks,
then its text as deltas, then its tool calls; it can raise a provider error before or after that
output, can wait (on the injected clock or on an `asyncio.Event`) and reports usage. Every
request the model received is kept in `ScriptedModel.requests`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agentos.core.clock import Clock, system_clock
from agentos.core.messages import Message, ReplayBlock, ToolCall
from agentos.core.tokens import estimate_tokens, message_text_for_estimate
from agentos.core.usage import ModelUsage
from agentos.llm.errors import ProviderError
from agentos.llm.model import (
    CompletionOptions,
    FinishChunk,
    FinishReason,
    ModelChunk,
    ModelRequest,
    ReplayChunk,
    TextDelta,
    ToolCallChunk,
    ToolDefinition,
    UsageChunk,
)
from agentos.llm.schema_prompt import schema_instruction, with_schema_prompt

__all__ = ["ScriptFunction", "ScriptStep", "ScriptedModel", "estimate_tokens"]

_DELTA = re.compile(r"\s*\S+\s*|\s+")


@dataclass(frozen=True, slots=True)
class ScriptStep:
    """What one model call streams.

    - ``replay_blocks``: streamed first, one `ReplayChunk` each.
    - ``text``: a string (streamed word by word) or a list of the exact deltas to stream.
    - ``tool_calls``: streamed after the text, one `ToolCallChunk` each.
    - ``usage``: reported last; ``None`` estimates it (characters / 4) from the request and the
      reply; ``report_usage=False`` reports none.
    - ``finish_reason``: defaults to ``tool_calls`` when the step calls tools, else ``stop``.
    - ``provider_message_id``: the response id the `FinishChunk` reports (none by default).
    - ``error``: raised after the step's output, so a step with no text and no tool calls fails
      before any output. `ScriptStep.fail()` builds a provider error with an HTTP status.
    - ``wait``: seconds on the model's clock, or an event to wait for, before text delta
      ``wait_at``: 0 (the default) waits before the first chunk of any kind, a position at or
      past the end of the text waits after the text, before the tool calls. A negative
      ``wait_at`` is refused with `ValueError`.
    """

    text: str | Sequence[str] = ""
    tool_calls: Sequence[ToolCall] = ()
    replay_blocks: Sequence[ReplayBlock] = ()
    usage: ModelUsage | None = None
    report_usage: bool = True
    finish_reason: FinishReason | None = None
    error: BaseException | None = None
    wait: float | asyncio.Event | None = None
    wait_at: int = 0
    provider_message_id: str | None = None

    def __post_init__(self) -> None:
        if self.wait_at < 0:
            raise ValueError(f"ScriptStep.wait_at must be >= 0, got {self.wait_at}")

    @classmethod
    def fail(
        cls,
        status: int | None,
        message: str = "provider error",
        *,
        after_text: str | Sequence[str] = "",
        usage: ModelUsage | None = None,
    ) -> ScriptStep:
        """A step whose provider fails with HTTP ``status`` after streaming ``after_text``."""
        error = ProviderError(
            f"[{status}] {message}" if status is not None else message,
            status_code=status,
            usage=usage,
            after_output=bool(after_text),
        )
        return cls(text=after_text, error=error, report_usage=False)

    def deltas(self) -> list[str]:
        """The text deltas this step streams."""
        if isinstance(self.text, str):
            return _DELTA.findall(self.text)
        return list(self.text)


ScriptFunction = Callable[
    [Sequence[Message], Sequence[ToolDefinition], CompletionOptions],
    "ScriptStep | str | Awaitable[ScriptStep | str]",
]
"""A function that decides each step from the request: return a `ScriptStep` or plain text."""


class ScriptedModel:
    """A deterministic `ChatModel` for tests and examples.

    ``script`` is a list of steps (a plain string is a step that only streams that text) or a
    function; a lone string is refused with `TypeError`, since it would play one step per
    character.

    ``schema_in_payload=False`` plays a model whose payload cannot carry a ``response_schema``
    (OpenAI's JSON mode, say): `schema_prompt` then gives the schema's system message, and a
    request that asks for a schema without ``schema_prompt_given`` gets that message after its
    leading system messages, as an adapter adds it, before it is recorded in `requests`. The
    default (``True``) carries every schema in the payload: no message is added.
    """

    def __init__(
        self,
        script: Sequence[ScriptStep | str] | ScriptFunction,
        *,
        provider_id: str = "scripted",
        model_id: str = "scripted-model",
        clock: Clock | None = None,
        schema_in_payload: bool = True,
    ) -> None:
        self._steps: list[ScriptStep | str] | None = None
        self._function: ScriptFunction | None = None
        if isinstance(script, str):
            raise TypeError("a ScriptedModel script is a list of steps or a function, not a str")
        if callable(script):
            self._function = script
        else:
            self._steps = list(script)
        self._provider_id = provider_id
        self._model_id = model_id
        self._clock = clock or system_clock
        self._schema_in_payload = schema_in_payload
        self.requests: list[ModelRequest] = []
        """Every request received, in order."""

    @property
    def provider_id(self) -> str:
        """The provider id it reports (``"scripted"`` unless set)."""
        return self._provider_id

    @property
    def model_id(self) -> str:
        """The model id it reports (``"scripted-model"`` unless set)."""
        return self._model_id

    @property
    def calls(self) -> int:
        """How many model calls it has received."""
        return len(self.requests)

    @property
    def remaining(self) -> int | None:
        """Steps left in a list script, never below 0 (``None`` for a function script)."""
        if self._steps is None:
            return None
        return max(0, len(self._steps) - len(self.requests))

    def schema_prompt(self, options: CompletionOptions) -> str | None:
        """The schema message this model adds, or ``None`` (see `SchemaPrompting`).

        ``None`` without a schema or when the model was built with ``schema_in_payload=True``.
        """
        schema = options.response_schema
        if schema is None or self._schema_in_payload:
            return None
        return schema_instruction(schema)

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """Play the next step of the script for ``request``."""
        text = None if request.options.schema_prompt_given else self.schema_prompt(request.options)
        if text is not None:
            request = dataclasses.replace(
                request, messages=with_schema_prompt(request.messages, text)
            )
        index = len(self.requests)
        self.requests.append(request)
        return self._play(index, request)

    async def _next_step(self, index: int, request: ModelRequest) -> ScriptStep:
        if self._function is not None:
            result: Any = self._function(request.messages, request.tools, request.options)
            if inspect.isawaitable(result):
                result = await result
        else:
            assert self._steps is not None
            if index >= len(self._steps):
                raise AssertionError(
                    f"ScriptedModel received call {index + 1} but its script has "
                    f"{len(self._steps)} step(s)"
                )
            result = self._steps[index]
        if isinstance(result, str):
            return ScriptStep(text=result)
        if not isinstance(result, ScriptStep):
            raise TypeError(
                f"a script must give a ScriptStep or a str, not {type(result).__name__}"
            )
        return result

    async def _wait(self, step: ScriptStep) -> None:
        if isinstance(step.wait, asyncio.Event):
            await step.wait.wait()
        elif step.wait is not None:
            await self._clock.sleep(step.wait)

    async def _play(self, index: int, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        step = await self._next_step(index, request)
        deltas = step.deltas()
        if step.wait_at == 0:
            await self._wait(step)
        for block in step.replay_blocks:
            yield ReplayChunk(block)
        for position, delta in enumerate(deltas):
            if position == step.wait_at and position > 0:
                await self._wait(step)
            yield TextDelta(delta)
        if step.wait_at >= max(1, len(deltas)):
            await self._wait(step)
        for call in step.tool_calls:
            yield ToolCallChunk(call)
        if step.error is not None:
            raise step.error
        finish: FinishReason = step.finish_reason or ("tool_calls" if step.tool_calls else "stop")
        yield FinishChunk(
            finish, response_model=self._model_id, provider_message_id=step.provider_message_id
        )
        if step.report_usage:
            yield UsageChunk(step.usage or _estimate_usage(request, step))


def _estimate_usage(request: ModelRequest, step: ScriptStep) -> ModelUsage:
    prompt = sum(estimate_tokens(message_text_for_estimate(m)) for m in request.messages)
    reply = "".join(step.deltas()) + message_text_for_estimate(
        Message.assistant(tool_calls=list(step.tool_calls))
    )
    return ModelUsage(prompt_tokens=prompt, completion_tokens=estimate_tokens(reply))
