"""The options of `agent()` and `gmi()`, their construction checks and the capability contract.

`AgentOptions` lists every option (snake_case, DESIGN.md §2). `check_agent_options()` runs at
construction and checks what needs no environment, raising `GMIError` naming the option (spec:
GMIs from agent(), Construction). `unapplied_options()` and `warn_unapplied()` give the one
warning per agent that names the options it accepts without applying (the capability contract:
the first table's "Guardrails, RAG, HITL, channels, emergent tools" row).
"""

from __future__ import annotations

import logging
import math
import numbers
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, NoReturn, TypedDict

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.llm.embedding_resolve import EmbeddingSettings, check_embedding_settings
from agentos.llm.fallback_chain import FallbackLeg
from agentos.llm.gateway import Router
from agentos.llm.model import ChatModel
from agentos.llm.spend_budget import SpendBudget
from agentos.memory.mechanisms import MechanismsConfig
from agentos.persona.definition import HEXACO_TRAITS
from agentos.storage.usage_records import UsageLedger
from agentos.tools.tool import Tool

from .cognition import CognitionConfig, check_cognition, resolve_mechanisms_option
from .generate import check_completion_settings, refuse_unknown_options
from .warnings import UnappliedOptionsWarning

__all__ = [
    "GMI_UNAPPLIED",
    "LEARNING_MODES",
    "LEGACY_UNAPPLIED",
    "AgentOptions",
    "AgentRuntime",
    "BudgetSettings",
    "LearningConfig",
    "OptionRangeError",
    "check_agent_options",
    "is_set",
    "spend_budget_from_option",
    "unapplied_options",
    "warn_unapplied",
]

AgentRuntime = Literal["legacy", "gmi"]
"""``runtime``: the generate_text() path (``"legacy"``, the default) or a GMI per session."""

LEARNING_MODES: tuple[str, ...] = ("on", "frozen", "off")
"""The modes of ``learning.mode``."""


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
    - ``api_key``, ``base_url``: the primary provider's credentials and endpoint.
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
    - ``tools``, ``max_steps`` (5), ``chain_of_thought`` (``True`` by default, or an instruction):
      the tool loop, with the reasoning instruction first in each call that offers tools.

    Usage, budget, state:

    - ``budget``: a `SpendBudget`, or `BudgetSettings` from which one is made.
    - ``usage_ledger``: a `UsageLedger` that gets a row per finished step or billed failure.
    - ``history``: ``True`` (default), ``False`` (keep none) or ``{max_tokens}`` (120,000).
    - ``store``: a session store (the source of truth of each session's history).
    - ``memory``: ``True`` or ``{embedding: {provider, model?, dimension?}, consolidation:
      {enabled, interval}, store}``: the cognitive memory (gmi runtime only); with
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
    tools: Sequence[Tool] | None
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


_OPTION_NAMES = frozenset(AgentOptions.__annotations__)

_CONTRACT: tuple[str, ...] = (
    "guardrails",
    "rag",
    "hitl",
    "channels",
    "voice",
    "avatar",
    "emergent",
    "discovery",
    "security",
    "permissions",
    "output",
    "provenance",
)

LEGACY_UNAPPLIED: tuple[str, ...] = (
    *_CONTRACT,
    # The legacy path runs no GMI: no cognitive memory, mechanisms, profile or learning layer
    # (spec: "agent() without runtime: 'gmi' ... warns when given cognitiveMechanisms").
    "memory",
    "cognitive_mechanisms",
    "cognition",
    "learning",
    # The completion gateway has no router parameters or host policy yet (see GMI_UNAPPLIED).
    "router_params",
    "host_policy",
)
"""The options agent() without ``runtime="gmi"`` accepts without applying, in warning order."""

GMI_UNAPPLIED: tuple[str, ...] = (
    "rag",
    "discovery",
    "guardrails",
    "security",
    "permissions",
    "hitl",
    "emergent",
    "output",
    "provenance",
    # agentos's completion gateway takes a router and a policy tier but no router parameters or
    # host policy yet: accepted, named in the warning rather than dropped silently.
    "router_params",
    "host_policy",
)
"""The options gmi() accepts without applying (spec: the gmi column of the contract, and the
two gateway inputs agentos does not have yet)."""

_GMI_REFUSED: tuple[str, ...] = ("voice", "avatar", "channels")


class OptionRangeError(GMIError, ValueError):
    """A number out of its range in an option (the spec's RangeError).

    A `GMIError` (``INVALID_ARGUMENT``, ``details["option"]`` naming the field, such as
    ``budget.max_cost_usd``) that is also a `ValueError`, so either kind of handler catches it.
    """


def _invalid(option: str, why: str, code: GMIErrorCode = GMIErrorCode.INVALID_ARGUMENT) -> NoReturn:
    raise GMIError(f"{option}: {why}", code, {"option": option})


def is_set(value: object) -> bool:
    """Whether an option counts as set: not ``None`` or ``False``.

    A config that sets nothing but ``enabled: False`` counts as unset (spec: Construction); an
    empty config (``{}``, ``[]``) is set, as ``cognitive_mechanisms={}`` asks for all eight.
    """
    if value is None or value is False:
        return False
    return not (isinstance(value, Mapping) and dict(value) == {"enabled": False})


def unapplied_options(options: Mapping[str, Any], *, runtime: AgentRuntime) -> list[str]:
    """The options that are set and that this runtime accepts without applying.

    Legacy: `LEGACY_UNAPPLIED` (the capability contract, and the GMI-only memory, mechanisms,
    cognition and learning); gmi: `GMI_UNAPPLIED` (voice, avatar and channels raise instead, in
    `check_agent_options`). Each is listed once, in that tuple's order.
    """
    names = GMI_UNAPPLIED if runtime == "gmi" else LEGACY_UNAPPLIED
    return [name for name in names if is_set(options.get(name))]


def warn_unapplied(
    options: Mapping[str, Any],
    *,
    runtime: AgentRuntime,
    logger: logging.Logger | None = None,
    stacklevel: int = 3,
) -> list[str]:
    """Issue the one warning naming the options accepted without being applied; return them.

    Nothing is issued when none is set. The warning is an `UnappliedOptionsWarning` issued with
    `warnings.warn` (``stacklevel`` 3 points at the caller of the agent constructor that calls
    this), or, when ``logger`` is given, logged at WARNING on it instead.
    """
    names = unapplied_options(options, runtime=runtime)
    if not names:
        return names
    entry = "gmi()" if runtime == "gmi" else "agent()"
    message = (
        f"{entry} accepts these options without applying them: {', '.join(names)} "
        "(capability contract)"
    )
    if logger is not None:
        logger.warning(message)
    else:
        warnings.warn(
            UnappliedOptionsWarning(message, tuple(names), runtime), stacklevel=stacklevel
        )
    return names


def check_agent_options(options: Mapping[str, Any], *, runtime: AgentRuntime) -> None:
    """Check what needs no environment, at construction; raise naming the option.

    Raises `GMIError` (``INVALID_ARGUMENT``, ``details["option"]`` the option or field) for an
    unknown option (with a did-you-mean hint), a value of the wrong type or range, an unknown
    cognition profile or metaprompt preset, a bad ``learning`` value (wrong type, a blank
    ``learning.agent_key``, an unknown ``learning.mode``), a ``memory.embedding`` that
    `check_embedding_settings` refuses, and ``cognitive_mechanisms`` that
    `resolve_mechanisms_config` refuses. Budget numbers below zero or not numbers raise
    `OptionRangeError` (also a `ValueError`). On the gmi runtime, a set ``voice``, ``avatar`` or
    ``channels`` raises ``CONFIGURATION_ERROR``: the GMI path does not run them.
    """
    refuse_unknown_options(options, _OPTION_NAMES)
    given = options.get("runtime", runtime)
    if given not in ("legacy", "gmi"):
        _invalid("runtime", f"must be 'legacy' or 'gmi', got {given!r}")
    if runtime == "gmi":
        for name in _GMI_REFUSED:
            if is_set(options.get(name)):
                _invalid(
                    name,
                    "the gmi runtime does not run it; remove it or use the full runtime",
                    GMIErrorCode.CONFIGURATION_ERROR,
                )
    _check_model(options)
    _check_prompt(options)
    _check_tools(options)
    _check_completion(options)
    _check_state(options)
    _check_callables(options)
    check_cognition(options.get("cognition"))
    _check_learning(options.get("learning"))
    # Checked whatever the profile: memory off leaves them unused, but a bad value is a mistake.
    resolve_mechanisms_option(options.get("cognitive_mechanisms"), "cognitive_mechanisms")


def _string(options: Mapping[str, Any], name: str) -> None:
    value = options.get(name)
    if value is not None and not isinstance(value, str):
        _invalid(name, f"must be a string, got {type(value).__name__}")


def _mapping(options: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    value = options.get(name)
    if value is not None and not isinstance(value, Mapping):
        _invalid(name, f"must be a mapping, got {type(value).__name__}")
    return value


def _positive_int(name: str, value: object) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        _invalid(name, f"must be an integer >= 1, got {value!r}")


def _positive_number(name: str, value: object) -> None:
    if value is None:
        return
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or math.isnan(value):
        _invalid(name, f"must be a number, got {value!r}")
    if value <= 0:
        _invalid(name, f"must be > 0, got {value!r}")


def _strings(name: str, value: object) -> None:
    if value is None:
        return
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        _invalid(name, f"must be a list of strings, got {type(value).__name__}")
    for position, item in enumerate(value):
        if not isinstance(item, str):
            _invalid(name, f"item {position} is a {type(item).__name__}, not a string")


def _check_model(options: Mapping[str, Any]) -> None:
    for name in ("provider", "api_key", "base_url", "policy_tier", "effort"):
        _string(options, name)
    model = options.get("model")
    if isinstance(model, bool | int | float | bytes | Mapping):
        _invalid("model", f"must be a model id or a ChatModel, got {type(model).__name__}")
    legs = options.get("fallback_providers")
    if legs is not None:
        if isinstance(legs, str | Mapping) or not isinstance(legs, Sequence):
            _invalid("fallback_providers", f"must be a list of legs, got {type(legs).__name__}")
        for position, leg in enumerate(legs):
            try:
                FallbackLeg.coerce(leg)
            except GMIError as exc:  # its message names the leg's field, not the option
                raise GMIError(
                    f"fallback_providers[{position}]: {exc.message}", exc.code, exc.details
                ) from exc
    _mapping(options, "router_params")


def _check_prompt(options: Mapping[str, Any]) -> None:
    for name in ("instructions", "name"):
        _string(options, name)
    personality = _mapping(options, "personality")
    if personality is not None:
        refuse_unknown_options(personality, HEXACO_TRAITS, prefix="personality.")
        for key, value in personality.items():
            if value is None:
                continue
            if not isinstance(value, numbers.Real) or isinstance(value, bool):
                _invalid(f"personality.{key}", f"must be a number from 0 to 1, got {value!r}")
            if not 0.0 <= float(value) <= 1.0:
                _invalid(f"personality.{key}", f"must be from 0 to 1, got {value!r}")
    _strings("system_blocks", options.get("system_blocks"))
    soul = options.get("soul")
    if soul is not None and not isinstance(soul, str):
        if not isinstance(soul, Mapping):
            _invalid("soul", f"must be a soul file's text or {{body, style}}, got {soul!r}")
        refuse_unknown_options(soul, ("body", "style"), prefix="soul.")
        for key in ("body", "style"):
            if soul.get(key) is not None and not isinstance(soul[key], str):
                _invalid(f"soul.{key}", "must be a string")
    skills = options.get("skills")
    if skills is not None:
        if isinstance(skills, str | Mapping) or not isinstance(skills, Sequence):
            _invalid("skills", f"must be a list of skills, got {type(skills).__name__}")
        for position, skill in enumerate(skills):
            content = skill.get("content") if isinstance(skill, Mapping) else skill
            if not isinstance(content, str):
                _invalid("skills", f"item {position} is neither a string nor {{content: str}}")
    chain = options.get("chain_of_thought")
    if chain is not None and not isinstance(chain, bool | str):
        _invalid("chain_of_thought", f"must be a bool or an instruction, got {chain!r}")


def _check_tools(options: Mapping[str, Any]) -> None:
    tools = options.get("tools")
    if tools is not None and (isinstance(tools, str | Mapping) or not isinstance(tools, Sequence)):
        _invalid("tools", f"must be a list of Tool, got {type(tools).__name__}")
    for position, item in enumerate(tools or ()):
        if not isinstance(item, Tool):
            _invalid(
                "tools",
                f"item {position} is a {type(item).__name__}, not a Tool "
                "(wrap functions with agentos.tool or Tool.from_function)",
            )
    names = [item.name for item in tools or ()]
    if len(set(names)) != len(names):
        _invalid("tools", f"tool names must be unique, got {names}")
    _positive_int("max_steps", options.get("max_steps"))


def _check_completion(options: Mapping[str, Any]) -> None:
    _positive_int("max_tokens", options.get("max_tokens"))
    check_completion_settings(options)
    _mapping(options, "custom_model_params")
    controls = _mapping(options, "controls")
    if controls is not None:
        refuse_unknown_options(
            controls, ("max_total_tokens", "max_duration_ms"), prefix="controls."
        )
        _positive_int("controls.max_total_tokens", controls.get("max_total_tokens"))
        _positive_number("controls.max_duration_ms", controls.get("max_duration_ms"))
    budget = options.get("budget")
    if budget is not None and not isinstance(budget, SpendBudget):
        spend_budget_from_option(budget)


def spend_budget_from_option(budget: object) -> SpendBudget | None:
    """The agent's `SpendBudget`: ``budget`` itself, one made of `BudgetSettings`, or ``None``.

    Raises `OptionRangeError` (a `GMIError` and a `ValueError`) naming ``budget.max_cost_usd`` or
    ``budget.max_total_tokens`` for a value below zero or not a number, and `GMIError` naming
    ``budget`` (or the key) for another type or an unknown key.
    """
    if budget is None or isinstance(budget, SpendBudget):
        return budget
    if not isinstance(budget, Mapping):
        _invalid("budget", f"must be a SpendBudget or budget settings, got {budget!r}")
    refuse_unknown_options(budget, BudgetSettings.__annotations__, prefix="budget.")
    for key in ("max_cost_usd", "max_total_tokens"):
        value = budget.get(key)
        if value is None:
            continue
        if (
            not isinstance(value, numbers.Real)
            or isinstance(value, bool)
            or math.isnan(value)
            or value < 0
        ):
            option = f"budget.{key}"
            raise OptionRangeError(
                f"{option}: must be a number >= 0, got {value!r}",
                GMIErrorCode.INVALID_ARGUMENT,
                {"option": option},
            )
    callback = budget.get("on_limit_reached")
    if callback is not None and not callable(callback):
        _invalid("budget.on_limit_reached", "must be a function taking a SpendLimitInfo")
    return SpendBudget(
        budget.get("max_cost_usd"),
        budget.get("max_total_tokens"),
        on_limit_reached=callback,
    )


def _check_state(options: Mapping[str, Any]) -> None:
    history = options.get("history")
    if history is not None and not isinstance(history, bool):
        if not isinstance(history, Mapping):
            _invalid("history", f"must be a bool or {{max_tokens}}, got {history!r}")
        refuse_unknown_options(history, ("max_tokens",), prefix="history.")
        _positive_int("history.max_tokens", history.get("max_tokens"))
    ledger = options.get("usage_ledger")
    if ledger is not None and not isinstance(ledger, UsageLedger):
        _invalid("usage_ledger", f"must be a UsageLedger, got {type(ledger).__name__}")
    provider_options = _mapping(options, "memory_provider_options")
    if provider_options is not None:
        refuse_unknown_options(provider_options, ("timeout_ms",), prefix="memory_provider_options.")
        _positive_number("memory_provider_options.timeout_ms", provider_options.get("timeout_ms"))
    _check_memory(options.get("memory"))


_MEMORY_KEYS = ("embedding", "embedder", "consolidation", "store")


def _check_memory(memory: object) -> None:
    if memory is None or isinstance(memory, bool):
        return
    if not isinstance(memory, Mapping):
        _invalid("memory", f"must be a bool or memory settings, got {type(memory).__name__}")
    refuse_unknown_options(memory, _MEMORY_KEYS, prefix="memory.")
    embedding = memory.get("embedding")
    if embedding is not None:
        if isinstance(embedding, EmbeddingSettings):
            settings = embedding
        elif isinstance(embedding, Mapping):
            settings = EmbeddingSettings.from_mapping(embedding)
        else:
            _invalid("memory.embedding", "must be {provider, model?, dimension?}")
        check_embedding_settings(settings)
    consolidation = memory.get("consolidation")
    if consolidation is not None:
        if not isinstance(consolidation, Mapping):
            _invalid("memory.consolidation", "must be {enabled, interval}")
        refuse_unknown_options(
            consolidation, ("enabled", "interval"), prefix="memory.consolidation."
        )
        enabled = consolidation.get("enabled")
        if enabled is not None and not isinstance(enabled, bool):
            _invalid("memory.consolidation.enabled", f"must be a bool, got {enabled!r}")
        _positive_number("memory.consolidation.interval", consolidation.get("interval"))


def _check_callables(options: Mapping[str, Any]) -> None:
    for name in (
        "router",
        "on_fallback",
        "on_before_generation",
        "on_after_generation",
        "on_before_tool_execution",
    ):
        value = options.get(name)
        if value is not None and not callable(value):
            _invalid(name, f"must be a function, got {type(value).__name__}")


def _check_learning(learning: object) -> None:
    """The types of ``learning`` (its layer is built elsewhere); raise naming the field."""
    if learning is None or isinstance(learning, bool):
        return
    if not isinstance(learning, Mapping):
        _invalid("learning", f"must be a bool or a LearningConfig, got {type(learning).__name__}")
    refuse_unknown_options(learning, LearningConfig.__annotations__, prefix="learning.")
    mode = learning.get("mode")
    if mode is not None and mode not in LEARNING_MODES:
        _invalid("learning.mode", f"must be 'on', 'frozen' or 'off', got {mode!r}")
    agent_key = learning.get("agent_key")
    if agent_key is not None and (not isinstance(agent_key, str) or not agent_key.strip()):
        _invalid("learning.agent_key", f"must be a non-blank string, got {agent_key!r}")
    namespace = learning.get("namespace")
    if namespace is not None and not isinstance(namespace, str):
        _invalid("learning.namespace", f"must be a string, got {namespace!r}")
    _strings("learning.anonymous_user_ids", learning.get("anonymous_user_ids"))
    for key in ("traits", "lessons", "skills"):
        value = learning.get(key)
        if value is not None and not isinstance(value, bool):
            _invalid(f"learning.{key}", f"must be a bool, got {value!r}")
