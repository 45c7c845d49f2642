"""Strict mode: whether a persona's validation report blocks it (``classifyPersonaStrict``).

`classify_persona_strict` decides, under a `PersonaStrictConfig`, whether a report blocks the
persona (``invalid``), lets it run with warnings (``degraded``) or passes it (``valid``).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal

from agentos.persona.validation_report import PersonaValidationIssue, PersonaValidationReport

__all__ = ["PersonaStrictConfig", "PersonaStrictResult", "classify_persona_strict"]


@dataclass(frozen=True)
class PersonaStrictConfig:
    """Strict mode: which issues block a persona.

    ``mode``: ``off`` and ``shadow`` never block (shadow reports what would block);
    ``enforce`` blocks. Personas in ``allowlist`` are never blocked. ``block_on_codes``, when
    set, is the exact set of codes that block (whatever their severity); otherwise every error
    blocks, and so do warnings whose codes are in ``treat_warnings_as_errors``.
    """

    mode: Literal["off", "shadow", "enforce"] = "enforce"
    allowlist: Collection[str] = ()
    block_on_codes: Collection[str] | None = None
    treat_warnings_as_errors: Collection[str] = ()


@dataclass(frozen=True)
class PersonaStrictResult:
    """The strict-mode verdict: ``valid``, ``degraded`` (warnings only) or ``invalid``."""

    status: Literal["valid", "degraded", "invalid"]
    blocking: tuple[PersonaValidationIssue, ...] = ()
    would_block: tuple[PersonaValidationIssue, ...] = ()

    @property
    def blocked(self) -> bool:
        """True when the persona must not be used."""
        return self.status == "invalid"


def classify_persona_strict(
    report: PersonaValidationReport, config: PersonaStrictConfig | None = None
) -> PersonaStrictResult:
    """Classify a validation report under strict mode (reference ``classifyPersonaStrict``)."""
    config = config or PersonaStrictConfig()
    if config.block_on_codes is not None:
        codes = {str(code) for code in config.block_on_codes}
        blocking = tuple(issue for issue in report.issues if str(issue.code) in codes)
    else:
        promoted = {str(code) for code in config.treat_warnings_as_errors}
        blocking = tuple(
            issue
            for issue in report.issues
            if issue.severity == "error"
            or (issue.severity == "warning" and str(issue.code) in promoted)
        )
    if config.mode != "enforce" or report.persona_id in set(config.allowlist):
        return PersonaStrictResult("valid", would_block=blocking)
    if blocking:
        return PersonaStrictResult("invalid", blocking=blocking, would_block=blocking)
    return PersonaStrictResult("degraded" if report.warnings else "valid")
