"""The ready-made metaprompts and their merge into personas (spec: "Metaprompts"; reference §1.6).

Five sentiment presets answer the events the sentiment tracker raises (frustration, confusion,
satisfaction, an error streak, low engagement). The self-reflection metaprompt
``gmi_self_trait_adjustment`` runs on a turn interval and re-reads the GMI's mood, the user's
skill and the task's complexity; it is not a sentiment preset, so ``presets: ['all']`` does not
bring it in: a persona opts in by listing it among its own ``metaPrompts``.

Every template is written for this project. Each asks for exactly one JSON object with the keys
the executor applies (``updatedGmiMood``, ``updatedUserSkillLevel``, ``updatedTaskComplexity``,
``newMemoryImprints``) and uses only the ``{{variable}}`` names of `TEMPLATE_VARIABLES`, which the
executor substitutes. No metaprompt changes a HEXACO trait.

`with_metaprompt_presets` is what the persona loaders apply to every persona they return: a
persona whose ``sentimentTracking`` is enabled gets the presets its ``presets`` list names first,
then its own metaprompts; its own metaprompt with a preset's id replaces that preset in place.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from agentos.persona.definition import MetaPromptDefinition, MetaPromptTrigger, PersonaDefinition

__all__ = [
    "ALL_PRESETS",
    "METAPROMPT_MOODS",
    "METAPROMPT_PRESETS",
    "PRESET_NAMES",
    "SELF_TRAIT_ADJUSTMENT_ID",
    "SENTIMENT_PRESET_IDS",
    "TASK_COMPLEXITIES",
    "TEMPLATE_VARIABLES",
    "USER_SKILL_LEVELS",
    "UnknownPresetError",
    "get_preset_metaprompt",
    "is_preset_metaprompt",
    "merge_metaprompt_presets",
    "template_variables",
    "with_metaprompt_presets",
    "without_answer_format",
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

# The eight GMIMood values. agentos.gmi (rank 3) owns the enum and this module (rank 2) may not
# import it, so the values are repeated here; tests compare the two. The TypeScript schema also
# lists "helpful" and "patient", which are not moods: the executor ignores them, so asking the
# model for them would only waste its answer.
METAPROMPT_MOODS: tuple[str, ...] = (
    "neutral",
    "focused",
    "empathetic",
    "curious",
    "analytical",
    "creative",
    "assertive",
    "frustrated",
)
"""The moods a metaprompt may answer with (``updatedGmiMood``): the eight GMI moods."""

USER_SKILL_LEVELS: tuple[str, ...] = ("novice", "beginner", "intermediate", "advanced", "expert")
"""The values of ``updatedUserSkillLevel``."""

TASK_COMPLEXITIES: tuple[str, ...] = ("simple", "moderate", "complex", "advanced")
"""The values of ``updatedTaskComplexity``."""

TEMPLATE_VARIABLES: frozenset[str] = frozenset(
    {
        "current_mood",
        "user_skill",
        "task_complexity",
        "current_sentiment",
        "sentiment_score",
        "consecutive_frustration",
        "consecutive_confusion",
        "consecutive_satisfaction",
        "consecutive_neutral",
        "recent_conversation",
        "recent_errors",
        "confusion_keywords",
        "evidence",
    }
)
"""The ``{{variable}}`` names the executor substitutes; the templates here use no others."""

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z0-9_]+)\s*\}\}")


def template_variables(template: str) -> list[str]:
    """The ``{{variable}}`` names a template uses, in order of first appearance."""
    return list(dict.fromkeys(_PLACEHOLDER.findall(template)))


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


def _output_schema(strategy_key: str | None, strategy_description: str = "") -> dict[str, Any]:
    """The JSON schema of an answer: rationale (and strategy) required, the updates optional."""
    strategy: dict[str, Any] = (
        {strategy_key: {"type": "string", "description": strategy_description}}
        if strategy_key
        else {}
    )
    return {
        "type": "object",
        "properties": {
            "adjustmentRationale": {
                "type": "string",
                "description": "Why the adjustment fits what the evidence shows.",
            },
            **strategy,
            "updatedGmiMood": {"type": "string", "enum": list(METAPROMPT_MOODS)},
            "updatedUserSkillLevel": {"type": "string", "enum": list(USER_SKILL_LEVELS)},
            "updatedTaskComplexity": {"type": "string", "enum": list(TASK_COMPLEXITIES)},
            "newMemoryImprints": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"key": {"type": "string"}, "value": {}},
                    "required": ["key", "value"],
                },
            },
        },
        "required": ["adjustmentRationale", *([strategy_key] if strategy_key else [])],
    }


# The closing lines every template shares: the answer's shape and the values the optional keys
# accept, so that a reply the executor cannot apply is unlikely.
def _answer_format(strategy_key: str | None) -> str:
    strategy = f'"{strategy_key}": "...", ' if strategy_key else ""
    required = (
        f'"adjustmentRationale" and "{strategy_key}" are required'
        if strategy_key
        else '"adjustmentRationale" is required'
    )
    return (
        "Answer with ONLY one JSON object, no prose and no code fence:\n"
        f'{{"adjustmentRationale": "...", {strategy}'
        '"updatedGmiMood": "...", "updatedUserSkillLevel": "...", '
        '"updatedTaskComplexity": "...", "newMemoryImprints": [{"key": "...", "value": "..."}]}\n'
        f"{required}; leave out any other key you would not change.\n"
        f"updatedGmiMood is one of: {', '.join(METAPROMPT_MOODS)}.\n"
        f"updatedUserSkillLevel is one of: {', '.join(USER_SKILL_LEVELS)}.\n"
        f"updatedTaskComplexity is one of: {', '.join(TASK_COMPLEXITIES)}."
    )


_ANSWER_FORMATS: tuple[str, ...] = tuple(
    _answer_format(key)
    for key in (
        None,
        "recoveryStrategy",
        "clarificationStrategy",
        "engagementStrategy",
        "mitigationStrategy",
    )
)


def without_answer_format(template: str) -> str:
    """``template`` without the answer-format lines a preset's template closes with.

    Those lines show the answer's shape and the values its keys accept; a model that holds its
    reply to the metaprompt's schema with a grammar (the local model) is given the shape by the
    grammar instead, and on a small CPU model the lines are about 40 % of the prompt it must
    read first. Any other template, a user's own included, comes back as it is.
    """
    for block in _ANSWER_FORMATS:
        if template.endswith(block):
            return template[: -len(block)] + "Answer with one JSON object."
    return template


_FRUSTRATION_TEMPLATE = (
    "You are reviewing your own last turns as an assistant. The user seems frustrated: "
    "{{consecutive_frustration}} turn(s) in a row scored negative "
    "(latest sentiment {{current_sentiment}}, score {{sentiment_score}}).\n"
    "Your mood: {{current_mood}}. User skill: {{user_skill}}. Task complexity: "
    "{{task_complexity}}.\n"
    "Recent conversation (JSON):\n{{recent_conversation}}\n"
    "Work out what most likely caused the frustration (a wrong answer, too much text, a "
    "misread request, a repeated mistake) and how the next reply should change to recover: "
    "acknowledge the problem briefly, fix it, keep the answer short and concrete.\n"
    "Describe that plan in recoveryStrategy. Choose a calmer, more empathetic mood only if it "
    "would help, and record what the user needs in newMemoryImprints.\n"
    + _answer_format("recoveryStrategy")
)

_CONFUSION_TEMPLATE = (
    "You are reviewing your own last turns as an assistant. The user seems confused "
    "({{consecutive_confusion}} turn(s) in a row; signals: {{confusion_keywords}}).\n"
    "Your mood: {{current_mood}}. User skill: {{user_skill}}. Task complexity: "
    "{{task_complexity}}.\n"
    "Recent conversation (JSON):\n{{recent_conversation}}\n"
    "Find the point the user did not follow: jargon, a skipped step, an ambiguous question, or "
    "an answer pitched above their level. Plan how the next reply clarifies it: simpler words, "
    "one step at a time, an example, or a question back when the request is unclear.\n"
    "Describe that plan in clarificationStrategy. Lower updatedUserSkillLevel or "
    "updatedTaskComplexity only when the conversation shows you misjudged them.\n"
    + _answer_format("clarificationStrategy")
)

_SATISFACTION_TEMPLATE = (
    "You are reviewing your own last turns as an assistant. The user seems satisfied "
    "({{consecutive_satisfaction}} positive turn(s) in a row; latest score "
    "{{sentiment_score}}).\n"
    "Your mood: {{current_mood}}. User skill: {{user_skill}}. Task complexity: "
    "{{task_complexity}}.\n"
    "Recent conversation (JSON):\n{{recent_conversation}}\n"
    "Name what is working (the level of detail, the tone, the format) so the next replies keep "
    "it, and whether the user is ready for more depth or a harder next step.\n"
    "Describe that in engagementStrategy. Raise updatedUserSkillLevel only when the user has "
    "shown it, and store a preference worth keeping in newMemoryImprints.\n"
    + _answer_format("engagementStrategy")
)

_ERROR_TEMPLATE = (
    "You are reviewing your own last turns as an assistant. Several recent steps failed.\n"
    "Recent errors (JSON):\n{{recent_errors}}\n"
    "Your mood: {{current_mood}}. User skill: {{user_skill}}. Task complexity: "
    "{{task_complexity}}. Latest user sentiment: {{current_sentiment}}.\n"
    "Recent conversation (JSON):\n{{recent_conversation}}\n"
    "Find what the errors have in common (a tool that keeps failing, bad arguments, a request "
    "beyond what you can do) and how to avoid repeating them: another approach, fewer tool "
    "calls, or telling the user plainly what cannot be done.\n"
    "Describe that plan in mitigationStrategy. A focused or analytical mood often suits this; "
    "record a tool or approach to avoid in newMemoryImprints.\n"
    + _answer_format("mitigationStrategy")
)

_ENGAGEMENT_TEMPLATE = (
    "You are reviewing your own last turns as an assistant. The user's engagement is low: "
    "{{consecutive_neutral}} short, neutral turn(s) in a row (latest score "
    "{{sentiment_score}}).\n"
    "Your mood: {{current_mood}}. User skill: {{user_skill}}. Task complexity: "
    "{{task_complexity}}.\n"
    "Recent conversation (JSON):\n{{recent_conversation}}\n"
    "Judge whether the user is busy and wants brevity, has lost interest, or is unsure what to "
    "ask next. Plan how the next reply re-engages them without padding: a sharper answer, a "
    "relevant suggestion, or one focused question.\n"
    "Describe that plan in engagementStrategy. A curious or creative mood may help; do not "
    "change the skill level or complexity without evidence.\n"
    + _answer_format("engagementStrategy")
)

_SELF_TRAIT_TEMPLATE = (
    "You are reflecting on how this conversation is going, as the assistant taking part in it.\n"
    "Your mood: {{current_mood}}. User skill: {{user_skill}}. Task complexity: "
    "{{task_complexity}}.\n"
    "Evidence (JSON: recent messages, reasoning-trace entries, mood and contexts):\n"
    "{{evidence}}\n"
    "Re-read the evidence and judge three things only: the mood that best fits your next "
    "replies, the user's skill level as their messages show it, and the task's complexity as "
    "it now stands. Keep a value when the evidence does not clearly call for a change.\n"
    "You never change your personality traits (the HEXACO values); this review only touches "
    "mood, user skill and task complexity.\n"
    "Say what in the evidence supports your judgement in adjustmentRationale, and record any "
    "lasting fact about the user or the task in newMemoryImprints.\n" + _answer_format(None)
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
        output_schema=_output_schema(strategy_key, strategy_description),
        trigger=MetaPromptTrigger(type="event_based", event_name=event_name),
    )


_SENTIMENT_PRESETS: tuple[MetaPromptDefinition, ...] = (
    _preset(
        "frustration_recovery",
        "user_frustrated",
        "When the user is frustrated, plan how the next reply recovers.",
        _FRUSTRATION_TEMPLATE,
        "recoveryStrategy",
        "How the next replies recover from the frustration.",
    ),
    _preset(
        "confusion_clarification",
        "user_confused",
        "When the user is confused, plan how the next reply clarifies.",
        _CONFUSION_TEMPLATE,
        "clarificationStrategy",
        "How the next replies clear up the confusion.",
    ),
    _preset(
        "satisfaction_reinforcement",
        "user_satisfied",
        "When the user is satisfied, keep what works and consider going deeper.",
        _SATISFACTION_TEMPLATE,
        "engagementStrategy",
        "What to keep doing, and whether to go deeper.",
    ),
    _preset(
        "error_recovery",
        "error_threshold_exceeded",
        "When recent steps keep failing, plan how to stop repeating the errors.",
        _ERROR_TEMPLATE,
        "mitigationStrategy",
        "How to avoid repeating the recent errors.",
    ),
    _preset(
        "engagement_boost",
        "low_engagement",
        "When engagement is low, plan how the next reply re-engages the user.",
        _ENGAGEMENT_TEMPLATE,
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
    prompt_template=_SELF_TRAIT_TEMPLATE,
    max_output_tokens=512,
    temperature=0.3,
    output_schema=_output_schema(None),
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
