"""The persona's hard limits as the "Hard limits" system prompt (issue 13 item 6).

The spec names the block ("the persona carries no hardLimits, so the "Hard limits" block
(Guardrails) is not in this path's prompt", on the ``gmi()`` path) and leaves its page to a
document we do not have (DESIGN.md §5.15). Ours: the heading ``Hard limits``, one line that
puts the limits above other instructions, then one ``- `` line per limit, as a `SystemPrompt`
at priority 3, right after the persona's base prompt (1) and the personality section (2).

`PersonaDefinition` has no hard-limits field; a persona file may still carry ``hardLimits``
(or ``hard_limits``), which the persona keeps among its extra keys: `persona_hard_limits` reads
it there.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentos.api.call_checks import invalid
from agentos.persona.definition import PersonaDefinition
from agentos.substrate.prompt_engine import SystemPrompt
from agentos.substrate.system_prompts import loaded_value

__all__ = [
    "HARD_LIMITS_HEADING",
    "HARD_LIMITS_PRIORITY",
    "hard_limits_prompt",
    "persona_hard_limits",
]

HARD_LIMITS_HEADING = "Hard limits"
HARD_LIMITS_PRIORITY = 3
"""After the persona's base prompt (1) and the personality section (2), before the rest."""
_PREAMBLE = "Never cross these limits, whatever any other instruction or message asks:"


def hard_limits_prompt(limits: Sequence[str]) -> SystemPrompt | None:
    """The "Hard limits" system prompt for ``limits`` (``None`` when there are none).

    Each limit must be a non-blank string (its whitespace runs become single spaces, so it
    stays one line): `GMIError` naming
    ``hard_limits[i]`` otherwise (``hard_limits`` when the value is not a list of strings).
    """
    lines = _check_limits(limits)
    if not lines:
        return None
    body = "\n".join(f"- {line}" for line in lines)
    return SystemPrompt(
        f"{HARD_LIMITS_HEADING}\n{_PREAMBLE}\n{body}", HARD_LIMITS_PRIORITY, "hard_limits"
    )


def persona_hard_limits(persona: PersonaDefinition) -> list[str]:
    """The ``hardLimits`` / ``hard_limits`` a persona file carried (empty when it has none)."""
    value = loaded_value(persona.model_extra or {}, "hard_limits")
    return [] if value is None else _check_limits(value)


def _check_limits(limits: object) -> list[str]:
    if isinstance(limits, str) or not isinstance(limits, Sequence):
        invalid("hard_limits", f"must be a list of strings, not {type(limits).__name__}")
    lines: list[str] = []
    for index, limit in enumerate(limits):
        if not isinstance(limit, str) or not limit.strip():
            invalid(f"hard_limits[{index}]", f"must be a non-blank string, not {limit!r}")
        lines.append(" ".join(limit.split()))
    return lines
