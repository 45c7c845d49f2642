"""How the Anthropic adapter builds a Messages API request (private to `providers.anthropic`).

Messages:

- leading system and summary messages (those before the first other message) are joined with
  blank lines into the ``system`` field; a system or summary message later in the history is
  sent as user text wrapped in ``<system>`` / ``<summary>`` tags, in its place: a top-level
  ``system`` would move it before turns it came after, and the ``system`` role inside
  ``messages`` is accepted only by some models and only in some positions;
- user and tool messages become user turns, assistant messages assistant turns; consecutive
  turns of one role merge into one (the API wants them alternating), with a user turn's
  ``tool_result`` blocks first, as the API requires;
- an assistant message sends its Anthropic replay blocks (``thinking`` with its signature,
  ``redacted_thinking``) verbatim first, then its text, then its tool calls as ``tool_use``;
  other providers' replay blocks are left out;
- images become image blocks: a ``data:`` URL as a base64 source, any other URL as a URL source;
- error and thought messages are never sent; empty text is never sent (the API refuses it).

Structured output follows the plan `_anthropic_schema.schema_plan` makes for the request.
"""

from __future__ import annotations

import base64
import json
import urllib.parse
from collections.abc import Sequence
from typing import Any

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import ImagePart, Message, Role, TextPart, ToolResult
from agentos.llm.catalog import model_info
from agentos.llm.model import CompletionOptions, ModelRequest, ToolDefinition
from agentos.llm.providers._anthropic_schema import (
    SCHEMA_WORDING,
    SchemaPlan,
    for_output_format,
    model_traits,
    schema_plan,
)
from agentos.llm.schema_prompt import schema_instruction

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "JSON_MODE_INSTRUCTION",
    "MIN_THINKING_BUDGET",
    "SERVICE_TIERS",
    "build_params",
    "check_service_tier",
    "convert_messages",
]

DEFAULT_MAX_TOKENS = 4096
"""``max_tokens`` when the options set none and the catalog knows no output limit for the model
(the API requires the field)."""

MIN_THINKING_BUDGET = 1024
"""The smallest ``budget_tokens`` the API accepts."""

SERVICE_TIERS = ("auto", "standard_only")
"""The ``service_tier`` values the Messages API takes (the SDK's ``MessageCreateParams``)."""

JSON_MODE_INSTRUCTION = (
    "Respond only with a single JSON object, with no other text and no Markdown code fence."
)
"""The system instruction ``json_mode`` adds: the API has no JSON mode of its own."""


def check_service_tier(tier: str | None) -> None:
    """Refuse a ``service_tier`` the Messages API does not take (`GMIError` naming it)."""
    if tier is not None and tier not in SERVICE_TIERS:
        raise GMIError(
            f"service_tier {tier!r} is not an Anthropic service tier (one of "
            f"{', '.join(SERVICE_TIERS)})",
            GMIErrorCode.INVALID_ARGUMENT,
            {"option": "service_tier", "provider_id": "anthropic", "service_tier": tier},
        )


# --- messages ----------------------------------------------------------------------------------


def _text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _image_block(part: ImagePart) -> dict[str, Any]:
    url = part.url
    if not url.startswith("data:"):
        return {"type": "image", "source": {"type": "url", "url": url}}
    header, _, payload = url[len("data:") :].partition(",")
    kinds = header.split(";")
    media_type = part.media_type or kinds[0]
    if not media_type:
        raise GMIError(
            "an image data URL needs a media type (data:image/png;base64,...)",
            GMIErrorCode.INVALID_ARGUMENT,
            {"field": "content", "provider_id": "anthropic"},
        )
    data = (
        payload
        if "base64" in kinds[1:]
        else base64.b64encode(urllib.parse.unquote_to_bytes(payload)).decode("ascii")
    )
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


def _content_blocks(message: Message) -> list[dict[str, Any]]:
    if isinstance(message.content, str):
        return [_text_block(message.content)] if message.content else []
    blocks: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextPart):
            if part.text:
                blocks.append(_text_block(part.text))
        else:
            blocks.append(_image_block(part))
    return blocks


def _tool_result_block(result: ToolResult) -> dict[str, Any]:
    output = result.output
    if result.error_details:
        output = {"error": output, "details": result.error_details}
    text = (
        output
        if isinstance(output, str)
        else ""
        if output is None
        else json.dumps(output, ensure_ascii=False)
    )
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": result.tool_call_id}
    if text:
        block["content"] = text
    if result.is_error:
        block["is_error"] = True
    return block


def _assistant_blocks(message: Message) -> list[dict[str, Any]]:
    blocks = [
        dict(block.data)
        for block in message.replay_blocks
        if block.provider == "anthropic" and block.type in ("thinking", "redacted_thinking")
    ]
    if message.text:
        blocks.append(_text_block(message.text))
    blocks.extend(
        {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
        for call in message.tool_calls
    )
    return blocks


def convert_messages(messages: Sequence[Message]) -> tuple[list[str], list[dict[str, Any]]]:
    """The ``system`` texts and the ``messages`` turns for a history (see the module docs)."""
    system: list[str] = []
    turns: list[dict[str, Any]] = []
    leading = True
    for message in messages:
        role = message.role
        blocks: list[dict[str, Any]]
        if role in (Role.ERROR, Role.THOUGHT):
            continue
        if role in (Role.SYSTEM, Role.SUMMARY):
            if leading:
                if message.text:
                    system.append(message.text)
                continue
            tag = role.value
            blocks = [_text_block(f"<{tag}>\n{message.text}\n</{tag}>")] if message.text else []
            speaker = "user"
        elif role is Role.ASSISTANT:
            blocks, speaker = _assistant_blocks(message), "assistant"
        elif role is Role.TOOL:
            assert message.tool_result is not None  # a tool message always carries one
            blocks, speaker = [_tool_result_block(message.tool_result)], "user"
        else:
            blocks, speaker = _content_blocks(message), "user"
        leading = False
        if not blocks:
            continue
        if turns and turns[-1]["role"] == speaker:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": speaker, "content": blocks})
    for turn in turns:
        if turn["role"] == "user":  # tool results first: the API refuses text before them
            turn["content"].sort(key=lambda block: block["type"] != "tool_result")
    return system, turns


# --- the request -------------------------------------------------------------------------------


def _tool_param(tool: ToolDefinition) -> dict[str, Any]:
    schema = dict(tool.parameters) or {"properties": {}}
    schema.setdefault("type", "object")  # the API takes object schemas only, typed as such
    param: dict[str, Any] = {"name": tool.name, "input_schema": schema}
    if tool.description:
        param["description"] = tool.description
    return param


def _tool_choice(choice: str) -> dict[str, Any]:
    if choice in ("auto", "none"):
        return {"type": choice}
    if choice == "required":
        return {"type": "any"}
    return {"type": "tool", "name": choice}


def _max_tokens(model_id: str, options: CompletionOptions, manual_budget: int | None) -> int:
    if options.max_tokens is not None:
        return options.max_tokens
    info = model_info("anthropic", model_id)
    limit = info.max_output_tokens if info is not None else None
    chosen = limit or DEFAULT_MAX_TOKENS
    if manual_budget is not None and chosen <= manual_budget:
        # The budget counts toward max_tokens: leave the answer room after the thinking.
        chosen = manual_budget + DEFAULT_MAX_TOKENS
        if limit is not None:
            chosen = min(chosen, limit)
    return chosen


def build_params(model_id: str, request: ModelRequest) -> tuple[dict[str, Any], SchemaPlan | None]:
    """The keyword arguments for ``messages.create`` and the schema plan they carry out.

    ``temperature`` and ``top_p`` are not sent: the API version the installed SDK pins
    (2026-10-21) refuses them on every model; ``custom_model_params`` (sent as extra body)
    remains for a server that takes them. ``frequency_penalty``, ``presence_penalty`` and
    ``seed`` have no Anthropic equivalent. ``cache_diagnostics`` becomes the ``diagnostics``
    object (``{"previous_message_id": id or null}``), sent only when asked for; it needs no beta
    header on that API version.

    ``effort`` goes as ``output_config.effort`` beside the JSON output format's
    ``output_config.format`` when both are set (the SDK's ``OutputConfigParam`` takes ``low``,
    ``medium``, ``high``, ``xhigh`` and ``max``). ``cache`` turns on automatic prompt caching:
    the request's top-level ``cache_control`` (``{"type": "ephemeral"}``, with ``"ttl"`` when a
    lifetime is given), which the API applies to the last cacheable block and moves forward as
    the conversation grows; ``False`` or unset sends no ``cache_control`` at all.

    ``service_tier`` goes as the request's ``service_tier`` (``auto`` or ``standard_only``,
    `check_service_tier`). ``prompt_cache_key`` and ``prompt_cache_retention`` are not sent:
    Anthropic caches what ``cache_control`` marks, per workspace, with no routing key, and its
    lifetimes are ``cache``'s ``5m`` / ``1h``, not OpenAI's ``in_memory`` / ``24h``; a persona
    that sets them for an OpenAI hop still runs on an Anthropic fallback hop, as ``cache`` does
    on OpenAI. ``json_mode`` (without a schema) adds `JSON_MODE_INSTRUCTION` to the system
    prompt after the leading system messages, as the ``prompt`` schema route does with a
    schema: the API has no JSON-object switch, and the JSON output format needs a schema that
    closes every object, which would force an empty one. On the ``prompt`` route,
    ``schema_prompt_given`` says the caller put the schema message among the messages already
    (`AnthropicModel.schema_prompt`): none is added.
    """
    options = request.options
    traits = model_traits(model_id)
    plan = schema_plan(model_id, options)
    system, turns = convert_messages(request.messages)
    tools = [_tool_param(tool) for tool in request.tools]
    choice: dict[str, Any] | None = (
        _tool_choice(options.tool_choice) if options.tool_choice is not None else None
    )
    params: dict[str, Any] = {"model": model_id, "messages": turns}
    budget = options.thinking_budget_tokens
    manual = budget if budget is not None and traits.manual_thinking_budget else None
    params["max_tokens"] = _max_tokens(model_id, options, manual)
    tools, choice = _place_schema(plan, options, params, system, tools, choice)
    if system:
        params["system"] = "\n\n".join(system)
    if tools:  # tool_choice is never sent without tools: the API refuses it
        params["tools"] = tools
        if choice is not None:
            params["tool_choice"] = choice
    _set_option_params(params, options, budget, manual)
    return params, plan


def _place_schema(
    plan: SchemaPlan | None,
    options: CompletionOptions,
    params: dict[str, Any],
    system: list[str],
    tools: list[dict[str, Any]],
    choice: dict[str, Any] | None,
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """Carry out the schema plan (or JSON mode); return the tools and tool choice to send.

    The ``output_format`` route sets ``params["output_config"]``; the ``tool`` route offers the
    answer tool and forces it; the ``prompt`` route (and JSON mode) adds to ``system``.
    """
    if plan is not None and options.response_schema is not None:
        schema = options.response_schema
        if plan.route == "output_format":
            params["output_config"] = {
                "format": {"type": "json_schema", "schema": for_output_format(schema)}
            }
        elif plan.route == "tool" and plan.tool_name is not None:
            tools = [tool for tool in tools if tool["name"] != plan.tool_name]
            tools.append(
                {
                    "name": plan.tool_name,
                    "description": "Give your answer as this tool's input.",
                    "input_schema": schema,
                }
            )
            choice = {"type": "tool", "name": plan.tool_name}
        elif not options.schema_prompt_given:
            system.append(schema_instruction(schema, options.schema_name, wording=SCHEMA_WORDING))
    elif options.json_mode:
        system.append(JSON_MODE_INSTRUCTION)
    return tools, choice


def _set_option_params(
    params: dict[str, Any], options: CompletionOptions, budget: int | None, manual: int | None
) -> None:
    """Add the options that map one to one (metadata, stops, thinking, effort, cache, ...)."""
    if options.user_id:
        params["metadata"] = {"user_id": options.user_id}
    if options.stop_sequences:
        params["stop_sequences"] = list(options.stop_sequences)
    if budget is not None:
        params["thinking"] = (
            {"type": "enabled", "budget_tokens": budget}
            if manual is not None
            else {"type": "adaptive"}
        )
    if options.effort is not None:
        params["output_config"] = {**params.get("output_config", {}), "effort": options.effort}
    if options.cache is not None and options.cache is not False:
        cache_control: dict[str, Any] = {"type": "ephemeral"}
        if options.cache is not True:
            cache_control["ttl"] = options.cache
        params["cache_control"] = cache_control
    if options.service_tier is not None:
        params["service_tier"] = options.service_tier
    if options.cache_diagnostics is not None:
        # The object is the opt-in: a null previous_message_id asks for no comparison yet.
        params["diagnostics"] = {
            "previous_message_id": options.cache_diagnostics.previous_message_id
        }
    if options.custom_model_params:
        params["extra_body"] = dict(options.custom_model_params)
    if options.request_timeout is not None:
        params["timeout"] = options.request_timeout
