"""The checks behind `AgentOSConfig.check()`, one group of fields per function.

Each refusal is a `GMIError` with code ``CONFIGURATION_ERROR`` and ``details["option"]`` the
field (``personas[2]``, ``fallback_providers[0]`` for an item), raised before the runtime loads
a persona or opens a store. Checks that another layer already owns (an inline persona's
validation, a fallback leg's fields, a tool's description) are run through that layer and
re-coded, so each rule lives in one place.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn, TypeGuard, cast

from agentos.api.call_checks import tools_option
from agentos.core.clock import Clock
from agentos.core.errors import GMIError, GMIErrorCode
from agentos.llm import ChatModel
from agentos.llm.model import ToolDefinition
from agentos.llm.resolve import split_model_string
from agentos.nlp import UtilityAI
from agentos.persona.definition import PersonaDefinition
from agentos.persona.loaders import InMemoryPersonaLoader, PersonaLoader
from agentos.persona.strict_mode import PersonaStrictConfig
from agentos.runtime.discovery import CapabilityDiscovery
from agentos.runtime.guardrails import Guardrail
from agentos.storage import SessionStore, ToolPauseStore
from agentos.substrate.collaborators import RetrievalAugmentor
from agentos.tools import Tool

__all__ = [
    "CONVERSATION_STORES",
    "UTILITY_AIS",
    "check_model",
    "check_numbers",
    "check_persona_sources",
    "check_services",
    "check_tools",
    "recoded",
    "refuse",
]

UTILITY_AIS = ("llm", "statistical")
CONVERSATION_STORES = ("memory", "sqlite")


def refuse(option: str, why: str) -> NoReturn:
    """Raise the ``CONFIGURATION_ERROR`` naming ``option``."""
    raise GMIError(
        f"{option}: {why}",
        GMIErrorCode.CONFIGURATION_ERROR,
        {"option": option},
        component="runtime",
    )


def recoded(error: GMIError, option: str) -> GMIError:
    """``error`` (from the layer that owns the rule) as a ``CONFIGURATION_ERROR`` on ``option``."""
    message = error.message if error.message.startswith(option) else f"{option}: {error.message}"
    details = {**error.details, "option": option}
    return GMIError(message, GMIErrorCode.CONFIGURATION_ERROR, details, component="runtime")


def _is_list(value: object) -> TypeGuard[Sequence[object]]:
    return isinstance(value, Sequence) and not isinstance(value, str | bytes | Mapping)


def _optional_text(option: str, value: object) -> None:
    if value is None:
        return
    if not isinstance(value, str):
        refuse(option, f"must be a string or None, got {type(value).__name__}")
    if not value.strip():
        refuse(option, "must not be blank")


def check_persona_sources(
    personas: object, persona_loader: object, persona_directory: object, default_persona_id: object
) -> None:
    """One persona source; inline personas that validate; a loader with ``load_personas()``."""
    if personas is not None and persona_loader is not None:
        refuse(
            "personas",
            "an inline personas list and a custom persona_loader cannot be combined; "
            "pass one of them (each replaces the ./personas directory)",
        )
    if persona_directory is not None and (personas is not None or persona_loader is not None):
        other = "personas" if personas is not None else "persona_loader"
        refuse(
            "persona_directory",
            f"cannot be combined with {other}: an inline list or a custom loader replaces "
            "the persona directory",
        )
    if persona_directory is not None:
        if not isinstance(persona_directory, str | os.PathLike):
            refuse("persona_directory", f"must be a path, got {type(persona_directory).__name__}")
        if not os.fspath(persona_directory).strip():
            refuse("persona_directory", "must not be blank")
    if persona_loader is not None and not isinstance(persona_loader, PersonaLoader):
        refuse("persona_loader", "must have an async load_personas() method")
    if personas is not None:
        _check_inline_personas(personas)
    _optional_text("default_persona_id", default_persona_id)


def _check_inline_personas(personas: object) -> None:
    if not _is_list(personas):
        refuse("personas", f"must be a list of personas, got {type(personas).__name__}")
    try:
        # The loader checks each item itself (a PersonaDefinition or a mapping that fits).
        InMemoryPersonaLoader(cast("Sequence[PersonaDefinition | Mapping[str, Any]]", personas))
    except GMIError as exc:
        raise recoded(exc, str(exc.details.get("option", "personas"))) from exc


def check_model(model: object, provider: object, api_key: object, base_url: object) -> None:
    """``model`` and ``provider`` name one model; the credentials are non-blank strings."""
    for name, value in (("provider", provider), ("api_key", api_key), ("base_url", base_url)):
        _optional_text(name, value)
    if model is None or isinstance(model, ChatModel):
        if model is not None and provider is not None:
            refuse(
                "provider",
                f"a model instance ({type(model).__name__}) already names its provider; "
                "pass either the instance or provider, not both",
            )
        return
    if not isinstance(model, str):
        refuse("model", f"must be a ChatModel, a model id or None, got {type(model).__name__}")
    if not model.strip():
        refuse("model", "must not be blank")
    try:
        split_model_string(provider if isinstance(provider, str) else None, model)
    except GMIError as exc:
        raise recoded(exc, "model") from exc


def check_services(
    *,
    utility_ai: object,
    cognitive_memory_factory: object,
    igmi_factory: object,
    can_use_persona: object,
    tool_approver: object,
    capability_discovery: object,
    persona_strict: object,
    conversation_store: object,
    database_path: object,
    tool_pause_store: object,
    retrieval_augmentor: object,
    guardrails: object,
    clock: object,
) -> None:
    """The collaborators: each a known choice or an object implementing its protocol."""
    if isinstance(utility_ai, str):
        if utility_ai not in UTILITY_AIS:
            refuse("utility_ai", f"must be 'llm', 'statistical' or a UtilityAI, got {utility_ai!r}")
    elif not isinstance(utility_ai, UtilityAI):
        refuse("utility_ai", f"must be 'llm', 'statistical' or a UtilityAI, got {utility_ai!r}")
    for name, value in (
        ("cognitive_memory_factory", cognitive_memory_factory),
        ("igmi_factory", igmi_factory),
        ("can_use_persona", can_use_persona),
        ("tool_approver", tool_approver),
    ):
        if value is not None and not callable(value):
            refuse(name, "must be a function or None")
    if persona_strict is not None and not isinstance(persona_strict, PersonaStrictConfig):
        refuse(
            "persona_strict", f"must be a PersonaStrictConfig, got {type(persona_strict).__name__}"
        )
    if isinstance(conversation_store, str):
        if conversation_store not in CONVERSATION_STORES:
            refuse(
                "conversation_store",
                f"must be 'memory', 'sqlite' or a SessionStore, got {conversation_store!r}",
            )
    elif not isinstance(conversation_store, SessionStore):
        refuse(
            "conversation_store",
            f"must be 'memory', 'sqlite' or a SessionStore, "
            f"got {type(conversation_store).__name__}",
        )
    if database_path is not None and (
        not isinstance(database_path, str | os.PathLike) or not os.fspath(database_path).strip()
    ):
        refuse("database_path", f"must be a file path or None, got {database_path!r}")
    _check_instance("tool_pause_store", tool_pause_store, ToolPauseStore, optional=True)
    _check_instance("retrieval_augmentor", retrieval_augmentor, RetrievalAugmentor, optional=True)
    if not _is_list(guardrails):
        refuse("guardrails", f"must be a list of Guardrail, got {type(guardrails).__name__}")
    for index, guardrail in enumerate(guardrails):
        _check_instance(f"guardrails[{index}]", guardrail, Guardrail)
    _check_instance("clock", clock, Clock)
    _check_instance(
        "capability_discovery", capability_discovery, CapabilityDiscovery, optional=True
    )


def _check_instance(option: str, value: object, protocol: type, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, protocol):
        refuse(option, f"must implement {protocol.__name__}, got {type(value).__name__}")


def check_tools(tools: object, external_tools: object) -> None:
    """Tools the runtime runs and tools the host runs; no name given twice across both."""
    try:
        names = [tool.name for tool in tools_option(tools)]
    except GMIError as exc:
        raise recoded(exc, "tools") from exc
    if not _is_list(external_tools):
        refuse(
            "external_tools",
            f"must be a list of ToolDefinition or Tool, got {type(external_tools).__name__}",
        )
    for index, tool in enumerate(external_tools):
        option = f"external_tools[{index}]"
        if not isinstance(tool, ToolDefinition | Tool):
            refuse(option, f"must be a ToolDefinition or a Tool, got {type(tool).__name__}")
        if tool.name in names:
            refuse(option, f"the tool name {tool.name!r} is given twice")
        names.append(tool.name)


def check_numbers(
    *,
    default_organization_id: object,
    default_reasoning_trace_max_entries: object,
    max_tool_call_iterations: object,
    history_window: object,
    gmi_inactivity_cleanup_minutes: object,
    shutdown_timeout_ms: object,
) -> None:
    """The limits and defaults: counts >= 1, a timeout > 0, cleanup minutes >= 0."""
    _optional_text("default_organization_id", default_organization_id)
    _count("max_tool_call_iterations", max_tool_call_iterations)
    for name, value in (
        ("default_reasoning_trace_max_entries", default_reasoning_trace_max_entries),
        ("history_window", history_window),
    ):
        if value is not None:
            _count(name, value)
    if not _is_int(shutdown_timeout_ms) or shutdown_timeout_ms <= 0:
        refuse(
            "shutdown_timeout_ms",
            f"must be a whole number of milliseconds > 0, got {shutdown_timeout_ms!r}",
        )
    minutes = gmi_inactivity_cleanup_minutes
    if (
        isinstance(minutes, bool)
        or not isinstance(minutes, int | float)
        or math.isnan(minutes)
        or minutes < 0
    ):
        refuse(
            "gmi_inactivity_cleanup_minutes", f"must be a number of minutes >= 0, got {minutes!r}"
        )


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _count(option: str, value: object) -> None:
    if not _is_int(value) or value < 1:
        refuse(option, f"must be a whole number >= 1, got {value!r}")
