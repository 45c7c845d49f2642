"""The reflector: consolidating observation notes into long-term memories (reference §1.19).

`MemoryReflector.add_notes()` collects notes and reports when a reflection is due: at
``activation_threshold_notes`` pending notes (6) or ``activation_threshold_tokens`` (40 000,
``ceil(len/4)`` per note). `MemoryReflector.reflect()` then makes one model call with the prompts
of `agentos.memory.reflection_prompt` (the system prompt states the traits' contradiction rule)
and reads the reply into `agentos.memory.reflection_reply.ReflectedMemory` specs for the memory
manager to encode, the contradiction rule enforced on them.

Consumed notes leave the pending set. A note the model leaves unconsumed stays for the next
reflection (it may need more context), at most ``max_reflections_per_note`` times (3); a failed
model call consumes nothing and counts for nothing. Without an invoker the reflector never
activates and keeps no notes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agentos.core.tokens import estimate_tokens
from agentos.memory.invoker import ModelInvoker
from agentos.memory.observer import ObservationNote
from agentos.memory.reflection_prompt import reflector_system_prompt, reflector_user_prompt
from agentos.memory.reflection_reply import ReflectionResult, parse_reflection
from agentos.memory.trace import MemoryTrace
from agentos.memory.traits import TraitMap

__all__ = ["MemoryReflector", "ReflectorConfig"]


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
        user_prompt = reflector_user_prompt(notes, existing)
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
        """`agentos.memory.reflection_reply.parse_reflection` under this reflector's traits."""
        return parse_reflection(reply, notes, existing, now, self.traits)

    def clear(self) -> None:
        """Forget every pending note."""
        self._pending = []
        self._offers = {}

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
