"""The learner session of one GMI, bound at its first prepared turn (spec "Learning": Learners).

`LearningLayer.gmi_session` builds one per GMI (the full runtime) or per ``agent.session()``
entry and call (``gmi()``): "One per agent.session() entry, built with its first turn"; "a GMI
built again to resume a stored turn is bound at the first turn it prepares, under that turn's
organization". The first turn names the session's user and, unless the host opened the session
under a namespace, its namespace; every later turn is judged against them by the
`LearnerSession` the layer opens for that key. "A layer that fails to open a learner session
never fails the GMI either: the session asks again at each turn, and until one opens each turn
runs that way" — `prepare_turn` then answers ``None``, so the GMI renders the section itself,
the turn has no learner and its reasoning trace holds a WARNING.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable
from typing import Literal

from agentos.substrate.learning_seam import PreparedTurn, TurnPreparation

from .learner import LearnerContext, LearnerKey, LearnerSession, NoLearnerReason
from .manifest import TurnTally

__all__ = ["GMILearnerSession", "OpenLearner"]

OpenLearner = Callable[[LearnerKey | None, LearnerContext], Awaitable[LearnerSession]]
"""How the session opens its learner: the layer's `for_learner`."""

_log = logging.getLogger("agentos.learning")


class GMILearnerSession:
    """One GMI's learner session (`LearnerSessionLike`); never raises from `prepare_turn`.

    ``namespace`` is the namespace the host opened the session under (``gmi()``'s
    ``learning.namespace``); a turn that names none (``''``) then belongs to it. With
    ``namespace=None`` the first turn's namespace binds. ``seat`` marks a workflow seat's GMI,
    which has no learner.
    """

    def __init__(
        self,
        open_learner: OpenLearner,
        context: LearnerContext,
        *,
        agent_key: str | None,
        namespace: str | None,
        seat: bool,
        tally: TurnTally,
    ) -> None:
        self.context = context
        self.agent_key = agent_key
        self.namespace = namespace
        self.seat = seat
        self._open_learner = open_learner
        self._tally = tally
        self._key: LearnerKey | None = None
        self._session: LearnerSession | None = None
        self._ended = False

    @property
    def learner(self) -> Literal["bound", "none"]:
        """``'bound'`` while the opened session has a learner; ``'none'`` before it opens."""
        return "none" if self._session is None else self._session.learner

    @property
    def learner_session(self) -> LearnerSession | None:
        """The session the layer opened for this GMI, ``None`` until one opens."""
        return self._session

    async def prepare_turn(self, turn: TurnPreparation) -> PreparedTurn | None:
        """The turn's preparation, or ``None`` while no learner session could be opened."""
        if self.namespace is not None and turn.namespace == "":
            turn = dataclasses.replace(turn, namespace=self.namespace)
        if self._key is None:
            self._key = self._bind(turn)
        session = await self._session_for_turn(turn)
        if session is None:
            return None
        return await session.prepare_turn(turn)

    async def end_session(self) -> None:
        """End the session and the learner session it opened. Idempotent."""
        self._ended = True
        if self._session is not None:
            await self._session.end_session()

    def _bind(self, turn: TurnPreparation) -> LearnerKey:
        namespace = turn.namespace if self.namespace is None else self.namespace
        return LearnerKey(namespace=namespace, agent_key=self.agent_key, user_id=turn.user_id)

    async def _session_for_turn(self, turn: TurnPreparation) -> LearnerSession | None:
        if self._session is not None:
            return self._session
        key = None if self.seat else self._key
        context = self.context
        if self.seat:
            context = dataclasses.replace(context, no_learner_reason=NoLearnerReason.WORKFLOW_SEAT)
        try:
            self._session = await self._open_learner(key, context)
        except Exception as error:  # the spec: a failed open never fails the GMI
            _log.warning(
                "learning: no learner session could be opened for session %r (%s); the turn "
                "runs with no learner and the next turn asks again",
                self.context.session_id,
                error,
            )
            if not turn.continuation:
                self._tally.record(NoLearnerReason.LEARNER_UNAVAILABLE)
            return None
        if self._ended:
            await self._session.end_session()
        return self._session
