"""What the full runtime gives every GMI it builds: the model, tools, utility AI and retrieval.

Spec (Model calls through a completion gateway: "GMIManager sets no gateway, so the GMIs of the
full runtime call their provider directly, one call per model step, with no fallback" — a model
named by provider and id runs through a gateway with fallback off, which calls it so; the first
table's runtime rows; "What a GMI adds": the runtime's utility AI scores every user turn of a
persona that tracks sentiment, one model call per turn with the default `LLMUtilityAI`, none
with `StatisticalUtilityAI`). `base_gmi_config()` builds the `GMIConfig` each GMI starts from:
its model resolved once from ``model`` / ``provider`` (no gateway), the tool orchestrator over
the runtime's tools and the host's external tools, the utility AI, the retrieval augmentor, the
tool-loop limit and the clock. `open_stores()` opens the conversation and pause stores the
config names (in process memory by default, SQLite one option away: DESIGN §5.9).
"""

from __future__ import annotations

from collections.abc import Sequence

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.llm.gateway import CompletionGateway, GatewayDefaults, create_completion_gateway
from agentos.llm.model import ChatModel
from agentos.llm.resolve import resolve_model
from agentos.nlp.utility import LLMUtilityAI, StatisticalUtilityAI, UtilityAI
from agentos.storage import (
    Database,
    InMemorySessionStore,
    InMemoryToolPauseStore,
    SessionStore,
    SQLiteSessionStore,
    SQLiteToolPauseStore,
    ToolPauseStore,
    open_database,
)
from agentos.substrate.config import GMIConfig
from agentos.tools import Tool, ToolOrchestrator
from agentos.tools.orchestrator import SessionTools

from .config import AgentOSConfig
from .guardrails import GuardrailRunner
from .summaries import extractive_summarizer, model_summarizer
from .turn_setup import guard_tool_call

__all__ = ["RuntimeStores", "base_gmi_config", "open_stores", "runtime_model", "runtime_utility_ai"]


def runtime_model(config: AgentOSConfig) -> ChatModel:
    """The model every GMI of the runtime calls, resolved once (a model instance as it is)."""
    model = config.model
    if model is not None and not isinstance(model, str):
        return model
    return resolve_model(config.provider, model, api_key=config.api_key, base_url=config.base_url)


def runtime_utility_ai(config: AgentOSConfig, model: ChatModel) -> UtilityAI:
    """``LLMUtilityAI`` over the runtime's model by default, ``StatisticalUtilityAI`` by config."""
    chosen = config.utility_ai
    if chosen == "llm":
        return LLMUtilityAI(model)
    if chosen == "statistical":
        return StatisticalUtilityAI()
    if isinstance(chosen, str):
        raise GMIError(
            f"utility_ai: {chosen!r} is not 'llm', 'statistical' or a UtilityAI",
            GMIErrorCode.CONFIGURATION_ERROR,
            {"option": "utility_ai"},
        )
    return chosen


def base_gmi_config(
    config: AgentOSConfig,
    guardrails: GuardrailRunner | None = None,
    runtime_tools: Sequence[Tool] = (),
    session_tools: SessionTools | None = None,
) -> GMIConfig:
    """The `GMIConfig` every GMI of the runtime starts from (see the module doc).

    ``runtime_tools`` are the runtime's own (the self-modification tools), beside the host's;
    ``session_tools`` each session's own (the tools ``forge_tool`` registered in it).
    With ``guardrails``, each tool call is checked before it runs (a blocked call is skipped,
    the model told so; a redacted one runs with the redacted arguments).
    """
    model = runtime_model(config)
    named = config.model is None or isinstance(config.model, str)
    orchestrator = ToolOrchestrator(
        [*config.tools, *runtime_tools],
        external=config.external_tools,
        approve=config.tool_approver,
        session_tools=session_tools,
    )
    return GMIConfig(
        # A model named by provider and id is served through a gateway with fallback off: one
        # call per model step on that provider, as the spec's runtime GMIs call it directly,
        # and a request's preferred_model_id can pick another model there. A model instance
        # is called as it is (its model is the one a turn gets).
        model=None if named else model,
        gateway=_direct_gateway(config, model) if named else None,
        tool_orchestrator=orchestrator,
        max_tool_loop_iterations=config.max_tool_call_iterations,
        reasoning_trace_max_entries=config.default_reasoning_trace_max_entries,
        utility_ai=runtime_utility_ai(config, model),
        retrieval_augmentor=config.retrieval_augmentor,
        # The statistical utility AI makes no model call: its summary is extractive.
        exchange_summarizer=extractive_summarizer
        if config.utility_ai == "statistical"
        else model_summarizer(model),
        clock=config.clock,
        before_tool_call=guard_tool_call(guardrails) if guardrails is not None else None,
    )


def _direct_gateway(config: AgentOSConfig, model: ChatModel) -> CompletionGateway:
    """A gateway on the resolved primary with no fallback legs (fallback off)."""
    return create_completion_gateway(
        GatewayDefaults(
            provider=model.provider_id,
            model=model.model_id,
            api_key=config.api_key,
            base_url=config.base_url,
            fallback_providers=[],
        )
    )


class RuntimeStores:
    """The conversation store and the tool-pause store the runtime runs on."""

    def __init__(
        self, conversations: SessionStore, pauses: ToolPauseStore, database: Database | None = None
    ) -> None:
        self.conversations = conversations
        """Each session's conversation."""
        self.pauses = pauses
        """Each session's pending external tool request."""
        self.database = database
        """The SQLite database the runtime opened (``conversation_store="sqlite"``), else None."""
        self._closers: list[object] = []

    def own(self, store: object) -> None:
        """Close ``store`` with `close()` (one the runtime opened itself)."""
        self._closers.append(store)

    def close(self) -> None:
        """Close the stores the runtime opened (a store the host passed stays open)."""
        for store in self._closers:
            close = getattr(store, "close", None)
            if callable(close):
                close()
        self._closers.clear()


def open_stores(config: AgentOSConfig) -> RuntimeStores:
    """The stores ``config`` names: a passed store as it is, ``"memory"`` or ``"sqlite"``."""
    chosen = config.conversation_store
    if not isinstance(chosen, str):
        pauses = config.tool_pause_store or InMemoryToolPauseStore()
        return RuntimeStores(chosen, pauses)
    if chosen == "memory":
        return RuntimeStores(
            InMemorySessionStore(), config.tool_pause_store or InMemoryToolPauseStore()
        )
    database = open_database(config.database_path)  # None: agentos.db under AGENTOS_HOME
    conversations = SQLiteSessionStore(database)
    pauses = config.tool_pause_store or SQLiteToolPauseStore(database)
    stores = RuntimeStores(conversations, pauses, database)
    stores.own(database)
    return stores
