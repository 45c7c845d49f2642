"""The five built-in personas (DESIGN.md §5.7; reference §1.7 ``BUILT_IN_PERSONAS``).

The ids are the TypeScript package's; the definitions are agentos's own, shipped as JSON files
under ``agentos/persona/data/`` and read with `importlib.resources`. Each one validates.
``v_researcher`` is the default persona id.
"""

from __future__ import annotations

import json
from importlib import resources

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.persona.definition import PersonaDefinition

__all__ = [
    "BUILT_IN_PERSONAS",
    "BUILT_IN_PERSONA_FILES",
    "DEFAULT_PERSONA_ID",
    "get_built_in_persona",
    "load_built_in_personas",
]

DEFAULT_PERSONA_ID = "v_researcher"

BUILT_IN_PERSONA_FILES: tuple[str, ...] = (
    "voice_assistant_persona.json",
    "default_free_assistant.json",
    "atlas_systems_architect.json",
    "nerf_generalist.json",
    "v_researcher.json",
)
"""The data files, in the order of `BUILT_IN_PERSONAS`."""


def load_built_in_personas() -> tuple[PersonaDefinition, ...]:
    """Read the built-in personas from the package data (fresh objects on every call)."""
    data = resources.files("agentos.persona").joinpath("data")
    return tuple(
        PersonaDefinition.model_validate(json.loads(data.joinpath(name).read_text("utf-8")))
        for name in BUILT_IN_PERSONA_FILES
    )


BUILT_IN_PERSONAS: tuple[PersonaDefinition, ...] = load_built_in_personas()
"""The five built-in personas. Treat them as read-only; `get_built_in_persona` gives copies."""


def get_built_in_persona(persona_id: str) -> PersonaDefinition:
    """A deep copy of the built-in persona with this id.

    Raises:
        GMIError: ``PERSONA_NOT_FOUND`` when no built-in persona has this id.
    """
    for persona in BUILT_IN_PERSONAS:
        if persona.id == persona_id:
            return persona.model_copy(deep=True)
    raise GMIError(
        f"No built-in persona '{persona_id}'.",
        GMIErrorCode.PERSONA_NOT_FOUND,
        {"persona_id": persona_id, "available": [p.id for p in BUILT_IN_PERSONAS]},
        component="persona",
    )
