"""What a `gmi()` agent builds: its persona, model and memory once, and a GMI per session or call.

Spec: GMIs from agent(). `GmiBuilder.build()` runs on the agent's first use, so keys set after
construction count: the provider and model (resolved as `generate_text()` resolves them; when
none resolves, that call rejects with the same error), the persona
(`persona_from_agent_options`) and, with memory on, one `CognitiveMemoryManager` shared by every
session. A build that fails is not kept: the next call builds again.

`GmiBuilder.new_gmi()` builds one GMI over that: its model calls go through a completion gateway
built from ``api_key``, ``base_url``, ``fallback_providers``, ``router`` and ``policy_tier``,
metered and held to the budget it is given; its tool orchestrator has capability checks off
(the built-in date tool left out); the agent's hooks are wrapped as the GMI's, with the
chain-of-thought instruction (on by default) first in the system prompt of each model call that
offers tools; ``max_steps`` (5) is each turn's tool-loop limit.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from agentos.core.messages import Message
from agentos.llm.budget import BudgetLike
from agentos.llm.credentials import ProviderCredentials
from agentos.llm.embedding_resolve import EmbeddingSettings, resolve_embedder, verify_embedder
from agentos.llm.gateway import CompletionGateway, GatewayDefaults
from agentos.llm.metering import MeteringContext
from agentos.llm.model import ChatModel
from agentos.llm.resolve import resolve_model
from agentos.loop import ModelCallInfo
from agentos.memory.config import CognitiveMemoryConfig
from agentos.memory.consolidation import ConsolidationConfig
from agentos.memory.manager import CognitiveMemoryManager
from agentos.memory.store import MemoryStore
from agentos.persona.definition import PersonaDefinition
from agentos.storage.ledger import UsageLedger
from agentos.substrate.config import GMIConfig
from agentos.substrate.gmi import GMI
from agentos.substrate.memory_bridge import CognitiveMemoryBridge
from agentos.tools.orchestrator import ToolOrchestrator
from agentos.tools.tool import Tool
from agentos.tools.toolbox import ToolBox

from .agent_hooks import wrap_after_generation, wrap_before_generation, wrap_before_tool
from .agent_options import AgentOptions
from .cognition import ResolvedCognition
from .gateway_factory import build_gateway, coerce_legs
from .generate import DEFAULT_COT_INSTRUCTION, DEFAULT_MAX_STEPS
from .gmi_learning import CallLearner
from .gmi_persona import persona_from_agent_options
from .session import AgentSession

__all__ = ["GmiAgentBuild", "GmiBuilder", "build_cognitive_memory"]


@dataclass(frozen=True, slots=True)
class GmiAgentBuild:
    """What an agent's first use builds (keys read then).

    ``model`` is the caller's model instance (``None``: the gateway resolves ``provider_id`` and
    ``model_id``); ``memory`` the cognitive memory its sessions share (``None``: memory off).
    """

    persona: PersonaDefinition
    model: ChatModel | None
    provider_id: str
    model_id: str
    memory: CognitiveMemoryManager | None

    def with_model(self, provider: str | None, model: object) -> GmiAgentBuild:
        """The same build on a call's own provider and model (keys and endpoint from the env)."""
        instance = model if isinstance(model, ChatModel) else None
        chosen: ChatModel = instance or resolve_model(
            provider, model if isinstance(model, str) else None
        )
        persona = self.persona.model_copy(
            update={
                "default_provider_id": None if instance is not None else chosen.provider_id,
                "default_model_id": None if instance is not None else chosen.model_id,
            }
        )
        return dataclasses.replace(
            self,
            persona=persona,
            model=instance,
            provider_id=chosen.provider_id,
            model_id=chosen.model_id,
        )


class GmiBuilder:
    """Builds a `gmi()` agent's parts on first use, and a GMI for each session or call."""

    def __init__(
        self,
        options: AgentOptions,
        cognition: ResolvedCognition,
        tools: Sequence[Tool] | ToolBox,
        persona_id: str,
    ) -> None:
        self.options = options
        """The agent's options (``tools`` already wrapped)."""
        self.cognition = cognition
        """The agent's resolved cognition profile."""
        self.persona_id = persona_id
        """The id of the persona built from the options (and the memory's agent id)."""
        self._tools = tools
        self._built: GmiAgentBuild | None = None

    @property
    def built(self) -> GmiAgentBuild | None:
        """The current build, or ``None`` before the first use and after `reset()`."""
        return self._built

    def reset(self) -> None:
        """Forget the build (the agent's `close()`): the next use builds again."""
        self._built = None

    async def build(self) -> GmiAgentBuild:
        """The build, made now on the first call (a failed one is not kept)."""
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
            persona_id=self.persona_id,
        )
        memory = None
        if self.cognition.memory_on:
            memory = await build_cognitive_memory(
                options, self.cognition, agent_id=self.persona_id, provider_id=model.provider_id
            )
        self._built = GmiAgentBuild(persona, instance, model.provider_id, model.model_id, memory)
        return self._built

    async def new_gmi(
        self,
        built: GmiAgentBuild,
        *,
        session: AgentSession | None,
        budget: BudgetLike | None,
        memory: bool,
        max_steps: int | None = None,
        ledger: UsageLedger | None = None,
        learner: CallLearner | None = None,
    ) -> GMI:
        """A READY GMI on ``built`` for ``session`` (``None``: a one-off call, 'light' profile).

        ``memory`` connects the session's memory scope to the cognitive memory; ``budget``,
        ``max_steps`` and ``ledger`` replace the agent's for this GMI. ``learner`` (learning on)
        gives the GMI its learner session: the GMI then sends the personality section as a
        system prompt of its own at priority 2 (spec: The personality section).
        """
        options = self.options
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
                # A turn's approve_tool reaches the orchestrator as CALL_TOOL_GATE (`GmiTurnRun`);
                # a ToolBox is shared, so tools added to it while a turn runs are offered.
                tool_orchestrator=ToolOrchestrator(
                    self._tools, check_capabilities=False, call_gate=True
                ),
                max_tool_loop_iterations=max_steps or options.get("max_steps", DEFAULT_MAX_STEPS),
                before_model_call=self._before_model_call(),
                after_model_step=wrap_after_generation(after) if after is not None else None,
                before_tool_call=wrap_before_tool(vet) if vet is not None else None,
                on_fallback=options.get("on_fallback"),
                memory_bridge=bridge,
                budget=budget,
                learning=learner.for_gmi(persona) if learner is not None else None,
            ),
        )
        return gmi

    def _gateway(
        self,
        built: GmiAgentBuild,
        context: MeteringContext,
        budget: BudgetLike | None,
        ledger: UsageLedger | None,
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


async def build_cognitive_memory(
    options: AgentOptions, cognition: ResolvedCognition, *, agent_id: str, provider_id: str
) -> CognitiveMemoryManager:
    """The initialized cognitive memory the agent's ``memory`` option describes.

    Its embedder is ``memory.embedder``, or the one ``memory.embedding`` names, checked with one
    test embedding (a model that cannot answer fails the build); consolidation runs in the
    background when ``memory.consolidation.enabled`` is set.
    """
    settings = options.get("memory")
    settings = settings if isinstance(settings, Mapping) else {}
    embedder = settings.get("embedder")
    if embedder is None:
        # DESIGN §5.20: an embedding on the agent's provider uses the agent's credentials.
        embedder = resolve_embedder(
            EmbeddingSettings.coerce(settings.get("embedding")),
            credentials=ProviderCredentials(
                provider_id, options.get("api_key"), options.get("base_url")
            ),
        )
    await verify_embedder(embedder)
    store = settings.get("store")
    consolidation = settings.get("consolidation")
    consolidation = consolidation if isinstance(consolidation, Mapping) else {}
    interval = consolidation.get("interval")
    manager = CognitiveMemoryManager(
        CognitiveMemoryConfig(
            embedder=embedder,
            store=store if isinstance(store, MemoryStore) else None,
            agent_id=agent_id,
            traits=options.get("personality"),
            mechanisms=cognition.mechanisms,
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
