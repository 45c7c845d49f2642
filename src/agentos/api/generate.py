"""`generate_text()` and `stream_text()`: the spec's lightweight helpers (no GMI, no history).

The caller passes earlier turns in ``messages``; ``system`` and ``prompt`` add a leading system
message and a closing user message (a blank one adds none; a blank prompt without messages is
refused). The tools given run for up to ``max_steps`` (5) model steps.
Options are checked before any model call, and a bad one raises `GMIError` naming it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import ContentPart, Message, Role
from agentos.llm.model import ChatModel, CompletionOptions, ToolChoice
from agentos.llm.resolve import resolve_model
from agentos.tools.tool import Tool

from .results import ErrorPart, GenerateTextResult
from .stream_result import StreamTextResult
from .text_run import TextRun

__all__ = ["DEFAULT_MAX_STEPS", "generate_text", "stream_text"]

DEFAULT_MAX_STEPS = 5
"""The spec's default limit of model steps per call."""


async def generate_text(
    prompt: str | list[ContentPart] | None = None,
    *,
    provider: str | None = None,
    model: str | ChatModel | None = None,
    system: str | None = None,
    messages: Sequence[Message] | None = None,
    tools: Sequence[Tool] | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    temperature: float | None = None,
    max_tokens: int | None = None,
    top_p: float | None = None,
    frequency_penalty: float | None = None,
    presence_penalty: float | None = None,
    stop: Sequence[str] | None = None,
    seed: int | None = None,
    tool_choice: ToolChoice | None = None,
    user_id: str | None = None,
    request_timeout: float | None = None,
    custom_model_params: dict[str, Any] | None = None,
    api_key: str | None = None,
    base_url: str | None = None,
) -> GenerateTextResult:
    """Run the model (and its tool rounds) to the end and return the result.

    Raises `GMIError` for a bad option and `agentos.llm.ProviderError` (code
    ``LLM_PROVIDER_ERROR``, HTTP status kept) when the provider fails.
    """
    run = _prepare(**locals())
    async for part in run.parts():
        if isinstance(part, ErrorPart):  # pragma: no cover - parts() raises instead
            raise part.error
    return run.result()


def stream_text(
    prompt: str | list[ContentPart] | None = None,
    *,
    provider: str | None = None,
    model: str | ChatModel | None = None,
    system: str | None = None,
    messages: Sequence[Message] | None = None,
    tools: Sequence[Tool] | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    temperature: float | None = None,
    max_tokens: int | None = None,
    top_p: float | None = None,
    frequency_penalty: float | None = None,
    presence_penalty: float | None = None,
    stop: Sequence[str] | None = None,
    seed: int | None = None,
    tool_choice: ToolChoice | None = None,
    user_id: str | None = None,
    request_timeout: float | None = None,
    custom_model_params: dict[str, Any] | None = None,
    api_key: str | None = None,
    base_url: str | None = None,
) -> StreamTextResult:
    """Start a generation and return a `StreamTextResult` to read it as it streams.

    Options are checked (and the model resolved) at once; the model is first called when the
    stream is read or one of the result's awaitables is awaited. A failure ends
    ``full_stream`` with an `ErrorPart` and a ``FinishPart("error")``.
    """
    return StreamTextResult(_prepare(**locals()))


def _prepare(
    *,
    prompt: str | list[ContentPart] | None,
    provider: str | None,
    model: str | ChatModel | None,
    system: str | None,
    messages: Sequence[Message] | None,
    tools: Sequence[Tool] | None,
    max_steps: int,
    temperature: float | None,
    max_tokens: int | None,
    top_p: float | None,
    frequency_penalty: float | None,
    presence_penalty: float | None,
    stop: Sequence[str] | None,
    seed: int | None,
    tool_choice: ToolChoice | None,
    user_id: str | None,
    request_timeout: float | None,
    custom_model_params: dict[str, Any] | None,
    api_key: str | None,
    base_url: str | None,
) -> TextRun:
    if prompt is None and not messages:
        _invalid("prompt", "give a prompt, or messages ending with the turn to answer")
    if isinstance(prompt, str) and not prompt.strip() and not messages:
        _invalid("prompt", "the prompt is empty")
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
        _invalid("max_steps", f"must be an integer >= 1, got {max_steps!r}")
    _check_number("temperature", temperature, 0.0, 2.0)
    _check_number("top_p", top_p, 0.0, 1.0)
    _check_number("frequency_penalty", frequency_penalty, -2.0, 2.0)
    _check_number("presence_penalty", presence_penalty, -2.0, 2.0)
    _check_number("request_timeout", request_timeout, 0.0, math.inf, open_low=True)
    if max_tokens is not None and (
        isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1
    ):
        _invalid("max_tokens", f"must be an integer >= 1, got {max_tokens!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        _invalid("seed", f"must be an integer, got {seed!r}")
    if stop is not None and (isinstance(stop, str) or not all(isinstance(s, str) for s in stop)):
        _invalid("stop", "must be a list of strings")
    tool_list = list(tools or [])
    for position, item in enumerate(tool_list):
        if not isinstance(item, Tool):
            _invalid(
                "tools",
                f"item {position} is a {type(item).__name__}, not a Tool "
                "(wrap functions with agentos.tool or Tool.from_function)",
            )
    names = [item.name for item in tool_list]
    if len(set(names)) != len(names):
        _invalid("tools", f"tool names must be unique, got {names}")
    if tool_choice not in (None, "auto", "none", "required") and tool_choice not in names:
        _invalid(
            "tool_choice", f"{tool_choice!r} is neither auto, none, required nor a tool's name"
        )
    history: list[Message] = []
    if system:
        history.append(Message.system(system))
    for position, message in enumerate(messages or []):
        if not isinstance(message, Message):
            _invalid("messages", f"item {position} is a {type(message).__name__}, not a Message")
        if message.role not in (Role.ERROR, Role.THOUGHT):
            history.append(message)
    if prompt is not None and not (isinstance(prompt, str) and not prompt.strip()):
        history.append(Message.user(prompt))  # a blank prompt beside messages adds nothing
    chat_model = resolve_model(provider, model, api_key=api_key, base_url=base_url)
    options = CompletionOptions(
        temperature=temperature,
        max_tokens=max_tokens,
        top_p=top_p,
        frequency_penalty=frequency_penalty,
        presence_penalty=presence_penalty,
        stop_sequences=tuple(stop) if stop is not None else None,
        seed=seed,
        tool_choice=tool_choice,
        user_id=user_id,
        request_timeout=request_timeout,
        custom_model_params=dict(custom_model_params or {}),
    )
    return TextRun(chat_model, history, tool_list, options, max_steps)


def _invalid(option: str, why: str) -> None:
    raise GMIError(f"{option}: {why}", GMIErrorCode.INVALID_ARGUMENT, {"option": option})


def _check_number(
    option: str, value: float | None, low: float, high: float, *, open_low: bool = False
) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        _invalid(option, f"must be a number, got {value!r}")
    if value < low or value > high or (open_low and value == low):
        bound = f"> {low}" if open_low else f"between {low} and {high}"
        _invalid(option, f"must be {bound}, got {value!r}")
