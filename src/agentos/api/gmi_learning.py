"""A `gmi()` agent's learning layer and its learner sessions (spec "Learning", gmi() column).

"Layer: One per agent" (`agent_learning_layer`, built at construction with the agent's cognition
profile and its live loops, `gmi_host_loops`). "Learner session: One per agent.session() entry,
built with its first turn; one per generate() or stream() call" (`CallLearner`). "User: The
userId passed to session(). A session opened without one, generate() and stream() have no
learner"; "Agent: learning.agentKey, else the persona id of an agent with a name; an agent with
neither has no learner"; "Namespace: learning.namespace, else none ('')". "Ends: At
session.close(); a call's when the call's GMI is released; agent.close() ends every session's
and leaves the layer open."
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Literal

from agentos.learning import (
    HOST_LOOPS,
    GMILearnerSession,
    LearnerContext,
    LearningLayer,
    LearningSettings,
    LoopState,
    create_learning_layer,
)
from agentos.memory.store import MemoryStore
from agentos.persona.definition import PersonaDefinition
from agentos.substrate.learning_seam import PreparedTurn, TurnPreparation

from .cognition import ResolvedCognition
from .gmi_persona import persona_id_for

__all__ = ["CallLearner", "SessionUserLearner", "agent_learning_layer", "gmi_host_loops"]

_NOT_ON_GMI = "gmi() does not run it; the full runtime does"


def gmi_host_loops(
    options: Mapping[str, Any], cognition: ResolvedCognition
) -> dict[str, LoopState]:
    """The loops a `gmi()` agent runs, each with a detail (spec: The manifest).

    Memory, its mechanisms and store, sentiment and metaprompts follow the agent's cognition;
    ``gmi()`` builds its memory with no observer or reflector, and registers no emergent or
    self-modification tool, forged code executor, HITL approver, tool policy or RAG.
    """
    memory = cognition.memory_on
    settings = options.get("memory")
    store = isinstance(settings, Mapping) and isinstance(settings.get("store"), MemoryStore)
    presets = cognition.metaprompt_presets
    return {
        "memory": LoopState(
            memory,
            f"cognitive memory per cognition {cognition.profile!r}"
            if memory
            else f"memory is off for cognition {cognition.profile!r}",
        ),
        "memory_mechanisms": LoopState(
            cognition.mechanisms is not None,
            "the cognitive mechanisms run on each retrieval"
            if cognition.mechanisms is not None
            else "no mechanisms engine: memory is off or its mechanisms are",
        ),
        "memory_observer_reflector": LoopState(
            False, "gmi() builds its cognitive memory without an observer or reflector"
        ),
        "memory_store": LoopState(
            memory,
            ("the caller's memory.store" if store else "an in-process memory store")
            if memory
            else "memory is off",
        ),
        "sentiment": LoopState(
            cognition.sentiment_on,
            "sentiment tracking on each turn" if cognition.sentiment_on else "sentiment is off",
        ),
        "metaprompts": LoopState(
            bool(presets),
            ", ".join(presets) if presets else "no metaprompt preset is chosen",
        ),
        # The host loops gmi() never runs: every one after the metaprompts, in the spec's order.
        **{
            name: LoopState(False, _NOT_ON_GMI)
            for name in HOST_LOOPS[HOST_LOOPS.index("metaprompts") + 1 :]
        },
    }


def agent_learning_layer(
    options: Mapping[str, Any], cognition: ResolvedCognition
) -> LearningLayer | None:
    """The agent's layer (surface ``gmi``, its cognition profile), ``None`` with learning off."""
    settings = cognition.learning
    if settings is None:
        return None
    return create_learning_layer(
        settings,
        surface="gmi",
        profile=cognition.profile,
        host_loops=gmi_host_loops(options, cognition),
    )


def learner_agent_key(settings: LearningSettings, options: Mapping[str, Any]) -> str | None:
    """``learning.agent_key``, else the persona id of an agent with a name, else ``None``."""
    name = options.get("name")
    named = persona_id_for(name.strip()) if isinstance(name, str) and name.strip() else None
    return settings.agent_key or named


class CallLearner:
    """One session entry's (or one call's) learner session, opened with its first GMI.

    ``user_id`` is the session's user (``None``: a session opened without one, or a
    ``generate()`` / ``stream()`` call): every turn is prepared for that user, so a session
    without one has no learner and still renders the authored traits. One learner session
    serves every GMI of the entry (``history=False`` builds one per turn). `end()` ends it.
    """

    def __init__(
        self,
        layer: LearningLayer,
        options: Mapping[str, Any],
        *,
        session_id: str,
        user_id: str | None,
    ) -> None:
        self.layer = layer
        self.session_id = session_id
        self.user_id = user_id
        self._agent_key = learner_agent_key(layer.settings, options)
        self._session: SessionUserLearner | None = None
        self._ended = False

    def for_gmi(self, persona: PersonaDefinition) -> SessionUserLearner:
        """The learner session to pass as ``GMIConfig.learning`` (opened on the first call)."""
        if self._session is None:
            authored = {
                trait: float(value)
                for trait, value in (persona.personality_traits or {}).items()
                if isinstance(value, int | float) and not isinstance(value, bool)
            }
            context = LearnerContext(self.session_id, persona.id, authored)
            opened = self.layer.gmi_session(
                context,
                agent_key=self._agent_key,
                namespace=self.layer.settings.namespace or "",
            )
            self._session = SessionUserLearner(opened, self.user_id)
        return self._session

    async def end(self) -> None:
        """End the learner session (if one was opened). Idempotent."""
        if self._ended:
            return
        self._ended = True
        if self._session is not None:
            await self._session.end_session()


class SessionUserLearner:
    """A learner session whose every turn is the session's user's (the GMI's user id aside).

    A `gmi()` GMI's turns carry the session id (or a placeholder) as their user when the
    session has none; the learner is the user passed to ``session()`` and nobody else
    (``user_id``; ``None``: no learner). ``gmi_session`` is the layer's session it wraps;
    ``learner`` says whether it has a learner now (``'none'`` once ended).
    """

    def __init__(self, session: GMILearnerSession, user_id: str | None) -> None:
        self.gmi_session = session
        self.user_id = user_id
        self._session = session
        self._user_id = user_id

    @property
    def learner(self) -> Literal["bound", "none"]:
        """``'bound'`` while the session's learner stands (``'none'`` before the first turn)."""
        return self._session.learner

    async def prepare_turn(self, turn: TurnPreparation) -> PreparedTurn | None:
        """The wrapped session's preparation of ``turn`` as the session user's."""
        return await self._session.prepare_turn(dataclasses.replace(turn, user_id=self._user_id))

    async def end_session(self) -> None:
        """End the wrapped session."""
        await self._session.end_session()
