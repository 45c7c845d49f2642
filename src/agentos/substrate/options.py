"""The completion options a GMI sends (spec: Completion options; DESIGN.md §5.3).

Each model call of a turn carries the 16 `FORWARDED_COMPLETION_OPTION_KEYS`, read from the
persona's ``default_model_completion_options`` and then the turn's `TurnOptions` fields of those
names (the turn's value wins). A key neither sets is not sent: the GMI adds no temperature or
max_tokens of its own. ``tool_choice`` is ``"auto"`` on a call that offers tools unless set, and
never sent on a call without tools. The persona's keys are read in snake_case or the TypeScript
camelCase (a persona file may be written for the TypeScript runtime); the turn's are fields.

`to_completion_options()` maps them onto `CompletionOptions`: ``thinking`` (a token budget, or
``{"budget_tokens": n}``) becomes ``thinking_budget_tokens``; a ``response_format`` of type
``json_schema`` becomes ``response_schema``/``schema_name``, one of type ``json_object``
becomes ``json_mode=True`` (type ``text``, the default, sets nothing); ``prompt_cache_key``,
``prompt_cache_retention`` and ``service_tier`` go to the fields of those names, which each
provider adapter sends in its own form (or not at all, where its provider has no such setting).
``custom_model_params`` is passed through as given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentos.llm.model import CompletionOptions, thinking_budget_tokens
from agentos.persona.definition import PersonaDefinition
from agentos.substrate.turn_options import NO_TURN_OPTIONS, TurnOptions

__all__ = [
    "FORWARDED_COMPLETION_OPTION_KEYS",
    "forwarded_options",
    "to_completion_options",
]

FORWARDED_COMPLETION_OPTION_KEYS: tuple[str, ...] = (
    "temperature",
    "max_tokens",
    "top_p",
    "frequency_penalty",
    "presence_penalty",
    "stop_sequences",
    "thinking",
    "effort",
    "cache",
    "prompt_cache_key",
    "prompt_cache_retention",
    "service_tier",
    "request_timeout",
    "custom_model_params",
    "response_format",
    "tool_choice",
)

_FORWARDED = frozenset(FORWARDED_COMPLETION_OPTION_KEYS)

_CAMEL = {
    "".join(w if i == 0 else w.capitalize() for i, w in enumerate(key.split("_"))): key
    for key in FORWARDED_COMPLETION_OPTION_KEYS
}


def _read(source: Mapping[str, Any] | None) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for raw_key, value in (source or {}).items():
        key = _CAMEL.get(raw_key, raw_key)
        if key in _FORWARDED and value is not None:
            found[key] = value
    return found


def _turn_values(turn_options: TurnOptions | None) -> dict[str, Any]:
    if turn_options is None or turn_options is NO_TURN_OPTIONS:
        return {}
    return {
        key: value
        for key in FORWARDED_COMPLETION_OPTION_KEYS
        if (value := getattr(turn_options, key)) is not None
    }


def forwarded_options(
    persona: PersonaDefinition, turn_options: TurnOptions | None, *, has_tools: bool
) -> dict[str, Any]:
    """The forwarded keys of one call: the persona's, the turn's over them, tool_choice fixed."""
    defaults = persona.default_model_completion_options
    persona_values = defaults.model_dump(exclude_none=True) if defaults is not None else {}
    merged = {**_read(persona_values), **_turn_values(turn_options)}
    if has_tools:
        merged.setdefault("tool_choice", "auto")
    else:
        merged.pop("tool_choice", None)
    return merged


def to_completion_options(forwarded: Mapping[str, Any]) -> CompletionOptions:
    """`CompletionOptions` carrying ``forwarded`` (see the module doc for the mapping)."""
    custom: dict[str, Any] = dict(forwarded.get("custom_model_params") or {})
    budget = thinking_budget_tokens(forwarded.get("thinking"))
    schema: dict[str, Any] | None = None
    schema_name: str | None = None
    json_mode: bool | None = None
    response_format = forwarded.get("response_format")
    kind = response_format.get("type") if isinstance(response_format, Mapping) else None
    if isinstance(response_format, Mapping) and kind == "json_schema":
        spec = response_format.get("json_schema") or response_format.get("jsonSchema") or {}
        schema = spec.get("schema")
        schema_name = spec.get("name")
    elif kind == "json_object":
        json_mode = True
    stops = forwarded.get("stop_sequences")
    return CompletionOptions(
        temperature=forwarded.get("temperature"),
        max_tokens=forwarded.get("max_tokens"),
        top_p=forwarded.get("top_p"),
        frequency_penalty=forwarded.get("frequency_penalty"),
        presence_penalty=forwarded.get("presence_penalty"),
        stop_sequences=tuple(stops) if stops is not None else None,
        tool_choice=forwarded.get("tool_choice"),
        request_timeout=forwarded.get("request_timeout"),
        custom_model_params=custom,
        response_schema=schema,
        schema_name=schema_name,
        thinking_budget_tokens=budget,
        effort=forwarded.get("effort"),
        cache=forwarded.get("cache"),
        prompt_cache_key=forwarded.get("prompt_cache_key"),
        prompt_cache_retention=forwarded.get("prompt_cache_retention"),
        service_tier=forwarded.get("service_tier"),
        json_mode=json_mode,
    )
