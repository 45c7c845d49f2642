"""Metaprompt presets: the five sentiment presets, self-reflection, the merge, the loaders."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from agentos.core import GMIError, GMIErrorCode
from agentos.persona import (
    METAPROMPT_MOODS,
    METAPROMPT_PRESETS,
    PRESET_NAMES,
    SELF_TRAIT_ADJUSTMENT_ID,
    SENTIMENT_PRESET_IDS,
    TEMPLATE_VARIABLES,
    DirectoryPersonaLoader,
    InMemoryPersonaLoader,
    MetaPromptDefinition,
    PersonaDefinition,
    PersonaRegistry,
    UnknownPresetError,
    get_preset_metaprompt,
    is_preset_metaprompt,
    merge_metaprompt_presets,
    template_variables,
    with_metaprompt_presets,
)

PRESET_TABLE = [
    # id, event, temperature, strategy key (reference §1.6 presets table)
    ("gmi_frustration_recovery", "user_frustrated", 0.3, "recoveryStrategy"),
    ("gmi_confusion_clarification", "user_confused", 0.3, "clarificationStrategy"),
    ("gmi_satisfaction_reinforcement", "user_satisfied", 0.3, "engagementStrategy"),
    ("gmi_error_recovery", "error_threshold_exceeded", 0.3, "mitigationStrategy"),
    ("gmi_engagement_boost", "low_engagement", 0.5, "engagementStrategy"),
]

CUSTOM = {
    "id": "custom",
    "promptTemplate": "Say {{current_mood}}.",
    "trigger": {"type": "manual"},
}
CUSTOM_MP = MetaPromptDefinition.model_validate(CUSTOM)


def _ts_persona(pid: str = "p", **extra: Any) -> dict[str, Any]:
    """A persona as the TypeScript runtime writes it (camelCase keys)."""
    return {"id": pid, "name": pid.upper(), "version": "1.0.0", "baseSystemPrompt": "x", **extra}


def _tracking(presets: Sequence[str] | None = None, enabled: bool = True) -> dict[str, Any]:
    tracking: dict[str, Any] = {"enabled": enabled, "method": "lexicon_based"}
    if presets is not None:
        tracking["presets"] = list(presets)
    return tracking


def _ids(persona: PersonaDefinition) -> list[str]:
    return [mp.id for mp in persona.meta_prompts or []]


# --- black-box case 35 ---------------------------------------------------------------------


def test_case_35_one_preset_then_the_custom_metaprompt() -> None:
    persona = PersonaDefinition.model_validate(
        _ts_persona(
            sentimentTracking=_tracking(["frustration_recovery"]),
            metaPrompts=[CUSTOM],
        )
    )
    assert _ids(with_metaprompt_presets(persona)) == ["gmi_frustration_recovery", "custom"]


def test_case_35_all_gives_the_five_presets() -> None:
    persona = PersonaDefinition.model_validate(_ts_persona(sentimentTracking=_tracking(["all"])))
    assert _ids(with_metaprompt_presets(persona)) == list(SENTIMENT_PRESET_IDS)


def test_case_35_without_sentiment_tracking_unchanged() -> None:
    persona = PersonaDefinition.model_validate(_ts_persona(metaPrompts=[CUSTOM]))
    assert with_metaprompt_presets(persona) is persona
    assert _ids(persona) == ["custom"]


def test_case_35_persona_metaprompt_overrides_the_preset() -> None:
    own = {"id": "gmi_frustration_recovery", "promptTemplate": "mine", "temperature": 0.9}
    persona = PersonaDefinition.model_validate(
        _ts_persona(sentimentTracking=_tracking(["all"]), metaPrompts=[CUSTOM, own])
    )
    merged = with_metaprompt_presets(persona).meta_prompts or []
    assert [mp.id for mp in merged] == [*SENTIMENT_PRESET_IDS, "custom"]
    assert merged[0].prompt_template == "mine"
    assert merged[0].temperature == 0.9


# --- when the presets apply -----------------------------------------------------------------


def test_disabled_tracker_or_no_presets_brings_none() -> None:
    for tracking in (_tracking(["all"], enabled=False), _tracking(None), _tracking([])):
        persona = PersonaDefinition.model_validate(
            _ts_persona(sentimentTracking=tracking, metaPrompts=[CUSTOM])
        )
        assert with_metaprompt_presets(persona) is persona
        assert _ids(persona) == ["custom"]


def test_disabled_tracker_presets_are_not_checked() -> None:
    persona = PersonaDefinition.model_validate(
        _ts_persona(sentimentTracking=_tracking(["nonsense"], enabled=False))
    )
    assert with_metaprompt_presets(persona) is persona


def test_merge_copies_and_leaves_the_input_alone() -> None:
    persona = PersonaDefinition.model_validate(
        _ts_persona(sentimentTracking=_tracking(["error_recovery"]), metaPrompts=[CUSTOM])
    )
    merged = with_metaprompt_presets(persona)
    assert merged is not persona
    assert _ids(persona) == ["custom"]
    assert merged.meta_prompts is not None
    merged.meta_prompts[1].description = "changed"
    assert (persona.meta_prompts or [])[0].description is None


def test_presets_come_in_preset_order_whatever_the_list_order() -> None:
    merged = merge_metaprompt_presets(
        [MetaPromptDefinition(id="own", prompt_template="t")],
        ["engagement_boost", "gmi_frustration_recovery", "engagement_boost"],
    )
    assert [mp.id for mp in merged] == [
        "gmi_frustration_recovery",
        "gmi_engagement_boost",
        "own",
    ]


def test_merge_accepts_the_all_string_and_none() -> None:
    assert [mp.id for mp in merge_metaprompt_presets(None, "all")] == list(SENTIMENT_PRESET_IDS)
    assert [mp.id for mp in merge_metaprompt_presets(None, ["all", "error_recovery"])] == list(
        SENTIMENT_PRESET_IDS
    )
    assert merge_metaprompt_presets(None, None) == []
    assert [mp.id for mp in merge_metaprompt_presets([CUSTOM_MP], [])] == ["custom"]


def test_override_replaces_in_place_and_last_duplicate_wins() -> None:
    first = MetaPromptDefinition(id="gmi_error_recovery", prompt_template="first")
    last = MetaPromptDefinition(id="gmi_error_recovery", prompt_template="last")
    merged = merge_metaprompt_presets([first, CUSTOM_MP, last], ["all"])
    assert [mp.id for mp in merged] == [*SENTIMENT_PRESET_IDS, "custom"]
    assert merged[3].prompt_template == "last"


def test_a_preset_id_not_chosen_stays_with_the_persona_entries() -> None:
    own = MetaPromptDefinition(id="gmi_error_recovery", prompt_template="own")
    merged = merge_metaprompt_presets([own], ["frustration_recovery"])
    assert [mp.id for mp in merged] == ["gmi_frustration_recovery", "gmi_error_recovery"]
    assert merged[1].prompt_template == "own"


def test_merging_is_idempotent() -> None:
    own = {"id": "gmi_confusion_clarification", "promptTemplate": "mine"}
    persona = PersonaDefinition.model_validate(
        _ts_persona(
            sentimentTracking=_tracking(["confusion_clarification", "engagement_boost"]),
            metaPrompts=[CUSTOM, own],
        )
    )
    once = with_metaprompt_presets(persona)
    twice = with_metaprompt_presets(once)
    assert _ids(once) == ["gmi_confusion_clarification", "gmi_engagement_boost", "custom"]
    assert twice.meta_prompts == once.meta_prompts
    assert twice.to_json_dict() == once.to_json_dict()


# --- unknown presets ------------------------------------------------------------------------


def test_unknown_preset_raises_value_error_naming_it() -> None:
    with pytest.raises(ValueError, match="frustraton_recovery") as info:
        merge_metaprompt_presets(None, ["frustraton_recovery", "error_recovery"])
    assert isinstance(info.value, UnknownPresetError)
    assert info.value.names == ["frustraton_recovery"]
    for name in PRESET_NAMES:
        assert name in str(info.value)
    with pytest.raises(UnknownPresetError, match="bogus"):
        merge_metaprompt_presets(None, ["all", "bogus"])


def test_self_trait_adjustment_is_not_selectable_as_a_sentiment_preset() -> None:
    with pytest.raises(UnknownPresetError, match="self_trait_adjustment"):
        merge_metaprompt_presets(None, ["self_trait_adjustment"])


def test_enabled_tracker_with_unknown_preset_raises() -> None:
    persona = PersonaDefinition.model_validate(_ts_persona(sentimentTracking=_tracking(["nope"])))
    with pytest.raises(UnknownPresetError, match="'nope'"):
        with_metaprompt_presets(persona)


# --- the presets themselves -----------------------------------------------------------------


@pytest.mark.parametrize(("preset_id", "event", "temperature", "strategy"), PRESET_TABLE)
def test_each_preset_definition(
    preset_id: str, event: str, temperature: float, strategy: str
) -> None:
    preset = METAPROMPT_PRESETS[preset_id]
    assert preset.trigger is not None
    assert preset.trigger.type == "event_based"
    assert preset.trigger.event_name == event
    assert preset.temperature == temperature
    assert preset.max_output_tokens == 512
    # The persona's model runs a preset.
    assert preset.model_id is None
    assert preset.provider_id is None
    schema = preset.output_schema
    assert schema is not None
    assert schema["type"] == "object"
    assert schema["required"] == ["adjustmentRationale", strategy]
    props = schema["properties"]
    assert set(props) == {
        "adjustmentRationale",
        strategy,
        "updatedGmiMood",
        "updatedUserSkillLevel",
        "updatedTaskComplexity",
        "newMemoryImprints",
    }
    assert props["updatedGmiMood"]["enum"] == list(METAPROMPT_MOODS)
    assert props["updatedUserSkillLevel"]["enum"] == [
        "novice",
        "beginner",
        "intermediate",
        "advanced",
        "expert",
    ]
    assert props["updatedTaskComplexity"]["enum"] == ["simple", "moderate", "complex", "advanced"]
    assert props["newMemoryImprints"]["type"] == "array"
    assert props["newMemoryImprints"]["items"]["required"] == ["key", "value"]
    template = preset.prompt_template
    assert isinstance(template, str)
    assert "ONLY one JSON object" in template
    assert strategy in template
    assert 10 <= len(template.splitlines()) <= 20


def test_preset_names_and_ids_in_order() -> None:
    assert PRESET_NAMES == (
        "frustration_recovery",
        "confusion_clarification",
        "satisfaction_reinforcement",
        "error_recovery",
        "engagement_boost",
    )
    assert [row[0] for row in PRESET_TABLE] == list(SENTIMENT_PRESET_IDS)
    assert list(METAPROMPT_PRESETS) == [*SENTIMENT_PRESET_IDS, SELF_TRAIT_ADJUSTMENT_ID]


def test_moods_are_exactly_the_gmi_moods() -> None:
    # Imported here: the gmi layer sits above persona and this is the only test that needs it.
    from agentos.substrate.mood import GMIMood

    assert set(METAPROMPT_MOODS) == {mood.value for mood in GMIMood}
    assert "helpful" not in METAPROMPT_MOODS
    assert "patient" not in METAPROMPT_MOODS


def test_every_template_placeholder_is_an_executor_variable() -> None:
    for preset in METAPROMPT_PRESETS.values():
        template = preset.prompt_template
        assert isinstance(template, str)
        used = template_variables(template)
        assert used, preset.id
        assert set(used) <= TEMPLATE_VARIABLES, (preset.id, set(used) - TEMPLATE_VARIABLES)
        # No stray braces pairs that the executor would leave behind.
        stripped = template
        for name in used:
            stripped = stripped.replace("{{" + name + "}}", "")
        assert "{{" not in stripped
        assert "}}" not in stripped.replace("}]}", "")


def test_event_presets_read_their_signals() -> None:
    def uses(preset_id: str) -> set[str]:
        template = METAPROMPT_PRESETS[preset_id].prompt_template
        assert isinstance(template, str)
        return set(template_variables(template))

    assert "consecutive_frustration" in uses("gmi_frustration_recovery")
    assert "confusion_keywords" in uses("gmi_confusion_clarification")
    assert "consecutive_satisfaction" in uses("gmi_satisfaction_reinforcement")
    assert "recent_errors" in uses("gmi_error_recovery")
    assert "consecutive_neutral" in uses("gmi_engagement_boost")


def test_self_trait_adjustment() -> None:
    reflection = get_preset_metaprompt(SELF_TRAIT_ADJUSTMENT_ID)
    assert reflection.id == "gmi_self_trait_adjustment"
    assert reflection.trigger is not None
    assert reflection.trigger.type == "turn_interval"
    assert reflection.trigger.interval_turns == 5
    assert reflection.max_output_tokens == 512
    template = reflection.prompt_template
    assert isinstance(template, str)
    assert "{{evidence}}" in template
    assert "never change your personality traits" in template
    assert 10 <= len(template.splitlines()) <= 20
    schema = reflection.output_schema
    assert schema is not None
    assert schema["required"] == ["adjustmentRationale"]
    assert {"updatedGmiMood", "updatedUserSkillLevel", "updatedTaskComplexity"} <= set(
        schema["properties"]
    )
    # Not a sentiment preset: 'all' leaves it out.
    assert SELF_TRAIT_ADJUSTMENT_ID not in SENTIMENT_PRESET_IDS
    assert SELF_TRAIT_ADJUSTMENT_ID not in [mp.id for mp in merge_metaprompt_presets(None, "all")]


def test_a_persona_opts_in_to_self_reflection_by_listing_it() -> None:
    persona = PersonaDefinition(
        id="p",
        meta_prompts=[get_preset_metaprompt("self_trait_adjustment")],
        sentiment_tracking={"enabled": True, "presets": ["all"]},  # type: ignore[arg-type]
    )
    assert _ids(with_metaprompt_presets(persona)) == [
        *SENTIMENT_PRESET_IDS,
        SELF_TRAIT_ADJUSTMENT_ID,
    ]


def test_get_preset_metaprompt_by_id_or_name_returns_copies() -> None:
    by_name = get_preset_metaprompt("frustration_recovery")
    by_id = get_preset_metaprompt("gmi_frustration_recovery")
    assert by_name == by_id == METAPROMPT_PRESETS["gmi_frustration_recovery"]
    assert by_name is not METAPROMPT_PRESETS["gmi_frustration_recovery"]
    by_name.temperature = 1.0
    by_name.prompt_template = "changed"
    assert by_name.output_schema is not None
    by_name.output_schema["required"].append("extra")
    assert by_name.trigger is not None
    by_name.trigger.event_name = "other"
    fresh = get_preset_metaprompt("frustration_recovery")
    assert fresh.temperature == 0.3
    assert fresh.prompt_template != "changed"
    assert fresh.output_schema is not None
    assert fresh.output_schema["required"] == ["adjustmentRationale", "recoveryStrategy"]
    assert fresh.trigger is not None
    assert fresh.trigger.event_name == "user_frustrated"


def test_get_preset_metaprompt_unknown_names_the_valid_ids() -> None:
    with pytest.raises(KeyError, match="gmi_engagement_boost") as info:
        get_preset_metaprompt("happiness_boost")
    assert "happiness_boost" in str(info.value)


def test_is_preset_metaprompt() -> None:
    for preset_id in (*SENTIMENT_PRESET_IDS, SELF_TRAIT_ADJUSTMENT_ID):
        assert is_preset_metaprompt(preset_id)
    assert not is_preset_metaprompt("frustration_recovery")
    assert not is_preset_metaprompt("custom")


def test_merged_metaprompts_dump_as_camel_case() -> None:
    persona = PersonaDefinition.model_validate(
        _ts_persona(sentimentTracking=_tracking(["engagement_boost"]))
    )
    dumped = with_metaprompt_presets(persona).to_json_dict()["metaPrompts"][0]
    assert dumped["id"] == "gmi_engagement_boost"
    assert dumped["maxOutputTokens"] == 512
    assert dumped["trigger"] == {"type": "event_based", "eventName": "low_engagement"}
    assert "outputSchema" in dumped
    assert "promptTemplate" in dumped


# --- loaders ----------------------------------------------------------------------------------


def _write(path: Path, data: object) -> None:
    path.write_text(json.dumps(data), encoding="utf-8")


async def test_directory_loader_merges_presets(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _write(
        tmp_path / "tracked.json",
        _ts_persona(
            "tracked",
            sentimentTracking={
                "enabled": True,
                "method": "lexicon_based",
                "historyWindow": 10,
                "frustrationThreshold": -0.3,
                "presets": ["frustration_recovery"],
            },
            metaPrompts=[CUSTOM],
        ),
    )
    _write(
        tmp_path / "everything.json",
        _ts_persona("everything", sentimentTracking={"enabled": True, "presets": ["all"]}),
    )
    _write(tmp_path / "plain.json", _ts_persona("plain", metaPrompts=[CUSTOM]))
    _write(
        tmp_path / "typo.json",
        _ts_persona("typo", sentimentTracking={"enabled": True, "presets": ["frustation"]}),
    )
    with caplog.at_level(logging.WARNING):
        personas = await DirectoryPersonaLoader(tmp_path).load_personas()
    by_id = {p.id: p for p in personas}
    assert set(by_id) == {"tracked", "everything", "plain"}
    assert _ids(by_id["tracked"]) == ["gmi_frustration_recovery", "custom"]
    assert _ids(by_id["everything"]) == list(SENTIMENT_PRESET_IDS)
    assert _ids(by_id["plain"]) == ["custom"]
    # The bad file is skipped with a warning naming the file, the persona, the field and the name.
    assert "typo.json" in caplog.text
    assert "'typo'" in caplog.text
    assert "sentimentTracking.presets" in caplog.text
    assert "frustation" in caplog.text


async def test_inline_loader_merges_presets() -> None:
    loader = InMemoryPersonaLoader(
        [
            _ts_persona(
                "inline", sentimentTracking=_tracking(["error_recovery"]), metaPrompts=[CUSTOM]
            ),
            PersonaDefinition(id="plain"),
        ]
    )
    first = await loader.load_personas()
    assert [_ids(p) for p in first] == [["gmi_error_recovery", "custom"], []]
    second = await loader.load_personas()
    assert _ids(second[0]) == ["gmi_error_recovery", "custom"]


def test_inline_loader_refuses_an_unknown_preset() -> None:
    with pytest.raises(GMIError) as info:
        InMemoryPersonaLoader([_ts_persona("bad", sentimentTracking=_tracking(["sadness"]))])
    assert info.value.code is GMIErrorCode.PERSONA_LOAD_ERROR
    assert "'bad'" in info.value.message
    assert "sentimentTracking.presets" in info.value.message
    assert "sadness" in info.value.message
    assert info.value.details["persona_id"] == "bad"
    assert info.value.details["field"] == "sentimentTracking.presets"
    assert info.value.details["unknown"] == ["sadness"]
    assert "frustration_recovery" in info.value.details["valid"]


class _CustomLoader:
    def __init__(self, *personas: PersonaDefinition) -> None:
        self.personas = list(personas)

    async def load_personas(self) -> Sequence[PersonaDefinition]:
        return self.personas


async def test_registry_merges_what_a_custom_loader_gives() -> None:
    persona = PersonaDefinition.model_validate(
        _ts_persona("c", sentimentTracking=_tracking(["all"]), metaPrompts=[CUSTOM])
    )
    registry = PersonaRegistry(_CustomLoader(persona))
    await registry.load()
    assert _ids(registry.get("c")) == [*SENTIMENT_PRESET_IDS, "custom"]
    # The loader's own object is left as it was.
    assert _ids(persona) == ["custom"]


async def test_registry_refuses_an_unknown_preset_from_a_custom_loader() -> None:
    persona = PersonaDefinition.model_validate(
        _ts_persona("c", sentimentTracking=_tracking(["joy"]))
    )
    with pytest.raises(GMIError) as info:
        await PersonaRegistry(_CustomLoader(persona)).load()
    assert info.value.code is GMIErrorCode.PERSONA_LOAD_ERROR
    assert info.value.details["persona_id"] == "c"


async def test_registry_over_a_directory_merges_once(tmp_path: Path) -> None:
    _write(
        tmp_path / "p.json",
        _ts_persona("p", sentimentTracking=_tracking(["all"]), metaPrompts=[CUSTOM]),
    )
    registry = PersonaRegistry(DirectoryPersonaLoader(tmp_path))
    await registry.load()
    assert _ids(registry.get("p")) == [*SENTIMENT_PRESET_IDS, "custom"]
