"""What a caller hands a GMI for one turn (reference §1.2 ``GMITurnInput``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from agentos.core.messages import ContentPart, ToolResult
from agentos.substrate.turn_options import NO_TURN_OPTIONS, TurnOptions

__all__ = ["GMIInteractionType", "GMITurnInput"]


class GMIInteractionType(StrEnum):
    """The kind of input a turn carries."""

    TEXT = "text"
    MULTIMODAL_CONTENT = "multimodal_content"
    TOOL_RESPONSE = "tool_response"
    SYSTEM_MESSAGE = "system_message"
    LIFECYCLE_EVENT = "lifecycle_event"


@dataclass(frozen=True, slots=True)
class GMITurnInput:
    """One turn's input.

    ``options`` is what the caller asks of this turn (`TurnOptions`: completion options over
    the persona's, the system prompt texts, the end user's id, ...); the GMI reads nothing
    else. ``tool_results`` is set on a tool continuation (`handle_tool_results()`): the
    results it records, after which the paused round's turn goes on. ``metadata`` is the
    host's own data, kept with the input and never read by the GMI.
    """

    interaction_id: str
    user_id: str
    content: str | list[ContentPart] | None
    type: GMIInteractionType = GMIInteractionType.TEXT
    session_id: str | None = None
    timestamp: float | None = None
    user_context_override: dict[str, Any] | None = None
    task_context_override: dict[str, Any] | None = None
    options: TurnOptions = NO_TURN_OPTIONS
    tool_results: tuple[ToolResult, ...] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
