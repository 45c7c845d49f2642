"""The Gemini adapter's generation config: agentos's completion options as google-genai's.

Private to `agentos.llm.providers.gemini`; the request's contents are `_gemini_request`'s. The
checks (`check_custom_params`, `check_effort`, `check_service_tier`) run before any call and
refuse an option Gemini has no place for with a `GMIError` (``INVALID_ARGUMENT``) naming it.
Functions that need the SDK's ``types`` import it inside their body: importing this module must
not import the SDK.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.llm.model import CompletionOptions, ToolDefinition

if TYPE_CHECKING:
    from google.genai import types

__all__ = [
    "OWNED_CONFIG_KEYS",
    "build_config",
    "check_custom_params",
    "check_effort",
    "check_service_tier",
    "config_field",
    "invalid_option",
]

OWNED_CONFIG_KEYS = frozenset(
    {
        "http_options",
        "should_return_http_response",
        "automatic_function_calling",
        "automatic_continuation",
        "continuation_token",
        "candidate_count",
        "system_instruction",
        "tools",
        "tool_config",
    }
)
"""GenerateContentConfig fields the adapter sets itself; ``custom_model_params`` may not."""


def invalid_option(option: str, message: str, **details: Any) -> GMIError:
    """The `GMIError` (``INVALID_ARGUMENT``) refusing ``option``; ``details`` join its own."""
    return GMIError(message, GMIErrorCode.INVALID_ARGUMENT, {"option": option, **details})


def config_field(key: str) -> str | None:
    """The GenerateContentConfig field ``key`` names (snake_case or the API's camelCase)."""
    from google.genai import types

    fields = types.GenerateContentConfig.model_fields
    if key in fields:
        return key
    return next((name for name, info in fields.items() if info.alias == key), None)


def check_custom_params(params: dict[str, Any]) -> dict[str, str]:
    """Each key of ``custom_model_params`` with the config field it sets.

    Raises `GMIError` naming the key when it is not a ``GenerateContentConfig`` field, or is
    one the adapter sets itself (`OWNED_CONFIG_KEYS`).
    """
    fields: dict[str, str] = {}
    for key in params:
        name = config_field(key)
        if name is None or name in OWNED_CONFIG_KEYS:
            raise invalid_option(
                "custom_model_params",
                f"custom_model_params[{key!r}] is not a Gemini generation setting this adapter "
                "accepts (see google.genai.types.GenerateContentConfig)",
                key=key,
            )
        fields[key] = name
    return fields


# The levels ``google.genai.types.ThinkingLevel`` names (THINKING_LEVEL_UNSPECIFIED aside), kept
# here so that checking an effort does not import the SDK.
_THINKING_LEVELS = ("MINIMAL", "LOW", "MEDIUM", "HIGH", "XHIGH")


def check_effort(effort: str | None) -> str | None:
    """The ``thinking_level`` for ``effort`` (its upper-case name), or `GMIError` if none fits."""
    if effort is None:
        return None
    level = effort.strip().upper()
    if level not in _THINKING_LEVELS:
        raise invalid_option(
            "effort",
            f"effort {effort!r} is not a Gemini thinking level (one of "
            f"{', '.join(name.lower() for name in _THINKING_LEVELS)})",
            effort=effort,
        )
    return level


# The tiers ``google.genai.types.ServiceTier`` names (``unspecified``, the default, aside),
# kept here so that checking a tier does not import the SDK.
_SERVICE_TIERS = ("standard", "flex", "priority")


def check_service_tier(tier: str | None) -> str | None:
    """The ``service_tier`` for ``tier`` (lower-cased), or `GMIError` if Gemini has no such tier."""
    if tier is None:
        return None
    name = tier.strip().lower()
    if name not in _SERVICE_TIERS:
        raise invalid_option(
            "service_tier",
            f"service_tier {tier!r} is not a Gemini service tier (one of "
            f"{', '.join(_SERVICE_TIERS)})",
            service_tier=tier,
        )
    return name


def build_config(
    options: CompletionOptions,
    tools: Sequence[ToolDefinition],
    system: types.Content | None,
) -> types.GenerateContentConfig:
    """The generation config for one step; a setting left unset is not sent.

    The SDK's automatic function calling and automatic continuation stay off: agentos runs the
    tools, and a stream that breaks must fail rather than be re-sent behind the caller's back.
    ``user_id`` is not sent: the Gemini API has no end-user field. ``schema_name`` is not sent
    either: Gemini's ``response_json_schema`` has no name.

    ``effort`` becomes ``thinking_config.thinking_level`` (`check_effort`). The API refuses a
    thinking level and a thinking budget on one request (a 400), so when ``effort`` and
    ``thinking_budget_tokens`` are both set the level wins and the budget is not sent: the
    effort is the setting a fallback leg gives its own hop, and the level is how current
    (Gemini 3) models take thinking; a budget alone still goes as ``thinking_budget``.
    ``custom_model_params`` merges into ``thinking_config`` after both, the caller's keys
    winning. ``cache`` is never sent: Gemini caches repeated prompt prefixes implicitly, with
    no request field to turn that on or off or to set its lifetime (explicit caching is a
    separate ``cachedContents`` resource this adapter does not manage).

    ``service_tier`` goes as the config's ``service_tier`` (`check_service_tier`: ``standard``,
    ``flex`` or ``priority``; the SDK sends it as the request's ``serviceTier``).
    ``prompt_cache_key`` and ``prompt_cache_retention`` are not sent, for the reason ``cache``
    is not: the implicit cache has no routing key and no lifetime to set. ``json_mode`` (without
    a schema) sets ``response_mime_type="application/json"``, Gemini's JSON mode; a
    ``response_schema`` sets it too, with the schema.
    """
    from google.genai import types

    config: dict[str, Any] = {
        "automatic_function_calling": {"disable": True},
        "automatic_continuation": False,
    }
    if system is not None:
        config["system_instruction"] = system
    if tools:
        config.update(_tool_settings(options, tools))
    config.update(_option_settings(options))
    _merge_custom_params(config, options.custom_model_params)
    try:
        return types.GenerateContentConfig.model_validate(config)
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise invalid_option(
            "custom_model_params", f"invalid Gemini generation settings: {exc}"
        ) from exc


def _option_settings(options: CompletionOptions) -> dict[str, Any]:
    """The config fields the completion options set (see `build_config`); unset ones left out."""
    settings: dict[str, Any] = {}
    for name, value in (
        ("temperature", options.temperature),
        ("max_output_tokens", options.max_tokens),
        ("top_p", options.top_p),
        ("stop_sequences", list(options.stop_sequences) if options.stop_sequences else None),
        ("seed", options.seed),
        ("presence_penalty", options.presence_penalty),
        ("frequency_penalty", options.frequency_penalty),
    ):
        if value is not None:
            settings[name] = value
    if options.response_schema is not None or options.json_mode:
        settings["response_mime_type"] = "application/json"
    if options.response_schema is not None:
        settings["response_json_schema"] = options.response_schema
    tier = check_service_tier(options.service_tier)
    if tier is not None:
        settings["service_tier"] = tier
    level = check_effort(options.effort)
    if level is not None:
        settings["thinking_config"] = {"thinking_level": level}
    elif options.thinking_budget_tokens is not None:
        settings["thinking_config"] = {"thinking_budget": options.thinking_budget_tokens}
    if options.request_timeout is not None:
        # HttpOptions.timeout is in milliseconds; the SDK also sends it as X-Server-Timeout.
        settings["http_options"] = {"timeout": max(1, math.ceil(options.request_timeout * 1000))}
    return settings


def _tool_settings(options: CompletionOptions, tools: Sequence[ToolDefinition]) -> dict[str, Any]:
    """The config's ``tools`` (function declarations) and, when one is chosen, ``tool_config``."""
    from google.genai import types

    settings: dict[str, Any] = {
        "tools": [
            types.Tool(
                function_declarations=[
                    types.FunctionDeclaration(
                        name=tool.name,
                        description=tool.description,
                        parameters_json_schema=tool.parameters or None,
                    )
                    for tool in tools
                ]
            )
        ]
    }
    # Without tools a tool_choice has nothing to apply to: it is never sent alone.
    if options.tool_choice is not None:
        settings["tool_config"] = _tool_config(options.tool_choice, tools)
    return settings


def _merge_custom_params(config: dict[str, Any], params: dict[str, Any]) -> None:
    """Set ``custom_model_params`` on ``config`` last; a dict (``thinking_config``) merges in."""
    names = check_custom_params(params)
    for key, value in params.items():
        name = names[key]
        current = config.get(name)
        if isinstance(current, dict) and isinstance(value, dict):
            config[name] = {**current, **value}  # thinking_config: merge, the caller's wins
        else:
            config[name] = value


def _tool_config(choice: str, tools: Sequence[ToolDefinition]) -> types.ToolConfig:
    """``auto`` → AUTO, ``none`` → NONE, ``required`` → ANY, a tool's name → ANY on it."""
    from google.genai import types

    mode = {"auto": "AUTO", "none": "NONE", "required": "ANY"}.get(choice)
    allowed: list[str] | None = None
    if mode is None:
        if choice not in {tool.name for tool in tools}:
            raise invalid_option(
                "tool_choice",
                f"tool_choice {choice!r} names no tool offered on this call",
                tool_choice=choice,
            )
        mode, allowed = "ANY", [choice]
    return types.ToolConfig(
        function_calling_config=types.FunctionCallingConfig(
            mode=types.FunctionCallingConfigMode(mode), allowed_function_names=allowed
        )
    )
