"""What a GMI turn streams and returns (spec: Output stream; reference §1.2).

`GMIOutputChunkType` has the spec's twelve chunk types; a `GMI` yields eight of them
(RAG_SOURCES_AVAILABLE, TEXT_DELTA, TOOL_CALL_REQUEST, USAGE_UPDATE, STEP_FINISHED, TOOL_RESULT,
ERROR and, last, FINAL_RESPONSE_MARKER). A chunk's ``content`` depends on its type:

- TEXT_DELTA: the delta (``str``);
- TOOL_CALL_REQUEST: the calls (``list[ToolCall]``);
- USAGE_UPDATE: the reported `ModelUsage` (also in ``usage``);
- STEP_FINISHED: a `StepFinishedPayload`;
- TOOL_RESULT: a `ToolResultPayload`;
- ERROR: the error's message (its ``to_dict()`` in ``error_details``, the `GMIError` itself in
  ``error``, so an in-process caller raises it as it is);
- FINAL_RESPONSE_MARKER: the turn's `GMIOutput`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from agentos.core.errors import GMIError
from agentos.core.messages import ReplayBlock, ToolCall
from agentos.core.usage import ModelUsage

__all__ = [
    "GMIOutput",
    "GMIOutputChunk",
    "GMIOutputChunkType",
    "StepFinishedPayload",
    "ToolResultPayload",
]


class GMIOutputChunkType(StrEnum):
    """The twelve chunk types of IGMI.ts (values are the TypeScript strings)."""

    TEXT_DELTA = "text_delta"
    TOOL_CALL_REQUEST = "tool_call_request"
    REASONING_STATE_UPDATE = "reasoning_state_update"
    FINAL_RESPONSE_MARKER = "final_response_marker"
    ERROR = "error"
    SYSTEM_MESSAGE = "system_message"
    USAGE_UPDATE = "usage_update"
    LATENCY_REPORT = "latency_report"
    UI_COMMAND = "ui_command"
    RAG_SOURCES_AVAILABLE = "rag_sources_available"
    STEP_FINISHED = "step_finished"
    TOOL_RESULT = "tool_result"


@dataclass(frozen=True, slots=True)
class GMIOutputChunk:
    """One chunk of a turn's stream."""

    type: GMIOutputChunkType
    content: Any
    interaction_id: str
    timestamp: float
    is_final: bool = False
    finish_reason: str | None = None
    usage: ModelUsage | None = None
    error_details: dict[str, Any] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    error: GMIError | None = None


@dataclass(frozen=True, slots=True)
class StepFinishedPayload:
    """One completed model step (spec: StepFinishedChunkPayload)."""

    step_index: int
    text: str
    finish_reason: str
    provider_id: str
    model_id: str
    hop: int
    usage: ModelUsage | None = None
    response_model: str | None = None
    service_tier: str | None = None
    provider_message_id: str | None = None
    cache_diagnostics: dict[str, Any] | None = None
    structured_output: Any = None
    thinking_blocks: list[ReplayBlock] | None = None


@dataclass(frozen=True, slots=True)
class ToolResultPayload:
    """One result the GMI recorded for a call of its tool round."""

    tool_call_id: str
    name: str
    result: Any
    is_error: bool
    error_details: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class GMIOutput:
    """What a turn returns.

    ``tool_calls`` holds the calls of every round of the turn, refused ones included; ``usage``
    adds each completed step's last report once and the billed usage of each failed attempt;
    ``error`` (``{"code", "message", "details"}``) is set when the turn failed.
    """

    is_final: bool = True
    response_text: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: ModelUsage = field(default_factory=ModelUsage.zero)
    reasoning_trace: Any = None
    error: dict[str, Any] | None = None
    rag_sources: list[Any] = field(default_factory=list)
