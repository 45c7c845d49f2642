"""Cognition profiles of a `gmi()` agent (spec: GMIs from agent(), Profiles).

``cognition`` picks what each GMI of the agent runs: ``'light'`` (the default), ``'full'``, or a
`CognitionConfig` that sets each switch. `resolve_cognition()` returns the switches an agent's
options resolve to, exactly as the spec's Profiles table says:

- Cognitive memory: ``'light'``, only when ``memory`` is set; ``'full'``, on unless
  ``memory=False``; a `CognitionConfig`, its ``memory``, and unset, as on ``'light'``.
- Memory mechanisms (only with memory on): the agent's ``cognitive_mechanisms``, or all eight at
  their defaults, on ``'light'`` and ``'full'``; a `CognitionConfig`'s ``mechanisms``: ``True``
  (the default, as on ``'light'``), ``False`` (none) or a per-mechanism config.
- Sentiment tracking: off on ``'light'``, on on ``'full'``, ``sentiment: True`` on a config.
- Metaprompts: none on ``'light'``, the five sentiment presets on ``'full'``, and on a config
  ``metaprompts``: ``'all'``, a list of presets or ``False``, read only with ``sentiment: True``.

Every profile keeps the reasoning trace. No memory means no mechanisms.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NoReturn, TypedDict

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.learning import LearningSettings, check_learning
from agentos.memory.mechanisms import MechanismsConfig, resolve_mechanisms_config
from agentos.persona.metaprompt_presets import (
    ALL_PRESETS,
    PRESET_NAMES,
    UnknownPresetError,
    merge_metaprompt_presets,
)

from .call_checks import refuse_unknown_options

__all__ = [
    "COGNITION_PROFILES",
    "CognitionConfig",
    "CognitionProfile",
    "ResolvedCognition",
    "check_cognition",
    "resolve_cognition",
    "resolve_mechanisms_option",
]

CognitionProfile = Literal["light", "full"]
"""The named profiles."""

COGNITION_PROFILES: tuple[str, ...] = ("light", "full")
"""The profile names ``cognition`` accepts (a `CognitionConfig` is the third form)."""


class CognitionConfig(TypedDict, total=False):
    """``cognition`` as switches (every key optional).

    - ``memory``: cognitive memory on or off; unset (or ``None``), on when the agent's ``memory``
      option is set, as on ``'light'``.
    - ``mechanisms``: with memory on, ``True`` (the default) runs the agent's
      ``cognitive_mechanisms`` or all eight at their defaults; ``False`` none; a per-mechanism
      mapping (or `MechanismsConfig`) those settings, in place of ``cognitive_mechanisms``.
    - ``sentiment``: sentiment tracking (off unless ``True``).
    - ``metaprompts``: ``'all'`` (the five sentiment presets), a list of presets (short names
      such as ``frustration_recovery`` or ids such as ``gmi_frustration_recovery``), or
      ``False``. Read only with ``sentiment: True``; unset, no metaprompts.
    """

    memory: bool | None
    mechanisms: bool | Mapping[str, Any] | MechanismsConfig
    sentiment: bool
    metaprompts: Literal["all", False] | Sequence[str] | None


_CONFIG_KEYS = frozenset(CognitionConfig.__annotations__)


@dataclass(frozen=True, slots=True)
class ResolvedCognition:
    """The switches an agent's options resolve to (spec: ``resolveCognition()``).

    ``profile`` is ``'light'``, ``'full'`` or ``'custom'`` (a `CognitionConfig`).
    ``mechanisms`` is ``None`` (no mechanisms engine: always so with memory off) or the resolved
    `MechanismsConfig` (``MechanismsConfig()`` is all eight at their defaults).
    ``metaprompt_presets`` holds the short names of the sentiment presets the persona carries,
    in `PRESET_NAMES` order (empty with sentiment off). ``learning`` is the resolved switches of
    the agent's ``learning`` option (`check_learning` on the agent's profile: ``True`` on
    'full' asks for traits, lessons and skills), ``None`` with learning unset or ``False``
    (spec: "resolveCognition() returns the resolved switches as learning");
    ``learning_on`` says whether there is a layer.
    """

    profile: Literal["light", "full", "custom"]
    memory_on: bool
    mechanisms: MechanismsConfig | None
    sentiment_on: bool
    metaprompt_presets: tuple[str, ...]
    learning: LearningSettings | None = None

    @property
    def learning_on(self) -> bool:
        """Whether ``learning`` asks for a layer (``True`` or a config; unset or False: none)."""
        return self.learning is not None


def _invalid(option: str, why: str) -> NoReturn:
    raise GMIError(f"{option}: {why}", GMIErrorCode.INVALID_ARGUMENT, {"option": option})


def _memory_set(memory: object) -> bool:
    """Whether the agent's ``memory`` option is set (``None`` and ``False`` are unset)."""
    return memory is not None and memory is not False


def check_cognition(cognition: object) -> None:
    """Refuse a ``cognition`` value that is not a profile or a valid `CognitionConfig`.

    Raises `GMIError` (``INVALID_ARGUMENT``) naming ``cognition`` for an unknown profile (with a
    did-you-mean hint) and ``cognition.<key>`` for an unknown key, a value of the wrong type or
    an unknown metaprompt preset. Mechanism settings are checked by `resolve_mechanisms_config`.
    """
    if cognition is None or cognition in COGNITION_PROFILES:
        return
    if isinstance(cognition, str):
        close = difflib.get_close_matches(cognition, COGNITION_PROFILES, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        _invalid(
            "cognition",
            f"unknown profile {cognition!r}{hint}; use 'light', 'full' or a CognitionConfig",
        )
    if not isinstance(cognition, Mapping):
        _invalid(
            "cognition",
            f"must be 'light', 'full' or a CognitionConfig, got {type(cognition).__name__}",
        )
    refuse_unknown_options(cognition, _CONFIG_KEYS, prefix="cognition.")
    memory = cognition.get("memory")
    if memory is not None and not isinstance(memory, bool):
        _invalid("cognition.memory", f"must be a bool, got {memory!r}")
    sentiment = cognition.get("sentiment")
    if sentiment is not None and not isinstance(sentiment, bool):
        _invalid("cognition.sentiment", f"must be a bool, got {sentiment!r}")
    mechanisms = cognition.get("mechanisms")
    if mechanisms is not None and not isinstance(mechanisms, bool):
        resolve_mechanisms_option(mechanisms, "cognition.mechanisms")
    _presets(cognition.get("metaprompts"))


def resolve_mechanisms_option(value: object, option: str) -> MechanismsConfig | None:
    """Mechanism settings resolved by `resolve_mechanisms_config` (``None``: none given).

    Its `ValueError`, and a value that is not a mapping, raise `GMIError` (``INVALID_ARGUMENT``)
    naming ``option`` (``cognitive_mechanisms`` or ``cognition.mechanisms``).
    """
    if value is not None and not isinstance(value, Mapping | MechanismsConfig):
        _invalid(option, f"must be a mapping of mechanism settings, got {type(value).__name__}")
    try:
        return resolve_mechanisms_config(value)
    except ValueError as exc:
        raise GMIError(
            f"{option}: {exc}", GMIErrorCode.INVALID_ARGUMENT, {"option": option}
        ) from exc


def _presets(metaprompts: object) -> tuple[str, ...]:
    """The short names ``metaprompts`` selects, in `PRESET_NAMES` order (checked)."""
    if metaprompts is None or metaprompts is False:
        return ()
    if metaprompts is True:  # not in the spec's forms; read as 'all' would hide a mistake
        _invalid("cognition.metaprompts", "must be 'all', a list of presets or False, got True")
    if isinstance(metaprompts, str) and metaprompts != ALL_PRESETS:
        _invalid(
            "cognition.metaprompts",
            f"unknown preset {metaprompts!r}: give 'all' or a list of presets",
        )
    if not isinstance(metaprompts, str | Sequence) or not all(
        isinstance(entry, str) for entry in metaprompts
    ):
        _invalid("cognition.metaprompts", "must be 'all', a list of presets or False")
    try:
        chosen = merge_metaprompt_presets(None, metaprompts)
    except UnknownPresetError as exc:
        raise GMIError(
            f"cognition.metaprompts: {exc}",
            GMIErrorCode.INVALID_ARGUMENT,
            {"option": "cognition.metaprompts", "unknown": list(exc.names)},
        ) from exc
    return tuple(preset.id.removeprefix("gmi_") for preset in chosen)


def resolve_cognition(options: Mapping[str, Any]) -> ResolvedCognition:
    """The cognition switches an agent's options resolve to (the module doc's table).

    Reads ``cognition``, ``memory``, ``cognitive_mechanisms`` and ``learning`` from the agent's
    options. Raises `GMIError` (``INVALID_ARGUMENT``) naming the option for an unknown profile
    or preset, a bad `CognitionConfig`, bad mechanism settings or a bad ``learning`` field.
    """
    cognition = options.get("cognition")
    check_cognition(cognition)
    memory = options.get("memory")
    learning = options.get("learning")
    agent_mechanisms = options.get("cognitive_mechanisms")
    if isinstance(cognition, Mapping):
        switch = cognition.get("memory")
        memory_on = _memory_set(memory) if switch is None else bool(switch)
        sentiment_on = cognition.get("sentiment") is True
        chosen = cognition.get("mechanisms")
        chosen = True if chosen is None else chosen
        presets = _presets(cognition.get("metaprompts")) if sentiment_on else ()
        profile: Literal["light", "full", "custom"] = "custom"
    else:
        profile = "full" if cognition == "full" else "light"
        memory_on = memory is not False if profile == "full" else _memory_set(memory)
        sentiment_on = profile == "full"
        chosen = True
        presets = PRESET_NAMES if profile == "full" else ()
    mechanisms: MechanismsConfig | None = None
    if memory_on and chosen is True:
        # None from the agent means "not given": all eight at their defaults, as the spec says.
        given = resolve_mechanisms_option(agent_mechanisms, "cognitive_mechanisms")
        mechanisms = given if given is not None else MechanismsConfig()
    elif memory_on and chosen is not False:
        mechanisms = resolve_mechanisms_option(chosen, "cognition.mechanisms")
    return ResolvedCognition(
        profile=profile,
        memory_on=memory_on,
        mechanisms=mechanisms,
        sentiment_on=sentiment_on,
        metaprompt_presets=tuple(presets),
        learning=check_learning(learning, surface="gmi", profile=profile),
    )
