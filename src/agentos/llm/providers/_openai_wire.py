"""The Chat Completions request body an `OpenAIModel` sends, built from a `ModelRequest`.

Pure functions, no SDK: the adapter hands the body to ``openai.AsyncOpenAI`` as it is, so what
reaches the server is exactly what this module builds, whichever SDK version is installed.

- Messages: system and summary messages are sent as ``system``; user messages with their text
  and image parts; assistant messages with their tool calls (arguments as a JSON string); tool
  results as ``tool`` messages whose content is the result as JSON. ``error`` and ``thought``
  messages, and any message whose metadata marks it ``partial``, are never sent.
- Tools are offered as functions; ``tool_choice`` is sent only beside tools (OpenAI rejects it
  on a request without any; spec: Completion options).
- A completion option left ``None`` is not sent, so the provider's default applies.
- Structured output (``response_schema``): OpenAI's strict ``json_schema`` format when the
  schema fits strict mode (`strict_mode_problem`), otherwise JSON mode with the schema as a
  system message after the prompt's leading system messages (spec: a hop whose payload carries
  no schema gets it in the prompt), unless ``schema_prompt_given`` says the caller put it there
  (`schema_prompt` gives its text). No tools are offered on a structured step.
- ``effort`` goes as ``reasoning_effort``, the level as given (the SDK's ``ReasoningEffort``
  names ``none``, ``minimal``, ``low``, ``medium``, ``high``, ``xhigh`` and ``max``; a model
  that does not take a level refuses it with a 400).
- ``cache`` is never sent. OpenAI caches every long enough prompt prefix on its own, and Chat
  Completions has no on/off switch nor a five-minute or one-hour lifetime:
  ``prompt_cache_retention`` takes only ``in_memory`` or ``24h`` (and is deprecated), and
  ``prompt_cache_options.ttl`` only ``30m`` (gpt-5.6 and later). ``True`` and ``"5m"`` /
  ``"1h"`` therefore leave the automatic caching as it is, and ``False`` cannot turn it off
  (``prompt_cache_options.mode="explicit"`` without breakpoints would, but only on gpt-5.6 and
  later and not on compatible servers). ``custom_model_params`` can still set either field.
- ``prompt_cache_key``, ``prompt_cache_retention`` and ``service_tier`` go under those names,
  the values as given: compatible servers name their own tiers (OpenRouter and Groq take
  others than OpenAI's ``auto`` / ``default`` / ``flex`` / ``scale`` / ``priority``), and one
  that does not take a field refuses it with a 400. The tier the request was served at comes
  back on every streamed chunk as ``service_tier`` (`_openai_stream`).
- ``json_mode`` goes as ``response_format={"type": "json_object"}`` beside the tools, if any
  (OpenAI takes both on one request); a ``response_schema`` sets its own ``response_format``
  and wins. OpenAI refuses JSON mode unless the messages mention JSON: the caller's prompt
  says what JSON it wants.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import ImagePart, Message, Role, TextPart, ToolResult
from agentos.llm.model import (
    CompletionOptions,
    ModelRequest,
    SchemaRoute,
    ToolChoice,
    ToolDefinition,
)
from agentos.llm.providers._openai_strict import strict_mode_problem
from agentos.llm.schema_prompt import schema_instruction

__all__ = [
    "RESERVED_BODY_KEYS",
    "ChatBody",
    "chat_body",
    "check_body_options",
    "schema_prompt",
    "wire_messages",
]

TokenField = Literal["max_tokens", "max_completion_tokens"]

RESERVED_BODY_KEYS: Final = frozenset(
    {
        "model",
        "messages",
        "n",
        "stream",
        "stream_options",
        "tools",
        "tool_choice",
        "response_format",
    }
)
"""Body keys the adapter owns; ``custom_model_params`` may not set them (one choice, streamed,
with usage, and the tools and format the request asks for)."""

_MODES: Final = frozenset({"auto", "none", "required"})
_SCHEMA_NAME_CHARS: Final = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True, slots=True)
class ChatBody:
    """A request body and, on a structured step, where its schema went."""

    body: dict[str, Any]
    schema_route: SchemaRoute | None = None


def chat_body(request: ModelRequest, *, model_id: str, token_field: TokenField) -> ChatBody:
    """The streaming Chat Completions body for ``request``.

    ``token_field`` names the output cap: ``max_completion_tokens`` for OpenAI itself (its
    reasoning models refuse ``max_tokens``), ``max_tokens`` for compatible servers, which all
    take it. Raises `GMIError` (``INVALID_ARGUMENT``) naming a bad option.
    """
    options = request.options
    check_body_options(options)
    messages = wire_messages(request.messages)
    body: dict[str, Any] = {
        "model": model_id,
        "messages": messages,
        "stream": True,
        # Without it the stream carries no usage at all (the final usage-only chunk).
        "stream_options": {"include_usage": True},
    }
    route: SchemaRoute | None = None
    if options.response_schema is not None:
        route, body["response_format"] = _schema_format(options.response_schema, options, messages)
    else:
        if options.json_mode:
            body["response_format"] = {"type": "json_object"}
        if request.tools:
            body["tools"] = [_wire_tool(tool) for tool in request.tools]
            if options.tool_choice is not None:
                body["tool_choice"] = _wire_tool_choice(options.tool_choice, request.tools)
    sampling: tuple[tuple[str, object], ...] = (
        ("temperature", options.temperature),
        (token_field, options.max_tokens),
        ("top_p", options.top_p),
        ("frequency_penalty", options.frequency_penalty),
        ("presence_penalty", options.presence_penalty),
        ("seed", options.seed),
        ("user", options.user_id),
        ("reasoning_effort", options.effort),
        ("prompt_cache_key", options.prompt_cache_key),
        ("prompt_cache_retention", options.prompt_cache_retention),
        ("service_tier", options.service_tier),
    )
    body.update((key, value) for key, value in sampling if value is not None)
    if options.stop_sequences:
        body["stop"] = list(options.stop_sequences)
    body.update(options.custom_model_params)
    return ChatBody(body, route)


def _schema_format(
    schema: dict[str, Any], options: CompletionOptions, messages: list[dict[str, Any]]
) -> tuple[SchemaRoute, dict[str, Any]]:
    """The route and ``response_format`` for ``schema``: strict ``json_schema``, else JSON mode.

    On JSON mode the schema message goes into ``messages`` after the leading system ones,
    unless ``schema_prompt_given`` says the caller put it there.
    """
    if strict_mode_problem(schema) is None:
        return "json_schema", {
            "type": "json_schema",
            "json_schema": {
                "name": _schema_name(options.schema_name),
                "schema": schema,
                "strict": True,
            },
        }
    if not options.schema_prompt_given:
        lead = next((i for i, m in enumerate(messages) if m["role"] != "system"), len(messages))
        messages.insert(lead, {"role": "system", "content": schema_instruction(schema)})
    return "json_mode", {"type": "json_object"}


def check_body_options(options: CompletionOptions) -> None:
    """Refuse options no Chat Completions body can carry (`GMIError` naming the option)."""
    reserved = sorted(RESERVED_BODY_KEYS & set(options.custom_model_params))
    if reserved:
        raise GMIError(
            f"custom_model_params may not set {', '.join(reserved)}: the OpenAI adapter sends "
            "them itself",
            GMIErrorCode.INVALID_ARGUMENT,
            {"option": "custom_model_params", "reserved": reserved},
        )
    if options.tool_choice is not None and not options.tool_choice:
        raise GMIError(
            "tool_choice must be auto, none, required or a tool's name, not an empty string",
            GMIErrorCode.INVALID_ARGUMENT,
            {"option": "tool_choice"},
        )
    if options.request_timeout is not None and options.request_timeout <= 0:
        raise GMIError(
            f"request_timeout must be a positive number of seconds, got {options.request_timeout}",
            GMIErrorCode.INVALID_ARGUMENT,
            {"option": "request_timeout"},
        )


def wire_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The messages in Chat Completions form (see the module docstring for what is left out)."""
    wire: list[dict[str, Any]] = []
    for message in messages:
        if message.metadata.get("partial") is True:
            continue  # an answer cut short is kept for the record, never replayed
        match message.role:
            case Role.ERROR | Role.THOUGHT:
                continue
            case Role.SYSTEM | Role.SUMMARY:
                wire.append({"role": "system", "content": message.text})
            case Role.USER:
                user: dict[str, Any] = {"role": "user", "content": _user_content(message)}
                if message.name:
                    user["name"] = message.name
                wire.append(user)
            case Role.ASSISTANT:
                wire.append(_assistant(message))
            case Role.TOOL:
                result = message.tool_result
                assert result is not None  # Message guarantees it for the tool role
                wire.append(
                    {
                        "role": "tool",
                        "tool_call_id": result.tool_call_id,
                        "content": _tool_content(result),
                    }
                )
    return wire


def _user_content(message: Message) -> str | list[dict[str, Any]]:
    if isinstance(message.content, str):
        return message.content
    parts: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextPart):
            parts.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            parts.append({"type": "image_url", "image_url": {"url": part.url}})
    return parts


def _assistant(message: Message) -> dict[str, Any]:
    wire: dict[str, Any] = {"role": "assistant", "content": message.text}
    if message.tool_calls:
        # OpenAI's own replies carry null content beside tool calls; an empty string is refused
        # by some compatible servers.
        wire["content"] = message.text or None
        wire["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": _json(call.arguments)},
            }
            for call in message.tool_calls
        ]
    return wire


def _tool_content(result: ToolResult) -> str:
    payload: Any = result.output
    if result.is_error:
        # The model must see that the call failed, and why, to recover.
        payload = {"error": result.output if result.output is not None else "the tool failed"}
        if result.error_details:
            payload["details"] = result.error_details
    return _json(payload)


def _json(value: Any) -> str:
    # ensure_ascii=False: escaped non-ASCII costs the model tokens and reads worse.
    return json.dumps(value, ensure_ascii=False, default=str)


def _wire_tool(tool: ToolDefinition) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    }


def _wire_tool_choice(choice: ToolChoice, tools: Sequence[ToolDefinition]) -> object:
    if choice in _MODES:
        return choice
    if choice not in {tool.name for tool in tools}:
        raise GMIError(
            f"tool_choice names {choice!r}, which is not among the tools offered",
            GMIErrorCode.INVALID_ARGUMENT,
            {"option": "tool_choice", "tool": choice},
        )
    return {"type": "function", "function": {"name": choice}}


def _schema_name(name: str | None) -> str:
    # OpenAI takes 1 to 64 of [A-Za-z0-9_-] as a schema name.
    cleaned = _SCHEMA_NAME_CHARS.sub("_", name or "")[:64]
    return cleaned or "response"


def schema_prompt(options: CompletionOptions) -> str | None:
    """The system message a request with ``options`` carries its schema in, or ``None``.

    A schema strict mode cannot take goes in JSON mode, which has no place for it: the schema
    goes as `schema_instruction` after the leading system messages. ``None`` without a schema
    or when strict mode carries it.
    """
    schema = options.response_schema
    if schema is None or strict_mode_problem(schema) is None:
        return None
    return schema_instruction(schema)
