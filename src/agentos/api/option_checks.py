"""The construction checks of `agent()` and `gmi()` (spec: GMIs from agent(), Construction).

`check_agent_options()` checks what needs no environment and raises `GMIError` naming the option
or field; `spend_budget_from_option()` makes the agent's one `SpendBudget`.
"""

from __future__ import annotations

import inspect
import math
import numbers
import os
from collections.abc import Mapping, Sequence
from typing import Any

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.learning import check_learning
from agentos.llm.budget import JointBudget, SpendBudget
from agentos.llm.embedding import Embedder
from agentos.llm.embedding_resolve import EmbeddingSettings, check_embedding_settings
from agentos.llm.gateway import FallbackLeg
from agentos.memory.store import MemoryStore
from agentos.persona.definition import HEXACO_TRAITS
from agentos.storage.ledger import UsageLedger
from agentos.storage.session_store import SessionStore

from .agent_options import (
    AgentOptions,
    AgentRuntime,
    BudgetSettings,
)
from .call_checks import (
    check_completion_settings,
    invalid,
    refuse_unknown_options,
    tools_option,
)
from .capability_contract import GMI_REFUSED, is_set
from .cognition import check_cognition, resolve_mechanisms_option

__all__ = [
    "OptionRangeError",
    "call_budget_from_option",
    "check_agent_options",
    "spend_budget_from_option",
]

_OPTION_NAMES = frozenset(AgentOptions.__annotations__)


class OptionRangeError(GMIError, ValueError):
    """A number out of its range in an option (the spec's RangeError).

    A `GMIError` (``INVALID_ARGUMENT``, ``details["option"]`` naming the field, such as
    ``budget.max_cost_usd``) that is also a `ValueError`, so either kind of handler catches it.
    """


def check_agent_options(options: Mapping[str, Any], *, runtime: AgentRuntime) -> None:
    """Check what needs no environment, at construction; raise naming the option.

    Raises `GMIError` (``INVALID_ARGUMENT``, ``details["option"]`` the option or field) for an
    unknown option (with a did-you-mean hint), a value of the wrong type or range, an unknown
    cognition profile or metaprompt preset, a bad ``learning`` value (wrong type, a blank
    ``learning.agent_key``, an unknown ``learning.mode``), a ``memory.embedding`` that
    `check_embedding_settings` refuses, ``cognitive_mechanisms`` that
    `resolve_mechanisms_config` refuses, ``tools`` that `tools_option` refuses (an item that
    is neither a `Tool` nor a function), and a ``store``, ``memory.store`` or
    ``memory.embedder`` that is not a `SessionStore`, `MemoryStore` or `Embedder` object,
    naming the members it lacks (a path is refused with the store to build from it, such as
    ``SQLiteSessionStore(path=...)``). Budget numbers below zero or not numbers raise
    `OptionRangeError` (also a `ValueError`). On the gmi runtime, a set ``voice``, ``avatar``
    or ``channels`` raises ``CONFIGURATION_ERROR``: the GMI path does not run them.
    """
    refuse_unknown_options(options, _OPTION_NAMES)
    given = options.get("runtime", runtime)
    if given not in ("legacy", "gmi"):
        invalid("runtime", f"must be 'legacy' or 'gmi', got {given!r}")
    if runtime == "gmi":
        for name in GMI_REFUSED:
            if is_set(options.get(name)):
                invalid(
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
        invalid(name, f"must be a string, got {type(value).__name__}")


def _mapping(options: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    value = options.get(name)
    if value is not None and not isinstance(value, Mapping):
        invalid(name, f"must be a mapping, got {type(value).__name__}")
    return value


def _positive_int(name: str, value: object) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        invalid(name, f"must be an integer >= 1, got {value!r}")


def _positive_number(name: str, value: object) -> None:
    if value is None:
        return
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or math.isnan(value):
        invalid(name, f"must be a number, got {value!r}")
    if value <= 0:
        invalid(name, f"must be > 0, got {value!r}")


def _strings(name: str, value: object) -> None:
    if value is None:
        return
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        invalid(name, f"must be a list of strings, got {type(value).__name__}")
    for position, item in enumerate(value):
        if not isinstance(item, str):
            invalid(name, f"item {position} is a {type(item).__name__}, not a string")


def _check_model(options: Mapping[str, Any]) -> None:
    for name in ("provider", "api_key", "base_url", "policy_tier"):
        _string(options, name)
    model = options.get("model")
    if isinstance(model, bool | int | float | bytes | Mapping):
        invalid("model", f"must be a model id or a ChatModel, got {type(model).__name__}")
    legs = options.get("fallback_providers")
    if legs is not None:
        if isinstance(legs, str | Mapping) or not isinstance(legs, Sequence):
            invalid("fallback_providers", f"must be a list of legs, got {type(legs).__name__}")
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
                invalid(f"personality.{key}", f"must be a number from 0 to 1, got {value!r}")
            if not 0.0 <= float(value) <= 1.0:
                invalid(f"personality.{key}", f"must be from 0 to 1, got {value!r}")
    _strings("system_blocks", options.get("system_blocks"))
    soul = options.get("soul")
    if soul is not None and not isinstance(soul, str):
        if not isinstance(soul, Mapping):
            invalid("soul", f"must be a soul file's text or {{body, style}}, got {soul!r}")
        refuse_unknown_options(soul, ("body", "style"), prefix="soul.")
        for key in ("body", "style"):
            if soul.get(key) is not None and not isinstance(soul[key], str):
                invalid(f"soul.{key}", "must be a string")
    skills = options.get("skills")
    if skills is not None:
        if isinstance(skills, str | Mapping) or not isinstance(skills, Sequence):
            invalid("skills", f"must be a list of skills, got {type(skills).__name__}")
        for position, skill in enumerate(skills):
            content = skill.get("content") if isinstance(skill, Mapping) else skill
            if not isinstance(content, str):
                invalid("skills", f"item {position} is neither a string nor {{content: str}}")
    chain = options.get("chain_of_thought")
    if chain is not None and not isinstance(chain, bool | str):
        invalid("chain_of_thought", f"must be a bool or an instruction, got {chain!r}")


def _check_tools(options: Mapping[str, Any]) -> None:
    tools_option(options.get("tools"))  # each constructor keeps its own wrapped list
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
        invalid("budget", f"must be a SpendBudget or budget settings, got {budget!r}")
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
        invalid("budget.on_limit_reached", "must be a function taking a SpendLimitInfo")
    return SpendBudget(
        budget.get("max_cost_usd"),
        budget.get("max_total_tokens"),
        on_limit_reached=callback,
    )


def _check_state(options: Mapping[str, Any]) -> None:
    history = options.get("history")
    if history is not None and not isinstance(history, bool):
        if not isinstance(history, Mapping):
            invalid("history", f"must be a bool or {{max_tokens}}, got {history!r}")
        refuse_unknown_options(history, ("max_tokens",), prefix="history.")
        _positive_int("history.max_tokens", history.get("max_tokens"))
    ledger = options.get("usage_ledger")
    if ledger is not None and not isinstance(ledger, UsageLedger):
        invalid("usage_ledger", f"must be a UsageLedger, got {type(ledger).__name__}")
    _check_instance("store", options.get("store"), SessionStore, "SQLiteSessionStore(path=...)")
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
        invalid("memory", f"must be a bool or memory settings, got {type(memory).__name__}")
    refuse_unknown_options(memory, _MEMORY_KEYS, prefix="memory.")
    _check_instance("memory.store", memory.get("store"), MemoryStore, "SQLiteMemoryStore(path=...)")
    _check_instance(
        "memory.embedder",
        memory.get("embedder"),
        Embedder,
        "HashEmbedder(384) of agentos.testing, or set memory.embedding to name a model",
    )
    settings = EmbeddingSettings.coerce(memory.get("embedding"))
    if settings is not None:
        check_embedding_settings(settings)
    consolidation = memory.get("consolidation")
    if consolidation is not None:
        if not isinstance(consolidation, Mapping):
            invalid("memory.consolidation", "must be {enabled, interval}")
        refuse_unknown_options(
            consolidation, ("enabled", "interval"), prefix="memory.consolidation."
        )
        enabled = consolidation.get("enabled")
        if enabled is not None and not isinstance(enabled, bool):
            invalid("memory.consolidation.enabled", f"must be a bool, got {enabled!r}")
        _positive_number("memory.consolidation.interval", consolidation.get("interval"))


def _check_instance(option: str, value: object, protocol: type, example: str) -> None:
    """Refuse a ``value`` that is not a ``protocol`` object, naming what it lacks.

    A string or path is refused with ``example``, the object to build: a store opened from a
    path here would be a database connection the agent owns that nothing the caller holds could
    close (pass ``SQLiteSessionStore(path=...)``), and an embedder's name belongs in
    ``memory.embedding``.
    """
    if value is None:
        return
    kind = protocol.__name__
    article = "an" if kind[0] in "AEIOU" else "a"
    if isinstance(value, str | os.PathLike):
        invalid(option, f"must be {article} {kind} object, got {value!r}: pass {example}")
    missing = [
        name
        for name, member in vars(protocol).items()
        if not name.startswith("_")
        and (
            not hasattr(value, name)
            or (inspect.isfunction(member) and not callable(getattr(value, name)))
        )
    ]
    if missing:
        invalid(
            option,
            f"must be {article} {kind} object (such as {example}), got "
            f"{type(value).__name__}, which has no {', '.join(missing)}",
        )


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
            invalid(name, f"must be a function, got {type(value).__name__}")


def _check_learning(learning: object) -> None:
    """``learning`` checked as `check_learning` checks it on gmi(); raise naming the field.

    Spec (The option): "A value of the wrong type, a blank agentKey or an unknown mode throws
    naming the field: at construction on gmi()" (``learning`` or ``learning.<field>``).
    """
    check_learning(learning, surface="gmi")


def call_budget_from_option(budget: object) -> SpendBudget | JointBudget | None:
    """A call's ``budget``: a `JointBudget` as it is, else `spend_budget_from_option`'s.

    A `JointBudget` holds the call to several budgets (the spec's seat: the agency's and the
    member's own), refused when either refuses and charged to both, an ancestor they share once.
    """
    if isinstance(budget, JointBudget):
        return budget
    return spend_budget_from_option(budget)
