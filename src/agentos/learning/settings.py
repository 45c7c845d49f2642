"""The ``learning`` option, checked into `LearningSettings` (spec "Learning": The option).

``learning`` is unset or ``False`` (no layer), ``True`` (a layer in mode ``on`` with the switches
of the agent's cognition profile) or a learning config (each field it sets, the others as
``True`` gives them). "A value of the wrong type, a blank agentKey or an unknown mode throws
naming the field": every refusal here is a `GMIError` whose ``details["option"]`` is
``learning`` or ``learning.<field>``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NoReturn, cast

from agentos.core.errors import GMIError, GMIErrorCode

__all__ = [
    "ANONYMOUS_USER_IDS",
    "LEARNING_MODES",
    "LearningMode",
    "LearningSettings",
    "check_learning",
]

LearningMode = Literal["on", "frozen", "off"]
LEARNING_MODES: tuple[LearningMode, ...] = ("on", "frozen", "off")
"""The three modes (spec "Modes and the process switches")."""

ANONYMOUS_USER_IDS: tuple[str, ...] = ("", "anonymous_user", "anonymous", "system", "guest")
"""User ids that never name a learner; ``anonymous_user_ids`` adds to them (spec "Learners")."""

_FIELDS = ("mode", "agent_key", "namespace", "anonymous_user_ids", "traits", "lessons", "skills")
_ASKS = ("traits", "lessons", "skills")
_FULL_PROFILE = "full"


def _refuse(field: str, why: str, code: GMIErrorCode) -> NoReturn:
    option = f"learning.{field}" if field else "learning"
    raise GMIError(f"{option}: {why}", code, {"option": option})


@dataclass(frozen=True)
class LearningSettings:
    """A checked learning config: each field is checked at construction, naming the field.

    - ``mode``: ``'on'`` (the default), ``'frozen'`` or ``'off'``.
    - ``agent_key``: names the agent its learners belong to; ``None`` lets the host use the
      persona id (spec: "Unset: the registered persona's id, or the persona id of a gmi() agent
      with a name"); a blank string is refused.
    - ``namespace``: the organization of every learner of a ``gmi()`` agent (``''`` = none); the
      full runtime refuses it (`check_learning` with ``surface="runtime"``).
    - ``anonymous_user_ids``: user ids that name no learner, added to `ANONYMOUS_USER_IDS`.
    - ``traits``, ``lessons``, ``skills``: whether trait changes, lessons and the skill library
      were asked for; the layer runs none of them and its manifest says whether each was asked.
    """

    mode: LearningMode = "on"
    agent_key: str | None = None
    namespace: str | None = None
    anonymous_user_ids: tuple[str, ...] = ()
    traits: bool = False
    lessons: bool = False
    skills: bool = False

    def __post_init__(self) -> None:
        code = GMIErrorCode.INVALID_ARGUMENT
        if not isinstance(self.mode, str) or self.mode not in LEARNING_MODES:
            _refuse("mode", f"must be one of 'on', 'frozen' or 'off', got {self.mode!r}", code)
        if self.agent_key is not None:
            if not isinstance(self.agent_key, str):
                _refuse("agent_key", "must be a string or None", code)
            if not self.agent_key.strip():
                _refuse("agent_key", "must not be blank", code)
        if self.namespace is not None and not isinstance(self.namespace, str):
            _refuse("namespace", "must be a string or None", code)
        ids: object = self.anonymous_user_ids
        if isinstance(ids, str) or not isinstance(ids, Sequence):
            _refuse("anonymous_user_ids", "must be a list of strings", code)
        if not all(isinstance(item, str) for item in ids):
            _refuse("anonymous_user_ids", "must be a list of strings", code)
        object.__setattr__(self, "anonymous_user_ids", tuple(cast(Sequence[str], ids)))
        for field in _ASKS:
            if not isinstance(getattr(self, field), bool):
                _refuse(field, "must be True or False", code)

    def is_anonymous(self, user_id: str | None) -> bool:
        """Whether ``user_id`` names no learner: ``None``, blank, a built-in or a listed id."""
        if user_id is None or not user_id.strip():
            return True
        return user_id in ANONYMOUS_USER_IDS or user_id in self.anonymous_user_ids


def check_learning(
    value: object,
    *,
    surface: Literal["gmi", "runtime", "custom"] = "custom",
    profile: str = "custom",
    code: GMIErrorCode = GMIErrorCode.INVALID_ARGUMENT,
) -> LearningSettings | None:
    """The checked ``learning`` option, or ``None`` for unset / ``False`` (no layer).

    ``True`` and the fields a mapping leaves unset ask for trait changes, lessons and skills
    only on the ``full`` cognition ``profile`` ("true on a gmi() agent with cognition: 'full'
    asks for all three; 'light', a CognitionConfig and the full runtime ask for none"). On
    ``surface="runtime"`` a ``namespace`` is refused: the runtime takes each turn's resolved
    organization. ``code`` is the refusal's error code (``CONFIGURATION_ERROR`` from
    ``AgentOS.initialize()``).
    """
    if value is None or value is False:
        return None
    asked = profile == _FULL_PROFILE and surface != "runtime"
    if value is True:
        return LearningSettings(traits=asked, lessons=asked, skills=asked)
    if isinstance(value, LearningSettings):
        settings = value
    elif isinstance(value, Mapping):
        settings = _from_mapping(value, asked, code)
    else:
        _refuse("", f"must be True, False or a learning config, got {type(value).__name__}", code)
    if surface == "runtime" and settings.namespace is not None:
        _refuse("namespace", "the full runtime takes each turn's resolved organization", code)
    return settings


def _from_mapping(value: Mapping[Any, Any], asked: bool, code: GMIErrorCode) -> LearningSettings:
    for key in value:
        if key not in _FIELDS:
            _refuse(str(key), f"unknown field; expected one of {', '.join(_FIELDS)}", code)
    fields: dict[str, Any] = {ask: asked for ask in _ASKS}
    fields.update(value)
    try:
        return LearningSettings(**fields)
    except GMIError as error:
        if code is GMIErrorCode.INVALID_ARGUMENT:
            raise
        raise GMIError(error.message, code, error.details) from error
