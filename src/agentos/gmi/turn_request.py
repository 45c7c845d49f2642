"""What a GMI turn asks its model: the gateway turn, the options and each hop's request.

Spec: Completion options, Forward within a turn, Cache Diagnostics, Hooks. `begin_gateway_turn()`
starts a user turn at the primary hop (a model whose ``provider:`` prefix names a provider runs
there, DESIGN §5.20); `turn_completion_options()` reads the turn's options once;
`build_request()` builds one attempt's request on a hop.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from agentos.core.messages import Message
from agentos.gmi.options import forwarded_options, to_completion_options
from agentos.gmi.prompt_engine import PromptEngine, SystemPrompt
from agentos.gmi.services import GMIServices
from agentos.gmi.state import GMIState
from agentos.gmi.system_prompts import metadata_value
from agentos.gmi.turn_hooks import TurnHooks
from agentos.llm.gateway import GatewayTurn, Hop
from agentos.llm.model import (
    CacheDiagnosticsRequest,
    CompletionOptions,
    ModelRequest,
    ToolDefinition,
    place_schema_prompt,
)
from agentos.llm.resolve import prefixed_provider
from agentos.persona.definition import PersonaDefinition

__all__ = [
    "begin_gateway_turn",
    "build_request",
    "cache_diagnostics",
    "turn_completion_options",
]


def begin_gateway_turn(
    state: GMIState, services: GMIServices, hooks: TurnHooks, options: Mapping[str, Any]
) -> GatewayTurn:
    """A new gateway turn for a user turn, on the model its options or the persona name."""
    persona = state.persona
    model = options.get("preferred_model_id") or options.get("preferredModelId")
    model = model or persona.default_model_id
    # Spec: a model whose "provider:" prefix names a provider runs there, on its own
    # credentials (DESIGN §5.20), whatever the persona's provider.
    provider = prefixed_provider(model) or persona.default_provider_id
    hint = next((m.text for m in reversed(state.history.messages()) if m.role.value == "user"), "")
    if services.config.gateway is None:  # a single model: its own provider and model
        provider, model = None, None
    return services.gateway.begin_turn(
        provider=provider,
        model=model,
        task_hint=hint,
        on_fallback=hooks.on_fallback,
        on_hop_failure=hooks.on_hop_failure,
    )


def turn_completion_options(
    persona: PersonaDefinition,
    options: Mapping[str, Any],
    metadata: Mapping[str, Any],
    tools: list[ToolDefinition],
) -> tuple[CompletionOptions, list[ToolDefinition]]:
    """The turn's completion options and the tools it offers (none with a response schema)."""
    schema = metadata_value(options, "response_schema")
    if isinstance(schema, dict):
        tools = []  # a schema answer is asked for without tools (spec: Completion options)
    completion = to_completion_options(forwarded_options(persona, options, has_tools=bool(tools)))
    if isinstance(schema, dict):
        name = metadata_value(options, "schema_name")
        completion = dataclasses.replace(
            completion,
            response_schema=schema,
            schema_name=name if isinstance(name, str) else "response",
        )
    end_user = metadata_value(metadata, "end_user_id")
    if isinstance(end_user, str) and end_user:
        # The end user's id is the GMI's own to send (spec: Completion options), and only
        # for a session opened with one.
        completion = dataclasses.replace(completion, user_id=end_user)
    return completion, tools


def build_request(
    hop: Hop,
    *,
    prompt_engine: PromptEngine,
    hooks: TurnHooks,
    step_index: int,
    system_prompts: Sequence[SystemPrompt],
    retrieved: str | None,
    earlier: list[Message],
    current: list[Message],
    tools: list[ToolDefinition],
    options: CompletionOptions,
) -> ModelRequest:
    """One attempt's request on ``hop``: the built prompt, the schema prompt, the hook's say."""
    built = prompt_engine.build(
        provider=hop.provider_id,
        model=hop.model_id,
        system_prompts=system_prompts,
        retrieved_context=retrieved,
        history=earlier,
        current_turn=current,
        tools=tools,
    )
    messages = built.messages
    # Spec (Completion options): a hop whose payload carries no schema gets it as a system
    # message, put there before before_model_call runs so the hook sees it and can remove it;
    # the adapter then adds no copy of its own.
    messages, options = place_schema_prompt(hop.model, messages, options)
    messages = hooks.before_model_call(hop, step_index, messages, tools)
    return ModelRequest(messages, tools, options)


def cache_diagnostics(options: Mapping[str, Any]) -> CacheDiagnosticsRequest | None:
    """The first step's request from ``cache_diagnostics`` (``True`` or ``{previous_message_id}``).

    Not a forwarded completion option (spec: Completion options): the GMI turns it into each
    step's own request.
    """
    value = metadata_value(options, "cache_diagnostics")
    if value is None or value is False:
        return None
    if value is True:
        return CacheDiagnosticsRequest()
    if isinstance(value, str):
        return CacheDiagnosticsRequest(value or None)
    if isinstance(value, dict):
        previous = metadata_value(value, "previous_message_id")
        return CacheDiagnosticsRequest(previous if isinstance(previous, str) else None)
    return None
