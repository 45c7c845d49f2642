"""What changed a session's history beside the caller's own writes (spec "Sessions").

`SessionHistoryBuffer.drain_history_events()` hands these out: an eviction by the history bound,
a reseed, a clear, or a stale turn's write that was dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

__all__ = ["HistoryEvent", "HistoryEventKind"]


class HistoryEventKind(StrEnum):
    """What changed the history behind the caller's back (or at its request)."""

    EVICTED = "evicted"
    """The bound dropped the oldest blocks after a turn (or a reseed)."""
    RESEEDED = "reseeded"
    """`SessionHistoryBuffer.reseed()` replaced the history; the counts are the new history's."""
    CLEARED = "cleared"
    """`SessionHistoryBuffer.clear()` emptied the history; the counts are what it removed."""
    DISCARDED = "discarded"
    """A stale turn's write was dropped; the counts are what it tried to write."""


@dataclass(frozen=True, slots=True)
class HistoryEvent:
    """One change to a session's history: its kind, its size and when it happened."""

    kind: HistoryEventKind
    messages: int
    blocks: int
    tokens: int
    at: datetime
