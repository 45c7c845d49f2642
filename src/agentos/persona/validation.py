"""Persona validation (reference §1.7, ``PersonaValidation``).

`validate_persona` returns a `PersonaValidationReport` of issues, each with a severity
(``error``, ``warning`` or ``suggestion``), a code, a message and the field it concerns. The
severities are the reference's (``PersonaValidation.ts``): ``invalid_bcp47_language`` is an
error, and a persona without a ``cost_saving_strategy`` gets a ``missing_cost_strategy``
suggestion (suggestions never make a persona invalid or degraded).
`validate_personas` adds ``activation_keyword_conflict`` warnings across a set. The report's
records are in `agentos.persona.validation_report`; strict mode, which decides whether a report
blocks the persona, is `agentos.persona.strict_mode`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from agentos.core.tokens import estimate_tokens
from agentos.persona.definition import PersonaDefinition
from agentos.persona.validation_report import (
    PersonaIssueCode,
    PersonaValidationIssue,
    PersonaValidationReport,
    Severity,
)

__all__ = [
    "AUDIO_OUTPUT_MODALITIES",
    "DEFAULT_MAX_SYSTEM_PROMPT_LENGTH",
    "PersonaValidationOptions",
    "validate_persona",
    "validate_personas",
]

DEFAULT_MAX_SYSTEM_PROMPT_LENGTH = 2000
"""The base system prompt's length (characters) past which validation warns."""
AUDIO_OUTPUT_MODALITIES = frozenset({"audio", "audio_tts"})
"""Output modalities that satisfy a ``voice_config`` (``audio_tts`` is the reference's name)."""
_SEMVER = re.compile(r"^\d+\.\d+\.\d+(-[0-9A-Za-z-.]+)?$")
_BCP47 = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$")


@dataclass(frozen=True)
class PersonaValidationOptions:
    """What validation checks against.

    ``known_tool_ids`` ``None`` skips the ``unknown_tool_id`` check; ``max_system_prompt_tokens``
    ``None`` skips the token check.
    """

    reserved_persona_ids: Collection[str] = ()
    max_system_prompt_length: int = DEFAULT_MAX_SYSTEM_PROMPT_LENGTH
    max_system_prompt_tokens: int | None = None
    known_tool_ids: Collection[str] | None = None
    token_estimator: Callable[[str], int] = estimate_tokens


def _duplicates(values: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    dupes: list[str] = []
    for value in values:
        if value in seen and value not in dupes:
            dupes.append(value)
        seen.add(value)
    return dupes


def _check_required(persona: PersonaDefinition, add: _Add) -> None:
    prompt = persona.base_system_prompt
    missing_prompt = (
        not prompt
        or (isinstance(prompt, list) and not any(part.content.strip() for part in prompt))
        or (not isinstance(prompt, str | list) and not prompt.template.strip())
        or (isinstance(prompt, str) and not prompt.strip())
    )
    values = {
        "id": not persona.id.strip(),
        "name": not persona.name.strip(),
        "description": not persona.description.strip(),
        "version": not persona.version.strip(),
        "base_system_prompt": missing_prompt,
    }
    for name, missing in values.items():
        if missing:
            add("error", PersonaIssueCode.MISSING_REQUIRED_FIELD, f"'{name}' is required", name)


def _check_prompt(persona: PersonaDefinition, options: PersonaValidationOptions, add: _Add) -> None:
    text = persona.system_prompt_text()
    if len(text) > options.max_system_prompt_length:
        add(
            "warning",
            PersonaIssueCode.SYSTEM_PROMPT_TOO_LONG,
            f"base system prompt has {len(text)} characters, more than "
            f"{options.max_system_prompt_length}",
            "base_system_prompt",
        )
    if options.max_system_prompt_tokens is None:
        return
    try:
        tokens = options.token_estimator(text)
    except Exception as exc:
        add(
            "warning",
            PersonaIssueCode.TOKEN_ESTIMATION_FAILED,
            f"could not estimate the base system prompt's tokens: {exc}",
            "base_system_prompt",
        )
        return
    if tokens > options.max_system_prompt_tokens:
        add(
            "warning",
            PersonaIssueCode.SYSTEM_PROMPT_TOO_MANY_TOKENS,
            f"base system prompt has about {tokens} tokens, more than "
            f"{options.max_system_prompt_tokens}",
            "base_system_prompt",
        )


def _check_tools(persona: PersonaDefinition, options: PersonaValidationOptions, add: _Add) -> None:
    tool_ids = persona.tool_ids or []
    for dupe in _duplicates(tool_ids):
        add(
            "error",
            PersonaIssueCode.DUPLICATE_TOOL_ID,
            f"tool id '{dupe}' is listed twice",
            "tool_ids",
        )
    if options.known_tool_ids is not None:
        known = set(options.known_tool_ids)
        for tool_id in dict.fromkeys(tool_ids):
            if tool_id not in known:
                add(
                    "error",
                    PersonaIssueCode.UNKNOWN_TOOL_ID,
                    f"tool id '{tool_id}' is not registered",
                    "tool_ids",
                )


def _check_models(persona: PersonaDefinition, add: _Add) -> None:
    preferences = persona.model_target_preferences or []
    for index, preference in enumerate(preferences):
        where = f"model_target_preferences[{index}]"
        for dupe in _duplicates(preference.allowed_model_ids or []):
            add(
                "error",
                PersonaIssueCode.DUPLICATE_ALLOWED_MODEL_IDS,
                f"model id '{dupe}' is listed twice in allowed_model_ids",
                f"{where}.allowed_model_ids",
            )
        if preference.model_id and (
            preference.model_family or preference.min_quality_tier or preference.allowed_model_ids
        ):
            add(
                "warning",
                PersonaIssueCode.OVER_SPECIFIED_MODEL_PREFERENCE,
                "a preference that names model_id ignores model_family, min_quality_tier and "
                "allowed_model_ids",
                where,
            )
    if not persona.cost_saving_strategy:
        add(
            "suggestion",
            PersonaIssueCode.MISSING_COST_STRATEGY,
            "no cost_saving_strategy: set one to make routing preferences clear "
            "(e.g. balance_quality_cost)",
            "cost_saving_strategy",
        )


def _check_rag(persona: PersonaDefinition, add: _Add) -> None:
    rag = persona.memory_config.rag_config if persona.memory_config else None
    if rag is None:
        return
    for dupe in _duplicates([source.id for source in rag.data_sources or []]):
        add(
            "error",
            PersonaIssueCode.DUPLICATE_RAG_DATASOURCE_IDS,
            f"RAG data source id '{dupe}' is listed twice",
            "memory_config.rag_config.data_sources",
        )
    processing = rag.ingestion_processing
    summarization = processing.summarization if processing else None
    if summarization is not None and summarization.enabled and not summarization.method:
        add(
            "warning",
            PersonaIssueCode.RAG_SUMMARIZATION_METHOD_MISSING,
            "ingestion summarization is enabled without a method",
            "memory_config.rag_config.ingestion_processing.summarization.method",
        )


_Add = Callable[[Severity, PersonaIssueCode, str, str | None], None]


def validate_persona(
    persona: PersonaDefinition, options: PersonaValidationOptions | None = None
) -> PersonaValidationReport:
    """Validate one persona (reference §1.7 ``validatePersona``)."""
    options = options or PersonaValidationOptions()
    report = PersonaValidationReport(persona_id=persona.id)

    def add(severity: Severity, code: PersonaIssueCode, message: str, where: str | None) -> None:
        report.issues.append(PersonaValidationIssue(severity, code, message, where))

    _check_required(persona, add)
    if persona.id in set(options.reserved_persona_ids):
        add("error", PersonaIssueCode.RESERVED_PERSONA_ID, f"id '{persona.id}' is reserved", "id")
    if persona.version.strip() and not _SEMVER.match(persona.version):
        add(
            "error",
            PersonaIssueCode.INVALID_SEMVER,
            f"version '{persona.version}' is not semantic (MAJOR.MINOR.PATCH)",
            "version",
        )
    _check_prompt(persona, options, add)
    _check_tools(persona, options, add)
    outputs = persona.allowed_output_modalities or []
    if persona.voice_config and not any(m in AUDIO_OUTPUT_MODALITIES for m in outputs):
        add(
            "warning",
            PersonaIssueCode.VOICE_CONFIG_WITHOUT_AUDIO_OUTPUT,
            "voice_config is set but allowed_output_modalities includes neither 'audio' nor "
            "'audio_tts'",
            "voice_config",
        )
    if persona.default_language is not None and not _BCP47.match(persona.default_language):
        add(
            "error",
            PersonaIssueCode.INVALID_BCP47_LANGUAGE,
            f"default_language '{persona.default_language}' is not a BCP 47 tag",
            "default_language",
        )
    _check_models(persona, add)
    _check_rag(persona, add)
    return report


def validate_personas(
    personas: Sequence[PersonaDefinition], options: PersonaValidationOptions | None = None
) -> dict[str, PersonaValidationReport]:
    """Validate each persona, plus ``activation_keyword_conflict`` warnings across the set.

    A keyword (compared case-insensitively) that several personas claim gives each of them a
    warning naming the others.
    """
    reports = {persona.id: validate_persona(persona, options) for persona in personas}
    owners: dict[str, list[str]] = {}
    for persona in personas:
        for keyword in dict.fromkeys(k.strip().lower() for k in persona.activation_keywords or []):
            if keyword:
                owners.setdefault(keyword, []).append(persona.id)
    for keyword, ids in owners.items():
        if len(ids) < 2:
            continue
        for persona_id in ids:
            others = ", ".join(other for other in ids if other != persona_id)
            reports[persona_id].issues.append(
                PersonaValidationIssue(
                    "warning",
                    PersonaIssueCode.ACTIVATION_KEYWORD_CONFLICT,
                    f"activation keyword '{keyword}' is also claimed by {others}",
                    "activation_keywords",
                )
            )
    return reports
