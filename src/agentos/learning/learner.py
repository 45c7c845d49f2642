"""Learner keys and learner sessions (spec "Learning": Learners; A turn loop of your own).

A learner is one agent with one user, in one namespace (`LearnerKey`). A `LearnerSession` is
what `LearningLayer.for_learner` opens for one key: it prepares each user turn (the personality
section at priority 2, whether the turn has a learner, the mode in effect) and applies the
spec's rules for the turns that have none:

- "A key of null, a placeholder user id or a key with no agent gives a session with no learner,
  which renders the authored traits; context.noLearnerReason says why a caller passes null."
- "A session belongs to the user of its first turn and to the namespace it was opened under: a
  turn of another user, or of the same user id in another organization, has no learner, and
  neither has any later turn of that session."
- "A turn that carries metadata.workflowId has none: one of the session's own user leaves the
  next turn its learner"; a workflow seat's turn has none.
- "A tool continuation belongs to the turn it continues; one that runs under another
  organization than its turn [...] is a turn of another namespace."
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, Protocol

from agentos.substrate.learning_seam import PreparedTurn, TurnPreparation
from agentos.substrate.prompt_engine import SystemPrompt

from .manifest import TurnTally
from .settings import LearningMode, LearningSettings

__all__ = [
    "LearnerContext",
    "LearnerKey",
    "LayerView",
    "LearnerSession",
    "NoLearnerReason",
    "no_learner_reason",
]


class NoLearnerReason:
    """The reasons a turn has no learner, as the manifest's ``turns.none`` counts them."""

    NO_KEY = "no_key"
    NO_AGENT = "no_agent"
    NO_USER = "no_user"
    ANONYMOUS_USER = "anonymous_user"
    WORKFLOW_SEAT = "workflow_seat"
    WORKFLOW_TURN = "workflow_turn"
    ANOTHER_USER = "another_user"
    ANOTHER_NAMESPACE = "another_namespace"
    SESSION_ENDED = "session_ended"
    LAYER_CLOSED = "layer_closed"
    LEARNER_UNAVAILABLE = "learner_unavailable"


@dataclass(frozen=True, slots=True)
class LearnerKey:
    """One learner: ``namespace`` (``''`` = none), the agent it belongs to, its user."""

    namespace: str
    agent_key: str | None
    user_id: str | None


@dataclass(frozen=True, slots=True)
class LearnerContext:
    """What a learner session renders: the persona's authored traits and a seat's overlay.

    ``no_learner_reason`` says why a caller passes no key (a workflow seat, say).
    """

    session_id: str
    persona_id: str
    authored_traits: Mapping[str, float]
    overlay_traits: Mapping[str, float] | None = None
    no_learner_reason: str | None = None


class LayerView(Protocol):
    """What a learner session reads from its layer at each turn."""

    @property
    def mode(self) -> LearningMode:
        """The mode in effect now (the process switches read now)."""
        ...

    @property
    def closed(self) -> bool:
        """Whether the layer was closed (its sessions then have no learner)."""
        ...


def no_learner_reason(
    key: LearnerKey | None, context: LearnerContext, settings: LearningSettings
) -> str | None:
    """Why a session opened for ``key`` has no learner, or ``None`` when it has one."""
    if key is None:
        return context.no_learner_reason or NoLearnerReason.NO_KEY
    if key.agent_key is None or not key.agent_key.strip():
        return NoLearnerReason.NO_AGENT
    if key.user_id is None:
        return NoLearnerReason.NO_USER
    if settings.is_anonymous(key.user_id):
        return NoLearnerReason.ANONYMOUS_USER
    return None


class LearnerSession:
    """A learner session for one key (`LearnerSessionLike`); its host ends it.

    ``learner`` is ``'bound'`` while the session's learner stands, ``'none'`` once it has none
    (from the start, or since a turn of another user or namespace, `end_session()` or the
    layer's close); ``no_learner_reason`` then says why.
    """

    def __init__(
        self,
        key: LearnerKey | None,
        context: LearnerContext,
        *,
        section: SystemPrompt | None,
        reason: str | None,
        layer: LayerView,
        tally: TurnTally,
    ) -> None:
        self.key = key
        self.context = context
        self._prompts: tuple[SystemPrompt, ...] = () if section is None else (section,)
        self._reason = reason
        self._layer = layer
        self._tally = tally
        self._last: tuple[TurnPreparation, PreparedTurn] | None = None

    @property
    def learner(self) -> Literal["bound", "none"]:
        """``'bound'`` while the session has a learner."""
        return "none" if self.no_learner_reason is not None else "bound"

    @property
    def no_learner_reason(self) -> str | None:
        """Why the session has no learner now, or ``None`` while it has one."""
        if self._reason is None and self._layer.closed:
            return NoLearnerReason.LAYER_CLOSED
        return self._reason

    async def prepare_turn(self, turn: TurnPreparation) -> PreparedTurn:
        """The turn's section, learner and mode; a continuation reuses its turn's preparation."""
        if turn.continuation and self._last is not None:
            continued, prepared = self._last
            if turn.namespace == continued.namespace:
                return prepared
        reason = self._turn_reason(turn)
        self._tally.record(reason)
        prepared = PreparedTurn(
            system_prompts=self._prompts,
            learner="bound" if reason is None else "none",
            mode=self._layer.mode,
            no_learner_reason=reason,
        )
        self._last = (turn, prepared)
        return prepared

    async def end_session(self) -> None:
        """End the session: its later turns, if any, have no learner. Idempotent."""
        if self._reason is None:
            self._reason = NoLearnerReason.SESSION_ENDED

    def _turn_reason(self, turn: TurnPreparation) -> str | None:
        standing = self.no_learner_reason
        if standing is not None:
            return standing
        key = self.key
        if key is None:  # never: a session opened with no key has a reason from the start
            return NoLearnerReason.NO_KEY
        if turn.user_id != key.user_id:
            self._reason = NoLearnerReason.ANOTHER_USER
            return self._reason
        if turn.namespace != key.namespace:
            self._reason = NoLearnerReason.ANOTHER_NAMESPACE
            return self._reason
        if turn.workflow_seat:
            return NoLearnerReason.WORKFLOW_SEAT
        if turn.workflow_id:
            return NoLearnerReason.WORKFLOW_TURN
        return None
