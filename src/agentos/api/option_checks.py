"""The construction checks of `agent()` and `gmi()` (spec: GMIs from agent(), Construction).

`check_agent_options()` checks what needs no environment and raises `GMIError` naming the option
or field; `spend_budget_from_option()` makes the agent's one `SpendBudget`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.llm.embedding_resolve import EmbeddingSettings, check_embedding_settings
from agentos.llm.fallback_chain import FallbackLeg
from agentos.llm.spend_budget import SpendBudget
from agentos.persona.definition import HEXACO_TRAITS
from agentos.storage.usage_records import UsageLedger
from agentos.tools.tool import Tool

from .agent_options import (
    LEARNING_MODES,
    AgentOptions,
    AgentRuntime,
    BudgetSettings,
    LearningConfig,
)
from .capability_contract import GMI_REFUSED, is_set
from .cognition import check_cognition, resolve_mechanisms_option
from .generate import check_completion_settings, refuse_unknown_options

__all__ = ["OptionRangeError", "check_agent_options", "spend_budget_from_option"]

_OPTION_NAMES = frozenset(AgentOptions.__annotations__)


class OptionRangeError(GMIError, ValueError):
    """A number out of its range in an option (the spec's RangeError).

    A `GMIError` (``INVALID_ARGUMENT``, ``details["option"]`` naming the field, such as
    ``budget.max_cost_usd``) that is also a `ValueError`, so either kind of handler catches it.
    """


def _invalid(option: str, why: str, code: GMIErrorCode = GMIErrorCode.INVALID_ARGUMENT) -> NoReturn:
    raise GMIError(f"{option}: {why}", code, {"option": option})


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
        for name in GMI_REFUSED:
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
    for name in ("provider", "api_key", "base_url", "policy_tier"):
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
