"""Persona validation: every issue code, severities, the report, strict mode."""

from __future__ import annotations

from typing import Any

import pytest

from agentos.persona import (
    PersonaDefinition,
    PersonaIssueCode,
    PersonaStrictConfig,
    PersonaValidationOptions,
    classify_persona_strict,
    validate_persona,
    validate_personas,
)

C = PersonaIssueCode


def _persona(**fields: Any) -> PersonaDefinition:
    base: dict[str, Any] = {
        "id": "p",
        "name": "P",
        "description": "d",
        "version": "1.0.0",
        "baseSystemPrompt": "hi",
        "costSavingStrategy": "balance_quality_cost",
    }
    base.update(fields)
    return PersonaDefinition.model_validate(base)


def test_valid_persona_has_no_issues() -> None:
    report = validate_persona(_persona())
    assert report.valid
    assert report.issues == []


def test_missing_required_fields_empty_counts() -> None:
    report = validate_persona(
        PersonaDefinition.model_validate({"id": "x", "name": " ", "baseSystemPrompt": []})
    )
    missing = [i.field for i in report.issues if i.code == C.MISSING_REQUIRED_FIELD]
    assert missing == ["name", "description", "version", "base_system_prompt"]
    assert not report.valid
    assert all(i.severity == "error" for i in report.errors)


@pytest.mark.parametrize(
    ("fields", "options", "code", "severity"),
    [
        (
            {"id": "system_admin"},
            {"reserved_persona_ids": {"system_admin"}},
            C.RESERVED_PERSONA_ID,
            "error",
        ),
        ({"version": "1.0"}, {}, C.INVALID_SEMVER, "error"),
        ({"baseSystemPrompt": "x" * 2001}, {}, C.SYSTEM_PROMPT_TOO_LONG, "warning"),
        (
            {"baseSystemPrompt": "x" * 41},
            {"max_system_prompt_tokens": 10},
            C.SYSTEM_PROMPT_TOO_MANY_TOKENS,
            "warning",
        ),
        ({"toolIds": ["a", "a"]}, {}, C.DUPLICATE_TOOL_ID, "error"),
        ({"toolIds": ["a", "zz"]}, {"known_tool_ids": {"a"}}, C.UNKNOWN_TOOL_ID, "error"),
        ({"voiceConfig": {"voice": "x"}}, {}, C.VOICE_CONFIG_WITHOUT_AUDIO_OUTPUT, "warning"),
        ({"defaultLanguage": "english_US"}, {}, C.INVALID_BCP47_LANGUAGE, "error"),
        ({"costSavingStrategy": None}, {}, C.MISSING_COST_STRATEGY, "suggestion"),
        (
            {
                "modelTargetPreferences": [{"allowedModelIds": ["m", "m"]}],
                "costSavingStrategy": "x",
            },
            {},
            C.DUPLICATE_ALLOWED_MODEL_IDS,
            "error",
        ),
        (
            {
                "modelTargetPreferences": [{"modelId": "m", "modelFamily": "f"}],
                "costSavingStrategy": "x",
            },
            {},
            C.OVER_SPECIFIED_MODEL_PREFERENCE,
            "warning",
        ),
        (
            {"memoryConfig": {"ragConfig": {"dataSources": [{"id": "a"}, {"id": "a"}]}}},
            {},
            C.DUPLICATE_RAG_DATASOURCE_IDS,
            "error",
        ),
        (
            {
                "memoryConfig": {
                    "ragConfig": {"ingestionProcessing": {"summarization": {"enabled": True}}}
                }
            },
            {},
            C.RAG_SUMMARIZATION_METHOD_MISSING,
            "warning",
        ),
    ],
)
def test_each_issue_code(
    fields: dict[str, Any], options: dict[str, Any], code: PersonaIssueCode, severity: str
) -> None:
    report = validate_persona(_persona(**fields), PersonaValidationOptions(**options))
    assert report.codes == [code]
    assert report.issues[0].severity == severity
    assert str(code) in report.summary()


def test_token_estimation_failed() -> None:
    def broken(text: str) -> int:
        raise RuntimeError("no tokenizer")

    options = PersonaValidationOptions(max_system_prompt_tokens=10, token_estimator=broken)
    report = validate_persona(_persona(), options)
    assert report.codes == [C.TOKEN_ESTIMATION_FAILED]


def test_prompt_length_limit_is_configurable_and_voice_with_audio_passes() -> None:
    options = PersonaValidationOptions(max_system_prompt_length=4000)
    assert validate_persona(_persona(baseSystemPrompt="x" * 3000), options).issues == []
    persona = _persona(voiceConfig={"v": 1}, allowedOutputModalities=["text", "audio"])
    assert validate_persona(persona).issues == []
    # The reference's modality name counts too.
    persona = _persona(voiceConfig={"v": 1}, allowedOutputModalities=["text", "audio_tts"])
    assert validate_persona(persona).issues == []


def test_a_missing_cost_strategy_is_only_a_suggestion() -> None:
    report = validate_persona(_persona(costSavingStrategy=None))
    assert report.codes == [C.MISSING_COST_STRATEGY]
    assert report.valid
    assert report.suggestions == report.issues
    assert classify_persona_strict(report).status == "valid"


def test_activation_keyword_conflict_across_personas() -> None:
    reports = validate_personas(
        [
            _persona(id="a", activationKeywords=["Research"]),
            _persona(id="b", activationKeywords=["research"]),
            _persona(id="c", activationKeywords=["other"]),
        ]
    )
    assert reports["a"].codes == [C.ACTIVATION_KEYWORD_CONFLICT]
    assert "b" in reports["a"].issues[0].message
    assert reports["b"].codes == [C.ACTIVATION_KEYWORD_CONFLICT]
    assert reports["c"].codes == []


def test_strict_mode_errors_block_warnings_degrade() -> None:
    errors = validate_persona(_persona(version="x"))
    warnings = validate_persona(_persona(voiceConfig={"voice": "x"}))
    clean = validate_persona(_persona())
    assert classify_persona_strict(errors).status == "invalid"
    assert classify_persona_strict(errors).blocking[0].code == C.INVALID_SEMVER
    assert classify_persona_strict(warnings).status == "degraded"
    assert classify_persona_strict(clean).status == "valid"


def test_strict_mode_promotes_chosen_warnings_and_block_on_codes() -> None:
    report = validate_persona(_persona(voiceConfig={"voice": "x"}))
    promoted = PersonaStrictConfig(treat_warnings_as_errors={"voice_config_without_audio_output"})
    assert classify_persona_strict(report, promoted).blocked
    errors = validate_persona(_persona(version="x", defaultLanguage="??"))
    only_lang = PersonaStrictConfig(block_on_codes={C.INVALID_BCP47_LANGUAGE})
    result = classify_persona_strict(errors, only_lang)
    assert result.blocked
    assert [i.code for i in result.blocking] == [C.INVALID_BCP47_LANGUAGE]
    assert not classify_persona_strict(errors, PersonaStrictConfig(block_on_codes=set())).blocked


def test_strict_mode_off_shadow_and_allowlist_pass() -> None:
    report = validate_persona(_persona(version="x"))
    shadow = classify_persona_strict(report, PersonaStrictConfig(mode="shadow"))
    assert shadow.status == "valid"
    assert [i.code for i in shadow.would_block] == [C.INVALID_SEMVER]
    assert classify_persona_strict(report, PersonaStrictConfig(mode="off")).status == "valid"
    allow = PersonaStrictConfig(allowlist={"p"})
    assert classify_persona_strict(report, allow).status == "valid"
