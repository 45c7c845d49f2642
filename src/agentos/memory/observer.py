"""The observer: turning a conversation into typed notes (reference §1.19, first stage).

`ObservationBuffer` holds the messages a memory has been shown since its last extraction and says
when enough have piled up: ``ceil(len(content) / 4)`` estimated tokens each, activating when the
pending tokens reach ``activation_threshold_tokens`` (30 000) **or** the pending messages reach
``activation_threshold_messages`` (20). The message trigger is what makes the observer run in chat,
where turns are far too short to ever reach the token threshold.

`MemoryObserver.observe()` pushes one message; on activation it drains the buffer and makes one
model call whose system prompt (written for agentos) asks for one JSON object per line, each a note
of type factual, emotional, commitment, preference, creative or correction, with extra emphases for
the HEXACO traits above 0.6. Lines that do not parse as a note are skipped.

A failed model call records nothing and loses no message: the drained messages go back into the
buffer in their original order, so the next ``observe()`` (which finds the buffer still at its
threshold) retries with them and the new message together. To keep a model that fails for good
from growing the buffer without end, it holds at most ``max_buffered_messages`` (500, i.e. 25
failed extractions at the default thresholds) and drops the oldest beyond that.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from agentos.core.json_reply import parse_json_object
from agentos.core.tokens import estimate_tokens
from agentos.memory.invoker import ModelInvoker
from agentos.memory.trace import DAY, HOUR, MINUTE, PAD
from agentos.memory.traits import TraitMap, trait_level

__all__ = [
    "TRAIT_EMPHASIS_THRESHOLD",
    "BufferedMessage",
    "MemoryObserver",
    "NoteEmotion",
    "NoteTemporal",
    "NoteType",
    "ObservationBuffer",
    "ObservationNote",
    "ObserverConfig",
    "observer_system_prompt",
    "relative_time_label",
]

TRAIT_EMPHASIS_THRESHOLD = 0.6
"""A trait strictly above this value adds its emphasis to the observer and reflector prompts."""


class NoteType(StrEnum):
    """What an observation note records."""

    FACTUAL = "factual"
    EMOTIONAL = "emotional"
    COMMITMENT = "commitment"
    PREFERENCE = "preference"
    CREATIVE = "creative"
    CORRECTION = "correction"


@dataclass(frozen=True, slots=True)
class NoteEmotion:
    """The mood a note was observed in: PAD valence and arousal as given (each -1..1)."""

    valence: float
    arousal: float


@dataclass(frozen=True, slots=True)
class NoteTemporal:
    """When a note was made and when what it refers to happened (seconds since the epoch).

    ``referenced_at`` is the time of the earliest message the extraction read;
    ``relative_label`` renders it relative to ``observed_at`` ("3 hours ago").
    """

    observed_at: float
    referenced_at: float
    relative_label: str


@dataclass(frozen=True, slots=True)
class ObservationNote:
    """One note the observer extracted (the reflector's input).

    ``importance`` is 0..1 (0.5 when the model gave none); ``emotional_context`` is None when the
    extraction had no mood; ``timestamp`` is when the note was made.
    """

    id: str
    type: NoteType
    content: str
    timestamp: float
    importance: float = 0.5
    entities: tuple[str, ...] = ()
    emotional_context: NoteEmotion | None = None
    temporal: NoteTemporal | None = None


@dataclass(frozen=True, slots=True)
class BufferedMessage:
    """A message waiting for extraction; ``seq`` keeps arrival order across re-queues."""

    seq: int
    role: str
    content: str
    timestamp: float
    pad: PAD | None = None
    tokens: int = 0


@dataclass(frozen=True, slots=True)
class ObserverConfig:
    """When the buffer activates and how much it holds while the model keeps failing.

    The buffer keeps at most ``max(max_buffered_messages, activation_threshold_messages)``
    messages, dropping the oldest.
    """

    activation_threshold_tokens: int = 30_000
    activation_threshold_messages: int = 20
    max_buffered_messages: int = 500

    def __post_init__(self) -> None:
        for name in (
            "activation_threshold_tokens",
            "activation_threshold_messages",
            "max_buffered_messages",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"ObserverConfig.{name} must be at least 1")


class ObservationBuffer:
    """The messages pending extraction and the activation rule.

    ``push()`` returns True when, with the new message, pending tokens reach
    ``activation_threshold_tokens`` or pending messages reach ``activation_threshold_messages``;
    counting starts again after ``drain()``.
    """

    def __init__(self, config: ObserverConfig | None = None) -> None:
        self.config = config or ObserverConfig()
        self._messages: list[BufferedMessage] = []
        self._seq = itertools.count()

    @property
    def pending_messages(self) -> int:
        """How many messages wait for extraction."""
        return len(self._messages)

    @property
    def pending_tokens(self) -> int:
        """The estimated tokens of the waiting messages."""
        return sum(m.tokens for m in self._messages)

    def should_activate(self) -> bool:
        """Whether the pending messages have reached either threshold."""
        return (
            self.pending_tokens >= self.config.activation_threshold_tokens
            or self.pending_messages >= self.config.activation_threshold_messages
        )

    def push(self, role: str, content: str, pad: PAD | None = None, now: float = 0.0) -> bool:
        """Add a message seen at ``now``; whether the buffer is now due for extraction."""
        message = BufferedMessage(
            next(self._seq), role, content, now, pad, estimate_tokens(content)
        )
        self._messages.append(message)
        self._trim()
        return self.should_activate()

    def drain(self) -> list[BufferedMessage]:
        """Remove and return every pending message, oldest first."""
        messages, self._messages = self._messages, []
        return messages

    def requeue(self, messages: Sequence[BufferedMessage]) -> None:
        """Put drained messages back (a failed extraction), merged in arrival order."""
        self._messages = sorted([*messages, *self._messages], key=lambda m: m.seq)
        self._trim()

    def clear(self) -> None:
        """Forget every pending message."""
        self._messages = []

    def _trim(self) -> None:
        # Never trim below the message threshold, or the buffer could not activate on it.
        cap = max(self.config.max_buffered_messages, self.config.activation_threshold_messages)
        excess = len(self._messages) - cap
        if excess > 0:
            del self._messages[:excess]


# The emphasis each high trait adds: what a person strong in that trait would notice.
_OBSERVER_EMPHASES: tuple[tuple[str, str], ...] = (
    ("honesty", "Record every correction, retraction or contradiction of something said before."),
    ("emotionality", "Track changes of mood and tone, and what caused them."),
    ("extraversion", "Note the people the user mentions and how they relate to each other."),
    ("agreeableness", "Note the user's preferences, how they like to be addressed, and rapport."),
    ("conscientiousness", "Capture every commitment, deadline, plan and follow-up task."),
    ("openness", "Keep the creative ideas, tangents and new interests the user explores."),
)

_OBSERVER_PROMPT = """\
You read an excerpt of a conversation between a user and an AI assistant and write the notes a \
long-term memory should keep from it.

Note types:
- factual: something true about the user or their world (job, family, places, possessions).
- emotional: how the user felt and why.
- commitment: something the user or the assistant promised or plans to do, with any deadline.
- preference: what the user likes, dislikes or wants, including how they want to be answered.
- creative: an idea, project or tangent the user is exploring.
- correction: the user corrected or withdrew something said earlier.

Write each note as one JSON object on its own line, with the fields:
{"type": "<one of the types above>", "content": "<one or two sentences>", \
"importance": <0.0 to 1.0: how much recalling this later would help>, \
"entities": ["<names of people, places, things>"]}

Rules:
- Write about the user and the conversation, never about these instructions.
- Keep names, dates, numbers and other specific values exactly as they were said.
- Do not copy insults or profanity into a note: describe the feeling instead. Anger at the \
assistant is feedback about the assistant, not a trait of the user.
- Skip small talk that is not worth remembering. If nothing is, output nothing.
- Output only the JSON lines: no list markers, no code fences, no commentary."""


def observer_system_prompt(traits: TraitMap | None = None) -> str:
    """The observer's system prompt, with the emphases of the traits above 0.6."""
    emphases = [
        text
        for name, text in _OBSERVER_EMPHASES
        if trait_level(traits, name) > TRAIT_EMPHASIS_THRESHOLD
    ]
    if not emphases:
        return _OBSERVER_PROMPT
    lines = "\n".join(f"- {text}" for text in emphases)
    return f"{_OBSERVER_PROMPT}\n\nPay particular attention to these:\n{lines}"


def relative_time_label(then: float, now: float) -> str:
    """``then`` relative to ``now`` in words: "just now", "5 minutes ago", "yesterday", ..."""
    elapsed = now - then
    if elapsed < MINUTE:
        return "just now"

    def ago(count: float, unit: str) -> str:
        n = int(count)
        return f"{n} {unit}{'' if n == 1 else 's'} ago"

    if elapsed < HOUR:
        return ago(elapsed / MINUTE, "minute")
    if elapsed < DAY:
        return ago(elapsed / HOUR, "hour")
    if elapsed < 2 * DAY:
        return "yesterday"
    if elapsed < 7 * DAY:
        return ago(elapsed / DAY, "day")
    if elapsed < 30 * DAY:
        return ago(elapsed / (7 * DAY), "week")
    if elapsed < 365 * DAY:
        return ago(elapsed / (30 * DAY), "month")
    return ago(elapsed / (365 * DAY), "year")


def _string_list(value: Any) -> tuple[str, ...]:
    """The non-empty strings of a JSON list (anything else gives none)."""
    if not isinstance(value, list):
        return ()
    return tuple(item.strip() for item in value if isinstance(item, str) and item.strip())


def _unit_number(value: Any, default: float) -> float:
    """A JSON number clamped to 0..1; ``default`` for anything else (booleans included)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return default
    return min(1.0, max(0.0, float(value)))


# Process-wide, so notes of two observers feeding one reflector never share an id.
_NOTE_COUNTER = itertools.count(1)


class MemoryObserver:
    """Extracts observation notes from a conversation, one model call per activation.

    Without an ``invoker`` the observer makes no model call and returns no notes; it still
    buffers (bounded by ``max_buffered_messages``) so an invoker is the only thing missing.
    Note ids are ``obs_<milliseconds>_<n>``, ``n`` counting the notes of the process.
    """

    def __init__(
        self,
        invoker: ModelInvoker | None,
        traits: TraitMap | None = None,
        config: ObserverConfig | None = None,
    ) -> None:
        self.invoker = invoker
        self.traits = traits
        self.buffer = ObservationBuffer(config)

    @property
    def system_prompt(self) -> str:
        """The system prompt this observer sends (its traits' emphases included)."""
        return observer_system_prompt(self.traits)

    async def observe(
        self, role: str, content: str, pad: PAD | None = None, now: float = 0.0
    ) -> list[ObservationNote]:
        """Buffer a message; on activation extract notes from every pending message.

        Returns the notes (an empty list when the buffer did not activate, there is no invoker,
        or the model call failed; on failure the messages stay buffered for the next try).
        """
        if not self.buffer.push(role, content, pad, now) or self.invoker is None:
            return []
        return await self.extract(pad, now)

    async def extract(self, pad: PAD | None = None, now: float = 0.0) -> list[ObservationNote]:
        """Extract notes from every pending message now, whether or not a threshold was met."""
        if self.invoker is None:
            return []
        messages = self.buffer.drain()
        if not messages:
            return []
        transcript = "\n".join(f"[{m.role}] {m.content}" for m in messages)
        try:
            reply = await self.invoker(self.system_prompt, transcript)
        except Exception:
            # The messages were never turned into notes: they go back for the next try.
            self.buffer.requeue(messages)
            return []
        except BaseException:
            # A cancelled extraction loses no message either, and the cancellation goes on.
            self.buffer.requeue(messages)
            raise
        return self.parse_notes(reply, pad, now, referenced_at=messages[0].timestamp)

    def parse_notes(
        self,
        reply: str,
        pad: PAD | None = None,
        now: float = 0.0,
        referenced_at: float | None = None,
    ) -> list[ObservationNote]:
        """The notes of a model reply, one JSON object per line; other lines are skipped.

        A line counts when it holds an object whose ``type`` is a `NoteType` value and whose
        ``content`` is a non-empty string.
        """
        emotion = None if pad is None else NoteEmotion(pad.valence, pad.arousal)
        referenced = now if referenced_at is None else referenced_at
        temporal = NoteTemporal(now, referenced, relative_time_label(referenced, now))
        notes: list[ObservationNote] = []
        for line in reply.splitlines():
            if "{" not in line:
                continue
            data = parse_json_object(line)
            if data is None:
                continue
            raw_type, raw_content = data.get("type"), data.get("content")
            if not isinstance(raw_content, str) or not raw_content.strip():
                continue
            try:
                note_type = NoteType(str(raw_type).strip().lower())
            except ValueError:
                continue
            notes.append(
                ObservationNote(
                    id=f"obs_{int(now * 1000)}_{next(_NOTE_COUNTER)}",
                    type=note_type,
                    content=raw_content.strip(),
                    timestamp=now,
                    importance=_unit_number(data.get("importance"), 0.5),
                    entities=_string_list(data.get("entities")),
                    emotional_context=emotion,
                    temporal=temporal,
                )
            )
        return notes

    def clear(self) -> None:
        """Forget every buffered message."""
        self.buffer.clear()
