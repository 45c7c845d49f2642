"""`ToolExecutionContext`: who a tool call runs for, handed to the tools that ask for it.

The reference's ``ToolExecutionContext {gmiId, personaId, userContext, correlationId?,
sessionData?}`` (reference §1.24), in snake_case, plus the user and session ids the runtime knows.
A tool's handler receives it when one of its parameters is annotated with
`ToolExecutionContext` (or ``ToolExecutionContext | None``); that parameter is not part of the
tool's JSON schema, so the model never sees or fills it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ToolExecutionContext"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolExecutionContext:
    """The turn a tool call belongs to.

    ``session_data`` is the session's own dict (not a copy): what a tool stores there, the
    session keeps. The GMI puts the turn's learner and mode in ``session_data["learning"]`` when it
    has a learner session (spec: What a turn does, step 6).
    """

    gmi_id: str | None = None
    persona_id: str | None = None
    user_id: str | None = None
    user_context: dict[str, Any] = field(default_factory=dict)
    session_id: str | None = None
    correlation_id: str | None = None
    session_data: dict[str, Any] = field(default_factory=dict)
