"""The system prompts of a user turn (reference §1.1 step 5 and §1.23 step 3; spec: Prompt).

Prepared once per user turn, before its first model call, and sent on every step of the turn:

| priority | prompt | from |
|---|---|---|
| 1 | the persona's base prompt (a list keeps its own priorities) | the persona |
| 2 | the personality section | ``GMIConfig.persona_traits`` |
| 50 | ``Rolling Memory Summary (compressed)`` and the summary | ``metadata["rolling_summary"]`` |
| 55 | ``Capability Discovery Context`` and the context | ``metadata["capability_discovery"]`` |
| 57 | the skills text | ``metadata["skill_prompt_context"]`` |
| 60 | the profile's system instructions | ``metadata["prompt_profile"]`` |
| 90 | the user's verbosity preference | ``user_context["preferences"]`` |
| 91 | the user's preferred response format | ``user_context["preferences"]`` |
| 1000 | a memory provider's context, after the others | ``metadata["memory_provider_context"]`` |

Metadata keys are read in snake_case or the TypeScript camelCase (``rollingSummary``, ...); a
summary or discovery entry is a string or a mapping with ``text`` / ``prompt_context``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentos.gmi.prompt_engine import (
    DISCOVERY_PRIORITY,
    FORMAT_PREFERENCE_PRIORITY,
    PERSONA_BASE_PRIORITY,
    PERSONALITY_SECTION_PRIORITY,
    PROFILE_PRIORITY,
    ROLLING_SUMMARY_PRIORITY,
    SKILLS_PRIORITY,
    VERBOSITY_PREFERENCE_PRIORITY,
    SystemPrompt,
)
from agentos.persona.definition import PersonaDefinition
from agentos.persona.personality import personality_section

__all__ = [
    "MEMORY_PROVIDER_PRIORITY",
    "ROLLING_SUMMARY_HEADING",
    "DISCOVERY_HEADING",
    "metadata_value",
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


def metadata_value(metadata: Mapping[str, Any], key: str) -> Any:
    """``metadata[key]`` (snake_case), else its camelCase spelling, else ``None``."""
    if key in metadata:
        return metadata[key]
    head, *rest = key.split("_")
    return metadata.get(head + "".join(word.capitalize() for word in rest))


def _text(value: Any, *keys: str) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        for key in keys:
            found = metadata_value(value, key)
            if isinstance(found, str):
                return found
    return None


def preference_prompts(preferences: Mapping[str, Any]) -> list[SystemPrompt]:
    """The verbosity prompt (90) and the format prompt (91) the user's preferences call for."""
    prompts: list[SystemPrompt] = []
    verbosity = preferences.get("verbosity")
    if isinstance(verbosity, str) and verbosity.lower() in _VERBOSITY:
        prompts.append(
            SystemPrompt(_VERBOSITY[verbosity.lower()], VERBOSITY_PREFERENCE_PRIORITY, "preference")
        )
    formats = metadata_value(preferences, "preferred_formats")
    fmt = next(
        (
            value
            for key in ("preferred_format", "response_format", "format")
            if isinstance(value := metadata_value(preferences, key), str) and value.strip()
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


def turn_system_prompts(
    persona: PersonaDefinition,
    metadata: Mapping[str, Any],
    user_context: Mapping[str, Any],
    persona_traits: Mapping[str, object] | None = None,
) -> list[SystemPrompt]:
    """Every system prompt of a user turn (see the module doc for the table)."""
    prompt = persona.base_system_prompt
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
    summary = _text(metadata_value(metadata, "rolling_summary"), "text", "summary")
    if summary:
        prompts.append(
            SystemPrompt(
                f"{ROLLING_SUMMARY_HEADING}\n{summary}", ROLLING_SUMMARY_PRIORITY, "rolling_summary"
            )
        )
    discovery = _text(metadata_value(metadata, "capability_discovery"), "prompt_context")
    if discovery:
        prompts.append(
            SystemPrompt(f"{DISCOVERY_HEADING}\n{discovery}", DISCOVERY_PRIORITY, "discovery")
        )
    skills = metadata_value(metadata, "skill_prompt_context")
    if isinstance(skills, str) and skills:
        prompts.append(SystemPrompt(skills, SKILLS_PRIORITY, "skills"))
    profile = _text(metadata_value(metadata, "prompt_profile"), "system_instructions")
    if profile:
        prompts.append(SystemPrompt(profile, PROFILE_PRIORITY, "profile"))
    preferences = user_context.get("preferences")
    if isinstance(preferences, Mapping):
        prompts.extend(preference_prompts(preferences))
    provided = metadata_value(metadata, "memory_provider_context")
    if isinstance(provided, str) and provided.strip():
        prompts.append(SystemPrompt(provided, MEMORY_PROVIDER_PRIORITY, "memory_provider"))
    return prompts
