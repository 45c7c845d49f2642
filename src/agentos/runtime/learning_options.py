"""The full runtime's learning options, checked (spec "Learning": The option).

``AgentOSConfig.learning`` (``True`` or a learning config; its ``namespace`` refused: "The full
runtime refuses it: it takes each turn's resolved organization"), ``AgentOSConfig.learning_layer``
(the spec's ``gmiManagerConfig.learningLayer``: a layer the host built with
`create_learning_layer`), refused together, and ``emergent_config.self_improvement``. Every
refusal is ``CONFIGURATION_ERROR`` naming the field, raised from ``AgentOSConfig.check()``, so
``AgentOS.initialize()`` refuses "before any service starts".
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, NoReturn

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.emergent.forge import ForgedToolRegistry, ForgeOptions
from agentos.emergent.self_improvement import SelfImprovementOptions
from agentos.emergent.self_improvement.options import check_options
from agentos.learning import LearningLayer, LearningSettings, check_learning

__all__ = [
    "FORGE_KEYS",
    "SelfImprovementConfig",
    "check_emergent_config",
    "check_runtime_learning",
    "forge_options",
]

_EMERGENT_KEYS = ("self_improvement",)
_OWN_KEYS = ("enabled", "skills_dir")
FORGE_KEYS = ("allow_sandbox_tools", "sandbox_memory_mb", "sandbox_timeout_ms", "max_session_tools")
"""``forge_tool``'s settings, beside the self-improvement limits (`ForgeOptions`)."""
_HOST_SERVICES = ("gmi_for", "mutation_store", "skills", "judge", "tools", "clock")
_TUNABLE = tuple(f.name for f in fields(SelfImprovementOptions) if f.name not in _HOST_SERVICES)


def _refuse(option: str, why: str) -> NoReturn:
    raise GMIError(f"{option}: {why}", GMIErrorCode.CONFIGURATION_ERROR, {"option": option})


def check_runtime_learning(learning: object, layer: object) -> LearningSettings | None:
    """The checked ``learning`` option (``None``: no layer built), or ``CONFIGURATION_ERROR``.

    Refuses ``learning`` set together with ``learning_layer``, a ``learning_layer`` that is not
    a `LearningLayer`, and a bad ``learning`` value (`check_learning` on surface ``runtime``).
    """
    if layer is not None and not isinstance(layer, LearningLayer):
        _refuse("learning_layer", "must be a layer built with create_learning_layer()")
    if layer is not None and learning not in (None, False):
        _refuse(
            "learning",
            "set together with learning_layer; pass one: the runtime builds a layer from "
            "learning, or uses the layer you built",
        )
    return check_learning(
        learning, surface="runtime", profile="custom", code=GMIErrorCode.CONFIGURATION_ERROR
    )


@dataclass(frozen=True, slots=True)
class SelfImprovementConfig:
    """``emergent_config.self_improvement`` checked: on or off, the skills directory, tunables."""

    enabled: bool = False
    skills_dir: str | None = None
    tunables: Mapping[str, Any] = field(default_factory=dict)
    forge: Mapping[str, Any] = field(default_factory=dict)
    """``forge_tool``'s settings (`FORGE_KEYS`): sandboxed code only with
    ``allow_sandbox_tools``."""


def check_emergent_config(value: object) -> SelfImprovementConfig:
    """The checked ``emergent_config`` (``None``: the tools off), or ``CONFIGURATION_ERROR``.

    ``{"self_improvement": {"enabled": True, "skills_dir": ..., <a SelfImprovementOptions
    limit>: ..., <a FORGE_KEYS setting>: ...}}``; an unknown key, a wrong type or a bad limit
    is refused naming its field.
    """
    if value is None:
        return SelfImprovementConfig()
    if not isinstance(value, Mapping):
        _refuse("emergent_config", "must be a mapping such as {'self_improvement': {...}}")
    for key in value:
        if key not in _EMERGENT_KEYS:
            _refuse(
                f"emergent_config.{key}", f"unknown field; expected {', '.join(_EMERGENT_KEYS)}"
            )
    section = value.get("self_improvement")
    if section is None:
        return SelfImprovementConfig()
    name = "emergent_config.self_improvement"
    if not isinstance(section, Mapping):
        _refuse(name, "must be a mapping")
    known = (*_OWN_KEYS, *_TUNABLE, *FORGE_KEYS)
    for key in section:
        if key not in known:
            _refuse(f"{name}.{key}", f"unknown field; expected one of {', '.join(known)}")
    enabled = section.get("enabled", False)
    if not isinstance(enabled, bool):
        _refuse(f"{name}.enabled", "must be True or False")
    skills_dir = section.get("skills_dir")
    if skills_dir is not None:
        if not isinstance(skills_dir, str | os.PathLike) or not os.path.isdir(skills_dir):
            _refuse(f"{name}.skills_dir", f"must be an existing directory, got {skills_dir!r}")
        skills_dir = os.fspath(skills_dir)
    tunables: dict[str, Any] = {
        key: tuple(item) if isinstance(item, list) else item
        for key, item in section.items()
        if key in _TUNABLE
    }
    forge = {key: section[key] for key in FORGE_KEYS if key in section}
    try:
        check_options(SelfImprovementOptions(gmi_for=lambda _gmi_id: None, **tunables))
        forge_options(forge)
    except GMIError as error:
        option = f"emergent_config.{error.details.get('option', 'self_improvement')}"
        raise GMIError(
            error.message, GMIErrorCode.CONFIGURATION_ERROR, {"option": option}
        ) from error
    return SelfImprovementConfig(enabled, skills_dir, tunables, forge)


def forge_options(forge: Mapping[str, Any], **services: Any) -> ForgeOptions:
    """`ForgeOptions` from the checked settings and the runtime's ``services`` (tools, judge).

    A bad setting raises `GMIError` naming it (``self_improvement.<field>``).
    """
    settings = dict(forge)
    cap = settings.pop("max_session_tools", 10)
    try:
        return ForgeOptions(registry=ForgedToolRegistry(cap), **settings, **services)
    except GMIError as error:
        option = f"self_improvement.{error.details.get('option', 'forge')}"
        raise GMIError(error.message, error.code, {"option": option}) from error
