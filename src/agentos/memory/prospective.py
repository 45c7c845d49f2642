"""Prospective items from observation notes: things to remember to do (reference §1.12 observe()).

Two kinds of note become a `ProspectiveItem`:

* a commitment note with importance at least 0.5 (below that, a commitment is hedging: "maybe
  I'll..."), at the note's importance;
* a preference note with importance at least 0.6 that voices a future wish ("love to", "want
  to", "been meaning to", "plan to", "going to", "hope to"), at 0.7 times the note's importance,
  since a wish binds less than a promise.

The trigger type comes from the wording: a time expression (tomorrow, next week, on Friday, at
5pm, in 3 days, ...) makes it time-based; otherwise "when", "after" or "once" makes it
event-based; otherwise it is context-based (it surfaces when the topic comes up again).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from agentos.memory.observer import NoteType, ObservationNote

__all__ = [
    "COMMITMENT_MIN_IMPORTANCE",
    "PREFERENCE_IMPORTANCE_FACTOR",
    "PREFERENCE_MIN_IMPORTANCE",
    "ProspectiveItem",
    "TriggerType",
    "infer_trigger_type",
    "prospective_item_from_note",
    "prospective_items_from_notes",
]

COMMITMENT_MIN_IMPORTANCE = 0.5
PREFERENCE_MIN_IMPORTANCE = 0.6
PREFERENCE_IMPORTANCE_FACTOR = 0.7


class TriggerType(StrEnum):
    """What should bring a prospective item back to mind."""

    TIME_BASED = "time_based"
    EVENT_BASED = "event_based"
    CONTEXT_BASED = "context_based"


@dataclass(frozen=True, slots=True)
class ProspectiveItem:
    """Something to remember to do, made from an observation note at ``created_at`` (seconds)."""

    content: str
    trigger_type: TriggerType
    importance: float
    source_note_id: str
    created_at: float


_FUTURE_WISH = re.compile(
    r"\b(?:love to|want to|been meaning to|plan to|going to|hope to)\b", re.IGNORECASE
)
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_UNITS = r"(?:minute|hour|day|week|month|year)s?"
# Month names need a day number or a preposition: "may" and "march" are also ordinary words.
_TEMPORAL = re.compile(
    r"\b(?:"
    + "|".join(
        (
            r"today|tonight|tomorrow|tmrw|weekend|deadline|noon|midnight|o'clock",
            _WEEKDAYS,
            r"(?:this|next|every)\s+(?:morning|afternoon|evening|night|" + _UNITS + ")",
            rf"(?:in|by|until|before)\s+(?:{_MONTHS})",
            rf"(?:{_MONTHS})\s+\d{{1,2}}(?:st|nd|rd|th)?",
            r"(?:on|by|until|before)\s+the\s+\d{1,2}(?:st|nd|rd|th)",
            r"in\s+(?:a|an|one|two|three|a\s+few|a\s+couple\s+of|\d+)\s+" + _UNITS,
            r"\d{1,2}(?::\d{2})?\s*(?:am|pm)|\d{1,2}:\d{2}",
            r"\d{4}-\d{2}-\d{2}",
        )
    )
    + r")\b",
    re.IGNORECASE,
)
_EVENT = re.compile(r"\b(?:when|after|once)\b", re.IGNORECASE)


def infer_trigger_type(text: str) -> TriggerType:
    """Time-based for a time expression, else event-based for when/after/once, else context."""
    if _TEMPORAL.search(text):
        return TriggerType.TIME_BASED
    if _EVENT.search(text):
        return TriggerType.EVENT_BASED
    return TriggerType.CONTEXT_BASED


def prospective_item_from_note(note: ObservationNote, now: float) -> ProspectiveItem | None:
    """The prospective item ``note`` gives (see the module doc), or None."""
    if note.type is NoteType.COMMITMENT and note.importance >= COMMITMENT_MIN_IMPORTANCE:
        importance = note.importance
    elif (
        note.type is NoteType.PREFERENCE
        and note.importance >= PREFERENCE_MIN_IMPORTANCE
        and _FUTURE_WISH.search(note.content)
    ):
        importance = note.importance * PREFERENCE_IMPORTANCE_FACTOR
    else:
        return None
    return ProspectiveItem(
        content=note.content,
        trigger_type=infer_trigger_type(note.content),
        importance=importance,
        source_note_id=note.id,
        created_at=now,
    )


def prospective_items_from_notes(
    notes: Iterable[ObservationNote], now: float
) -> list[ProspectiveItem]:
    """The prospective items ``notes`` give, in note order."""
    items = (prospective_item_from_note(note, now) for note in notes)
    return [item for item in items if item is not None]
