"""The system prompts of a user turn (reference §1.1 step 5 and §1.23 step 3; spec: Prompt).

Prepared once per user turn, before its first model call, and sent on every step of the turn:

| priority | prompt | from |
|---|---|---|
| 1 | the persona's base prompt (a list keeps its own priorities) | the persona |
| 2 | the personality section | ``GMIConfig.persona_traits`` |
| 50 | ``Rolling Memory Summary (compressed)`` and the summary | ``TurnOptions.rolling_summary`` |
| 55 | ``Capability Discovery Context`` and the context | ``.capability_discovery`` |
| 57 | the skills text | ``.skill_prompt_context`` |
| 60 | the profile's system instructions | ``.prompt_profile`` |
| 65 | a structured reply's instruction | ``.structured_reply`` |
| 90 | the user's verbosity preference | ``user_context["preferences"]`` |
| 91 | the user's preferred response format | ``user_context["preferences"]`` |
| 1000 | a memory provider's context, after the others | ``.memory_provider_context`` |
| its own | each of the host's system prompts | ``.system_prompts`` |

The turn's texts are `TurnOptions` fields. The user context's preferences are a map a host of
the TypeScript runtime may have written: its keys are read in snake_case or camelCase
(`loaded_value`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentos.persona.definition import PersonaDefinition
from agentos.persona.personality import personality_section
from agentos.substrate.prompt_engine import (
    DISCOVERY_PRIORITY,
    FORMAT_PREFERENCE_PRIORITY,
    PERSONA_BASE_PRIORITY,
    PERSONALITY_SECTION_PRIORITY,
    PROFILE_PRIORITY,
    ROLLING_SUMMARY_PRIORITY,
    SKILLS_PRIORITY,
    STRUCTURED_REPLY_PRIORITY,
    VERBOSITY_PREFERENCE_PRIORITY,
    SystemPrompt,
)
from agentos.substrate.turn_options import TurnOptions

__all__ = [
    "MEMORY_PROVIDER_PRIORITY",
    "ROLLING_SUMMARY_HEADING",
    "DISCOVERY_HEADING",
    "loaded_value",
    "preference_prompts",
    "turn_system_prompts",
]

MEMORY_PROVIDER_PRIORITY = 1000
"""An agent's memory provider context: after the leading system prompts (spec: memoryProvider)."""
ROLLING_SUMMARY_HEADING = "Rolling Memory Summary (compressed)"
DISCOVERY_HEADING = "Capability Discovery Context"

_VERBOSITY: dict[str, str] = {
    **dict.fromkeys(
        ("low", "brief", "concise", "short", "minimal"),
        "User response preference: keep the answer concise and to the point.",
    ),
    **dict.fromkeys(
        ("medium", "balanced", "normal", "default", "moderate"),
        "User response preference: give a balanced amount of detail.",
    ),
    **dict.fromkeys(
        ("high", "verbose", "detailed", "comprehensive", "thorough"),
        "User response preference: give a detailed, thorough answer.",
    ),
}


def loaded_value(loaded: Mapping[str, Any], key: str) -> Any:
    """``loaded[key]`` (snake_case), else its camelCase spelling, else ``None``.

    Only for maps written for the TypeScript runtime (a persona's free-form settings, the user
    context's preferences); a turn's options are `TurnOptions` fields, snake_case only.
    """
    if key in loaded:
        return loaded[key]
    head, *rest = key.split("_")
    return loaded.get(head + "".join(word.capitalize() for word in rest))


def preference_prompts(preferences: Mapping[str, Any]) -> list[SystemPrompt]:
    """The verbosity prompt (90) and the format prompt (91) the user's preferences call for."""
    prompts: list[SystemPrompt] = []
    verbosity = preferences.get("verbosity")
    if isinstance(verbosity, str) and verbosity.lower() in _VERBOSITY:
        prompts.append(
            SystemPrompt(_VERBOSITY[verbosity.lower()], VERBOSITY_PREFERENCE_PRIORITY, "preference")
        )
    formats = loaded_value(preferences, "preferred_formats")
    fmt = next(
        (
            value
            for key in ("preferred_format", "response_format", "format")
            if isinstance(value := loaded_value(preferences, key), str) and value.strip()
        ),
        None,
    )
    if fmt is None and isinstance(formats, list | tuple) and formats:
        fmt = " or ".join(str(item) for item in formats)
    if fmt is not None:
        prompts.append(
            SystemPrompt(
                f"User response preference: format the response as {fmt}.",
                FORMAT_PREFERENCE_PRIORITY,
                "preference",
            )
        )
    return prompts


def _texts(options: TurnOptions) -> list[SystemPrompt]:
    """The turn's own system prompts at priorities 50 to 65, those it sets, in order."""
    summary, discovery = options.rolling_summary, options.capability_discovery
    headed = (
        (summary, ROLLING_SUMMARY_HEADING, ROLLING_SUMMARY_PRIORITY, "rolling_summary"),
        (discovery, DISCOVERY_HEADING, DISCOVERY_PRIORITY, "discovery"),
        (options.skill_prompt_context, None, SKILLS_PRIORITY, "skills"),
        (options.prompt_profile, None, PROFILE_PRIORITY, "profile"),
        (options.structured_reply, None, STRUCTURED_REPLY_PRIORITY, "structured_reply"),
    )
    return [
        SystemPrompt(f"{heading}\n{text}" if heading else text, priority, source)
        for text, heading, priority, source in headed
        if text
    ]


def turn_system_prompts(
    persona: PersonaDefinition,
    options: TurnOptions,
    user_context: Mapping[str, Any],
    persona_traits: Mapping[str, object] | None = None,
) -> list[SystemPrompt]:
    """Every system prompt of a user turn (see the module doc for the table)."""
    prompt = persona.base_system_prompt
    if isinstance(prompt, str):  # the common case, built on every user turn: no parts
        prompts = [SystemPrompt(prompt, PERSONA_BASE_PRIORITY, "persona")] if prompt else []
    else:
        prompts = [
            SystemPrompt(
                part.content,
                PERSONA_BASE_PRIORITY if not isinstance(prompt, list) else (part.priority or 0),
                "persona",
            )
            for part in persona.system_prompt_parts()
        ]
    if persona_traits is not None and (section := personality_section(persona_traits)):
        prompts.append(SystemPrompt(section, PERSONALITY_SECTION_PRIORITY, "personality"))
    prompts.extend(_texts(options))
    prompts.extend(options.system_prompts)
    preferences = user_context.get("preferences")
    if isinstance(preferences, Mapping) and preferences:  # an empty one asks for nothing
        prompts.extend(preference_prompts(preferences))
    provided = options.memory_provider_context
    if provided is not None and provided.strip():
        prompts.append(SystemPrompt(provided, MEMORY_PROVIDER_PRIORITY, "memory_provider"))
    return prompts
