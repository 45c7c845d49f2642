"""The GMI's reasoning trace: the last N entries of what it did (reference §1.3).

Entries keep at most ``max_entries`` (500 by default; the persona's
``reasoning_trace_config.max_entries`` or the runtime's setting), oldest dropped first. A message
is cut to 1,000 characters; details are deep-copied in and out, so neither the caller nor a reader
can change a stored entry. `ReasoningTrace.forget_turns()` strips the details of the entries of
turns a history replace or clear dropped (their type and message stay).

`deep_copy` is how the details, and the working memory's values, are copied: `copy.deepcopy`
with a fast path for JSON-shaped data. The per-turn records are small dicts of strings and
numbers, for which `copy.deepcopy` spends most of its time on its memo and dispatch; `deep_copy`
copies plain dicts and lists of exact ``str`` / ``int`` / ``float`` / ``bool`` / ``None``
directly and gives the same result `copy.deepcopy` gives: anything else (a subclass, a tuple, an
object), and a container met twice (shared or cyclic, which `copy.deepcopy` keeps shared), is
left to `copy.deepcopy` for the whole value.
"""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeVar

__all__ = [
    "DEFAULT_MAX_TRACE_ENTRIES",
    "MAX_TRACE_MESSAGE_CHARS",
    "ReasoningEntryType",
    "ReasoningTrace",
    "ReasoningTraceEntry",
    "deep_copy",
]

DEFAULT_MAX_TRACE_ENTRIES = 500
MAX_TRACE_MESSAGE_CHARS = 1000


class ReasoningEntryType(StrEnum):
    """What a trace entry records (the reference's types the GMI writes)."""

    LIFECYCLE = "LIFECYCLE"
    INTERACTION_START = "INTERACTION_START"
    INTERACTION_END = "INTERACTION_END"
    STATE_CHANGE = "STATE_CHANGE"
    PROMPT_CONSTRUCTION_START = "PROMPT_CONSTRUCTION_START"
    PROMPT_CONSTRUCTION_COMPLETE = "PROMPT_CONSTRUCTION_COMPLETE"
    LLM_CALL_START = "LLM_CALL_START"
    LLM_CALL_COMPLETE = "LLM_CALL_COMPLETE"
    TOOL_CALL_REQUESTED = "TOOL_CALL_REQUESTED"
    TOOL_EXECUTION_START = "TOOL_EXECUTION_START"
    TOOL_EXECUTION_RESULT = "TOOL_EXECUTION_RESULT"
    RAG_QUERY_START = "RAG_QUERY_START"
    RAG_QUERY_RESULT = "RAG_QUERY_RESULT"
    SELF_REFLECTION_TRIGGERED = "SELF_REFLECTION_TRIGGERED"
    SELF_REFLECTION_START = "SELF_REFLECTION_START"
    SELF_REFLECTION_COMPLETE = "SELF_REFLECTION_COMPLETE"
    SELF_REFLECTION_SKIPPED = "SELF_REFLECTION_SKIPPED"
    WARNING = "WARNING"
    ERROR = "ERROR"
    DEBUG = "DEBUG"


@dataclass(frozen=True, slots=True)
class ReasoningTraceEntry:
    """One entry: when, what kind, a message and JSON-like details."""

    timestamp: float
    type: ReasoningEntryType
    message: str
    details: dict[str, Any] | None = None
    turn_id: str | None = None


@dataclass(slots=True)
class ReasoningTrace:
    """The last ``max_entries`` entries of one GMI."""

    gmi_id: str
    persona_id: str | None = None
    max_entries: int = DEFAULT_MAX_TRACE_ENTRIES
    _entries: deque[ReasoningTraceEntry] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, not {self.max_entries}")
        self._entries = deque(maxlen=self.max_entries)

    def add(
        self,
        type: ReasoningEntryType,
        message: str,
        details: dict[str, Any] | None = None,
        *,
        timestamp: float,
        turn_id: str | None = None,
    ) -> ReasoningTraceEntry:
        """Record an entry (message cut to 1,000 characters, details deep-copied)."""
        entry = ReasoningTraceEntry(
            timestamp,
            type,
            message[:MAX_TRACE_MESSAGE_CHARS],
            deep_copy(details) if details is not None else None,
            turn_id,
        )
        self._entries.append(entry)
        return entry

    def entries(self, last: int | None = None) -> list[ReasoningTraceEntry]:
        """A deep copy of the entries (the ``last`` ones only, when given), oldest first."""
        held = list(self._entries)
        if last is not None:
            held = held[-last:] if last > 0 else []
        # Entries are frozen; only their details can be changed, so only those are copied.
        return [
            e
            if e.details is None
            else ReasoningTraceEntry(
                e.timestamp, e.type, e.message, deep_copy(e.details), e.turn_id
            )
            for e in held
        ]

    def __len__(self) -> int:
        return len(self._entries)

    def forget_turns(self, turn_ids: Iterable[str]) -> None:
        """Drop the details of the entries of ``turn_ids`` (type and message stay)."""
        dropped = set(turn_ids)
        kept = [
            ReasoningTraceEntry(e.timestamp, e.type, e.message, None, e.turn_id)
            if e.turn_id in dropped
            else e
            for e in self._entries
        ]
        self._entries = deque(kept, maxlen=self.max_entries)


T = TypeVar("T")

_ATOMIC = frozenset({str, int, float, bool, type(None)})


class _NotPlain(Exception):
    """The value holds something the fast path does not copy: `copy.deepcopy` does it."""


def deep_copy(value: T) -> T:
    """A deep copy of ``value``, equal to what `copy.deepcopy` returns."""
    kind = type(value)
    if kind in _ATOMIC:
        return value
    if kind is dict:  # the common case, a flat record: one pass, no bookkeeping
        flat = {}
        for key, item in value.items():  # type: ignore[attr-defined]
            if type(key) not in _ATOMIC or type(item) not in _ATOMIC:
                break
            flat[key] = item
        else:
            return flat  # type: ignore[return-value]
    try:
        return _plain(value, set())  # type: ignore[no-any-return]
    except _NotPlain:
        return copy.deepcopy(value)


def _plain(value: Any, seen: set[int]) -> Any:
    kind = type(value)
    if kind in _ATOMIC:
        return value
    if kind is not dict and kind is not list:
        raise _NotPlain
    if id(value) in seen:
        raise _NotPlain  # shared or cyclic: deepcopy keeps the sharing
    seen.add(id(value))
    if kind is dict:
        copied = {}
        for key, item in value.items():
            if type(key) not in _ATOMIC:
                raise _NotPlain
            copied[key] = item if type(item) in _ATOMIC else _plain(item, seen)
        return copied
    return [item if type(item) in _ATOMIC else _plain(item, seen) for item in value]
