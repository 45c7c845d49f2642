"""`agent()`: the lightweight agent (no ``runtime``, or ``runtime="legacy"``), or a GMI agent.

Spec: the first table and the paragraph before it, "What a GMI adds over a plain agent";
reference §1.27. A plain agent calls the model through `generate_text()` / `stream_text()` with
a system prompt built once from its options (`build_system_prompt`: the soul, ``instructions``,
the name line, the personality section, the skills), runs the tools it is given for up to
``max_steps`` (5) steps with the chain-of-thought instruction on by default, and keeps each
session's history in process memory (`AgentSession`). ``generate()`` and ``stream()`` keep none.

It checks its options when built (`check_agent_options`) and warns once, naming the options it
accepts without applying (the capability contract, `warn_unapplied`). ``runtime="gmi"`` returns
``gmi(**options)`` instead.
"""

from __future__ import annotations

import importlib
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Unpack, cast

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import ContentPart
from agentos.core.usage import ModelUsage
from agentos.learning import LearningLayer
from agentos.llm.budget import SpendBudget
from agentos.llm.resolve import split_model_string
from agentos.storage.session_history import DEFAULT_HISTORY_MAX_TOKENS, SessionHistoryBuffer

from .agent_export import AgentExport, export_agent_config, exported_config
from .agent_options import GENERATE_CALL_OPTIONS, AgentOptions
from .agent_turn import AgentTurn, TurnSettings
from .agent_types import Agent
from .approvals import check_approve_tool
from .call_checks import check_call_options, check_prompt, check_session_ids
from .capability_contract import warn_unapplied
from .generate import DEFAULT_MAX_STEPS, TextOptions, tool_set
from .gmi_persona import build_system_prompt
from .memory_provider import check_memory_provider, memory_timeout_ms
from .option_checks import (
    call_budget_from_option,
    check_agent_options,
    spend_budget_from_option,
)
from .plain_engine import PlainEngine, UsageTally
from .results import GenerateTextResult
from .session import AgentSession
from .stream_result import StreamTextResult

if TYPE_CHECKING:
    from .gmi_agent import GmiAgent

__all__ = ["PlainAgent", "agent", "import_agent"]

# The agent options that go to every generate_text() call as they are.
_PASSED_THROUGH = (
    "provider",
    "model",
    "api_key",
    "base_url",
    "fallback_providers",
    "on_fallback",
    "router",
    "policy_tier",
    "usage_ledger",
    "custom_model_params",
    "thinking",
    "effort",
    "cache",
    "on_before_generation",
    "on_after_generation",
    "on_before_tool_execution",
)


def agent(**options: Unpack[AgentOptions]) -> Agent:
    """Build an agent from `AgentOptions`.

    Without ``runtime`` (or with ``runtime="legacy"``) the options are checked now: a bad one
    raises `GMIError` naming it (``memory_provider`` without ``get_context``/``observe``, a
    ``store`` that is not a session store, included), and one `UnappliedOptionsWarning` names
    the set options this path accepts without applying. ``runtime="gmi"`` returns
    ``gmi(**options)``, a GMI agent with the same surface (``generate()``, ``stream()``,
    ``session()``, ``usage()``, ``close()``) that does its own checks. Another runtime raises
    naming ``runtime``.
    """
    if options.get("runtime") == "gmi":
        # Imported here: the GMI path is heavier, and the plain agent does not need it.
        module = importlib.import_module("agentos.api.gmi_agent")
        gmi_agent: GmiAgent = module.gmi(**options)
        return gmi_agent
    check_agent_options(options, runtime="legacy")
    check_memory_provider(options.get("memory_provider"))
    built = PlainAgent(options)
    warn_unapplied(options, runtime="legacy", stacklevel=3)
    return built


def import_agent(document: Mapping[str, Any], **options: Any) -> Agent:
    """An agent built from an exported ``document`` (`Agent.export()`), ``options`` over its config.

    Pass again what the export left out (``tools=...``, ``api_key=...``, a model instance). A
    document that is not an agent export raises `ValueError` naming the field; then `agent()`
    checks the options as always. A document exported from a `gmi()` agent gives a `GmiAgent`
    (its config keeps ``runtime="gmi"``).
    """
    return agent(**{**exported_config(document), **options})


class PlainAgent:
    """A plain agent (the spec's lightweight helper, an `Agent`): build it with `agent()`.

    ``system_prompt`` is what every call sends first. ``generate()`` / ``stream()`` run one
    call with no history; ``session(id)`` opens a conversation whose history is kept;
    ``usage()`` adds up what the calls used; ``close()`` ends the agent and its sessions.
    """

    def __init__(self, options: Mapping[str, Any]) -> None:
        self.options: Mapping[str, Any] = dict(options)
        """The options the agent was built with."""
        self.system_prompt = build_system_prompt(options)
        """The system prompt every call sends (``""`` when the options give none)."""
        controls: Mapping[str, Any] = options.get("controls") or {}
        max_tokens = options.get("max_tokens")
        if max_tokens is None:
            max_tokens = controls.get("max_total_tokens")
        duration_ms = controls.get("max_duration_ms")
        chain = options.get("chain_of_thought")
        text: dict[str, Any] = {
            name: options[name] for name in _PASSED_THROUGH if options.get(name) is not None
        }
        text.update(
            system=self.system_prompt,
            tools=tool_set(options.get("tools")),  # functions wrapped once; a box kept live
            max_steps=options.get("max_steps") or DEFAULT_MAX_STEPS,
            # The reference's default: the reasoning instruction goes first when tools exist.
            chain_of_thought=True if chain is None else chain,
        )
        budget = spend_budget_from_option(options.get("budget"))
        if budget is not None:
            text["budget"] = budget  # one SpendBudget for every call and session of the agent
        self._budget = budget
        if max_tokens is not None:
            text["max_tokens"] = max_tokens
        if duration_ms is not None:
            text["request_timeout"] = duration_ms / 1000.0  # milliseconds to seconds
        self._settings = TurnSettings(
            cast("TextOptions", text),
            memory_provider=options.get("memory_provider"),
            memory_timeout_ms=memory_timeout_ms(options.get("memory_provider_options")),
        )
        history = options.get("history")
        self._keeps_history = history is not False
        self._history_max_tokens = (
            int(history.get("max_tokens") or DEFAULT_HISTORY_MAX_TOKENS)
            if isinstance(history, Mapping)
            else DEFAULT_HISTORY_MAX_TOKENS
        )
        self._store = options.get("store")
        self._sessions: dict[str, AgentSession] = {}
        self._usage = UsageTally()
        self._closed = False

    # -- one call, no history ---------------------------------------------------------------

    async def generate(self, prompt: str | list[ContentPart], **options: Any) -> GenerateTextResult:
        """Run one call with no history and return its result.

        Options (each replacing the agent's for this call): ``temperature``, ``max_tokens``,
        ``top_p``, ``response_schema``, ``schema_name``, ``model``, ``provider``, ``max_steps``,
        ``usage_ledger``, ``budget`` and ``approve_tool``; another raises `GMIError` naming it.
        The memory provider is consulted and told of the call as for a session's turn.

        ``budget`` is a `SpendBudget`, budget settings, or a `JointBudget` holding the call to
        several budgets (refused when any refuses, charged to each, an ancestor they share
        once). ``approve_tool(call)`` is asked about each tool call after the agent's
        ``on_before_tool_execution``, with the arguments the hook left, and answers ``True`` /
        ``False`` or an `ApprovalDecision` (sync or async); a call it does not approve is
        skipped and the model told ``"Tool call '<name>' was not approved: <reason>"``, and a
        gate that raises does not approve (the exception is the reason).
        """
        return await self.stream(prompt, **options).result

    def stream(self, prompt: str | list[ContentPart], **options: Any) -> StreamTextResult:
        """Start one call with no history, to read as it streams (options as for `generate`)."""
        self._check_open()
        check_prompt(prompt)
        call = self._call_options("generate()", options, GENERATE_CALL_OPTIONS)
        turn = AgentTurn(
            self._settings,
            prompt,
            call,
            on_usage=lambda usage: self._usage.add(usage, None),
            check_open=self._check_open,
        )
        return StreamTextResult(turn, call.get("response_schema"))

    # -- sessions ---------------------------------------------------------------------------

    def session(self, session_id: str | None = None, *, user_id: str | None = None) -> AgentSession:
        """The session ``session_id`` (a new id when ``None``), opened on first use.

        The same open session is returned for its id; reopening it with another ``user_id``
        raises `GMIError` (``INVALID_ARGUMENT``, naming ``user_id``). ``user_id`` is sent with
        each model request as the end user's id, so pass an opaque one; a blank one is an
        anonymous user, none is sent. A ``session_id`` that is not a non-blank string, or a
        ``user_id`` that is not a string, raises `GMIError` naming it (`check_session_ids`).
        """
        self._check_open()
        if session_id is None:
            session_id = uuid.uuid4().hex
        check_session_ids(session_id, user_id)
        existing = self._sessions.get(session_id)
        if existing is not None:
            if user_id is not None and user_id != existing.user_id:
                raise GMIError(
                    f"user_id: session {session_id!r} is open for another user id",
                    GMIErrorCode.INVALID_ARGUMENT,
                    {"option": "user_id"},
                )
            return existing
        history = (
            SessionHistoryBuffer(session_id, self._store, max_tokens=self._history_max_tokens)
            if self._keeps_history
            else None
        )
        opened = AgentSession(
            session_id,
            PlainEngine(self._settings, history, self._call_options),
            history=history,
            user_id=user_id,
            on_usage=self._usage.add,
            on_closed=self._session_closed,
        )
        self._sessions[session_id] = opened
        return opened

    def _session_closed(self, closed: AgentSession) -> None:
        if self._sessions.get(closed.id) is closed:
            del self._sessions[closed.id]

    # -- usage and closing ------------------------------------------------------------------

    @property
    def budget(self) -> SpendBudget | None:
        """The agent's own `SpendBudget` (its ``budget`` option), shared by all its calls."""
        return self._budget

    @property
    def learning(self) -> LearningLayer | None:
        """``None``: the lightweight path runs no GMI, so no learning layer (spec "Learning")."""
        return None

    def export(self, metadata: Mapping[str, Any] | None = None) -> AgentExport:
        """The agent's options as a portable document (`agentos.api.agent_export`).

        Plain-data options go in ``config``; live objects (tools, hooks, a model instance, ...)
        and ``api_key`` are named in ``omitted``. `import_agent()` builds the agent again.
        """
        return export_agent_config(self.options, runtime="legacy", metadata=metadata)

    def usage(self, session_id: str | None = None) -> ModelUsage:
        """What the agent's calls used: one session's turns, or (no id) every call's.

        With no id: every session's turns and every ``generate()`` / ``stream()`` call. A
        session's usage stays counted after it closes.
        """
        if session_id is None:
            return self._usage.total
        return self._usage.sessions.get(session_id, ModelUsage.zero())

    async def close(self) -> None:
        """Close every session and the agent: later calls raise ``INVALID_STATE``.

        A turn already running finishes. Closing twice does nothing.
        """
        if self._closed:
            return
        self._closed = True
        for opened in list(self._sessions.values()):
            await opened.close()

    @property
    def closed(self) -> bool:
        """Whether `close()` was called."""
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise GMIError("the agent is closed", GMIErrorCode.INVALID_STATE)

    def _call_options(
        self, call: str, options: dict[str, Any], allowed: frozenset[str]
    ) -> TextOptions:
        """The per-call options, checked and laid over the agent's: the model's, the budget."""
        unknown = sorted(set(options) - allowed)
        if unknown:
            raise GMIError(
                f"{unknown[0]}: {call} does not take this option (it takes "
                f"{', '.join(sorted(allowed))})",
                GMIErrorCode.INVALID_ARGUMENT,
                {"option": unknown[0]},
            )
        # None means "not set": the agent's value stands (as generate_text() reads None).
        merged = {name: value for name, value in options.items() if value is not None}
        check_call_options(merged)
        check_approve_tool(merged.get("approve_tool"))
        if "budget" in merged:
            merged["budget"] = call_budget_from_option(merged["budget"])
        overrides = _model_overrides(self._settings.text_options, merged)
        return cast("TextOptions", {**merged, **overrides})


def _model_overrides(base: TextOptions, call: dict[str, Any]) -> dict[str, Any]:
    """What a call's ``model`` / ``provider`` change in the agent's, so the two do not clash.

    A model instance replaces the agent's provider and model. A call naming another provider
    (``provider``, or a ``"provider:model"`` string) drops the agent's model and its
    credentials, which belong to the agent's provider; a bare model id keeps the provider.
    A dropped option becomes ``None`` (unset).
    """
    if "model" not in call and "provider" not in call:
        return {}
    model = call.get("model")
    if model is not None and not isinstance(model, str):
        return {"provider": None, "model": model}
    named = call.get("provider")
    if named is None and isinstance(model, str):
        named = split_model_string(None, model)[0]
    overrides: dict[str, Any] = {"model": model}
    if named is not None and named != base.get("provider"):
        overrides.update(provider=named, api_key=None, base_url=None)
    return overrides
