"""What the Gemini adapter sends: agentos messages, tools and options as google-genai types.

Private to `agentos.llm.providers.gemini`. Every function imports the SDK's ``types`` module
inside its body: the adapter checked the SDK is installed before calling any of them, and
importing this module must not import the SDK.

Thought signatures (``ReplayBlock("gemini", "thought_signature", data)``) carry, in ``data``:

- ``signature``: the signature as base64 text, as the API sent it;
- ``part``: the kind of part it came on: ``"text"``, ``"function_call"`` or ``"thought"``;
- ``tool_call_id`` and ``name``: for a ``function_call`` part, the call it belongs to;
- ``text``: for a ``thought`` part, that part's own text (usually empty).

`model_parts()` puts each signature back on the part it came with: thought parts first, then
the reply's text (one part: the streamed text joined), then the function calls in order.
"""

from __future__ import annotations

import base64
import binascii
import math
import mimetypes
import urllib.parse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import ImagePart, Message, ReplayBlock, Role, TextPart, ToolResult
from agentos.llm.model import CompletionOptions, ToolDefinition

if TYPE_CHECKING:
    from google.genai import types

__all__ = [
    "OWNED_CONFIG_KEYS",
    "SKIP_SIGNATURE",
    "build_config",
    "build_contents",
    "check_custom_params",
    "check_effort",
    "check_service_tier",
    "config_field",
    "decode_signature",
    "encode_signature",
    "signature_block",
]

PROVIDER = "gemini"
SIGNATURE_TYPE = "thought_signature"

SKIP_SIGNATURE = "skip_thought_signature_validator"
"""Google's documented stand-in for a function call Gemini did not sign (a call another
provider made, or one from before thought signatures): Gemini 3 refuses a model turn whose first
function call has no signature, and accepts this value in its place."""

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


def encode_signature(raw: bytes) -> str:
    """A signature as the API writes it: standard base64."""
    return base64.b64encode(raw).decode("ascii")


def decode_signature(text: str) -> bytes:
    """The bytes of a base64 signature, standard or URL-safe alphabet, padded or not."""
    padded = text + "=" * (-len(text) % 4)
    return base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)


def signature_block(raw: bytes, part: str, **where: Any) -> ReplayBlock:
    """The replay block for a signature that came on a ``part`` (see the module docstring)."""
    return ReplayBlock(
        PROVIDER, SIGNATURE_TYPE, {"signature": encode_signature(raw), "part": part, **where}
    )


def _bad(option: str, message: str, **details: Any) -> GMIError:
    return GMIError(message, GMIErrorCode.INVALID_ARGUMENT, {"option": option, **details})


def build_contents(
    messages: Sequence[Message],
) -> tuple[types.Content | None, list[types.Content]]:
    """The system instruction and the conversation, in Gemini's roles.

    System and summary messages become the parts of ``system_instruction``, in order (Gemini
    has one instruction, not system turns); assistant messages become ``model`` turns; a tool
    result becomes a ``functionResponse`` part of a ``user`` turn; error and thought messages are
    not sent. Adjacent turns of the same role are merged, so the results of parallel calls
    travel together in one turn, as Gemini asks.
    """
    from google.genai import types

    system: list[types.Part] = []
    contents: list[types.Content] = []
    for message in messages:
        match message.role:
            case Role.SYSTEM | Role.SUMMARY:
                if message.text:
                    system.append(types.Part(text=message.text))
                continue
            case Role.ERROR | Role.THOUGHT:
                continue
            case Role.USER:
                role, parts = "user", _user_parts(message)
            case Role.ASSISTANT:
                role, parts = "model", model_parts(message)
            case Role.TOOL:
                assert message.tool_result is not None  # Message guarantees it
                role, parts = "user", [_function_response(message.tool_result)]
        if not parts:
            continue
        if contents and contents[-1].role == role:
            (contents[-1].parts or []).extend(parts)
        else:
            contents.append(types.Content(role=role, parts=parts))
    return (types.Content(parts=system) if system else None), contents


def _user_parts(message: Message) -> list[types.Part]:
    from google.genai import types

    if isinstance(message.content, str):
        return [types.Part(text=message.content)] if message.content else []
    parts: list[types.Part] = []
    for part in message.content:
        if isinstance(part, TextPart):
            if part.text:
                parts.append(types.Part(text=part.text))
        elif isinstance(part, ImagePart):
            parts.append(_image_part(part))
    return parts


def _image_part(image: ImagePart) -> types.Part:
    """A ``data:`` URL travels inline; any other URL as ``fileData``, which Gemini fetches."""
    from google.genai import types

    if not image.url.startswith("data:"):
        guessed = mimetypes.guess_type(urllib.parse.urlsplit(image.url).path)[0]
        return types.Part(
            file_data=types.FileData(file_uri=image.url, mime_type=image.media_type or guessed)
        )
    head, comma, payload = image.url[len("data:") :].partition(",")
    if not comma:
        raise _bad("content", "an image data: URL has no ',' before its data")
    media_type, *params = head.split(";")
    try:
        data = (
            base64.b64decode(payload, validate=True)
            if "base64" in params
            else urllib.parse.unquote_to_bytes(payload)
        )
    except (binascii.Error, ValueError) as exc:
        raise _bad("content", f"an image data: URL has invalid base64 data: {exc}") from exc
    mime = image.media_type or media_type or "application/octet-stream"
    return types.Part(inline_data=types.Blob(mime_type=mime, data=data))


def model_parts(message: Message) -> list[types.Part]:
    """An assistant message as a model turn, each thought signature back on its part."""
    from google.genai import types

    thoughts: list[dict[str, Any]] = []
    texts: list[dict[str, Any]] = []
    calls: dict[str, dict[str, Any]] = {}
    for block in message.replay_blocks:
        if block.provider != PROVIDER or block.type != SIGNATURE_TYPE:
            continue  # another provider's block: only its own provider reads it
        kind = block.data.get("part")
        if kind == "thought":
            thoughts.append(block.data)
        elif kind == "function_call":
            calls[str(block.data.get("tool_call_id"))] = block.data
        else:
            texts.append(block.data)
    parts = [
        types.Part(text=str(data.get("text", "")), thought=True, thought_signature=_signature(data))
        for data in thoughts
    ]
    if message.text or texts:
        first = texts[0] if texts else None
        parts.append(
            types.Part(text=message.text, thought_signature=_signature(first) if first else None)
        )
        # Two signatures cannot share a part; any further one keeps an empty part of its own.
        parts.extend(types.Part(text="", thought_signature=_signature(d)) for d in texts[1:])
    for index, call in enumerate(message.tool_calls):
        data = calls.get(call.id)
        signature = _signature(data) if data else None
        if signature is None and index == 0:
            signature = decode_signature(SKIP_SIGNATURE)
        parts.append(
            types.Part(
                function_call=types.FunctionCall(
                    id=call.id, name=call.name, args=dict(call.arguments)
                ),
                thought_signature=signature,
            )
        )
    return parts


def _signature(data: dict[str, Any]) -> bytes:
    try:
        return decode_signature(str(data["signature"]))
    except (KeyError, binascii.Error, ValueError) as exc:
        raise _bad(
            "replay_blocks", f"a Gemini thought_signature block has no valid signature: {exc}"
        ) from exc


def _function_response(result: ToolResult) -> types.Part:
    """A tool result, under Gemini's ``output`` / ``error`` keys.

    The output is always wrapped, so an output that is itself an object with an ``error`` key
    is not read as a failure.
    """
    from google.genai import types

    if result.is_error:
        response: dict[str, Any] = {
            "error": result.error_details if result.error_details is not None else result.output
        }
    else:
        response = {"output": result.output}
    return types.Part(
        function_response=types.FunctionResponse(
            id=result.tool_call_id, name=result.tool_name, response=response
        )
    )


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
            raise _bad(
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
        raise _bad(
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
        raise _bad(
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
        config["tools"] = [
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
        # Without tools a tool_choice has nothing to apply to: it is never sent alone.
        if options.tool_choice is not None:
            config["tool_config"] = _tool_config(options.tool_choice, tools)
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
            config[name] = value
    if options.response_schema is not None or options.json_mode:
        config["response_mime_type"] = "application/json"
    if options.response_schema is not None:
        config["response_json_schema"] = options.response_schema
    tier = check_service_tier(options.service_tier)
    if tier is not None:
        config["service_tier"] = tier
    level = check_effort(options.effort)
    if level is not None:
        config["thinking_config"] = {"thinking_level": level}
    elif options.thinking_budget_tokens is not None:
        config["thinking_config"] = {"thinking_budget": options.thinking_budget_tokens}
    if options.request_timeout is not None:
        # HttpOptions.timeout is in milliseconds; the SDK also sends it as X-Server-Timeout.
        config["http_options"] = {"timeout": max(1, math.ceil(options.request_timeout * 1000))}
    names = check_custom_params(options.custom_model_params)
    for key, value in options.custom_model_params.items():
        name = names[key]
        current = config.get(name)
        if isinstance(current, dict) and isinstance(value, dict):
            config[name] = {**current, **value}  # thinking_config: merge, the caller's wins
        else:
            config[name] = value
    try:
        return types.GenerateContentConfig.model_validate(config)
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise _bad("custom_model_params", f"invalid Gemini generation settings: {exc}") from exc


def _tool_config(choice: str, tools: Sequence[ToolDefinition]) -> types.ToolConfig:
    """``auto`` → AUTO, ``none`` → NONE, ``required`` → ANY, a tool's name → ANY on it."""
    from google.genai import types

    mode = {"auto": "AUTO", "none": "NONE", "required": "ANY"}.get(choice)
    allowed: list[str] | None = None
    if mode is None:
        if choice not in {tool.name for tool in tools}:
            raise _bad(
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
