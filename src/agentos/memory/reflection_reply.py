"""What a reflection's reply becomes (reference §1.19; spec: Cognitive memory).

The reply holds an optional ``<thinking>`` block and then one JSON object per line::

    {"reasoning", "type", "scope", "scope_id", "content", "entities", "tags", "confidence",
     "source_type", "supersedes": [...], "consumed_notes": [...]}

Each becomes a `ReflectedMemory` for the memory manager to encode: an unknown ``type`` falls back
to semantic, an unknown ``scope`` to user, a ``source_type`` other than observation or reflection
to reflection (a model may not give its own conclusions the trust of a user statement), and
``confidence`` is clamped to 0..1 (0.7 when missing). A line may also be only
``{"consumed_notes": [...]}``: notes judged not worth keeping.

The contradiction rule (`agentos.memory.reflection_prompt.conflict_rule`) is enforced here: a
new memory more confident than every memory it contradicts supersedes them under the
higher-confidence rule; otherwise it is dropped and the stored one stands, ties included. A
memory can supersede only the existing memories the call showed the model, so a reply can never
retire a trace it did not see.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from agentos.core.json_reply import parse_json_object
from agentos.core.tokens import estimate_tokens
from agentos.memory.observer import ObservationNote
from agentos.memory.reflection_prompt import ConflictRule, conflict_rule
from agentos.memory.trace import MemoryScope, MemoryTrace, MemoryType, SourceType
from agentos.memory.traits import TraitMap

__all__ = [
    "DEFAULT_REFLECTION_CONFIDENCE",
    "ReflectedMemory",
    "ReflectionResult",
    "parse_reflection",
]

DEFAULT_REFLECTION_CONFIDENCE = 0.7
"""The confidence of a reflected memory whose line gave none."""

_ALLOWED_SOURCES = frozenset({SourceType.OBSERVATION, SourceType.REFLECTION})
_THINKING = re.compile(r"<thinking>.*?</thinking>", re.S | re.I)


@dataclass(frozen=True, slots=True)
class ReflectedMemory:
    """One memory the reflector proposes; the memory manager encodes it.

    ``scope_id`` is None when the model gave none (the manager picks the scope id).
    ``supersedes`` holds ids of existing traces this memory replaces, already filtered by the
    conflict rule; ``consumed_notes`` the ids of the pending notes it was made from.
    """

    type: MemoryType
    scope: MemoryScope
    content: str
    confidence: float
    source_type: SourceType
    scope_id: str | None = None
    reasoning: str | None = None
    entities: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = ()
    consumed_notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ReflectionResult:
    """What one reflection produced.

    ``compression_ratio`` is the estimated tokens of the notes sent over those of the memories
    produced (1.0 when none were produced). ``failed`` is True when the model call raised.
    """

    memories: tuple[ReflectedMemory, ...] = ()
    superseded_trace_ids: tuple[str, ...] = ()
    consumed_note_ids: tuple[str, ...] = ()
    compression_ratio: float = 1.0
    reflected_at: float = 0.0
    failed: bool = False


def parse_reflection(
    reply: str,
    notes: Sequence[ObservationNote],
    existing: Sequence[MemoryTrace] = (),
    now: float = 0.0,
    traits: TraitMap | None = None,
) -> ReflectionResult:
    """The `ReflectionResult` of a reply to a prompt that showed ``notes`` and ``existing``.

    ``traits`` choose the contradiction rule enforced on supersessions. Lines that do not parse
    as objects, and objects with neither content nor consumed notes, are skipped; consumed ids
    and supersessions outside what the prompt showed are dropped.
    """
    note_ids = {note.id for note in notes}
    existing_confidence = {trace.id: trace.provenance.confidence for trace in existing}
    rule = conflict_rule(traits)
    memories: list[ReflectedMemory] = []
    consumed: dict[str, None] = {}
    superseded: dict[str, None] = {}
    for line in _THINKING.sub("", reply).splitlines():
        if "{" not in line:
            continue
        data = parse_json_object(line)
        if data is None:
            continue
        listed = _string_list(_first(data, "consumed_notes", "consumedNotes"))
        used = tuple(i for i in dict.fromkeys(listed) if i in note_ids)
        consumed.update(dict.fromkeys(used))
        memory = _memory_of(data, used, existing_confidence, rule)
        if memory is not None:
            superseded.update(dict.fromkeys(memory.supersedes))
            memories.append(memory)
    input_tokens = sum(estimate_tokens(note.content) for note in notes)
    output_tokens = sum(estimate_tokens(memory.content) for memory in memories)
    return ReflectionResult(
        memories=tuple(memories),
        superseded_trace_ids=tuple(superseded),
        consumed_note_ids=tuple(consumed),
        compression_ratio=input_tokens / output_tokens if output_tokens else 1.0,
        reflected_at=now,
    )


def _memory_of(
    data: dict[str, Any],
    used: tuple[str, ...],
    existing_confidence: dict[str, float],
    rule: ConflictRule,
) -> ReflectedMemory | None:
    """The memory one reply line proposes; None without content or when it loses a conflict."""
    content = _text(data.get("content"))
    if content is None:
        return None
    confidence = _confidence(data.get("confidence"))
    source = _enum_or(SourceType, _first(data, "source_type", "sourceType"), SourceType.REFLECTION)
    replaces = _supersessions(
        _string_list(data.get("supersedes")), confidence, existing_confidence, rule
    )
    if replaces is None:
        return None
    return ReflectedMemory(
        type=_enum_or(MemoryType, data.get("type"), MemoryType.SEMANTIC),
        scope=_enum_or(MemoryScope, data.get("scope"), MemoryScope.USER),
        scope_id=_text(_first(data, "scope_id", "scopeId")),
        content=content,
        confidence=confidence,
        source_type=source if source in _ALLOWED_SOURCES else SourceType.REFLECTION,
        reasoning=_text(data.get("reasoning")),
        entities=_string_list(data.get("entities")),
        tags=_string_list(data.get("tags")),
        supersedes=replaces,
        consumed_notes=used,
    )


def _supersessions(
    ids: Sequence[str],
    confidence: float,
    existing_confidence: dict[str, float],
    rule: ConflictRule,
) -> tuple[str, ...] | None:
    """The existing memories a new one supersedes, or None when the new one loses."""
    # The rule is enforced here as well as stated in the prompt, so the outcome of a
    # contradiction depends on the agent's traits and not on how well the model followed them.
    # Ids the prompt did not show are dropped: a reply never retires a trace it did not see.
    shown = [i for i in dict.fromkeys(ids) if i in existing_confidence]
    if rule.name == "keep_both":
        return ()
    if rule.name == "newer_wins":
        return tuple(shown)
    # Higher confidence wins; a tie keeps the memory already stored.
    if any(confidence <= existing_confidence[i] for i in shown):
        return None
    return tuple(shown)


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _string_list(value: Any) -> tuple[str, ...]:
    """The non-empty strings of a JSON list (anything else gives none)."""
    if not isinstance(value, list):
        return ()
    return tuple(item.strip() for item in value if isinstance(item, str) and item.strip())


def _confidence(value: Any) -> float:
    """A JSON number clamped to 0..1; the default for anything else (booleans included)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return DEFAULT_REFLECTION_CONFIDENCE
    return min(1.0, max(0.0, float(value)))


def _first(data: dict[str, Any], *keys: str) -> Any:
    """The value under the first key present (snake_case first, camelCase accepted too)."""
    for key in keys:
        if key in data:
            return data[key]
    return None


_E = TypeVar("_E", MemoryType, MemoryScope, SourceType)


def _enum_or(kind: type[_E], value: Any, default: _E) -> _E:
    try:
        return kind(str(value).strip().lower())
    except ValueError:
        return default
