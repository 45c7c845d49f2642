"""A GMI's services and settings (spec: GMIBaseConfig).

Its hooks are the step loop's (`agentos.loop`: `BeforeModelCall` told a `ModelCallInfo`,
`AfterModelStep` told a `StepInfo`, `BeforeToolCall`): a GMI's turn runs on that loop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from agentos.core.clock import Clock, system_clock
from agentos.core.errors import GMIError, GMIErrorCode
from agentos.llm.budget import BudgetLike
from agentos.llm.gateway import (
    CompletionGateway,
)
from agentos.llm.model import ChatModel
from agentos.loop import AfterModelStep, BeforeModelCall, BeforeToolCall
from agentos.nlp import UtilityAI
from agentos.substrate.collaborators import (
    MemoryBridge,
    MetapromptRunner,
    RetrievalAugmentor,
    TurnSentimentTracker,
)
from agentos.substrate.learning_seam import LearnerSessionLike
from agentos.substrate.prompt_engine import (
    PromptEngine,
)
from agentos.substrate.retrieval import ExchangeSummarizer
from agentos.substrate.working_memory import InMemoryWorkingMemory
from agentos.tools.orchestrator import ToolOrchestrator

__all__ = [
    "DEFAULT_MAX_TOOL_LOOP_ITERATIONS",
    "DEFAULT_MEMORY_CONTEXT_TOKEN_BUDGET",
    "DEFAULT_SHUTDOWN_TIMEOUT",
    "FINAL_RESPONSE_MARKER_TEXT",
    "GMIConfig",
]

DEFAULT_MAX_TOOL_LOOP_ITERATIONS = 5
FINAL_RESPONSE_MARKER_TEXT = "Turn processing sequence complete."
DEFAULT_SHUTDOWN_TIMEOUT = 5.0
DEFAULT_MEMORY_CONTEXT_TOKEN_BUDGET = 1600


@dataclass(slots=True, kw_only=True)
class GMIConfig:
    """A GMI's services and settings.

    Give ``gateway`` (a `CompletionGateway`) or ``model`` (one `ChatModel`, wrapped in a gateway
    with no fallback). ``persona_traits`` (spec: GMIBaseConfig.personaTraits) adds the
    personality section after the persona's base prompt.

    The optional collaborators (`substrate.collaborators`): ``sentiment_tracker`` (step 1 of a
    turn, when the persona enables sentiment tracking), ``retrieval_augmentor`` (step 2, when the
    persona's RAG config is enabled; also turn-summary ingestion, summarized by
    ``exchange_summarizer`` when the persona asks), ``memory_bridge`` (step 3, within
    ``memory_context_token_budget`` tokens, and the exchange's encoding after the turn) and
    ``metaprompt_runner`` (the trigger check that ends a turn).

    A persona that enables sentiment tracking gets a `SentimentTracker` over ``utility_ai``
    (a `StatisticalUtilityAI`, which makes no model call, unless set) when no
    ``sentiment_tracker`` is given, and a persona with metaprompts a `MetapromptExecutor` when
    no ``metaprompt_runner`` is. ``budget`` is the spend budget metaprompt calls are checked
    against and recorded in (as ``gmi.metaprompt``); the gateway's own resolver holds the turn's
    steps to a budget.

    Hooks: ``before_model_call`` before every attempt, ``after_model_step`` after every finished
    step, ``before_tool_call`` before every tool call, and ``on_fallback(error, provider)`` on
    each fallback of a turn (beside the WARNING the reasoning trace gets). A hook that raises is
    recorded as a WARNING and the turn goes on as if it were not set.

    ``learning`` (spec: GMIBaseConfig.learning) is a learner session: each user turn asks it for
    the personality section (priority 2) and the turn's learner (`substrate.turn_learning`), in
    place of the section ``persona_traits`` would add. The GMI never ends it: its host does.
    """

    gateway: CompletionGateway | None = None
    model: ChatModel | None = None
    tool_orchestrator: ToolOrchestrator | None = None
    prompt_engine: PromptEngine | None = None
    working_memory: InMemoryWorkingMemory | None = None
    max_tool_loop_iterations: int = DEFAULT_MAX_TOOL_LOOP_ITERATIONS
    persona_traits: Mapping[str, object] | None = None
    reasoning_trace_max_entries: int | None = None
    before_model_call: BeforeModelCall | None = None
    after_model_step: AfterModelStep | None = None
    before_tool_call: BeforeToolCall | None = None
    on_fallback: Callable[[BaseException, str], None] | None = None
    shutdown_timeout: float = DEFAULT_SHUTDOWN_TIMEOUT
    sentiment_tracker: TurnSentimentTracker | None = None
    retrieval_augmentor: RetrievalAugmentor | None = None
    exchange_summarizer: ExchangeSummarizer | None = None
    memory_bridge: MemoryBridge | None = None
    memory_context_token_budget: int = DEFAULT_MEMORY_CONTEXT_TOKEN_BUDGET
    metaprompt_runner: MetapromptRunner | None = None
    utility_ai: UtilityAI | None = None
    budget: BudgetLike | None = None
    clock: Clock = field(default=system_clock)
    learning: LearnerSessionLike | None = None

    def check(self) -> None:
        """Refuse a config without exactly one of ``gateway`` and ``model``, or no model step.

        Raises ``GMI_INITIALIZATION_ERROR`` (`GMI.initialize()` calls it before any change).
        """
        if (self.gateway is None) == (self.model is None):
            raise GMIError(
                "GMIConfig needs exactly one of gateway and model",
                GMIErrorCode.GMI_INITIALIZATION_ERROR,
            )
        if self.max_tool_loop_iterations < 1:
            raise GMIError(
                "max_tool_loop_iterations must be at least 1",
                GMIErrorCode.GMI_INITIALIZATION_ERROR,
            )
