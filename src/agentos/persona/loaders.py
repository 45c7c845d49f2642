"""Where personas come from (spec: "Defining and loading personas"; reference §1.7).

Three sources: a directory of JSON files (`DirectoryPersonaLoader`, default ``./personas``), an
inline list (`InMemoryPersonaLoader`) and a custom loader (anything with an async
``load_personas()``, the `PersonaLoader` protocol). `resolve_persona_loader` picks one from the
options a runtime takes and refuses a combination; `PersonaRegistry` holds what a loader gave and
answers an unknown id with ``PERSONA_NOT_FOUND``.

Every persona a loader returns has its sentiment presets merged into its metaprompts
(`with_metaprompt_presets`, as TypeScript's PersonaLoader does). The registry merges again what a
custom loader gives, which is harmless for the built-in loaders because the merge is idempotent.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import ValidationError

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.persona.definition import PersonaDefinition
from agentos.persona.metaprompt_presets import UnknownPresetError, with_metaprompt_presets

__all__ = [
    "DEFAULT_PERSONA_DIRECTORY",
    "DirectoryPersonaLoader",
    "InMemoryPersonaLoader",
    "PersonaLoader",
    "PersonaRegistry",
    "resolve_persona_loader",
]

_log = logging.getLogger(__name__)

DEFAULT_PERSONA_DIRECTORY = "./personas"
_REQUIRED_KEYS = (("id",), ("name",), ("baseSystemPrompt", "base_system_prompt"), ("version",))


@runtime_checkable
class PersonaLoader(Protocol):
    """A source of persona definitions: the custom-loader seam."""

    async def load_personas(self) -> Sequence[PersonaDefinition]:
        """Every persona this source holds."""
        ...


_PRESETS_FIELD = "sentimentTracking.presets"


def _merge_presets(persona: PersonaDefinition) -> PersonaDefinition:
    """`with_metaprompt_presets`, with an unknown preset name as a ``PERSONA_LOAD_ERROR``.

    Raises:
        GMIError: ``PERSONA_LOAD_ERROR`` naming the persona id, the field, the unknown names and
            the valid ones.
    """
    try:
        return with_metaprompt_presets(persona)
    except UnknownPresetError as exc:
        raise GMIError(
            f"Persona '{persona.id}' cannot be loaded: {_PRESETS_FIELD}: {exc}",
            GMIErrorCode.PERSONA_LOAD_ERROR,
            {
                "persona_id": persona.id,
                "field": _PRESETS_FIELD,
                "unknown": exc.names,
                "valid": exc.valid,
            },
            component="persona",
        ) from exc


def _coerce(persona: object, index: int) -> PersonaDefinition:
    """Item ``index`` of an inline list as a persona; a `GMIError` naming ``personas[index]``."""
    option = f"personas[{index}]"
    if isinstance(persona, PersonaDefinition):
        return persona.model_copy(deep=True)
    if not isinstance(persona, Mapping):
        raise GMIError(
            f"{option}: must be a PersonaDefinition or a mapping, got {type(persona).__name__}",
            GMIErrorCode.INVALID_ARGUMENT,
            {"option": option, "index": index},
            component="persona",
        )
    try:
        return PersonaDefinition.model_validate(dict(persona))
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(part) for part in error['loc']) or '<root>'}: {error['msg']}"
            for error in exc.errors()
        ]
        persona_id = persona.get("id")
        named = f" (id {persona_id!r})" if isinstance(persona_id, str) else ""
        raise GMIError(
            f"{option}{named} is not a valid persona: {'; '.join(problems)}",
            GMIErrorCode.INVALID_ARGUMENT,
            {"option": option, "index": index, "problems": problems},
            component="persona",
        ) from exc


class InMemoryPersonaLoader:
    """Personas given inline (``personas=[...]``); each load returns deep copies.

    Each item is a `PersonaDefinition` or a mapping that validates as one. The items are checked
    and the sentiment presets merged when the loader is built, so a bad list fails early.

    Raises:
        GMIError: ``INVALID_ARGUMENT`` (from the constructor) naming the item
            (``details["option"]`` ``personas[i]``, ``details["index"]``) when it is neither a
            `PersonaDefinition` nor a mapping, or a mapping that does not fit `PersonaDefinition`
            (each field's problem listed in ``details["problems"]``); also for ``personas``
            given as a string or a single mapping rather than a list.
            ``PERSONA_LOAD_ERROR`` when a persona's ``sentimentTracking.presets`` names
            something that is not a sentiment preset.
    """

    def __init__(self, personas: Iterable[PersonaDefinition | Mapping[str, Any]]) -> None:
        if isinstance(personas, str | bytes | Mapping | PersonaDefinition) or not isinstance(
            personas, Iterable
        ):
            raise GMIError(
                f"personas: must be a list of personas, got {type(personas).__name__}",
                GMIErrorCode.INVALID_ARGUMENT,
                {"option": "personas"},
                component="persona",
            )
        self._personas = [
            _merge_presets(_coerce(persona, index)) for index, persona in enumerate(personas)
        ]

    async def load_personas(self) -> list[PersonaDefinition]:
        """Deep copies of the personas given."""
        return [persona.model_copy(deep=True) for persona in self._personas]


class DirectoryPersonaLoader:
    """The ``*.json`` files of one directory (not its subdirectories), read in name order.

    A missing directory gives no personas and a warning. A file that is not a JSON object, lacks
    one of ``id``, ``name``, ``baseSystemPrompt`` (or ``base_system_prompt``) and ``version``,
    does not fit `PersonaDefinition`, or names an unknown preset in ``sentimentTracking.presets``
    is skipped with a warning (one bad file does not take the others down). When two files share
    an id, the later file wins. The sentiment presets are merged into each persona returned.
    """

    def __init__(self, directory: str | PathLike[str] = DEFAULT_PERSONA_DIRECTORY) -> None:
        self.directory = Path(directory)

    async def load_personas(self) -> list[PersonaDefinition]:
        """Read the directory (in a worker thread) and return its personas."""
        return await asyncio.to_thread(self._load)

    def _load(self) -> list[PersonaDefinition]:
        if not self.directory.is_dir():
            _log.warning("persona directory %s does not exist: no personas loaded", self.directory)
            return []
        by_id: dict[str, PersonaDefinition] = {}
        for path in sorted(self.directory.glob("*.json")):
            persona = self._load_file(path)
            if persona is not None:
                by_id.pop(persona.id, None)
                by_id[persona.id] = persona
        return list(by_id.values())

    @staticmethod
    def _load_file(path: Path) -> PersonaDefinition | None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            _log.warning("skipping persona file %s: %s", path, exc)
            return None
        if not isinstance(data, dict):
            _log.warning("skipping persona file %s: not a JSON object", path)
            return None
        missing = [keys[0] for keys in _REQUIRED_KEYS if not any(data.get(k) for k in keys)]
        if missing:
            _log.warning("skipping persona file %s: missing %s", path, ", ".join(missing))
            return None
        try:
            persona = PersonaDefinition.model_validate(data)
        except ValidationError as exc:
            _log.warning("skipping persona file %s: %s", path, exc)
            return None
        try:
            return _merge_presets(persona)
        except GMIError as exc:
            _log.warning("skipping persona file %s: %s", path, exc.message)
            return None


def resolve_persona_loader(
    *,
    persona_definition_path: str | PathLike[str] | None = None,
    personas: Iterable[PersonaDefinition | Mapping[str, Any]] | None = None,
    persona_loader: PersonaLoader | None = None,
) -> PersonaLoader:
    """The one persona source these options name (a ``./personas`` directory when none).

    Raises:
        GMIError: ``CONFIGURATION_ERROR`` naming the options when more than one is given.
    """
    given = [
        name
        for name, value in (
            ("persona_definition_path", persona_definition_path),
            ("personas", personas),
            ("persona_loader", persona_loader),
        )
        if value is not None
    ]
    if len(given) > 1:
        raise GMIError(
            f"Persona options cannot be combined: {', '.join(given)} were all given; "
            "pass only one of persona_definition_path, personas or persona_loader.",
            GMIErrorCode.CONFIGURATION_ERROR,
            {"options": given},
            component="persona",
        )
    if persona_loader is not None:
        if not isinstance(persona_loader, PersonaLoader):
            raise GMIError(
                "persona_loader must have an async load_personas() method",
                GMIErrorCode.CONFIGURATION_ERROR,
                {"option": "persona_loader"},
                component="persona",
            )
        return persona_loader
    if personas is not None:
        return InMemoryPersonaLoader(personas)
    return DirectoryPersonaLoader(persona_definition_path or DEFAULT_PERSONA_DIRECTORY)


class PersonaRegistry:
    """The personas one loader gave, by id; `get` hands out deep copies."""

    def __init__(self, loader: PersonaLoader) -> None:
        self.loader = loader
        self._personas: dict[str, PersonaDefinition] = {}

    async def load(self) -> list[PersonaDefinition]:
        """(Re)load from the loader; a later persona with an id already seen replaces it.

        Each persona gets its sentiment presets merged (a custom loader need not do it).

        Raises:
            GMIError: ``PERSONA_LOAD_ERROR`` when a persona names an unknown preset; the
                personas loaded before stay in place.
        """
        loaded = await self.loader.load_personas()
        merged = [_merge_presets(persona.model_copy(deep=True)) for persona in loaded]
        self._personas = {persona.id: persona for persona in merged}
        return self.personas()

    def personas(self) -> list[PersonaDefinition]:
        """Deep copies of every loaded persona."""
        return [persona.model_copy(deep=True) for persona in self._personas.values()]

    def ids(self) -> list[str]:
        """The loaded persona ids."""
        return list(self._personas)

    def peek(self, persona_id: str) -> PersonaDefinition:
        """The loaded persona with this id itself, to read and never change (no copy).

        Raises:
            GMIError: ``PERSONA_NOT_FOUND`` when no loaded persona has this id.
        """
        persona = self._personas.get(persona_id)
        if persona is None:
            self.get(persona_id)  # raises PERSONA_NOT_FOUND, naming the loaded ids
        assert persona is not None
        return persona

    def get(self, persona_id: str) -> PersonaDefinition:
        """A deep copy of the persona with this id.

        Raises:
            GMIError: ``PERSONA_NOT_FOUND`` when no loaded persona has this id.
        """
        persona = self._personas.get(persona_id)
        if persona is None:
            raise GMIError(
                f"Persona '{persona_id}' was not found.",
                GMIErrorCode.PERSONA_NOT_FOUND,
                {"persona_id": persona_id, "available": self.ids()},
                component="persona",
            )
        return persona.model_copy(deep=True)
