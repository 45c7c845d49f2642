"""`gmi()` / `create_gmi()` / `agent(runtime="gmi")`: an agent whose sessions are GMIs.

Spec: GMIs from agent(). Construction checks what needs no environment and raises naming the
option (`check_agent_options`), and warns once about the options it accepts without applying.
The rest is built on first use (`agentos.api.gmi_build`), so keys set after construction count:
the provider and model, the persona, the tool orchestrator and, with memory on, one
`CognitiveMemoryManager` shared by every session. A session is opened from the parts in
`agentos.api.gmi_session_open` (its user, memory scope, history and memory provider).

Each session's GMI calls the model through a completion gateway built from ``api_key``,
``base_url``, ``fallback_providers``, ``router`` and ``policy_tier``, metered (one ledger row and
one observer event per finished step and per billed failed attempt) and held to the agent's
budget (`SpendBudget`, shared by all sessions and calls; a call's ``budget`` replaces it for that
call). The agent's ``on_fallback(error, provider)`` is called on each fallback through the GMI's
own callback. The chain-of-thought instruction (on by default) goes first in the system prompt
of each model call that offers tools. ``max_steps`` (5) is each turn's tool-loop limit.

With ``learning`` on, the agent has one learning layer (`GmiAgent.learning`), and each session
entry and each call a learner session of its own (`agentos.api.gmi_learning`): its GMIs send the
personality section as a system prompt of their own at priority 2 (spec "Learning").
"""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Mapping
from typing import Any, Unpack

from agentos.core.messages import ContentPart, Message
from agentos.core.usage import ModelUsage
from agentos.learning import LearningLayer
from agentos.llm.budget import SpendBudget
from agentos.memory.manager import CognitiveMemoryManager
from agentos.storage.session_store import SessionStore
from agentos.substrate.gmi import GMI
from agentos.tools.tool import Tool
from agentos.tools.toolbox import ToolBox

from .agent_export import AgentExport, export_agent_config
from .agent_options import GENERATE_CALL_OPTIONS, AgentOptions
from .approvals import check_approve_tool, tool_gate
from .call_checks import (
    check_call_options,
    check_prompt,
    check_session_ids,
    refuse_unknown_options,
)
from .capability_contract import warn_unapplied
from .cognition import ResolvedCognition, resolve_cognition
from .generate import tool_set
from .gmi_build import GmiBuilder
from .gmi_engine import GmiEngine
from .gmi_learning import CallLearner, agent_learning_layer
from .gmi_session_open import (
    MemoryProviderHooks,
    check_same_user,
    history_buffer,
    memory_outlives_agent,
    scope_of_opening,
)
from .gmi_session_registry import SessionRegistry
from .gmi_turn import GmiTurnRun
from .memory_provider import MemoryProviderWarning, memory_timeout_ms
from .option_checks import (
    call_budget_from_option,
    check_agent_options,
    spend_budget_from_option,
)
from .results import ErrorPart, GenerateTextResult
from .session import AgentSession
from .stream_result import StreamTextResult
from .structured import structured_spec

__all__ = ["CALL_OPTIONS", "GmiAgent", "create_gmi", "gmi"]

CALL_OPTIONS = GENERATE_CALL_OPTIONS | {"abort_signal"}
"""What `GmiAgent.generate()` / `stream()` take per call (spec: agent.generate()): the
legacy agent's per-call options (``approve_tool`` and a `JointBudget` ``budget`` included) and
``abort_signal``."""


class GmiAgent:
    """A `gmi()` agent: `session()`, `generate()`, `stream()`, `usage()`, `close()`."""

    def __init__(self, options: AgentOptions) -> None:
        check_agent_options(options, runtime="gmi")
        # Functions wrapped once; a ToolBox is kept, read again before each model step.
        self._tools: list[Tool] | ToolBox = tool_set(options.get("tools"))
        warn_unapplied(options, runtime="gmi", stacklevel=4)
        if "tools" in options:
            options = {**options, "tools": self._tools}
        self.options: AgentOptions = options
        self.cognition: ResolvedCognition = resolve_cognition(options)
        if self.cognition.memory_on and options.get("memory_provider") is not None:
            warnings.warn(
                MemoryProviderWarning(
                    "memory_provider: cognitive memory is on, so its get_context() is skipped in "
                    "sessions (the cognitive memory supplies the context); observe() still runs"
                ),
                stacklevel=3,
            )
        self._budget: SpendBudget | None = spend_budget_from_option(options.get("budget"))
        self._builder = GmiBuilder(
            options, self.cognition, self._tools, persona_id=f"agent-{uuid.uuid4().hex[:12]}"
        )
        self._registry = SessionRegistry()
        self._learning = agent_learning_layer(options, self.cognition)

    @property
    def learning(self) -> LearningLayer | None:
        """The agent's learning layer, ``None`` with learning off (spec "Learning").

        One per agent, built at construction: each session entry gets a learner session with its
        first turn, each ``generate()`` / ``stream()`` call one of its own. `close()` ends every
        session's and leaves the layer open; its ``manifest()`` reports the agent's loops.
        """
        return self._learning

    @property
    def budget(self) -> SpendBudget | None:
        """The agent's own `SpendBudget` (its ``budget`` option), shared by all its calls."""
        return self._budget

    # -- sessions ---------------------------------------------------------------------------

    def session(self, session_id: str | None = None, *, user_id: str | None = None) -> AgentSession:
        """The session ``session_id`` (opened now, or the one already open; a new id when ``None``).

        Reopening an open id with another ``user_id`` raises; an id reopened after `close()`
        starts empty with a new memory scope. A ``session_id`` that is not a non-blank string,
        or a ``user_id`` that is not a string, raises `GMIError` naming it; a blank ``user_id``
        is an anonymous user (spec: ``''`` is an anonymous id).
        """
        if session_id is None:
            session_id = uuid.uuid4().hex
        check_session_ids(session_id, user_id)
        open_session = self._registry.open_session(session_id)
        if open_session is not None:
            check_same_user(session_id, open_session.user_id, user_id)
            return open_session
        options = self.options
        store = options.get("store")
        durable = store if isinstance(store, SessionStore) else None
        scope_id, user_id = scope_of_opening(
            session_id,
            user_id,
            durable,
            self._registry.opened,
            outlives_agent=memory_outlives_agent(options),
        )
        provider = options.get("memory_provider")
        hooks = MemoryProviderHooks(
            provider,
            memory_timeout_ms(options.get("memory_provider_options")),
            self.cognition.memory_on,
        )
        history = history_buffer(options.get("history", True), scope_id, durable)
        learner = self._call_learner(session_id, user_id)
        engine = GmiEngine(
            lambda opened: self._session_gmi(opened, learner),
            history,
            memory=hooks if provider is not None else None,  # no provider: nothing to ask
            budget=self._budget,
            ledger=options.get("usage_ledger"),
            on_release=learner.end if learner is not None else None,
        )
        created = AgentSession(
            session_id,
            engine,
            history=history,
            user_id=user_id,
            scope_id=scope_id,
            on_usage=self._registry.add_usage,
            on_closed=lambda closed: self._registry.ended(closed, durable),
        )
        self._registry.add(created)
        return created

    def _call_learner(self, session_id: str, user_id: str | None) -> CallLearner | None:
        """The learner session of a session entry or a call; ``None`` with learning off."""
        layer = self._learning
        if layer is None:
            return None
        return CallLearner(layer, self.options, session_id=session_id, user_id=user_id)

    async def _session_gmi(self, session: AgentSession, learner: CallLearner | None) -> GMI:
        built = await self._builder.build()
        return await self._builder.new_gmi(
            built, session=session, budget=self._budget, memory=True, learner=learner
        )

    # -- one-off calls ----------------------------------------------------------------------

    def stream(self, prompt: str | list[ContentPart], **call: Any) -> StreamTextResult:
        """One turn on a GMI built for this call: 'light' profile, no history, no memory.

        Takes `CALL_OPTIONS` (temperature, max_tokens, top_p, response_schema, schema_name,
        model, provider, max_steps, usage_ledger, abort_signal, budget, approve_tool) and
        refuses any other, naming it; ``budget`` (a `SpendBudget`, budget settings or a
        `JointBudget` holding the call to several budgets) replaces the agent's for this call.
        ``approve_tool`` is asked about each tool call after ``on_before_tool_execution``, as
        `PlainAgent.generate` describes. The prompt and options are checked first, as
        `generate_text()` checks them.
        """
        check_prompt(prompt)
        refuse_unknown_options(call, CALL_OPTIONS)
        check_call_options(call)
        approve = call.get("approve_tool")
        check_approve_tool(approve)
        budget = call_budget_from_option(call.get("budget")) or self._budget
        schema = call.get("response_schema")
        spec = structured_spec(schema, call.get("schema_name")) if schema is not None else None
        forwarded: dict[str, Any] = {
            k: call[k] for k in ("temperature", "max_tokens", "top_p") if k in call
        }
        if spec is not None:
            forwarded.update(response_schema=spec.json_schema, schema_name=spec.name)
        # Spec (Learners): one per call, with no user (no learner); it ends with the call.
        learner = self._call_learner(f"call-{uuid.uuid4().hex}", None)

        async def one_off() -> GMI:
            built = await self._builder.build()
            if call.get("model") is not None or call.get("provider") is not None:
                built = built.with_model(call.get("provider"), call.get("model"))
            return await self._builder.new_gmi(
                built,
                session=None,
                budget=budget,
                memory=False,
                max_steps=call.get("max_steps"),
                ledger=call.get("usage_ledger"),
                learner=learner,
            )

        async def after(output: Any, error: BaseException | None, usage: ModelUsage) -> None:
            self._registry.add_usage(usage, None)
            if learner is not None:
                await learner.end()

        run = GmiTurnRun(
            one_off,
            None,
            Message.user(prompt),
            user_id="default_user",
            session_id=None,
            options=forwarded,
            after=after,
            structured=spec,
            abort_signal=call.get("abort_signal"),
            tool_gate=tool_gate(approve) if approve is not None else None,
        )
        return StreamTextResult(run, schema)

    async def generate(self, prompt: str | list[ContentPart], **call: Any) -> GenerateTextResult:
        """`stream()` run to its end; rejects with the GMI's error."""
        stream = self.stream(prompt, **call)
        async for part in stream.full_stream:
            if isinstance(part, ErrorPart):
                raise part.error
        return await stream.result

    # -- usage and closing ------------------------------------------------------------------

    def export(self, metadata: Mapping[str, Any] | None = None) -> AgentExport:
        """The agent's options as a portable document (`agentos.api.agent_export`).

        Plain-data options go in ``config``; live objects (tools, hooks, a model instance, ...)
        and ``api_key`` are named in ``omitted``. `import_agent()` builds the agent again.
        """
        return export_agent_config(self.options, runtime="gmi", metadata=metadata)

    @property
    def memory(self) -> CognitiveMemoryManager | None:
        """The cognitive memory the agent's sessions share (spec: Cognitive memory).

        ``None`` until the first session turn builds it, after `close()`, and for an agent
        with memory off. Read it to see what a user's sessions have stored or would recall.
        """
        built = self._builder.built
        return built.memory if built is not None else None

    def usage(self, session_id: str | None = None) -> ModelUsage:
        """One session id's usage (a closed session's too), or every session's and call's."""
        return self._registry.usage(session_id)

    async def close(self) -> None:
        """Release the agent: its sessions' GMIs, then the cognitive memory (spec: Closing).

        Without a ``store``, every session is closed: nothing outlives the agent. With a
        ``store`` (one the caller keeps, which outlives the agent: durable, or an in-process
        store it shares), every session is released but stays open in the store, so a
        program that ends with ``await agent.close()`` keeps each conversation resumable: the
        next process's ``session(id)`` continues it with its scope, user and history
        (DESIGN §5.16); ``session.close()`` is what ends one. The store itself is the caller's
        and stays open, and the tools are not shut down. The agent stays usable: a session
        opened afterwards builds a new memory, in which an id's next opening is its first.
        Every session's learner session ends with it; the learning layer stays open (spec
        "Learning": "agent.close() ends every session's and leaves the layer open").
        """
        durable = isinstance(self.options.get("store"), SessionStore)
        await self._registry.close_all(keep_open=durable)
        built = self._builder.built
        if built is not None and built.memory is not None:
            await built.memory.shutdown()
        self._builder.reset()


def gmi(**options: Unpack[AgentOptions]) -> GmiAgent:
    """An agent whose sessions are GMIs (see the module doc); ``create_gmi`` is the same."""
    return GmiAgent(options)


create_gmi = gmi
