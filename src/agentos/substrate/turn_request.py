"""What a GMI turn asks its model: the gateway turn and the options.

Spec: Completion options, Forward within a turn, Cache Diagnostics. `begin_gateway_turn()`
starts a user turn at the primary hop (a model whose ``provider:`` prefix names a provider runs
there, DESIGN §5.20); `turn_completion_options()` reads the turn's options once;
`cache_diagnostics()` the first step's diagnostics request. Each attempt's request is the step
loop's to build (`agentos.loop.StepLoop`: the schema message, then ``before_model_call``).
"""

from __future__ import annotations

import dataclasses

from agentos.core.messages import Role
from agentos.llm.gateway import GatewayTurn
from agentos.llm.model import CacheDiagnosticsRequest, CompletionOptions, ToolDefinition
from agentos.llm.resolve import prefixed_provider
from agentos.persona.definition import PersonaDefinition
from agentos.substrate.options import forwarded_options, to_completion_options
from agentos.substrate.services import GMIServices
from agentos.substrate.state import GMIState
from agentos.substrate.turn_hooks import TurnHooks
from agentos.substrate.turn_options import TurnOptions

__all__ = [
    "begin_gateway_turn",
    "cache_diagnostics",
    "turn_completion_options",
]


def begin_gateway_turn(
    state: GMIState, services: GMIServices, hooks: TurnHooks, options: TurnOptions
) -> GatewayTurn:
    """A new gateway turn for a user turn, on the model its options or the persona name."""
    persona = state.persona
    model = options.preferred_model_id or persona.default_model_id
    # Spec: a model whose "provider:" prefix names a provider runs there, on its own
    # credentials (DESIGN §5.20), whatever the persona's provider.
    provider = prefixed_provider(model) or persona.default_provider_id
    hint = next((m.text for m in reversed(state.history.messages()) if m.role is Role.USER), "")
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
    options: TurnOptions,
    tools: list[ToolDefinition],
) -> tuple[CompletionOptions, list[ToolDefinition]]:
    """The turn's completion options and the tools it offers (none with a response schema)."""
    schema = options.response_schema
    if isinstance(schema, dict):
        tools = []  # a schema answer is asked for without tools (spec: Completion options)
    completion = to_completion_options(forwarded_options(persona, options, has_tools=bool(tools)))
    if isinstance(schema, dict):
        name = options.schema_name
        completion = dataclasses.replace(
            completion, response_schema=schema, schema_name=name if name is not None else "response"
        )
    end_user = options.end_user_id
    if end_user:
        # The end user's id is the GMI's own to send (spec: Completion options), and only
        # for a session opened with one.
        completion = dataclasses.replace(completion, user_id=end_user)
    return completion, tools


def cache_diagnostics(options: TurnOptions) -> CacheDiagnosticsRequest | None:
    """The first step's request from the turn's ``cache_diagnostics`` (``None``: not asked).

    Not a forwarded completion option (spec: Completion options): the GMI turns it into each
    step's own request.
    """
    return options.cache_diagnostics
