"""`GMIManager`'s configuration and its cognitive memory factory.

Spec: Getting a GMI, Cognitive memory; reference §1.9.

"GMIManager calls the factory for each new GMI with the GMI id, session id, user id, persona,
working memory, and the runtime's ... utility AI, tool orchestrator and retrieval augmentor"
(`CognitiveMemoryRequest`), "and attaches" what it returns: here a `MemoryBridge`, set as the
GMI's ``memory_bridge``. "If the factory throws, the GMI starts without cognitive memory and
GMIManager logs a warning" (`attach_cognitive_memory`).
"""

from __future__ import annotations

import inspect
import logging
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.llm.gateway import GatewayProviderManager
from agentos.nlp import UtilityAI
from agentos.persona.definition import PersonaDefinition
from agentos.persona.loaders import PersonaRegistry
from agentos.persona.overlays import PersonaEvolutionRule
from agentos.persona.strict_mode import PersonaStrictConfig
from agentos.substrate.collaborators import MemoryBridge, RetrievalAugmentor
from agentos.substrate.config import GMIConfig
from agentos.substrate.igmi import IGMI
from agentos.substrate.learning_seam import LearnerSessionLike
from agentos.substrate.working_memory import InMemoryWorkingMemory
from agentos.tools.orchestrator import ToolOrchestrator

__all__ = [
    "DEFAULT_INACTIVITY_CLEANUP_MINUTES",
    "DEFAULT_SHUTDOWN_TIMEOUT_MS",
    "CognitiveMemoryFactory",
    "CognitiveMemoryRequest",
    "GMIManagerConfig",
    "IGMIFactory",
    "LearnerSessionFactory",
    "LearnerSessionRequest",
    "attach_cognitive_memory",
    "end_learners",
    "is_positive_number",
    "learner_request",
]

DEFAULT_INACTIVITY_CLEANUP_MINUTES = 60.0
"""Idle minutes after which `GMIManager.cleanup_inactive_gmis()` removes a GMI (spec)."""

DEFAULT_SHUTDOWN_TIMEOUT_MS = 8000
"""How long the manager's shutdown waits for each GMI (spec: 8000 ms by default)."""


@dataclass(frozen=True, slots=True)
class CognitiveMemoryRequest:
    """What the cognitive memory factory gets for each new GMI (reference §1.9).

    Spec: "the GMI id, session id, user id, persona, working memory, and the runtime's provider
    manager, utility AI, tool orchestrator and retrieval augmentor". ``provider_manager`` is
    the new GMI's own `GatewayProviderManager`, which answers from the hop serving its turn (as
    its metaprompts' calls are answered).
    """

    gmi_instance_id: str
    session_id: str
    user_id: str
    persona: PersonaDefinition
    working_memory: InMemoryWorkingMemory
    provider_manager: GatewayProviderManager
    utility_ai: UtilityAI | None
    tool_orchestrator: ToolOrchestrator | None
    retrieval_augmentor: RetrievalAugmentor | None


CognitiveMemoryFactory = Callable[
    [CognitiveMemoryRequest], Awaitable[MemoryBridge | None] | MemoryBridge | None
]
"""Builds a new GMI's memory bridge, or ``None`` for none (spec: cognitiveMemoryFactory)."""


@dataclass(frozen=True, slots=True)
class LearnerSessionRequest:
    """What the learner session factory gets for each new GMI (spec "Learning": Learners).

    "Learner session: One per GMI, built with the GMI"; "User: The user the GMI is created for".
    ``authored_traits`` are the registered persona's traits; on a workflow seat's GMI
    (``seat=True``, which has no learner) ``overlay_traits`` are the traits the seat's role
    overlay changes, rendered for that seat only.
    """

    gmi_instance_id: str
    session_id: str
    user_id: str
    persona_id: str
    authored_traits: Mapping[str, float]
    overlay_traits: Mapping[str, float] | None = None
    seat: bool = False


LearnerSessionFactory = Callable[[LearnerSessionRequest], LearnerSessionLike]
"""Opens a new GMI's learner session (the runtime's learning layer, `LearningLayer.gmi_session`);
the manager ends it when the GMI shuts down."""

IGMIFactory = Callable[[str, PersonaDefinition], IGMI]
"""Builds a host-supplied GMI from its id and persona (the spec's IGMI)."""


def is_positive_number(value: object) -> bool:
    """Whether ``value`` is a finite number above zero (not a bool)."""
    return (
        not isinstance(value, bool)
        and isinstance(value, int | float)
        and math.isfinite(value)
        and value > 0
    )


def _config_error(option: str, message: str) -> NoReturn:
    raise GMIError(message, GMIErrorCode.CONFIGURATION_ERROR, {"option": option})


def _is_count(value: object, minimum: int) -> bool:
    return not isinstance(value, bool) and isinstance(value, int) and value >= minimum


@dataclass(frozen=True, kw_only=True, slots=True)
class GMIManagerConfig:
    """The manager's services and settings (spec: gmiManagerConfig).

    ``base_config`` holds the services every GMI shares; each GMI gets a copy with its own
    working memory and memory bridge. ``seat_rules`` maps ``agency_id::role_id`` to the seat's
    evolution rules (`GMIManager.set_seat_rules` changes them later). A bad value raises
    ``CONFIGURATION_ERROR`` naming the field.
    """

    base_config: GMIConfig
    personas: PersonaRegistry
    cognitive_memory_factory: CognitiveMemoryFactory | None = None
    igmi_factory: IGMIFactory | None = None
    can_use_persona: Callable[[str, PersonaDefinition], bool] | None = None
    persona_strict: PersonaStrictConfig | None = None
    """Strict persona validation (reference §1.9): a persona it blocks is refused to every user
    (``PERMISSION_DENIED``); ``None`` checks nothing."""
    inactivity_cleanup_minutes: float = DEFAULT_INACTIVITY_CLEANUP_MINUTES
    shutdown_timeout_ms: int = DEFAULT_SHUTDOWN_TIMEOUT_MS
    default_reasoning_trace_max_entries: int | None = None
    seat_rules: Mapping[str, Sequence[PersonaEvolutionRule]] = field(default_factory=dict)
    learning_sessions: LearnerSessionFactory | None = None
    """The learner session of each new built-in GMI (``None``: no learning layer). The substrate
    cannot name the learning layer (rank 4), so the runtime passes its layer's sessions here."""

    def __post_init__(self) -> None:
        if not isinstance(self.base_config, GMIConfig):
            _config_error("base_config", "base_config must be a GMIConfig")
        if not isinstance(self.personas, PersonaRegistry):
            _config_error("personas", "personas must be a PersonaRegistry")
        for name in (
            "cognitive_memory_factory",
            "igmi_factory",
            "can_use_persona",
            "learning_sessions",
        ):
            value = getattr(self, name)
            if value is not None and not callable(value):
                _config_error(name, f"{name} must be callable")
        minutes = self.inactivity_cleanup_minutes
        if not is_positive_number(minutes):
            _config_error(
                "inactivity_cleanup_minutes",
                f"inactivity_cleanup_minutes must be a positive number, got {minutes!r}",
            )
        if not _is_count(self.shutdown_timeout_ms, 0):
            _config_error(
                "shutdown_timeout_ms",
                f"shutdown_timeout_ms must be an int >= 0, got {self.shutdown_timeout_ms!r}",
            )
        entries = self.default_reasoning_trace_max_entries
        if entries is not None and not _is_count(entries, 1):
            _config_error(
                "default_reasoning_trace_max_entries",
                f"default_reasoning_trace_max_entries must be an int >= 1, got {entries!r}",
            )


async def attach_cognitive_memory(
    factory: CognitiveMemoryFactory | None,
    request: CognitiveMemoryRequest,
    log: logging.Logger,
) -> MemoryBridge | None:
    """The factory's bridge for a new GMI, or ``None``.

    A factory that raises, or returns something that is not a `MemoryBridge`, gives ``None``
    and a WARNING naming the session and the GMI: the GMI starts without cognitive memory.
    """
    if factory is None:
        return None
    try:
        made: Any = factory(request)
        if inspect.isawaitable(made):
            made = await made
        if made is not None and not isinstance(made, MemoryBridge):
            raise TypeError(f"the factory returned {type(made).__name__}, not a MemoryBridge")
    except Exception as exc:  # spec: the GMI starts without cognitive memory
        log.warning(
            "cognitive memory factory failed for session %s (GMI %s); the GMI starts "
            "without cognitive memory: %s",
            request.session_id,
            request.gmi_instance_id,
            exc,
        )
        return None
    return made if isinstance(made, MemoryBridge) else None


def learner_request(
    gmi_id: str,
    user_id: str,
    session_id: str,
    persona: PersonaDefinition,
    registered: PersonaDefinition,
    seat: object,
) -> LearnerSessionRequest:
    """The request for a new GMI's learner session.

    ``registered`` is the persona as registered (its traits are the authored ones); ``persona``
    the GMI's, which on a seat (``seat`` not ``None``) carries the role overlay: the traits it
    changes are the overlay, rendered for that seat only.
    """
    authored = _numeric_traits(registered.personality_traits)
    overlay = None
    if seat is not None:
        patched = _numeric_traits(persona.personality_traits)
        overlay = {k: v for k, v in patched.items() if authored.get(k) != v} or None
    return LearnerSessionRequest(
        gmi_instance_id=gmi_id,
        session_id=session_id,
        user_id=user_id,
        persona_id=registered.id,
        authored_traits=authored,
        overlay_traits=overlay,
        seat=seat is not None,
    )


async def end_learners(
    learners: Sequence[LearnerSessionLike | None], log: logging.Logger | None = None
) -> None:
    """End each learner session; one that raises is logged and the others still end."""
    for learner in learners:
        if learner is None:
            continue
        try:
            await learner.end_session()
        except Exception as error:  # ending a session never fails a shutdown
            (log or logging.getLogger(__name__)).warning(
                "a learner session failed to end: %s", error
            )


def _numeric_traits(traits: Mapping[str, object] | None) -> dict[str, float]:
    """The persona's numeric trait values (its HEXACO traits and other numbers)."""
    return {
        name: float(value)
        for name, value in (traits or {}).items()
        if isinstance(value, int | float) and not isinstance(value, bool)
    }
