"""What a text generation returns: its steps, the typed stream parts, and the final result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentos.core.messages import Message, ReplayBlock, ToolCall, ToolResult
from agentos.core.usage import ModelUsage
from agentos.llm.model import FinishReason

__all__ = [
    "ErrorPart",
    "FinishPart",
    "GenerateTextResult",
    "StepFinishPart",
    "StepResult",
    "StreamPart",
    "TextDeltaPart",
    "ToolCallPart",
    "ToolResultPart",
]


@dataclass(frozen=True, slots=True)
class StepResult:
    """One model step.

    Its own text, the tools it called and their results, why it ended and what it used
    (``usage`` is ``None`` when the provider reported none). ``provider_message_id`` is the
    provider's id for the response and ``cache_diagnostics`` the prompt-cache diagnostics the
    provider reported for the step (Anthropic's ``diagnostics`` object, as sent), when asked
    for with ``cache_diagnostics``; each is ``None`` when not reported.
    """

    index: int
    text: str
    tool_calls: list[ToolCall]
    tool_results: list[ToolResult]
    finish_reason: FinishReason
    usage: ModelUsage | None
    provider_id: str
    model_id: str
    replay_blocks: list[ReplayBlock] = field(default_factory=list)
    response_model: str | None = None
    provider_message_id: str | None = None
    cache_diagnostics: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class GenerateTextResult:
    """The result of `generate_text()`.

    ``text`` is the last step's text; ``usage`` adds every step's (its cost is ``None`` when any
    step's cost is unknown); ``tool_calls`` and ``tool_results`` gather every step's;
    ``response_messages`` are the messages the call added, ready to pass back as ``messages``;
    ``object`` is the validated answer of a call made with ``response_schema``.
    """

    text: str
    usage: ModelUsage
    finish_reason: FinishReason
    tool_calls: list[ToolCall]
    tool_results: list[ToolResult]
    steps: list[StepResult]
    response_messages: list[Message]
    provider_id: str
    model_id: str
    object: Any = None


@dataclass(frozen=True, slots=True)
class TextDeltaPart:
    """A piece of the reply's text."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallPart:
    """The model asked for a tool call."""

    tool_call: ToolCall


@dataclass(frozen=True, slots=True)
class ToolResultPart:
    """A tool call's result, a failed call's included."""

    tool_result: ToolResult


@dataclass(frozen=True, slots=True)
class StepFinishPart:
    """A model step completed (before its tool round runs)."""

    step: StepResult


@dataclass(frozen=True, slots=True)
class ErrorPart:
    """The generation failed; a `FinishPart` with reason ``error`` follows."""

    error: Exception


@dataclass(frozen=True, slots=True)
class FinishPart:
    """The generation ended: the last part of every stream."""

    finish_reason: FinishReason
    usage: ModelUsage


StreamPart = TextDeltaPart | ToolCallPart | ToolResultPart | StepFinishPart | ErrorPart | FinishPart
"""Any part of `StreamTextResult.full_stream`."""
