"""What a caller asks of one GMI turn, typed (spec: Completion options, Prompt, Tools).

The spec's TypeScript runtime passes these as string keys of ``GMITurnInput.metadata`` (and of
``metadata.options``); here they are the fields of one frozen `TurnOptions` a caller builds
once, at its edge, and the GMI reads field by field. Field names are snake_case only: camelCase
is read only where files written for the TypeScript runtime are loaded (personas).

A field left ``None`` asks for nothing: the persona's value (or no value) applies.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from agentos.core.messages import Message
from agentos.llm.model import CacheDiagnosticsRequest, ToolChoice
from agentos.substrate.prompt_engine import SystemPrompt

__all__ = ["NO_TURN_OPTIONS", "ToolFailureMode", "TurnOptions"]

ToolFailureMode = Literal["fail_open", "fail_closed"]
"""What a failed tool does to its turn: nothing (``fail_open``) or end it (``fail_closed``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnOptions:
    """One turn's options (the spec's ``metadata`` and ``metadata.options`` keys, typed).

    The first sixteen fields are the spec's ``FORWARDED_COMPLETION_OPTION_KEYS`` (see
    `agentos.substrate.options`): each set one replaces the persona's
    ``default_model_completion_options`` value for this turn's model calls.
    """

    temperature: float | None = None
    """Sampling temperature of every model call of the turn."""
    max_tokens: int | None = None
    """The output token limit of each model call."""
    top_p: float | None = None
    """Nucleus sampling mass of each model call."""
    frequency_penalty: float | None = None
    """Frequency penalty of each model call."""
    presence_penalty: float | None = None
    """Presence penalty of each model call."""
    stop_sequences: tuple[str, ...] | None = None
    """Sequences that end a model step's output."""
    thinking: int | Mapping[str, Any] | bool | None = None
    """A reasoning token budget (a number, or ``{"budget_tokens": n}``)."""
    effort: str | None = None
    """The provider's reasoning effort setting."""
    cache: bool | Literal["5m", "1h"] | None = None
    """Prompt caching: on, off, or a cache lifetime."""
    prompt_cache_key: str | None = None
    """The provider's prompt-cache routing key."""
    prompt_cache_retention: str | None = None
    """How long the provider keeps the prompt cache (``in_memory``, ``24h``)."""
    service_tier: str | None = None
    """The provider's service tier (``auto``, ``flex``, ``priority``, ...)."""
    request_timeout: float | None = None
    """Seconds each model call may take."""
    custom_model_params: Mapping[str, Any] | None = None
    """Provider parameters passed through as given."""
    response_format: Any = None
    """``{"type": "json_object"}`` (JSON mode) or ``{"type": "json_schema", ...}``."""
    tool_choice: ToolChoice | None = None
    """Whether and which tool the model must call; sent only on a call that offers tools
    (``auto`` there unless set)."""

    response_schema: dict[str, Any] | None = None
    """A JSON schema the answer must follow: the turn offers no tools and each hop gets the
    structured-output payload its provider takes (spec: ``metadata.options.responseSchema``)."""
    schema_name: str | None = None
    """The schema's name (``"response"`` when unset)."""
    cache_diagnostics: CacheDiagnosticsRequest | None = None
    """Anthropic's prompt-cache diagnostics on every step: the first step compares against the
    message it names, each later step against the previous step's response. Not forwarded."""
    preferred_model_id: str | None = None
    """The model of the turn, over the persona's default (a ``provider:`` prefix picks the
    provider, DESIGN §5.20)."""
    end_user_id: str | None = None
    """The provider's end-user id, sent on every call of the turn (a session's user)."""

    conversation_history_for_prompt: tuple[Message, ...] | None = None
    """When non-empty, the conversation before this turn that the prompts are built from,
    in place of the GMI's own history (spec: ``metadata.conversationHistoryForPrompt``)."""
    rolling_summary: str | None = None
    """A compressed summary of earlier conversation: a system prompt at priority 50 under
    ``Rolling Memory Summary (compressed)``."""
    capability_discovery: str | None = None
    """The capability discovery's prompt context: a system prompt at priority 55 under
    ``Capability Discovery Context``."""
    skill_prompt_context: str | None = None
    """The active skills' text: a system prompt at priority 57."""
    prompt_profile: str | None = None
    """The prompt profile's system instructions: a system prompt at priority 60."""
    memory_provider_context: str | None = None
    """An agent's memory provider context: the last system prompt (priority 1000)."""
    long_term_memory_context: str | None = None
    """Long-term memory text added to the first call's retrieved context, after the memory
    bridge's and the RAG context."""
    tool_failure_mode: ToolFailureMode | None = None
    """The spec's ``executionPolicy.toolFailureMode``: ``fail_closed`` ends the turn with
    ``TOOL_ERROR`` at the first failed tool; otherwise a failure is a result the model reads."""
    max_steps: int | None = None
    """The model steps this turn may run, over ``GMIConfig.max_tool_loop_iterations`` (the full
    runtime's ``options.max_tool_call_iterations``)."""
    system_prompts: tuple[SystemPrompt, ...] = ()
    """The host's own system prompts for this turn, each at its own priority (the full runtime's
    "Hard limits" block of the persona, say)."""
    structured_reply: str | None = None
    """A structured reply's instruction: a system prompt at priority 65 (the full runtime's
    ``options.structured_reply``); the turn's hops get no schema message of their own."""
    learning_namespace: str | None = None
    """The turn's namespace for its learner session (spec "Learning": Learners): the full
    runtime's resolved organization (the request's ``organization_id``, else the config's
    ``default_organization_id``); ``None`` is none (``''``)."""
    workflow_id: str | None = None
    """The workflow the turn belongs to (the request's ``metadata.workflow_id``): "A turn that
    carries metadata.workflowId has none" (no learner)."""
    workflow_seat: bool = False
    """Whether the turn runs on a workflow seat's GMI (no learner)."""


NO_TURN_OPTIONS = TurnOptions()
"""A turn that asks for nothing (every field ``None``): one frozen value any caller may share."""
