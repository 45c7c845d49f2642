"""The personality section: heading, thresholds, order, exact text."""

from __future__ import annotations

import pytest

from agentos.persona import personality_section
from agentos.persona.personality import TRAIT_DIRECTIVES

H = "## Personality & Communication Style\n\n"


def test_all_traits_high_in_spec_order() -> None:
    traits = dict.fromkeys(
        [
            "openness",
            "agreeableness",
            "honesty",
            "conscientiousness",
            "extraversion",
            "emotionality",
        ],
        0.9,
    )
    assert personality_section(traits) == H + "\n".join(
        [
            "Say plainly what you know and what you do not. Own mistakes and never overstate "
            "certainty.",
            "Acknowledge how the user feels and show that it matters to you before moving on.",
            "Be lively and talkative; bring energy, enthusiasm and a conversational tone.",
            "Be warm, patient and accommodating; look for common ground before disagreeing.",
            "Be thorough and orderly: structure answers, check details and finish what you start.",
            "Bring curiosity and imagination; offer unusual angles and fresh connections.",
        ]
    )


def test_mixed_high_low_and_missing() -> None:
    text = personality_section({"openness": 0.9, "extraversion": 0.2, "honesty": 0.5})
    assert text == (
        H + "Be quiet and economical with words; answer what was asked and stop.\n"
        "Bring curiosity and imagination; offer unusual angles and fresh connections."
    )


@pytest.mark.parametrize(
    "traits",
    [None, {}, {"openness": 0.65, "honesty": 0.35}, {"verbosity": "high", "humorLevel": 0.99}],
)
def test_no_section_when_all_traits_within_bounds(traits: dict[str, object] | None) -> None:
    assert personality_section(traits) is None


def test_thresholds_are_strict() -> None:
    assert personality_section({"openness": 0.651}) == H + TRAIT_DIRECTIVES["openness"][0]
    assert personality_section({"openness": 0.349}) == H + TRAIT_DIRECTIVES["openness"][1]


def test_non_numeric_hexaco_value_counts_as_missing() -> None:
    assert personality_section({"openness": "high", "honesty": True}) is None
