"""The learning layer (spec "Learning"; `create_learning_layer`).

"The learning layer binds each session to a learner (one agent with one user, in one namespace)
and sends the persona's personality section on every turn." One layer per ``gmi()`` agent, one
per AgentOS, or one a product builds for "a turn loop of your own". "The layer keeps nothing
beyond the process": it records no outcome, lesson, trait change or ledger entry; what it holds
is its settings, the host's loops and the count of the turns it prepared.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Literal

from agentos.core.errors import GMIError, GMIErrorCode

from .gmi_binding import GMILearnerSession
from .learner import LearnerContext, LearnerKey, LearnerSession, no_learner_reason
from .manifest import (
    GUARDRAILS_DETAIL,
    LoopManifest,
    LoopState,
    TurnTally,
    check_host_loops,
    layer_loops,
)
from .section import render_section
from .settings import LearningMode, LearningSettings, check_learning
from .switches import ModeSetBy, effective_mode

__all__ = ["MANIFEST_LOG_PREFIX", "LearningLayer", "Surface", "create_learning_layer"]

Surface = Literal["gmi", "runtime", "custom"]
_SURFACES: tuple[Surface, ...] = ("gmi", "runtime", "custom")
MANIFEST_LOG_PREFIX = "[agentos] learning layer manifest:"
"""The start of the console line the layer logs when it opens its first learner session."""


def _invalid(option: str, why: str) -> GMIError:
    return GMIError(f"{option}: {why}", GMIErrorCode.INVALID_ARGUMENT, {"option": option})


class LearningLayer:
    """A learning layer: opens learner sessions, renders the section, reports its manifest.

    ``mode`` and ``mode_set_by`` are read at each access: the process switches of ``environ``
    (``os.environ`` when the layer was given none) over the configured mode.
    """

    def __init__(
        self,
        settings: LearningSettings,
        *,
        surface: Surface,
        profile: str,
        host_loops: Mapping[str, LoopState] | None,
        environ: Mapping[str, str] | None,
        log: Callable[[str], None],
    ) -> None:
        self.settings = settings
        self.surface: Surface = surface
        self.profile = profile
        self._host_loops = check_host_loops(host_loops or {})
        self._environ = environ
        self._log = log
        self._tally = TurnTally()
        self._logged = False
        self._closed = False

    @property
    def mode(self) -> LearningMode:
        """The mode in effect now (`effective_mode` of the configured mode, switches read now)."""
        return effective_mode(self.settings.mode, self._environ)[0]

    @property
    def mode_set_by(self) -> ModeSetBy:
        """What set `mode`: ``config``, ``AGENTOS_LEARNING_OFF`` or ``AGENTOS_LEARNING_FREEZE``."""
        return effective_mode(self.settings.mode, self._environ)[1]

    @property
    def closed(self) -> bool:
        """Whether `close()` was called."""
        return self._closed

    async def for_learner(self, key: LearnerKey | None, context: LearnerContext) -> LearnerSession:
        """Open a learner session for ``key`` ("A turn loop of your own").

        A key of ``None``, a placeholder user id or a key with no agent gives a session with no
        learner, which renders the authored traits. The first session with a learner logs the
        manifest line. Raises `GMIError` ``INVALID_STATE`` once the layer is closed.
        """
        if key is not None and not isinstance(key, LearnerKey):
            raise _invalid("key", "must be a LearnerKey or None")
        if not isinstance(context, LearnerContext):
            raise _invalid("context", "must be a LearnerContext")
        if self._closed:
            raise GMIError("the learning layer is closed", GMIErrorCode.INVALID_STATE)
        section = render_section(
            context.authored_traits, context.overlay_traits, persona_id=context.persona_id
        )
        reason = no_learner_reason(key, context, self.settings)
        session = LearnerSession(
            key, context, section=section, reason=reason, layer=self, tally=self._tally
        )
        if reason is None and not self._logged:
            self._logged = True
            manifest = await self.manifest()
            self._log(f"{MANIFEST_LOG_PREFIX} {json.dumps(manifest.as_dict())}")
        return session

    def gmi_session(
        self,
        context: LearnerContext,
        *,
        agent_key: str | None,
        namespace: str | None = None,
        seat: bool = False,
    ) -> GMILearnerSession:
        """A learner session for one GMI (a `LearnerSessionLike`), bound at its first prepared turn.

        ``agent_key`` and ``namespace`` default to the settings' (``learning.agent_key``,
        ``learning.namespace``); ``seat=True`` (a workflow seat's GMI) has no learner.
        """
        if not isinstance(context, LearnerContext):
            raise _invalid("context", "must be a LearnerContext")
        return GMILearnerSession(
            self.for_learner,
            context,
            agent_key=agent_key if agent_key is not None else self.settings.agent_key,
            namespace=namespace if namespace is not None else self.settings.namespace,
            seat=seat,
            tally=self._tally,
        )

    def set_host_loops(self, loops: Mapping[str, LoopState]) -> None:
        """Record the host's loops (each name one of `HOST_LOOPS`), replacing those it names."""
        self._host_loops.update(check_host_loops(loops))

    async def manifest(self) -> LoopManifest:
        """The deployment's loops, mode, guardrails and turns, as they stand now."""
        mode, set_by = effective_mode(self.settings.mode, self._environ)
        return LoopManifest(
            surface=self.surface,
            profile=self.profile,
            mode=mode,
            mode_set_by=set_by,
            loops=layer_loops(self._host_loops, self.settings),
            guardrails={"complete": False, "detail": GUARDRAILS_DETAIL},
            turns=self._tally.as_dict(),
        )

    async def close(self) -> None:
        """Close the layer: no session opens after it and open sessions have no learner."""
        self._closed = True


def create_learning_layer(
    config: bool | Mapping[str, object] | LearningSettings | None = None,
    *,
    surface: Surface = "custom",
    profile: str = "custom",
    host_loops: Mapping[str, LoopState] | None = None,
    environ: Mapping[str, str] | None = None,
    log: Callable[[str], None] = print,
) -> LearningLayer:
    """Build a learning layer (``createLearningLayer``): ``config`` as the ``learning`` option.

    ``None`` and ``True`` give mode ``on``; a mapping or `LearningSettings` sets its fields,
    each checked naming the field (`check_learning`). ``False`` is refused: it asks for no
    layer. ``log`` receives the one manifest console line.
    """
    if surface not in _SURFACES:
        raise _invalid("surface", f"must be one of {', '.join(_SURFACES)}, got {surface!r}")
    if not isinstance(profile, str) or not profile.strip():
        raise _invalid("profile", "must be a non-blank string")
    if config is False:
        raise _invalid("learning", "False asks for no layer; pass True or a learning config")
    settings = check_learning(True if config is None else config, surface=surface, profile=profile)
    if settings is None:  # never: only None and False give none, and both are handled above
        raise _invalid("learning", "asks for no layer")
    return LearningLayer(
        settings,
        surface=surface,
        profile=profile,
        host_loops=host_loops,
        environ=environ,
        log=log,
    )
