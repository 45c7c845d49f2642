"""The GMI's user and task context (reference §1.1 initialize() and processTurnStream() step 2).

A GMI starts with a user context ``{"user_id": "default_user", "skill_level": "novice",
"preferences": {}}`` and a task context ``{"task_id": ..., "domain": <the persona's first
strength, or "general">, "complexity": "medium", "status": "not_started"}``; the persona's
``custom_fields`` ``initialUserContext`` / ``initialTaskContext`` and then what working memory
holds (a GMI rebuilt over the same working memory) are laid over them. Each turn applies its
``user_context_override`` (``preferences`` merged key by key into the current ones, other keys
replaced) and ``task_context_override``, sets the turn's user id, and writes both contexts back
to working memory under `USER_CONTEXT_KEY` and `TASK_CONTEXT_KEY`.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from agentos.persona.definition import PersonaDefinition

__all__ = [
    "TASK_CONTEXT_KEY",
    "USER_CONTEXT_KEY",
    "apply_user_context_override",
    "initial_task_context",
    "initial_user_context",
]

USER_CONTEXT_KEY = "current_user_context"
"""The working-memory key that holds the user context."""
TASK_CONTEXT_KEY = "current_task_context"
"""The working-memory key that holds the task context."""


def _custom(persona: PersonaDefinition, *names: str) -> dict[str, Any]:
    fields = persona.custom_fields or {}
    for name in names:
        value = fields.get(name)
        if isinstance(value, Mapping):
            return dict(value)
    return {}


def _stored(value: object) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def initial_user_context(persona: PersonaDefinition, stored: object = None) -> dict[str, Any]:
    """The defaults, the persona's ``initialUserContext``, then ``stored`` (working memory)."""
    context: dict[str, Any] = {"user_id": "default_user", "skill_level": "novice"}
    context.update(_custom(persona, "initialUserContext", "initial_user_context"))
    context.update(_stored(stored))
    context["preferences"] = dict(context.get("preferences") or {})
    return context


def initial_task_context(persona: PersonaDefinition, stored: object = None) -> dict[str, Any]:
    """The defaults, the persona's ``initialTaskContext``, then ``stored`` (working memory)."""
    context: dict[str, Any] = {
        "task_id": f"task-{uuid.uuid4()}",
        "domain": (persona.strengths or ["general"])[0],
        "complexity": "medium",
        "status": "not_started",
    }
    context.update(_custom(persona, "initialTaskContext", "initial_task_context"))
    context.update(_stored(stored))
    return context


def apply_user_context_override(
    current: Mapping[str, Any], override: Mapping[str, Any] | None
) -> dict[str, Any]:
    """``current`` with ``override`` applied: ``preferences`` merged, other keys replaced."""
    merged = dict(current)
    for key, value in (override or {}).items():
        if key == "preferences" and isinstance(value, Mapping):
            merged["preferences"] = {**(merged.get("preferences") or {}), **value}
        else:
            merged[key] = value
    return merged
