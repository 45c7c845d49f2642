"""The seam between a GMI and its learning layer (spec "Learning": The option, Learners).

The substrate (rank 3) must not import the learning layer (rank 4), so it defines here what
a GMI tells its learner session before a user turn (`TurnPreparation`) and what it gets back
(`PreparedTurn`); the learning layer implements `LearnerSessionLike`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from agentos.substrate.prompt_engine import SystemPrompt

LEARNING_KEY = "learning"
"""The `session_data` key: `{"learner": "bound" | "none", "mode": "on" | "frozen" | "off"}`."""

PERSONALITY_PRIORITY = 2
"""The personality section's system-prompt priority (right after the base prompt at 1)."""

PREPARE_TIMEOUT_S = 2.0
"""How long a GMI waits for `prepare_turn` ("bounded by 2,000 ms") before it falls back."""


@dataclass(frozen=True, slots=True)
class TurnPreparation:
    """What a GMI tells its learner session before a user turn.

    `namespace` is '' when the turn has none; `workflow_id` is the turn's
    `metadata.workflow_id`; `continuation` marks a tool continuation, which belongs to the
    turn it continues.
    """

    turn_id: str
    user_id: str | None
    namespace: str
    text: str
    model_ids: tuple[str, ...] = ()
    workflow_seat: bool = False
    workflow_id: str | None = None
    continuation: bool = False


@dataclass(frozen=True, slots=True)
class PreparedTurn:
    """A learner session's answer: the turn's personality section and who learns from it.

    `system_prompts` holds the personality section at priority 2 (empty when no trait is
    outside 0.35-0.65).
    """

    system_prompts: tuple[SystemPrompt, ...]
    learner: Literal["bound", "none"]
    mode: Literal["on", "frozen", "off"]
    no_learner_reason: str | None = None


class LearnerSessionLike(Protocol):
    """A learner session for one GMI: prepares each user turn; its host ends it."""

    async def prepare_turn(self, turn: TurnPreparation) -> PreparedTurn | None:
        """Return the turn's preparation, or None when it has none to give."""
        ...

    async def end_session(self) -> None:
        """End the session (called by the host that opened it, never by the GMI)."""
        ...
