"""`gmi()` / `create_gmi()` / `agent(runtime="gmi")`: an agent whose sessions are GMIs.

Spec: GMIs from agent(). Construction checks what needs no environment and raises naming the
option (`check_agent_options`), and warns once about the options it accepts without applying.
The rest is built on first use, so keys set after construction count: the provider and model
(resolved as `generate_text()` resolves them; when none resolves, that call rejects with the
same error), the persona (`persona_from_agent_options`), the tool orchestrator (capability
checks off; the built-in date tool left out) and, with memory on, one `CognitiveMemoryManager`
shared by every session. A build that fails is not kept: the next call builds again.

Each session's GMI calls the model through a completion gateway built from ``api_key``,
``base_url``, ``fallback_providers``, ``router`` and ``policy_tier``, metered (one ledger row and
one observer event per finished step and per billed failed attempt) and held to the agent's
budget (`SpendBudget`, shared by all sessions and calls; a call's ``budget`` replaces it for that
call). The agent's ``on_fallback(error, provider)`` is called on each fallback through the GMI's
own callback. The chain-of-thought instruction (on by default) goes first in the system prompt
of each model call that offers tools. ``max_steps`` (5) is each turn's tool-loop limit.
"""

from __future__ import annotations

import dataclasses
import uuid
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Unpack

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import ContentPart, Message
from agentos.core.usage import ModelUsage
from agentos.gmi.config import GMIConfig, ModelCallInfo
from agentos.gmi.gmi import GMI
from agentos.gmi.memory_bridge import CognitiveMemoryBridge
from agentos.llm.budget import SpendBudget
from agentos.llm.credentials import ProviderCredentials
from agentos.llm.embedding_resolve import EmbeddingSettings, resolve_embedder, verify_embedder
from agentos.llm.gateway import CompletionGateway, GatewayDefaults
from agentos.llm.metering import MeteringContext
from agentos.llm.model import ChatModel
from agentos.llm.resolve import resolve_model
from agentos.memory.config import CognitiveMemoryConfig
from agentos.memory.consolidation import ConsolidationConfig
from agentos.memory.manager import CognitiveMemoryManager
from agentos.memory.store import MemoryStore
from agentos.persona.definition import PersonaDefinition
from agentos.storage.ledger import UsageLedger
from agentos.storage.session_history import DEFAULT_HISTORY_MAX_TOKENS, SessionHistoryBuffer
from agentos.storage.session_store import SessionInfo, SessionStore
from agentos.tools.orchestrator import ToolOrchestrator
from agentos.tools.tool import Tool

from .agent_export import AgentExport, export_agent_config
from .agent_hooks import wrap_after_generation, wrap_before_generation, wrap_before_tool
from .agent_options import GENERATE_CALL_OPTIONS, AgentOptions
from .call_checks import (
    check_call_options,
    check_prompt,
    check_session_ids,
    refuse_unknown_options,
    tools_option,
)
from .capability_contract import warn_unapplied
from .cognition import ResolvedCognition, resolve_cognition
from .gateway_factory import build_gateway, coerce_legs
from .generate import DEFAULT_COT_INSTRUCTION, DEFAULT_MAX_STEPS
from .gmi_persona import persona_from_agent_options
from .gmi_session import GmiSession, SessionOptions
from .gmi_session_registry import SessionRegistry
from .gmi_turn import GmiTurnRun
from .memory_provider import (
    MemoryProviderWarning,
    fetch_memory_context,
    memory_timeout_ms,
    observe_turn,
)
from .option_checks import check_agent_options, spend_budget_from_option
from .results import ErrorPart, GenerateTextResult
from .stream_result import StreamTextResult
from .structured import structured_spec

__all__ = ["CALL_OPTIONS", "GmiAgent", "create_gmi", "gmi"]

CALL_OPTIONS = GENERATE_CALL_OPTIONS | {"abort_signal"}
"""What `GmiAgent.generate()` / `stream()` take per call (spec: agent.generate()): the
legacy agent's per-call options and ``abort_signal``."""


@dataclass(frozen=True, slots=True)
class _Built:
    """What the first use builds (keys read then)."""

    persona: PersonaDefinition
    model: ChatModel | None
    provider_id: str
    model_id: str
    memory: CognitiveMemoryManager | None


class GmiAgent:
    """A `gmi()` agent: `session()`, `generate()`, `stream()`, `usage()`, `close()`."""

    def __init__(self, options: AgentOptions) -> None:
        check_agent_options(options, runtime="gmi")
        self._tools: list[Tool] = tools_option(options.get("tools"))  # functions wrapped once
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
        self.budget: SpendBudget | None = spend_budget_from_option(options.get("budget"))
        self._persona_id = f"agent-{uuid.uuid4().hex[:12]}"
        self._built: _Built | None = None
        self._registry = SessionRegistry()
        # The spec's one entry per opened id (`_scope` reads and adds to it).
        self._opened: set[str] = self._registry.opened

    # -- the lazy build ---------------------------------------------------------------------

    async def _build(self) -> _Built:
        if self._built is not None:
            return self._built
        options = self.options
        chosen = options.get("model")
        instance = chosen if chosen is not None and not isinstance(chosen, str) else None
        model = instance or resolve_model(
            options.get("provider"),
            chosen if isinstance(chosen, str) else None,
            api_key=options.get("api_key"),
            base_url=options.get("base_url"),
        )
        persona = persona_from_agent_options(
            options,
            provider_id=None if instance is not None else model.provider_id,
            model_id=None if instance is not None else model.model_id,
            cognition=self.cognition,
            persona_id=self._persona_id,
        )
        memory = await self._build_memory(model.provider_id) if self.cognition.memory_on else None
        self._built = _Built(persona, instance, model.provider_id, model.model_id, memory)
        return self._built

    @property
    def _memory_outlives_agent(self) -> bool:
        """Whether the cognitive memory's store is the caller's (see `_scope`)."""
        settings = self.options.get("memory")
        return isinstance(settings, Mapping) and isinstance(settings.get("store"), MemoryStore)

    async def _build_memory(self, provider_id: str) -> CognitiveMemoryManager:
        settings = self.options.get("memory")
        settings = settings if isinstance(settings, Mapping) else {}
        embedder = settings.get("embedder")
        if embedder is None:
            # DESIGN §5.20: an embedding on the agent's provider uses the agent's credentials.
            embedder = resolve_embedder(
                EmbeddingSettings.coerce(settings.get("embedding")),
                credentials=ProviderCredentials(
                    provider_id, self.options.get("api_key"), self.options.get("base_url")
                ),
            )
        await verify_embedder(embedder)  # one test embedding: a model that cannot answer fails
        store = settings.get("store")
        consolidation = settings.get("consolidation")
        consolidation = consolidation if isinstance(consolidation, Mapping) else {}
        interval = consolidation.get("interval")
        manager = CognitiveMemoryManager(
            CognitiveMemoryConfig(
                embedder=embedder,
                store=store if isinstance(store, MemoryStore) else None,
                agent_id=self._persona_id,
                traits=self.options.get("personality"),
                mechanisms=self.cognition.mechanisms,
                # DESIGN.md §5.10: the interval is applied (the spec runs it hourly whatever).
                consolidation=ConsolidationConfig(interval=float(interval))
                if interval is not None
                else ConsolidationConfig(),
            )
        )
        await manager.initialize()
        if consolidation.get("enabled"):
            manager.start()
        return manager

    def _gateway(
        self,
        built: _Built,
        context: MeteringContext,
        budget: Any,
        ledger: UsageLedger | None = None,
    ) -> CompletionGateway:
        options = self.options
        return build_gateway(
            GatewayDefaults(
                provider=None if built.model is not None else built.provider_id,
                model=None if built.model is not None else built.model_id,
                api_key=options.get("api_key"),
                base_url=options.get("base_url"),
                fallback_providers=coerce_legs(options.get("fallback_providers")),
                router=options.get("router"),
                policy_tier=options.get("policy_tier"),
            ),
            instance=built.model,
            budget=budget,
            ledger=ledger or options.get("usage_ledger"),
            call="gmi.step",
            context=context,
        )

    async def _gmi(
        self,
        built: _Built,
        *,
        session: GmiSession | None,
        budget: SpendBudget | None,
        memory: bool,
        max_steps: int | None = None,
        ledger: UsageLedger | None = None,
    ) -> GMI:
        options = self.options
        tools: Sequence[Tool] = self._tools
        context = MeteringContext(
            session_id=session.id if session is not None else f"call-{uuid.uuid4().hex[:8]}",
            persona_id=built.persona.id,
            user_id=session.user_id if session is not None else None,
            source="gmi.step",
        )
        bridge = None
        if memory and built.memory is not None and session is not None:
            bridge = CognitiveMemoryBridge(
                built.memory,
                scope_id=session.scope_id,
                user_id=session.user_id,
                persona_id=built.persona.id,
            )
        after = options.get("on_after_generation")
        vet = options.get("on_before_tool_execution")
        persona = built.persona
        if session is None:
            # generate() and stream() run the 'light' profile whatever cognition sets.
            persona = persona.model_copy(update={"sentiment_tracking": None, "meta_prompts": []})
        gmi = GMI()
        await gmi.initialize(
            persona,
            GMIConfig(
                gateway=self._gateway(built, context, budget, ledger),
                tool_orchestrator=ToolOrchestrator(tools, check_capabilities=False),
                max_tool_loop_iterations=max_steps or options.get("max_steps", DEFAULT_MAX_STEPS),
                before_model_call=self._before_model_call(),
                after_model_step=wrap_after_generation(after) if after is not None else None,
                before_tool_call=wrap_before_tool(vet) if vet is not None else None,
                on_fallback=options.get("on_fallback"),
                memory_bridge=bridge,
                budget=budget,
            ),
        )
        return gmi

    def _before_model_call(self) -> Callable[[ModelCallInfo], Sequence[Message] | None]:
        chain = self.options.get("chain_of_thought", True)
        default = DEFAULT_COT_INSTRUCTION if chain else ""
        instruction = chain if isinstance(chain, str) else default
        user_hook = self.options.get("on_before_generation")
        wrapped = wrap_before_generation(user_hook) if user_hook is not None else None

        def hook(info: ModelCallInfo) -> Sequence[Message] | None:
            messages: Sequence[Message] = info.messages
            if instruction and info.tools:
                # The chain-of-thought instruction goes first in the system prompt of each
                # call that offers tools, as generate_text() puts it.
                messages = [Message.system(instruction), *messages]
            if wrapped is not None:
                replaced = wrapped(dataclasses.replace(info, messages=list(messages)))
                if replaced is not None:
                    return replaced
            return messages if messages is not info.messages else None

        return hook

    # -- sessions ---------------------------------------------------------------------------

    def session(self, session_id: str, *, user_id: str | None = None) -> GmiSession:
        """The session ``session_id`` (opened now, or the one already open).

        Reopening an open id with another ``user_id`` raises; an id reopened after `close()`
        starts empty with a new memory scope. A ``session_id`` that is not a non-blank string,
        or a ``user_id`` that is not a string, raises `GMIError` naming it; a blank ``user_id``
        is an anonymous user (spec: ``''`` is an anonymous id).
        """
        check_session_ids(session_id, user_id)
        open_session = self._registry.open_session(session_id)
        if open_session is not None:
            if user_id is not None and user_id != open_session.user_id:
                raise GMIError(
                    f"session {session_id!r} is open for user {open_session.user_id!r}, "
                    f"not {user_id!r}",
                    GMIErrorCode.INVALID_ARGUMENT,
                    {"option": "user_id"},
                )
            return open_session
        store = self.options.get("store")
        durable = store if isinstance(store, SessionStore) else None
        scope_id, user_id = self._scope(session_id, user_id, durable)
        history_option = self.options.get("history", True)
        history = None
        if history_option is not False:
            max_tokens = (
                history_option.get("max_tokens", DEFAULT_HISTORY_MAX_TOKENS)
                if isinstance(history_option, Mapping)
                else DEFAULT_HISTORY_MAX_TOKENS
            )
            history = SessionHistoryBuffer(scope_id, durable, max_tokens=max_tokens)

        async def build(session: GmiSession) -> GMI:
            built = await self._build()
            return await self._gmi(built, session=session, budget=self.budget, memory=True)

        provider = self.options.get("memory_provider")
        timeout_ms = memory_timeout_ms(self.options.get("memory_provider_options"))

        async def context(session: GmiSession, text: str) -> str | None:
            # With cognitive memory on, the memory supplies the context (warned at construction).
            if provider is None or self.cognition.memory_on:
                return None
            return await fetch_memory_context(
                provider,
                text,
                timeout_ms=timeout_ms,
                session_id=session.id,
                user_id=session.user_id,
            )

        async def observe(session: GmiSession, text: str, reply: str) -> None:
            await observe_turn(
                provider, text, reply, session_id=session.id, user_id=session.user_id
            )

        created = GmiSession(
            session_id,
            history,
            build,
            options=SessionOptions(user_id=user_id, scope_id=scope_id),
            on_usage=lambda usage: self._registry.add_usage(session_id, usage),
            memory_context=context,
            observe=observe if provider is not None else None,
            on_closed=lambda closed: self._registry.ended(closed, durable),
            budget=self.budget,
            ledger=self.options.get("usage_ledger"),
        )
        self._registry.add(created)
        return created

    def _scope(
        self, session_id: str, user_id: str | None, store: SessionStore | None
    ) -> tuple[str, str | None]:
        """The memory scope (and user) of an opening of ``session_id`` (spec: Scope).

        The session id at its first opening, a new id at each opening after a close. With a
        durable store, a session still open in it (another process's, or this one's before a
        restart) continues with its scope and user; one closed there starts anew.

        The spec's "first opening" assumes ``agent.close()`` starts a new memory. A memory store
        the caller passed outlives the agent (a SQLite file, a store shared by two agents), so
        there an id's first opening in this agent may follow another agent's session of that
        id, perhaps another user's: such an opening gets a new scope id too, and only a session
        the durable store holds open continues an earlier scope.
        """
        info = store.load_info(session_id) if store is not None else None
        if info is not None and info.open:
            # As for a session open in this process: a session without a user is not picked up
            # by one, or that user would recall the session's memories (DESIGN.md §5.17).
            if user_id is not None and user_id != info.user_id:
                raise GMIError(
                    f"session {session_id!r} is open for user {info.user_id!r}, not {user_id!r}",
                    GMIErrorCode.INVALID_ARGUMENT,
                    {"option": "user_id"},
                )
            self._opened.add(session_id)
            return info.scope_id, user_id or info.user_id
        reopened = session_id in self._opened or info is not None or self._memory_outlives_agent
        scope_id = f"{session_id}#{uuid.uuid4().hex[:8]}" if reopened else session_id
        self._opened.add(session_id)
        if store is not None:
            store.save_info(SessionInfo(session_id, user_id, scope_id, True, datetime.now(UTC)))
        return scope_id, user_id

    # -- one-off calls ----------------------------------------------------------------------

    def stream(self, prompt: str | list[ContentPart], **call: Any) -> StreamTextResult:
        """One turn on a GMI built for this call: 'light' profile, no history, no memory.

        Takes `CALL_OPTIONS` (temperature, max_tokens, top_p, response_schema, schema_name,
        model, provider, max_steps, usage_ledger, abort_signal, budget) and refuses any other,
        naming it; ``budget`` replaces the agent's for this call. The prompt and options are
        checked first, as `generate_text()` checks them.
        """
        check_prompt(prompt)
        refuse_unknown_options(call, CALL_OPTIONS)
        check_call_options(call)
        budget = spend_budget_from_option(call.get("budget")) or self.budget
        schema = call.get("response_schema")
        spec = structured_spec(schema, call.get("schema_name")) if schema is not None else None
        forwarded: dict[str, Any] = {
            k: call[k] for k in ("temperature", "max_tokens", "top_p") if k in call
        }
        if spec is not None:
            forwarded.update(response_schema=spec.json_schema, schema_name=spec.name)

        async def one_off() -> GMI:
            built = await self._build()
            if call.get("model") is not None or call.get("provider") is not None:
                built = self._with_model(built, call.get("provider"), call.get("model"))
            return await self._gmi(
                built,
                session=None,
                budget=budget,
                memory=False,
                max_steps=call.get("max_steps"),
                ledger=call.get("usage_ledger"),
            )

        async def after(output: Any, error: BaseException | None, usage: ModelUsage) -> None:
            self._registry.add_usage(None, usage)

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
        )
        return StreamTextResult(run, schema)

    @staticmethod
    def _with_model(built: _Built, provider: str | None, model: object) -> _Built:
        """``built`` on the call's own provider and model (keys and endpoint from the env)."""
        instance = model if isinstance(model, ChatModel) else None
        chosen: ChatModel = instance or resolve_model(
            provider, model if isinstance(model, str) else None
        )
        persona = built.persona.model_copy(
            update={
                "default_provider_id": None if instance is not None else chosen.provider_id,
                "default_model_id": None if instance is not None else chosen.model_id,
            }
        )
        return dataclasses.replace(
            built,
            persona=persona,
            model=instance,
            provider_id=chosen.provider_id,
            model_id=chosen.model_id,
        )

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
        return self._built.memory if self._built is not None else None

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
        """
        durable = isinstance(self.options.get("store"), SessionStore)
        await self._registry.close_all(keep_open=durable)
        if self._built is not None and self._built.memory is not None:
            await self._built.memory.shutdown()
        self._built = None


def gmi(**options: Unpack[AgentOptions]) -> GmiAgent:
    """An agent whose sessions are GMIs (see the module doc); ``create_gmi`` is the same."""
    return GmiAgent(options)


create_gmi = gmi
