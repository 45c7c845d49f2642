"""The events a GMI raises about its user (reference §1.2 ``GMIEvent``; spec: Sentiment scoring).

The sentiment tracker raises them; event-based metaprompts consume them. `GMIEventLog` keeps the
last 20 events for reading and the set of event types still pending: a type stays pending until
a metaprompt triggered by it runs at the end of the turn that raised it (or of a later turn, when
no metaprompt listens for it yet).
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

__all__ = [
    "MAX_EVENTS",
    "EventSeverity",
    "GMIEvent",
    "GMIEventLog",
    "GMIEventMetadata",
    "GMIEventType",
]

MAX_EVENTS = 20
"""How many events a GMI keeps for reading."""

EventSeverity = Literal["low", "medium", "high"]


class GMIEventType(StrEnum):
    """What a GMI noticed (the values are the reference's event names)."""

    USER_FRUSTRATED = "user_frustrated"
    USER_CONFUSED = "user_confused"
    USER_SATISFIED = "user_satisfied"
    ERROR_THRESHOLD_EXCEEDED = "error_threshold_exceeded"
    LOW_ENGAGEMENT = "low_engagement"
    TASK_COMPLEXITY_MISMATCH = "task_complexity_mismatch"
    SKILL_LEVEL_CHANGE_DETECTED = "skill_level_change_detected"
    PERSONA_DRIFT = "persona_drift"


@dataclass(frozen=True, slots=True)
class GMIEventMetadata:
    """What raised an event: the turn's scores, the run length, the trigger and its evidence."""

    sentiment_score: float | None = None
    sentiment_polarity: str | None = None
    sentiment_intensity: float | None = None
    consecutive_turns: int | None = None
    triggered_by: Literal["sentiment", "keyword", "error", "pattern"] = "sentiment"
    evidence_preview: str | None = None
    trigger_keywords: tuple[str, ...] = ()
    error_count: int | None = None


@dataclass(frozen=True, slots=True)
class GMIEvent:
    """One event: its type, when and in which turn, how severe, and why."""

    event_type: GMIEventType
    timestamp: float
    turn_id: str
    severity: EventSeverity
    metadata: GMIEventMetadata = field(default_factory=GMIEventMetadata)


class GMIEventLog:
    """The last `MAX_EVENTS` events and the event types not yet consumed."""

    def __init__(self) -> None:
        self._events: deque[GMIEvent] = deque(maxlen=MAX_EVENTS)
        self._pending: set[GMIEventType] = set()

    def emit(self, event: GMIEvent) -> None:
        """Record ``event`` and mark its type pending."""
        self._events.append(event)
        self._pending.add(event.event_type)

    def events(self) -> list[GMIEvent]:
        """The kept events, oldest first."""
        return list(self._events)

    def pending(self) -> frozenset[GMIEventType]:
        """The event types raised and not yet consumed."""
        return frozenset(self._pending)

    def consume(self, event_type: GMIEventType | str) -> bool:
        """Take ``event_type`` out of the pending set; whether it was pending."""
        try:
            self._pending.remove(GMIEventType(event_type))
        except (KeyError, ValueError):
            return False
        return True

    def forget_turns(self, turn_ids: Iterable[str]) -> None:
        """Drop the evidence preview of the events of ``turn_ids`` (a history replace or clear)."""
        dropped = set(turn_ids)
        self._events = deque(
            (
                dataclasses.replace(
                    e, metadata=dataclasses.replace(e.metadata, evidence_preview=None)
                )
                if e.turn_id in dropped
                else e
                for e in self._events
            ),
            maxlen=MAX_EVENTS,
        )
