"""What a caller hands a GMI for one turn (reference §1.2 ``GMITurnInput``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from agentos.core.messages import ContentPart

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

    ``metadata["options"]`` holds the turn's completion options (snake_case or the TypeScript
    camelCase keys; the turn's value replaces the persona's); ``metadata`` may also hold
    ``end_user_id`` (sent as the provider's end-user id on every call of the turn), and
    ``conversation_history_for_prompt`` (a list of `Message`s that replaces the GMI's own history
    in this turn's prompts when non-empty).
    """

    interaction_id: str
    user_id: str
    content: str | list[ContentPart] | None
    type: GMIInteractionType = GMIInteractionType.TEXT
    session_id: str | None = None
    timestamp: float | None = None
    user_context_override: dict[str, Any] | None = None
    task_context_override: dict[str, Any] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
