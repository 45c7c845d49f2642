"""The events a `StepLoop` yields: one small frozen dataclass per thing that happened.

Consumers ``match`` on them and build their own output from them once: the api's stream parts
(`agentos.api.text_run`), the GMI's spec chunks. Within a step, each provider chunk yields its
`TextDeltaEvent` / `ToolCallEvent`, then its `UsageEvent`; a billed failed attempt yields an
`AttemptFailedEvent` where it happens; the step ends with one `StepFinishedEvent`; the
`ToolResultEvent`s of its tool round follow, in call order (spec: Output stream).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentos.core.messages import Message, ReplayBlock, ToolCall, ToolResult
from agentos.core.usage import ModelUsage
from agentos.llm.gateway import AttemptFailed, Hop
from agentos.llm.model import FinishChunk, FinishReason

__all__ = [
    "AttemptFailedEvent",
    "LoopEvent",
    "StepFinishedEvent",
    "TextDeltaEvent",
    "ToolCallEvent",
    "ToolResultEvent",
    "ToolsPausedEvent",
    "UsageEvent",
]


@dataclass(frozen=True, slots=True)
class TextDeltaEvent:
    """A non-empty piece of the step's text, as it streamed."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallEvent:
    """The model asked for a tool call (it runs in the step's tool round)."""

    call: ToolCall


@dataclass(frozen=True, slots=True)
class UsageEvent:
    """A usage report of the serving hop (providers report running totals: the last wins)."""

    usage: ModelUsage


@dataclass(frozen=True, slots=True)
class AttemptFailedEvent:
    """An attempt failed; ``billed`` is what it counts in the usage, ``None`` for nothing.

    ``billed`` is the usage the error reports, else, for an attempt that failed after output,
    the step's last report (spec: Billed failures count, before output or after it).
    """

    attempt: AttemptFailed
    billed: ModelUsage | None

    @property
    def hop(self) -> Hop:
        """The hop whose attempt failed."""
        return self.attempt.hop


@dataclass(frozen=True, slots=True)
class StepFinishedEvent:
    """A model step completed, its text as ``after_model_step`` left it.

    ``message`` is the assistant message the loop recorded for it; ``will_run_tools`` says
    whether a tool round follows (the step asked for calls, and offered tools or its loop runs
    every call: ``StepLoop(run_all_calls=True)``).
    """

    step_index: int
    hop: Hop
    text: str
    message: Message
    tool_calls: list[ToolCall]
    finish_reason: FinishReason
    usage: ModelUsage | None
    replay_blocks: list[ReplayBlock] = field(default_factory=list)
    finish: FinishChunk | None = None
    will_run_tools: bool = False

    @property
    def provider_message_id(self) -> str | None:
        """The provider's id for the step's response, when it gave one."""
        return self.finish.provider_message_id if self.finish is not None else None

    @property
    def response_model(self) -> str | None:
        """The model that answered, as the provider named it."""
        return self.finish.response_model if self.finish is not None else None

    @property
    def cache_diagnostics(self) -> dict[str, Any] | None:
        """The prompt-cache diagnostics the provider reported for the step."""
        return self.finish.cache_diagnostics if self.finish is not None else None


@dataclass(frozen=True, slots=True)
class ToolResultEvent:
    """A result of the step's tool round (a failed or skipped call's included), in call order."""

    step_index: int
    result: ToolResult


@dataclass(frozen=True, slots=True)
class ToolsPausedEvent:
    """The step's calls of tools the host runs (DESIGN §5.24), which end the loop.

    The round's other calls ran first; the host answers these.
    """

    step_index: int
    calls: tuple[ToolCall, ...]


LoopEvent = (
    TextDeltaEvent
    | ToolCallEvent
    | UsageEvent
    | AttemptFailedEvent
    | StepFinishedEvent
    | ToolResultEvent
    | ToolsPausedEvent
)
"""Any event of a `StepLoop`."""
