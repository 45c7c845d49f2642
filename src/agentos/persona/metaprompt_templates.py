"""The ready-made metaprompts' templates and answer schema, as data (spec: "Metaprompts").

Every template is written for this project. Each asks for exactly one JSON object with the keys
the executor applies (``updatedGmiMood``, ``updatedUserSkillLevel``, ``updatedTaskComplexity``,
``newMemoryImprints``) and uses only the ``{{variable}}`` names of `TEMPLATE_VARIABLES`, which the
executor substitutes. No metaprompt changes a HEXACO trait. `agentos.persona.metaprompt_presets`
builds the preset definitions from these.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "CONFUSION_TEMPLATE",
    "ENGAGEMENT_TEMPLATE",
    "ERROR_TEMPLATE",
    "FRUSTRATION_TEMPLATE",
    "METAPROMPT_MOODS",
    "SATISFACTION_TEMPLATE",
    "SELF_TRAIT_TEMPLATE",
    "TASK_COMPLEXITIES",
    "TEMPLATE_VARIABLES",
    "USER_SKILL_LEVELS",
    "answer_schema",
    "template_variables",
    "without_answer_format",
]

# The eight GMIMood values. substrate (rank 3) owns the enum and this module (rank 2) may not
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


def answer_schema(strategy_key: str | None, strategy_description: str = "") -> dict[str, Any]:
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


FRUSTRATION_TEMPLATE = (
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
"""The frustration preset's template (event ``user_frustrated``)."""

CONFUSION_TEMPLATE = (
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
"""The confusion preset's template (event ``user_confused``)."""

SATISFACTION_TEMPLATE = (
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
"""The satisfaction preset's template (event ``user_satisfied``)."""

ERROR_TEMPLATE = (
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
"""The error-streak preset's template (event ``error_threshold_exceeded``)."""

ENGAGEMENT_TEMPLATE = (
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
"""The low-engagement preset's template (event ``low_engagement``)."""

SELF_TRAIT_TEMPLATE = (
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
"""The self-reflection metaprompt's template (``gmi_self_trait_adjustment``)."""
