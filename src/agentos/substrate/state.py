"""The GMI's state as a value (spec: What a GMI holds, "Per-session state"; reference §1.2).

`GMIState` is what a GMI holds about its session: its copy of the persona, where it is in its
life (`GMIPrimeState`), its mood and the PAD state that mood stands for, the user and task
contexts, the session's data, working memory, conversation history, events and reasoning trace.
The GMI's turn phases and its collaborators (`substrate.collaborators`: the sentiment tracker,
the metaprompt runner) receive this value rather than the `GMI`, so a collaborator a user writes
reads and changes exactly what the built-in ones do. The services a turn calls travel beside it
(`agentos.substrate.services.GMIServices`).

The GMI's public attributes (``gmi.mood``, ``gmi.history``, ...) read and write this value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from agentos.core.clock import Clock, system_clock
from agentos.core.errors import GMIError, GMIErrorCode
from agentos.persona.definition import PersonaDefinition
from agentos.substrate.contexts import (
    TASK_CONTEXT_KEY,
    USER_CONTEXT_KEY,
    initial_task_context,
    initial_user_context,
)
from agentos.substrate.events import GMIEventLog
from agentos.substrate.history import ConversationHistoryManager
from agentos.substrate.mood import MOOD_KEY, GMIMood, PADState, pad_for_mood
from agentos.substrate.trace import ReasoningEntryType, ReasoningTrace
from agentos.substrate.working_memory import InMemoryWorkingMemory

__all__ = ["ClosableMemory", "GMIPrimeState", "GMIState"]


class GMIPrimeState(StrEnum):
    """Where a GMI is in its life."""

    IDLE = "idle"
    INITIALIZING = "initializing"
    READY = "ready"
    PROCESSING = "processing"
    AWAITING_TOOL_RESULT = "awaiting_tool_result"
    REFLECTING = "reflecting"
    ERRORED = "errored"
    SHUTTING_DOWN = "shutting_down"
    SHUTDOWN = "shutdown"


@runtime_checkable
class ClosableMemory(Protocol):
    """A memory bridge the GMI owns: it closes it when it shuts down (spec: "closes its memories").

    A bridge a factory builds for one GMI implements it; a bridge over memory other GMIs share
    (an agent's sessions) does not, and its owner closes that memory.
    """

    async def close(self) -> None:
        """Release the memory's resources; called once, after the GMI's last turn."""
        ...


@dataclass(slots=True, eq=False)
class GMIState:
    """One GMI's state: persona copy, phase, mood and PAD, contexts, memory, history, trace.

    ``persona_copy`` is ``None`` until the GMI is initialized (`persona` raises then). ``clock``
    stamps the trace entries `record()` adds. ``dropped_turns`` are the turns a history replace
    or clear dropped whose sentiment context is still to be scrubbed (it is scrubbed
    asynchronously, before the next user turn or when the replace returns).
    """

    gmi_id: str
    trace: ReasoningTrace
    persona_copy: PersonaDefinition | None = None
    phase: GMIPrimeState = GMIPrimeState.IDLE
    mood: GMIMood = GMIMood.NEUTRAL
    pad: PADState = field(default_factory=PADState)
    user_context: dict[str, Any] = field(default_factory=dict)
    task_context: dict[str, Any] = field(default_factory=dict)
    session_data: dict[str, Any] = field(default_factory=dict)
    working_memory: InMemoryWorkingMemory = field(default_factory=InMemoryWorkingMemory)
    history: ConversationHistoryManager = field(default_factory=ConversationHistoryManager)
    events: GMIEventLog = field(default_factory=GMIEventLog)
    clock: Clock = field(default=system_clock)
    dropped_turns: list[str] = field(default_factory=list)

    @property
    def persona(self) -> PersonaDefinition:
        """The active persona (``NOT_INITIALIZED`` before the GMI is initialized)."""
        if self.persona_copy is None:
            raise GMIError("the GMI is not initialized", GMIErrorCode.NOT_INITIALIZED)
        return self.persona_copy

    def record(
        self,
        type: ReasoningEntryType,
        message: str,
        details: dict[str, Any] | None = None,
        turn_id: str | None = None,
    ) -> None:
        """Add a reasoning-trace entry stamped with the clock's time."""
        self.trace.add(type, message, details, timestamp=self.clock.timestamp(), turn_id=turn_id)

    async def set_mood(self, mood: GMIMood) -> None:
        """Set the mood (and the PAD state it stands for); keep it in working memory."""
        self.mood = GMIMood(mood)
        self.pad = pad_for_mood(self.mood)
        await self.working_memory.set(MOOD_KEY, self.mood.value)

    async def close_memories(self, bridge: object) -> None:
        """Close ``bridge`` when it is the GMI's own (`ClosableMemory`), then working memory.

        Spec: the GMI "closes its memories" once its stopped turn has ended; the reference
        closes the cognitive memory first. A bridge whose close fails leaves a WARNING in the
        trace, and the working memory is still closed.
        """
        if isinstance(bridge, ClosableMemory):
            try:
                await bridge.close()
            except Exception as exc:
                self.record(
                    ReasoningEntryType.WARNING,
                    f"closing the cognitive memory failed: {type(exc).__name__}: {exc}",
                )
        await self.working_memory.close()

    def take_dropped_turns(self) -> list[str]:
        """The dropped turns still to be scrubbed; the list is emptied."""
        ids, self.dropped_turns = self.dropped_turns, []
        return ids

    async def restore(self, persona: PersonaDefinition) -> None:
        """Mood and contexts from working memory, else the persona; its imprints stored.

        Reference §1.1 initialize(): the stored mood if it is one, else the persona's default
        mood, else neutral; the contexts as `substrate.contexts` lays them; all three written
        back to working memory, then the persona's ``initial_memory_imprints``.
        """
        memory = self.working_memory
        default_mood = persona.mood_adaptation.default_mood if persona.mood_adaptation else None
        moods = {mood.value for mood in GMIMood}
        stored_mood = await memory.get(MOOD_KEY)
        mood = next((m for m in (stored_mood, default_mood) if m in moods), GMIMood.NEUTRAL)
        self.mood = GMIMood(mood)
        self.pad = pad_for_mood(self.mood)
        self.user_context = initial_user_context(persona, await memory.get(USER_CONTEXT_KEY))
        self.task_context = initial_task_context(persona, await memory.get(TASK_CONTEXT_KEY))
        await memory.set(MOOD_KEY, self.mood.value)
        await memory.set(USER_CONTEXT_KEY, self.user_context)
        await memory.set(TASK_CONTEXT_KEY, self.task_context)
        for imprint in persona.initial_memory_imprints or []:
            await memory.set(imprint.key, imprint.value)
