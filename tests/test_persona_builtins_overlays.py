"""The five built-in personas (shipped as package data) and per-session overlays."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from agentos.core import GMIError, GMIErrorCode
from agentos.persona import (
    BUILT_IN_PERSONAS,
    DEFAULT_PERSONA_ID,
    OverlayContext,
    PersonaDefinition,
    PersonaEvolutionRule,
    PersonaIssueCode,
    PersonaOverlayManager,
    PersonaValidationOptions,
    get_built_in_persona,
    validate_persona,
)
from agentos.persona.builtins import BUILT_IN_PERSONA_FILES

IDS = [
    "voice_assistant_persona",
    "default_free_assistant",
    "atlas-systems-architect",
    "nerf_generalist",
    "v_researcher",
]


def test_five_built_ins_in_order_and_default() -> None:
    assert [p.id for p in BUILT_IN_PERSONAS] == IDS
    assert DEFAULT_PERSONA_ID == "v_researcher"


@pytest.mark.parametrize("persona", BUILT_IN_PERSONAS, ids=lambda p: p.id)
def test_each_built_in_validates_with_manager_options(persona: PersonaDefinition) -> None:
    options = PersonaValidationOptions(
        reserved_persona_ids={"system_admin", "internal_default"},
        max_system_prompt_length=4000,
        max_system_prompt_tokens=2000,
    )
    report = validate_persona(persona, options)
    # No error, no warning; the only advice is the reference's cost-strategy suggestion.
    assert report.errors == [], report.summary()
    assert report.warnings == [], report.summary()
    assert set(report.codes) <= {PersonaIssueCode.MISSING_COST_STRATEGY}, report.summary()


def test_data_files_ship_in_the_package() -> None:
    data = resources.files("agentos.persona").joinpath("data")
    for name in BUILT_IN_PERSONA_FILES:
        raw = json.loads(data.joinpath(name).read_text("utf-8"))
        assert "baseSystemPrompt" in raw  # written in the TypeScript runtime's spelling
    assert sorted(BUILT_IN_PERSONA_FILES) == sorted(
        entry.name for entry in data.iterdir() if entry.name.endswith(".json")
    )


def test_get_built_in_persona_returns_a_copy_and_unknown_is_not_found() -> None:
    persona = get_built_in_persona("nerf_generalist")
    persona.name = "changed"
    assert get_built_in_persona("nerf_generalist").name == "Nerf"
    with pytest.raises(GMIError) as info:
        get_built_in_persona("nope")
    assert info.value.code is GMIErrorCode.PERSONA_NOT_FOUND


def _persona() -> PersonaDefinition:
    return PersonaDefinition(
        id="seat",
        name="Seat",
        personality_traits={"openness": 0.5, "style": "terse"},
        custom_fields={"team": "a"},
    )


def test_always_and_first_activation_rules_per_session() -> None:
    manager = PersonaOverlayManager()
    rules = [
        PersonaEvolutionRule.model_validate(
            {"id": "boot", "trigger": "first_activation", "patch": {"mood": "curious"}}
        ),
        PersonaEvolutionRule.model_validate(
            {
                "id": "keep",
                "trigger": "always",
                "patch": {"personaTraits": {"openness": 0.9}, "metadata": {"seat": "lead"}},
            }
        ),
    ]
    first = manager.apply_for_session("s1", _persona(), rules, OverlayContext(role_id="lead"))
    assert first.applied_rules == ["boot", "keep"]
    patched = first.patched_definition
    assert patched.mood_adaptation is not None
    assert patched.mood_adaptation.enabled
    assert patched.mood_adaptation.default_mood == "curious"
    assert patched.personality_traits == {"openness": 0.9, "style": "terse"}
    assert patched.custom_fields == {"team": "a", "seat": "lead"}
    assert first.metadata["previouslyActivated"] is True

    # a second evaluation: first_activation no longer fires, its mood stays, the rule list unions
    rules[1].patch.mood = None
    again = manager.apply_for_session(
        "s1", _persona(), [rules[0]], OverlayContext(metadata={"lastEvent": "x"})
    )
    assert again.applied_rules == ["boot", "keep"]
    assert again.metadata["lastContextMetadata"] == {"lastEvent": "x"}

    # another session is untouched; the base persona is untouched
    assert manager.get("s2") is None
    assert manager.resolve_persona("s2", _persona()).personality_traits == {
        "openness": 0.5,
        "style": "terse",
    }
    resolved = manager.resolve_persona("s1", _persona())
    assert resolved.hexaco_traits == {"openness": 0.9}
    manager.clear("s1")
    assert manager.get("s1") is None


def test_first_activation_does_not_refire() -> None:
    manager = PersonaOverlayManager()
    rule = PersonaEvolutionRule.model_validate(
        {"id": "boot", "trigger": "first_activation", "patch": {"personaTraits": {"honesty": 0.8}}}
    )
    manager.apply_for_session("s", _persona(), [rule], OverlayContext())
    persona = _persona()
    persona.personality_traits = {"honesty": 0.1}
    # a rule that would re-set honesty does not fire on the second activation
    second = manager.apply_for_session("s", persona, [rule], OverlayContext())
    assert second.patched_definition.hexaco_traits == {"honesty": 0.8, "openness": 0.5}


@pytest.mark.parametrize(
    ("trigger", "context", "fires"),
    [
        ("task_completed", {"metadata": {"lastEvent": "task_completed"}}, True),
        ("task_completed", {}, False),
        ("error", {"metadata": {"lastEvent": "error"}}, True),
        ("reviewing", {"metadata": {"state": "reviewing"}}, True),
        ("critic", {"roleId": "critic"}, True),
        ("critic", {"roleId": "writer"}, False),
        (
            {"metadata.stage": 2, "signals.confidence": "low"},
            {"metadata": {"stage": 2}, "reasoningSignals": {"confidence": "low"}},
            True,
        ),
        ({"metadata.stage": 3}, {"metadata": {"stage": 2}}, False),
    ],
)
def test_other_triggers(trigger: object, context: dict[str, object], fires: bool) -> None:
    rule = PersonaEvolutionRule.model_validate({"id": "r", "trigger": trigger, "patch": {}})
    overlay = PersonaOverlayManager().apply_rules(
        _persona(), [rule], OverlayContext.model_validate(context)
    )
    assert (overlay.applied_rules == ["r"]) is fires


def test_patch_with_out_of_range_trait_is_refused() -> None:
    rule = PersonaEvolutionRule.model_validate(
        {"id": "bad", "trigger": "always", "patch": {"personaTraits": {"openness": 2}}}
    )
    with pytest.raises(ValueError, match="openness"):
        PersonaOverlayManager().apply_rules(_persona(), [rule], OverlayContext())
