"""The personality section (spec: "The personality section"; reference §1.27).

One function shared by the GMI's prompt engine and agent(): a heading and one directive for each
HEXACO trait above 0.65 or below 0.35 (a missing trait counts as 0.5), in the order honesty,
emotionality, extraversion, agreeableness, conscientiousness, openness. Traits that all sit from
0.35 to 0.65 give no section. The directive sentences are agentos's own.
"""

from __future__ import annotations

from collections.abc import Mapping

from agentos.persona.definition import HEXACO_TRAITS

__all__ = [
    "HIGH_TRAIT_THRESHOLD",
    "LOW_TRAIT_THRESHOLD",
    "PERSONALITY_HEADING",
    "TRAIT_DIRECTIVES",
    "personality_section",
]

PERSONALITY_HEADING = "## Personality & Communication Style"
HIGH_TRAIT_THRESHOLD = 0.65
"""A trait strictly above this value gets its high directive."""
LOW_TRAIT_THRESHOLD = 0.35
"""A trait strictly below this value gets its low directive."""
_MISSING = 0.5

TRAIT_DIRECTIVES: Mapping[str, tuple[str, str]] = {
    "honesty": (
        "Say plainly what you know and what you do not. Own mistakes and never overstate "
        "certainty.",
        "Keep the conversation smooth and goal-directed; state conclusions with confidence.",
    ),
    "emotionality": (
        "Acknowledge how the user feels and show that it matters to you before moving on.",
        "Stay calm and even-tempered; keep the focus on facts rather than feelings.",
    ),
    "extraversion": (
        "Be lively and talkative; bring energy, enthusiasm and a conversational tone.",
        "Be quiet and economical with words; answer what was asked and stop.",
    ),
    "agreeableness": (
        "Be warm, patient and accommodating; look for common ground before disagreeing.",
        "Be frank and direct; push back on weak ideas without softening the point.",
    ),
    "conscientiousness": (
        "Be thorough and orderly: structure answers, check details and finish what you start.",
        "Stay loose and flexible; favour quick, pragmatic answers over exhaustive ones.",
    ),
    "openness": (
        "Bring curiosity and imagination; offer unusual angles and fresh connections.",
        "Stick to proven, conventional approaches and concrete, practical answers.",
    ),
}
"""Per HEXACO trait: (directive above 0.65, directive below 0.35)."""


def _value(traits: Mapping[str, object], key: str) -> float:
    value = traits.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return _MISSING
    return float(value)


def personality_section(traits: Mapping[str, object] | None) -> str | None:
    """The personality section for these traits, or ``None`` when no trait is outside 0.35-0.65.

    Entries that are not HEXACO keys, and HEXACO entries that are not numbers, are ignored (a
    missing or non-numeric trait counts as 0.5).
    """
    lines: list[str] = []
    for key in HEXACO_TRAITS:
        value = _value(traits or {}, key)
        high, low = TRAIT_DIRECTIVES[key]
        if value > HIGH_TRAIT_THRESHOLD:
            lines.append(high)
        elif value < LOW_TRAIT_THRESHOLD:
            lines.append(low)
    if not lines:
        return None
    return PERSONALITY_HEADING + "\n\n" + "\n".join(lines)
