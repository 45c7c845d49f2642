"""`session_key()`: which session a self-modification call's budgets and reports belong to."""

from __future__ import annotations

from agentos.tools import ToolExecutionContext

__all__ = ["session_key"]


def session_key(context: ToolExecutionContext | None) -> str:
    """The session a call's budgets and reports belong to (reference §1.30's session key).

    ``session:<id>``, else ``correlation:<id>``, else ``gmi:<id>``, else ``persona:<id>``, else
    ``global``.
    """
    if context is None:
        return "global"
    for prefix, value in (
        ("session", context.session_id),
        ("correlation", context.correlation_id),
        ("gmi", context.gmi_id),
        ("persona", context.persona_id),
    ):
        if value:
            return f"{prefix}:{value}"
    return "global"
