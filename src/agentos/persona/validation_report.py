"""A persona validation's findings (reference §1.7, ``PersonaValidation``).

`PersonaValidationReport` holds one persona's `PersonaValidationIssue`s, each with a severity
(``error``, ``warning`` or ``suggestion``), a `PersonaIssueCode` (the reference's names), a message
and the field it concerns. `agentos.persona.validation` finds them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

__all__ = ["PersonaIssueCode", "PersonaValidationIssue", "PersonaValidationReport", "Severity"]

Severity = Literal["error", "warning", "suggestion"]
"""How much an issue matters: errors make a persona invalid, suggestions never count."""


class PersonaIssueCode(StrEnum):
    """Every issue code validation reports (the reference's names)."""

    MISSING_REQUIRED_FIELD = "missing_required_field"
    RESERVED_PERSONA_ID = "reserved_persona_id"
    INVALID_SEMVER = "invalid_semver"
    SYSTEM_PROMPT_TOO_LONG = "system_prompt_too_long"
    SYSTEM_PROMPT_TOO_MANY_TOKENS = "system_prompt_too_many_tokens"
    TOKEN_ESTIMATION_FAILED = "token_estimation_failed"
    DUPLICATE_TOOL_ID = "duplicate_tool_id"
    UNKNOWN_TOOL_ID = "unknown_tool_id"
    VOICE_CONFIG_WITHOUT_AUDIO_OUTPUT = "voice_config_without_audio_output"
    INVALID_BCP47_LANGUAGE = "invalid_bcp47_language"
    MISSING_COST_STRATEGY = "missing_cost_strategy"
    DUPLICATE_ALLOWED_MODEL_IDS = "duplicate_allowed_model_ids"
    OVER_SPECIFIED_MODEL_PREFERENCE = "over_specified_model_preference"
    DUPLICATE_RAG_DATASOURCE_IDS = "duplicate_rag_datasource_ids"
    RAG_SUMMARIZATION_METHOD_MISSING = "rag_summarization_method_missing"
    ACTIVATION_KEYWORD_CONFLICT = "activation_keyword_conflict"


@dataclass(frozen=True)
class PersonaValidationIssue:
    """One finding about a persona."""

    severity: Severity
    code: PersonaIssueCode
    message: str
    field: str | None = None


@dataclass
class PersonaValidationReport:
    """The issues found for one persona; ``valid`` when none is an error."""

    persona_id: str
    issues: list[PersonaValidationIssue] = field(default_factory=list)

    @property
    def errors(self) -> list[PersonaValidationIssue]:
        """The issues of severity ``error``."""
        return [issue for issue in self.issues if issue.severity == "error"]

    @property
    def warnings(self) -> list[PersonaValidationIssue]:
        """The issues of severity ``warning``."""
        return [issue for issue in self.issues if issue.severity == "warning"]

    @property
    def suggestions(self) -> list[PersonaValidationIssue]:
        """The issues of severity ``suggestion``."""
        return [issue for issue in self.issues if issue.severity == "suggestion"]

    @property
    def valid(self) -> bool:
        """True when no issue is an error."""
        return not self.errors

    @property
    def codes(self) -> list[PersonaIssueCode]:
        """The codes of all issues, in the order they were found."""
        return [issue.code for issue in self.issues]

    def summary(self) -> str:
        """One line per issue: ``severity code (field): message``."""
        lines = [f"persona '{self.persona_id}': {len(self.issues)} issue(s)"]
        for issue in self.issues:
            where = f" ({issue.field})" if issue.field else ""
            lines.append(f"  {issue.severity} {issue.code}{where}: {issue.message}")
        return "\n".join(lines)
