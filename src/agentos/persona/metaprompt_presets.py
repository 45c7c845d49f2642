"""The ready-made metaprompts and their merge into personas (spec: "Metaprompts"; reference §1.6).

Five sentiment presets answer the events the sentiment tracker raises (frustration, confusion,
satisfaction, an error streak, low engagement). The self-reflection metaprompt
``gmi_self_trait_adjustment`` runs on a turn interval and re-reads the GMI's mood, the user's
skill and the task's complexity; it is not a sentiment preset, so ``presets: ['all']`` does not
bring it in: a persona opts in by listing it among its own ``metaPrompts``. Their templates and
answer schema are in `agentos.persona.metaprompt_templates`.

`with_metaprompt_presets` is what the persona loaders apply to every persona they return: a
persona whose ``sentimentTracking`` is enabled gets the presets its ``presets`` list names first,
then its own metaprompts; its own metaprompt with a preset's id replaces that preset in place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from agentos.persona.definition import MetaPromptDefinition, MetaPromptTrigger, PersonaDefinition
from agentos.persona.metaprompt_templates import (
    CONFUSION_TEMPLATE,
    ENGAGEMENT_TEMPLATE,
    ERROR_TEMPLATE,
    FRUSTRATION_TEMPLATE,
    SATISFACTION_TEMPLATE,
    SELF_TRAIT_TEMPLATE,
    answer_schema,
)

__all__ = [
    "ALL_PRESETS",
    "METAPROMPT_PRESETS",
    "PRESET_NAMES",
    "SELF_TRAIT_ADJUSTMENT_ID",
    "SENTIMENT_PRESET_IDS",
    "UnknownPresetError",
    "get_preset_metaprompt",
    "is_preset_metaprompt",
    "merge_metaprompt_presets",
    "with_metaprompt_presets",
]

ALL_PRESETS = "all"
"""The ``presets`` entry that selects every sentiment preset."""

PRESET_NAMES: tuple[str, ...] = (
    "frustration_recovery",
    "confusion_clarification",
    "satisfaction_reinforcement",
    "error_recovery",
    "engagement_boost",
)
"""The short names of the five sentiment presets, in the order a merge places them."""

SENTIMENT_PRESET_IDS: tuple[str, ...] = tuple(f"gmi_{name}" for name in PRESET_NAMES)
"""The ids of the five sentiment presets (``gmi_`` + short name), in `PRESET_NAMES` order."""

SELF_TRAIT_ADJUSTMENT_ID = "gmi_self_trait_adjustment"
"""The id of the self-reflection metaprompt (a turn-interval metaprompt, not a sentiment preset)."""


class UnknownPresetError(ValueError):
    """A ``presets`` list named something that is not a sentiment preset.

    ``names`` holds the unknown entries as given; ``valid`` the accepted ones (``'all'``, the
    short names and the ids).
    """

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)
        self.valid = [ALL_PRESETS, *PRESET_NAMES, *SENTIMENT_PRESET_IDS]
        super().__init__(
            f"unknown metaprompt preset {', '.join(repr(n) for n in self.names)}; "
            f"valid presets are {ALL_PRESETS!r} or any of {', '.join(PRESET_NAMES)} "
            "(optionally with the 'gmi_' prefix)"
        )


def _preset(
    name: str,
    event_name: str,
    description: str,
    template: str,
    strategy_key: str,
    strategy_description: str,
    temperature: float = 0.3,
) -> MetaPromptDefinition:
    # No model_id/provider_id: a preset runs on the persona's own model.
    return MetaPromptDefinition(
        id=f"gmi_{name}",
        description=description,
        prompt_template=template,
        max_output_tokens=512,
        temperature=temperature,
        output_schema=answer_schema(strategy_key, strategy_description),
        trigger=MetaPromptTrigger(type="event_based", event_name=event_name),
    )


_SENTIMENT_PRESETS: tuple[MetaPromptDefinition, ...] = (
    _preset(
        "frustration_recovery",
        "user_frustrated",
        "When the user is frustrated, plan how the next reply recovers.",
        FRUSTRATION_TEMPLATE,
        "recoveryStrategy",
        "How the next replies recover from the frustration.",
    ),
    _preset(
        "confusion_clarification",
        "user_confused",
        "When the user is confused, plan how the next reply clarifies.",
        CONFUSION_TEMPLATE,
        "clarificationStrategy",
        "How the next replies clear up the confusion.",
    ),
    _preset(
        "satisfaction_reinforcement",
        "user_satisfied",
        "When the user is satisfied, keep what works and consider going deeper.",
        SATISFACTION_TEMPLATE,
        "engagementStrategy",
        "What to keep doing, and whether to go deeper.",
    ),
    _preset(
        "error_recovery",
        "error_threshold_exceeded",
        "When recent steps keep failing, plan how to stop repeating the errors.",
        ERROR_TEMPLATE,
        "mitigationStrategy",
        "How to avoid repeating the recent errors.",
    ),
    _preset(
        "engagement_boost",
        "low_engagement",
        "When engagement is low, plan how the next reply re-engages the user.",
        ENGAGEMENT_TEMPLATE,
        "engagementStrategy",
        "How the next replies re-engage the user.",
        # A little more latitude than the other presets: re-engaging calls for fresh ideas.
        temperature=0.5,
    ),
)

_SELF_TRAIT_ADJUSTMENT = MetaPromptDefinition(
    id=SELF_TRAIT_ADJUSTMENT_ID,
    description=(
        "Every few turns, re-read the evidence and update mood, user skill and task complexity "
        "(never personality traits)."
    ),
    prompt_template=SELF_TRAIT_TEMPLATE,
    max_output_tokens=512,
    temperature=0.3,
    output_schema=answer_schema(None),
    trigger=MetaPromptTrigger(type="turn_interval", interval_turns=5),
)

METAPROMPT_PRESETS: Mapping[str, MetaPromptDefinition] = MappingProxyType(
    {
        **{preset.id: preset for preset in _SENTIMENT_PRESETS},
        SELF_TRAIT_ADJUSTMENT_ID: _SELF_TRAIT_ADJUSTMENT,
    }
)
"""Every ready-made metaprompt by id: the five sentiment presets and the self-reflection one.

Read-only; treat the definitions as read-only too (`get_preset_metaprompt` gives copies). Only
the ids of `SENTIMENT_PRESET_IDS` are selectable through a persona's ``presets``.
"""


def _as_id(id_or_name: str) -> str:
    return id_or_name if id_or_name.startswith("gmi_") else f"gmi_{id_or_name}"


def get_preset_metaprompt(id_or_name: str) -> MetaPromptDefinition:
    """A deep copy of a ready-made metaprompt, by id (``gmi_x``) or short name (``x``).

    Covers the five sentiment presets and ``gmi_self_trait_adjustment``, which a persona adds to
    its own ``meta_prompts`` to opt in to self-reflection.

    Raises:
        KeyError: naming the valid ids when none has this id or name.
    """
    preset = METAPROMPT_PRESETS.get(_as_id(id_or_name))
    if preset is None:
        raise KeyError(
            f"no metaprompt preset {id_or_name!r}; valid ids are {', '.join(METAPROMPT_PRESETS)} "
            "(the 'gmi_' prefix may be left out)"
        )
    return preset.model_copy(deep=True)


def is_preset_metaprompt(metaprompt_id: str) -> bool:
    """Whether this id is one of the ready-made metaprompts (a sentiment preset or self-reflection).

    Only the exact id counts (``gmi_frustration_recovery``, not ``frustration_recovery``).
    """
    return metaprompt_id in METAPROMPT_PRESETS


def _chosen_preset_ids(presets: str | Sequence[str] | None) -> list[str]:
    """The sentiment preset ids a ``presets`` value selects, in `PRESET_NAMES` order."""
    if presets is None:
        return []
    entries = [presets] if isinstance(presets, str) else list(presets)
    if ALL_PRESETS in entries:
        unknown = [e for e in entries if e != ALL_PRESETS and _as_id(e) not in SENTIMENT_PRESET_IDS]
        if unknown:
            raise UnknownPresetError(unknown)
        return list(SENTIMENT_PRESET_IDS)
    unknown = [e for e in entries if _as_id(e) not in SENTIMENT_PRESET_IDS]
    if unknown:
        raise UnknownPresetError(unknown)
    wanted = {_as_id(e) for e in entries}
    return [preset_id for preset_id in SENTIMENT_PRESET_IDS if preset_id in wanted]


def merge_metaprompt_presets(
    persona_metaprompts: Sequence[MetaPromptDefinition] | None,
    presets: str | Sequence[str] | None,
) -> list[MetaPromptDefinition]:
    """The chosen sentiment presets, then the persona's own metaprompts (all deep copies).

    ``presets`` is ``['all']`` (or ``'all'``), or a list of short names (``frustration_recovery``)
    or ids (``gmi_frustration_recovery``); ``None`` or ``[]`` selects none. The chosen presets
    come first, in `PRESET_NAMES` order whatever order the list gives. A persona metaprompt whose
    id is a chosen preset's replaces that preset in place (when the persona carries that id more
    than once, its last one wins, as the TypeScript Map merge does); the persona's other
    metaprompts follow in their own order. Merging a merged list again gives the same list.

    Raises:
        UnknownPresetError: (a `ValueError`) naming each entry that is not a sentiment preset and
            the valid ones; ``gmi_self_trait_adjustment`` is not selectable here.
    """
    chosen = _chosen_preset_ids(presets)
    own = [mp.model_copy(deep=True) for mp in persona_metaprompts or ()]
    overrides = {mp.id: mp for mp in own if mp.id in chosen}
    merged = [overrides.get(preset_id) or get_preset_metaprompt(preset_id) for preset_id in chosen]
    merged.extend(mp for mp in own if mp.id not in overrides)
    return merged


def with_metaprompt_presets(persona: PersonaDefinition) -> PersonaDefinition:
    """The persona with the sentiment presets its ``sentimentTracking.presets`` names merged in.

    Only a persona whose ``sentiment_tracking`` is enabled and whose ``presets`` list is not empty
    changes; the result is a deep copy whose ``meta_prompts`` are
    ``merge_metaprompt_presets(persona.meta_prompts, presets)``. An enabled tracker without
    ``presets`` (or with ``[]``) brings no presets, as TypeScript's PersonaLoader merges only
    when ``presets`` is non-empty: sentiment events are still tracked and a persona may still
    answer them with its own event-based metaprompts. Any other persona is returned unchanged (the
    same object). Applying this twice gives the same metaprompt list as applying it once.

    Raises:
        UnknownPresetError: (a `ValueError`) when tracking is enabled and ``presets`` names
            something that is not a sentiment preset. A disabled tracker's ``presets`` are never
            read, so they are not checked either.
    """
    tracking = persona.sentiment_tracking
    if tracking is None or not tracking.enabled or not tracking.presets:
        return persona
    merged = merge_metaprompt_presets(persona.meta_prompts, tracking.presets)
    result = persona.model_copy(deep=True)
    result.meta_prompts = merged
    return result
