"""Emergent capabilities: specialists a manager agent creates while it works.

`SpecialistForge` checks a ``spawn_specialist`` request (cap, roles, instructions, an optional
judge); `spawn_specialist_tool()` is the tool a hierarchical agency's manager calls.
"""

from agentos.emergent.specialists import (
    DEFAULT_MAX_SPECIALISTS,
    MAX_INSTRUCTIONS_CHARS,
    RESERVED_ROLES,
    SpecialistForge,
    SpecialistJudge,
    SpecialistRefused,
    SpecialistSpec,
    delegate_tool_name,
    spawn_specialist_tool,
)

__all__ = [
    "DEFAULT_MAX_SPECIALISTS",
    "MAX_INSTRUCTIONS_CHARS",
    "RESERVED_ROLES",
    "SpecialistForge",
    "SpecialistJudge",
    "SpecialistRefused",
    "SpecialistSpec",
    "delegate_tool_name",
    "spawn_specialist_tool",
]
