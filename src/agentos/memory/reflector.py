"""The reflector: consolidating observation notes into long-term memories (reference §1.19).

`MemoryReflector.add_notes()` collects notes and reports when a reflection is due: at
``activation_threshold_notes`` pending notes (6) or ``activation_threshold_tokens`` (40 000,
``ceil(len/4)`` per note). `MemoryReflector.reflect()` then makes one model call with a prompt
written for agentos that asks for an optional ``<thinking>`` block and then one JSON object per
line::

    {"reasoning", "type", "scope", "scope_id", "content", "entities", "tags", "confidence",
     "source_type", "supersedes": [...], "consumed_notes": [...]}

Each becomes a `ReflectedMemory` for the memory manager to encode: an unknown ``type`` falls back
to semantic, an unknown ``scope`` to user, a ``source_type`` other than observation or reflection
to reflection (a model may not give its own conclusions the trust of a user statement), and
``confidence`` is clamped to 0..1 (0.7 when missing). A line may also be only
``{"consumed_notes": [...]}``: notes judged not worth keeping.

The contradiction rule depends on the traits and is stated in the prompt and enforced on the
reply: honesty above 0.6, the newer information wins (the old memory is superseded); else
agreeableness above 0.6, both are kept (no supersession); else the higher confidence wins (a new
memory more confident than every memory it contradicts supersedes them; otherwise it is dropped
and the stored one stands, ties included). A memory can supersede only the existing memories the
call showed the model, so a reply can never retire a trace it did not see.

Consumed notes leave the pending set. A note the model leaves unconsumed stays for the next
reflection (it may need more context), at most ``max_reflections_per_note`` times (3); a failed
model call consumes nothing and counts for nothing. Without an invoker the reflector never
activates and keeps no notes.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from agentos.core.json_reply import parse_json_object
from agentos.core.tokens import estimate_tokens
from agentos.memory.invoker import ModelInvoker
from agentos.memory.observer import TRAIT_EMPHASIS_THRESHOLD, ObservationNote
from agentos.memory.trace import MemoryScope, MemoryTrace, MemoryType, SourceType
from agentos.memory.traits import TraitMap, trait_level

__all__ = [
    "DEFAULT_REFLECTION_CONFIDENCE",
    "REFLECTOR_PROMPT_HASH",
    "ConflictRule",
    "MemoryReflector",
    "ReflectedMemory",
    "ReflectionResult",
    "ReflectorConfig",
    "conflict_rule",
    "reflector_system_prompt",
]

DEFAULT_REFLECTION_CONFIDENCE = 0.7
"""The confidence of a reflected memory whose line gave none."""

_ALLOWED_SOURCES = frozenset({SourceType.OBSERVATION, SourceType.REFLECTION})


@dataclass(frozen=True, slots=True)
class ReflectorConfig:
    """When the reflector activates and how long it keeps notes the model leaves unconsumed."""

    activation_threshold_notes: int = 6
    activation_threshold_tokens: int = 40_000
    max_reflections_per_note: int = 3
    max_pending_notes: int = 500

    def __post_init__(self) -> None:
        for name in (
            "activation_threshold_notes",
            "activation_threshold_tokens",
            "max_reflections_per_note",
            "max_pending_notes",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"ReflectorConfig.{name} must be at least 1")


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


@dataclass(frozen=True, slots=True)
class ConflictRule:
    """How a contradiction between a new memory and an existing one is resolved."""

    name: str
    instruction: str


_NEWER_WINS = ConflictRule(
    "newer_wins",
    "The newer information wins: list the ids of the existing memories it contradicts in "
    '"supersedes".',
)
_KEEP_BOTH = ConflictRule(
    "keep_both",
    'Keep both versions: leave "supersedes" empty and say in the new memory\'s content that it '
    "differs from what was known before.",
)
_HIGHER_CONFIDENCE = ConflictRule(
    "higher_confidence",
    'The more confident version wins: list an existing memory in "supersedes" only when your '
    "confidence in the new memory is higher than that memory's; otherwise leave the new one out.",
)


def conflict_rule(traits: TraitMap | None) -> ConflictRule:
    """The contradiction rule for ``traits``: honesty > 0.6 first, then agreeableness > 0.6."""
    if trait_level(traits, "honesty") > TRAIT_EMPHASIS_THRESHOLD:
        return _NEWER_WINS
    if trait_level(traits, "agreeableness") > TRAIT_EMPHASIS_THRESHOLD:
        return _KEEP_BOTH
    return _HIGHER_CONFIDENCE


_REFLECTOR_EMPHASES: tuple[tuple[str, str], ...] = (
    ("emotionality", "Keep the emotional weight of what happened, not only the facts."),
    ("extraversion", "Keep who the user spends time with and how those relationships change."),
    ("agreeableness", "Keep what builds or strains trust between the user and the assistant."),
    ("conscientiousness", "Organise memories cleanly: one topic per memory, precise tags."),
    ("openness", "Keep the links between ideas: name related entities and use rich tags."),
)

_REFLECTOR_PROMPT = """\
You turn observation notes about a conversation into the long-term memories an AI assistant keeps \
about its user. Many notes should become few memories: merge notes that say the same thing.

First think inside <thinking>...</thinking>: which notes state facts, which describe events, \
which show how the user wants to be helped, which announce future plans, which touch the \
relationship, and whether any note contradicts an existing memory.

Then write each memory as one JSON object on its own line, with the fields:
{{"reasoning": "<why this is worth remembering>", \
"type": "semantic | episodic | procedural | prospective | relational", \
"scope": "user | thread | persona | organization", "scope_id": "<id, or null>", \
"content": "<the memory, one or two sentences>", "entities": ["..."], "tags": ["..."], \
"confidence": <0.0 to 1.0>, "source_type": "observation | reflection", \
"supersedes": ["<ids of existing memories this replaces>"], \
"consumed_notes": ["<ids of the notes this memory was made from>"]}}

Types: semantic for a lasting fact (including anything the user asked you to remember); \
episodic for something that happened at a particular time; procedural for how the user wants \
things done; prospective for an intention or reminder; relational for trust, closeness or \
conflict between the user and the assistant.
Scopes: user for what concerns the user, thread for this conversation only, persona for the \
assistant itself, organization for what everyone shares.
Source: observation when the memory restates what was said, reflection when you inferred it.

Contradictions: {conflict}
{style}

Rules:
- Copy names, dates, amounts, addresses and other specific values exactly.
- Every note you used goes into "consumed_notes" of the memory made from it. For notes not \
worth keeping, write a line holding only {{"consumed_notes": ["<their ids>"]}}.
- "supersedes" may name only ids listed under existing memories.
- After the thinking block, output only the JSON lines: no code fences, no commentary."""


def reflector_system_prompt(traits: TraitMap | None = None) -> str:
    """The reflector's system prompt: the conflict rule and the emphases of traits above 0.6."""
    emphases = [
        text
        for name, text in _REFLECTOR_EMPHASES
        if trait_level(traits, name) > TRAIT_EMPHASIS_THRESHOLD
    ]
    style = "Keep memories concise and factual."
    if emphases:
        style += "\nAlso:\n" + "\n".join(f"- {text}" for text in emphases)
    return _REFLECTOR_PROMPT.format(conflict=conflict_rule(traits).instruction, style=style)


REFLECTOR_PROMPT_HASH: str = hashlib.sha256(
    reflector_system_prompt(None).encode("utf-8")
).hexdigest()
"""sha256 (hex) of the system prompt with every trait neutral, to key caches and results."""

_THINKING = re.compile(r"<thinking>.*?</thinking>", re.S | re.I)


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


class MemoryReflector:
    """Consolidates observation notes into `ReflectedMemory` specs, one model call per reflection.

    ``add_notes()`` says when a reflection is due; the caller then awaits ``reflect()``.
    """

    def __init__(
        self,
        invoker: ModelInvoker | None,
        traits: TraitMap | None = None,
        config: ReflectorConfig | None = None,
    ) -> None:
        self.invoker = invoker
        self.traits = traits
        self.config = config or ReflectorConfig()
        self._pending: list[ObservationNote] = []
        self._offers: dict[str, int] = {}

    @property
    def system_prompt(self) -> str:
        """The system prompt this reflector sends."""
        return reflector_system_prompt(self.traits)

    @property
    def pending_notes(self) -> tuple[ObservationNote, ...]:
        """The notes waiting for a reflection, oldest first."""
        return tuple(self._pending)

    @property
    def pending_tokens(self) -> int:
        """The estimated tokens of the pending notes' content."""
        return sum(estimate_tokens(note.content) for note in self._pending)

    def should_activate(self) -> bool:
        """Whether a reflection is due (never without an invoker)."""
        if self.invoker is None or not self._pending:
            return False
        return (
            len(self._pending) >= self.config.activation_threshold_notes
            or self.pending_tokens >= self.config.activation_threshold_tokens
        )

    def add_notes(self, notes: Iterable[ObservationNote]) -> bool:
        """Queue ``notes``; whether a reflection is now due.

        Without an invoker nothing could ever consume them, so they are not kept.
        """
        if self.invoker is None:
            return False
        known = {note.id for note in self._pending}
        self._pending.extend(note for note in notes if note.id not in known)
        excess = len(self._pending) - self.config.max_pending_notes
        if excess > 0:
            for note in self._pending[:excess]:
                self._offers.pop(note.id, None)
            del self._pending[:excess]
        return self.should_activate()

    async def reflect(
        self, now: float = 0.0, existing: Sequence[MemoryTrace] = ()
    ) -> ReflectionResult:
        """Reflect over every pending note now, whether or not a threshold was met.

        ``existing`` are stored memories the model may supersede (shown with their ids and
        confidence). Returns an empty result without an invoker or pending notes, and an empty
        ``failed`` result, with every note still pending, when the model call raises.
        """
        if self.invoker is None or not self._pending:
            return ReflectionResult(reflected_at=now)
        notes = list(self._pending)
        user_prompt = self._user_prompt(notes, existing)
        try:
            reply = await self.invoker(self.system_prompt, user_prompt)
        except Exception:
            return ReflectionResult(reflected_at=now, failed=True)
        result = self.parse_reflection(reply, notes, existing, now)
        self._settle(notes, set(result.consumed_note_ids))
        return result

    def parse_reflection(
        self,
        reply: str,
        notes: Sequence[ObservationNote],
        existing: Sequence[MemoryTrace] = (),
        now: float = 0.0,
    ) -> ReflectionResult:
        """The `ReflectionResult` of a reply to a prompt that showed ``notes`` and ``existing``.

        Lines that do not parse as objects, and objects with neither content nor consumed notes,
        are skipped; consumed ids and supersessions outside what the prompt showed are dropped.
        """
        note_ids = {note.id for note in notes}
        existing_confidence = {trace.id: trace.provenance.confidence for trace in existing}
        rule = conflict_rule(self.traits)
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
            used = [i for i in dict.fromkeys(listed) if i in note_ids]
            consumed.update(dict.fromkeys(used))
            content = _text(data.get("content"))
            if content is None:
                continue
            confidence = _confidence(data.get("confidence"))
            source = _enum_or(
                SourceType, _first(data, "source_type", "sourceType"), SourceType.REFLECTION
            )
            replaces = self._resolve_conflicts(
                _string_list(data.get("supersedes")), confidence, existing_confidence, rule
            )
            if replaces is None:
                continue
            superseded.update(dict.fromkeys(replaces))
            memories.append(
                ReflectedMemory(
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
                    consumed_notes=tuple(used),
                )
            )
        input_tokens = sum(estimate_tokens(note.content) for note in notes)
        output_tokens = sum(estimate_tokens(memory.content) for memory in memories)
        return ReflectionResult(
            memories=tuple(memories),
            superseded_trace_ids=tuple(superseded),
            consumed_note_ids=tuple(consumed),
            compression_ratio=input_tokens / output_tokens if output_tokens else 1.0,
            reflected_at=now,
        )

    def clear(self) -> None:
        """Forget every pending note."""
        self._pending = []
        self._offers = {}

    @staticmethod
    def _resolve_conflicts(
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
        if rule is _KEEP_BOTH:
            return ()
        if rule is _NEWER_WINS:
            return tuple(shown)
        # Higher confidence wins; a tie keeps the memory already stored.
        if any(confidence <= existing_confidence[i] for i in shown):
            return None
        return tuple(shown)

    def _settle(self, offered: Sequence[ObservationNote], consumed: set[str]) -> None:
        """Drop consumed notes, and notes offered ``max_reflections_per_note`` times."""
        limit = self.config.max_reflections_per_note
        for note in offered:
            self._offers[note.id] = self._offers.get(note.id, 0) + 1
        keep = [
            note
            for note in self._pending
            if note.id not in consumed and self._offers.get(note.id, 0) < limit
        ]
        kept_ids = {note.id for note in keep}
        self._offers = {k: v for k, v in self._offers.items() if k in kept_ids}
        self._pending = keep

    @staticmethod
    def _user_prompt(notes: Sequence[ObservationNote], existing: Sequence[MemoryTrace]) -> str:
        note_lines = "\n".join(
            f"[{note.id}] ({note.type.value}, importance {note.importance:.2f}) {note.content}"
            for note in notes
        )
        if not existing:
            return f"Observation notes:\n{note_lines}"
        memory_lines = "\n".join(
            f"[{trace.id}] ({trace.type.value}, confidence "
            f"{trace.provenance.confidence:.2f}) {trace.content}"
            for trace in existing
        )
        return f"Existing memories:\n{memory_lines}\n\nNew observation notes:\n{note_lines}"
