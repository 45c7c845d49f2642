"""The options of `agent()` and `gmi()`: `AgentOptions` and the settings it nests.

Every option in snake_case (DESIGN.md §2). Their construction checks are in `option_checks`,
and the options each runtime accepts without applying in `capability_contract`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypedDict

from agentos.llm.budget import SpendBudget
from agentos.llm.gateway import FallbackLeg, Router
from agentos.llm.model import ChatModel
from agentos.memory.mechanisms import MechanismsConfig
from agentos.storage.ledger import UsageLedger
from agentos.tools.tool import Tool
from agentos.tools.toolbox import ToolBox

from .cognition import CognitionConfig

__all__ = [
    "GENERATE_CALL_OPTIONS",
    "LEARNING_MODES",
    "AgentOptions",
    "AgentRuntime",
    "BudgetSettings",
    "LearningConfig",
]

AgentRuntime = Literal["legacy", "gmi"]
"""``runtime``: the generate_text() path (``"legacy"``, the default) or a GMI per session."""

LEARNING_MODES: tuple[str, ...] = ("on", "frozen", "off")
"""The modes of ``learning.mode``."""

GENERATE_CALL_OPTIONS: frozenset[str] = frozenset(
    {
        "temperature",
        "max_tokens",
        "top_p",
        "response_schema",
        "schema_name",
        "model",
        "provider",
        "max_steps",
        "usage_ledger",
        "budget",
        "approve_tool",
    }
)
"""The options an agent's ``generate()`` and ``stream()`` take (anything else is refused).

``budget`` may be a `JointBudget` (the call held to several budgets); ``approve_tool`` is the
tool-approval gate `agentos.api.approvals` describes (what agency() passes to a member)."""


class BudgetSettings(TypedDict, total=False):
    """``budget`` as settings: one `SpendBudget` shared by every call of the agent is made of them.

    ``max_cost_usd`` and ``max_total_tokens`` are numbers >= 0 (either optional);
    ``on_limit_reached`` runs with a `SpendLimitInfo` when a call is refused.
    """

    max_cost_usd: float | None
    max_total_tokens: float | None
    on_limit_reached: Callable[..., Any] | None


class LearningConfig(TypedDict, total=False):
    """``learning`` as a config (spec: Learning, The option); each field optional.

    ``mode`` (``'on'``, the default, ``'frozen'`` or ``'off'``), ``agent_key`` (names the agent
    its learners belong to; not blank), ``namespace`` (the organization of every learner),
    ``anonymous_user_ids`` (user ids that name no learner), and ``traits``, ``lessons`` and
    ``skills`` (bools asking for trait changes, lessons and the skill library).
    """

    mode: Literal["on", "frozen", "off"]
    agent_key: str
    namespace: str
    anonymous_user_ids: Sequence[str]
    traits: bool
    lessons: bool
    skills: bool


class AgentOptions(TypedDict, total=False):
    """Every keyword option of `agent()` and `gmi()` (all optional; snake_case of the spec's).

    Model and gateway:

    - ``provider`` / ``model``: who serves the calls (a provider id, a ``"provider:model"``
      string, or a `ChatModel` instance as ``model``), resolved as `generate_text()` does.
    - ``api_key``, ``base_url``: the primary provider's credentials and endpoint; they serve
      every fallback hop and memory embedding on that provider, never one on another
      (DESIGN §5.20). A fallback leg and ``memory.embedding`` may carry their own.
    - ``fallback_providers``, ``router``, ``router_params``, ``host_policy``, ``policy_tier``,
      ``on_fallback(error, provider)``: the completion gateway's hops and its fallback callback.
    - ``thinking`` (a token budget or ``{"budget_tokens": n}``), ``effort``, ``cache`` (``True``,
      ``False``, ``"5m"``, ``"1h"``), ``custom_model_params``, ``max_tokens``: completion options.
    - ``controls``: ``{max_total_tokens, max_duration_ms}``; ``max_total_tokens`` is the output
      cap when ``max_tokens`` is unset, ``max_duration_ms`` each request's timeout.

    Prompt and persona:

    - ``instructions``, ``name``, ``personality`` (HEXACO traits 0..1: ``honesty``,
      ``emotionality``, ``extraversion``, ``agreeableness``, ``conscientiousness``,
      ``openness``), ``soul`` (a soul file's text, front matter not applied, or ``{body,
      style}``), ``skills`` (skill contents: strings or ``{content}`` mappings), or
      ``system_blocks`` (the whole system prompt as blocks): see `build_system_prompt`.
    - ``tools`` (`Tool` objects, or plain functions wrapped as `Tool.from_function` does, or a
      `ToolBox` the agent reads again before each model step), ``max_steps`` (5),
      ``chain_of_thought`` (``True`` by default, or an instruction): the
      tool loop, with the reasoning instruction first in each call that offers tools.

    Usage, budget, state:

    - ``budget``: a `SpendBudget`, or `BudgetSettings` from which one is made.
    - ``usage_ledger``: a `UsageLedger` that gets a row per finished step or billed failure.
    - ``history``: ``True`` (default), ``False`` (keep none) or ``{max_tokens}`` (120,000).
    - ``store``: a `SessionStore` object (the source of truth of each session's history), such
      as ``SQLiteSessionStore(path="agentos.db")``; a path alone is refused, since a store the
      agent opened itself would hold a connection nothing the caller has could close.
    - ``memory``: ``True`` or ``{embedding: {provider, model?, dimension?, api_key?,
      base_url?}, consolidation: {enabled, interval}, store}``: the cognitive memory (gmi
      runtime only); an embedding on the agent's provider without credentials of its own uses
      the agent's ``api_key`` / ``base_url`` (DESIGN §5.20); with
      ``consolidation.enabled`` a cycle runs every ``interval`` seconds (3,600). ``store`` is a
      `MemoryStore` (``SQLiteMemoryStore`` makes it durable); ``embedder`` (an agentos
      extension) is an `Embedder` instance used instead of ``embedding``'s provider.
    - ``memory_provider`` (``get_context()`` / ``observe()``) and ``memory_provider_options``
      (``{timeout_ms}``).
    - ``cognition`` (``'light'``, ``'full'`` or a `CognitionConfig`), ``cognitive_mechanisms``
      (per-mechanism settings), ``learning`` (``True`` or a `LearningConfig`): gmi runtime only.
    - ``on_before_generation``, ``on_after_generation``, ``on_before_tool_execution``: hooks.
    - ``runtime``: ``"legacy"`` (default) or ``"gmi"``.

    The capability contract: ``voice``, ``avatar``, ``channels``, ``rag``, ``discovery``,
    ``guardrails``, ``security``, ``permissions``, ``hitl``, ``emergent``, ``output`` and
    ``provenance`` are accepted without being applied, with one warning (`warn_unapplied`);
    on the gmi runtime ``voice``, ``avatar`` and ``channels`` raise. ``verify_citations`` checks
    ``generate()``'s answer against the configured retriever's sources.
    """

    provider: str | None
    model: str | ChatModel | None
    api_key: str | None
    base_url: str | None
    instructions: str | None
    name: str | None
    personality: Mapping[str, float] | None
    system_blocks: Sequence[str] | None
    soul: str | Mapping[str, Any] | None
    skills: Sequence[str | Mapping[str, Any]] | None
    tools: Sequence[Tool | Callable[..., Any]] | ToolBox | None
    max_steps: int
    chain_of_thought: bool | str
    fallback_providers: Sequence[FallbackLeg | Mapping[str, Any]] | None
    router: Router | None
    router_params: Mapping[str, Any] | None
    host_policy: Any
    policy_tier: str | None
    on_fallback: Callable[[BaseException, str], None] | None
    thinking: bool | int | Mapping[str, Any] | None
    effort: str | None
    cache: bool | Literal["5m", "1h"] | None
    custom_model_params: Mapping[str, Any] | None
    max_tokens: int | None
    controls: Mapping[str, Any] | None
    budget: SpendBudget | BudgetSettings | None
    usage_ledger: UsageLedger | None
    history: bool | Mapping[str, Any] | None
    store: Any
    memory: bool | Mapping[str, Any] | None
    memory_provider: Any
    memory_provider_options: Mapping[str, Any] | None
    cognition: Literal["light", "full"] | CognitionConfig | None
    cognitive_mechanisms: Mapping[str, Any] | MechanismsConfig | None
    learning: bool | LearningConfig | None
    on_before_generation: Callable[..., Any] | None
    on_after_generation: Callable[..., Any] | None
    on_before_tool_execution: Callable[..., Any] | None
    runtime: AgentRuntime
    voice: Any
    avatar: Any
    channels: Any
    rag: Any
    discovery: Any
    guardrails: Any
    security: Any
    permissions: Any
    hitl: Any
    emergent: Any
    output: Any
    provenance: Any
    verify_citations: Any
