"""The `GMI` and its turn loop (spec: What a turn does, Output stream; DESIGN.md §5.12).

`GMI.process_turn_stream()` returns a `GMITurnStream`: iterate it for the `GMIOutputChunk`s;
``await stream.output()`` gives the turn's `GMIOutput`, which the FINAL_RESPONSE_MARKER chunk
(always the last) also carries as its content. The turn runs in a task of its own, so
`GMI.shutdown()` can abort it while its consumer waits; closing the stream early
(``aclose()``) stops the turn and its model call.

A turn records its input in the history, then runs model steps through a completion gateway
(a GMI configured with a single `ChatModel` wraps it in a gateway with no fallback): within a
step each provider chunk yields its TEXT_DELTA / TOOL_CALL_REQUEST, a usage report its
USAGE_UPDATE; STEP_FINISHED follows the step's last chunk; the step's tool calls then run through
the tool orchestrator, one TOOL_RESULT each, and the next step follows, for at most
``max_tool_loop_iterations`` model steps. A failure yields ERROR with its code kept (a step that
fails emits no STEP_FINISHED), and FINAL_RESPONSE_MARKER ends every turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Sequence
from typing import Any

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import ToolResult
from agentos.gmi.chunks import (
    GMIOutputChunkType,
)
from agentos.gmi.config import (
    DEFAULT_MAX_TOOL_LOOP_ITERATIONS,
    FINAL_RESPONSE_MARKER_TEXT,
    BeforeModelCall,
    GMIConfig,
    ModelCallInfo,
)
from agentos.gmi.history import ConversationHistoryManager, DroppedTurn
from agentos.gmi.mood import GMIMood, PADState
from agentos.gmi.prompt_engine import (
    PromptEngine,
)
from agentos.gmi.state import GMIPrimeState
from agentos.gmi.trace import DEFAULT_MAX_TRACE_ENTRIES, ReasoningEntryType, ReasoningTrace
from agentos.gmi.turn import GMITurnStream, TurnRunner
from agentos.gmi.turn_input import GMIInteractionType, GMITurnInput
from agentos.gmi.working_memory import InMemoryWorkingMemory
from agentos.llm.gateway import (
    CompletionGateway,
    GatewayDefaults,
    GatewayTurn,
)
from agentos.llm.model import (
    ChatModel,
)
from agentos.persona.definition import PersonaDefinition
from agentos.tools.orchestrator import ToolOrchestrator

__all__ = [
    "DEFAULT_MAX_TOOL_LOOP_ITERATIONS",
    "FINAL_RESPONSE_MARKER_TEXT",
    "GMI",
    "BeforeModelCall",
    "GMIConfig",
    "GMITurnStream",
    "ModelCallInfo",
]


class GMI:
    """A generalised mind instance: one persona, its history and its turn loop."""

    def __init__(self, gmi_id: str | None = None) -> None:
        self.gmi_id = gmi_id or f"gmi-{uuid.uuid4()}"
        self.state = GMIPrimeState.IDLE
        self.mood = GMIMood.NEUTRAL
        self.pad = PADState()
        self.user_context: dict[str, Any] = {}
        self.task_context: dict[str, Any] = {}
        self.session_data: dict[str, Any] = {}
        self.history = ConversationHistoryManager()
        self.trace = ReasoningTrace(self.gmi_id)
        self._persona: PersonaDefinition | None = None
        self._config = GMIConfig()
        self._gateway: CompletionGateway | None = None
        self._orchestrator = ToolOrchestrator()
        self._prompt_engine = PromptEngine()
        self.working_memory = InMemoryWorkingMemory()
        self._running: GMITurnStream | None = None
        self._abort_reason: GMIError | None = None
        self._shutdown_task: asyncio.Task[None] | None = None
        self._last_rag_sources: list[Any] = []
        self._gateway_turn: GatewayTurn | None = None
        """The gateway turn of the last user turn, which its continuations go on."""

    # -- lifecycle --------------------------------------------------------------------------

    @property
    def persona(self) -> PersonaDefinition:
        """The active persona (``NOT_INITIALIZED`` before `initialize()`)."""
        if self._persona is None:
            raise GMIError("the GMI is not initialized", GMIErrorCode.NOT_INITIALIZED)
        return self._persona

    async def initialize(self, persona: PersonaDefinition, config: GMIConfig) -> None:
        """Set the persona and the services; the GMI becomes READY."""
        if self.state not in (GMIPrimeState.IDLE, GMIPrimeState.READY):
            raise GMIError(
                f"cannot initialize a GMI in state {self.state.value}", GMIErrorCode.INVALID_STATE
            )
        if (config.gateway is None) == (config.model is None):
            raise GMIError(
                "GMIConfig needs exactly one of gateway and model",
                GMIErrorCode.GMI_INITIALIZATION_ERROR,
            )
        if config.max_tool_loop_iterations < 1:
            raise GMIError(
                "max_tool_loop_iterations must be at least 1",
                GMIErrorCode.GMI_INITIALIZATION_ERROR,
            )
        self.state = GMIPrimeState.INITIALIZING
        self._persona = persona
        self._config = config
        if config.gateway is not None:
            self._gateway = config.gateway
        else:
            model = config.model
            assert model is not None

            def resolver(*_args: object, **_kwargs: object) -> ChatModel:
                assert model is not None
                return model

            self._gateway = CompletionGateway(
                GatewayDefaults(
                    provider=model.provider_id, model=model.model_id, fallback_providers=[]
                ),
                resolver=resolver,
                clock=config.clock,
            )
        self._orchestrator = config.tool_orchestrator or ToolOrchestrator()
        self._prompt_engine = config.prompt_engine or PromptEngine()
        self.working_memory = config.working_memory or InMemoryWorkingMemory()
        trace_config = persona.reasoning_trace_config
        max_entries = (
            (trace_config.max_entries if trace_config is not None else None)
            or config.reasoning_trace_max_entries
            or DEFAULT_MAX_TRACE_ENTRIES
        )
        self.trace = ReasoningTrace(self.gmi_id, persona.id, max_entries)
        self.history.on_turns_dropped(self._forget_turns)
        default_mood = persona.mood_adaptation.default_mood if persona.mood_adaptation else None
        self.mood = GMIMood(default_mood) if default_mood in set(GMIMood) else GMIMood.NEUTRAL
        self.user_context = {"user_id": "default_user", "skill_level": "novice", "preferences": {}}
        self.task_context = {
            "task_id": f"task-{uuid.uuid4()}",
            "domain": (persona.strengths or ["general"])[0],
            "complexity": "medium",
            "status": "not_started",
        }
        for imprint in persona.initial_memory_imprints or []:
            await self.working_memory.set(imprint.key, imprint.value)
        await self.working_memory.set("current_gmi_mood", self.mood.value)
        self._trace(ReasoningEntryType.LIFECYCLE, "GMI initialized", {"persona_id": persona.id})
        self.state = GMIPrimeState.READY

    def _forget_turns(self, turns: list[DroppedTurn]) -> None:
        self.trace.forget_turns(turn.turn_id for turn in turns)

    def _trace(
        self,
        type: ReasoningEntryType,
        message: str,
        details: dict[str, Any] | None = None,
        turn_id: str | None = None,
    ) -> None:
        self.trace.add(
            type, message, details, timestamp=self._config.clock.timestamp(), turn_id=turn_id
        )

    async def shutdown(self) -> None:
        """Abort a running turn, wait for it (bounded), close memory once; state SHUTDOWN.

        Overlapping callers share one shutdown; a later call returns at once.
        """
        if self._shutdown_task is None:
            self._shutdown_task = asyncio.create_task(self._shutdown())
        await asyncio.shield(self._shutdown_task)

    async def _shutdown(self) -> None:
        self.state = GMIPrimeState.SHUTTING_DOWN
        running = self._running
        if running is not None and not running._task.done():
            self._abort_reason = GMIError(
                "the GMI was shut down during the turn", GMIErrorCode.ABORTED
            )
            running._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(asyncio.shield(running._task), self._config.shutdown_timeout)
        await self.working_memory.close()
        self._trace(ReasoningEntryType.LIFECYCLE, "GMI shut down")
        self.state = GMIPrimeState.SHUTDOWN

    # -- turns ------------------------------------------------------------------------------

    def process_turn_stream(self, turn_input: GMITurnInput) -> GMITurnStream:
        """Start a turn; iterate the returned stream for its chunks."""
        self._ensure_ready()
        stream = GMITurnStream(self, turn_input)
        self._running = stream
        return stream

    def _ensure_ready(self) -> None:
        if self._persona is None:
            raise GMIError("the GMI is not initialized", GMIErrorCode.NOT_INITIALIZED)
        if self.state is not GMIPrimeState.READY:
            raise GMIError(
                f"the GMI cannot start a turn in state {self.state.value}",
                GMIErrorCode.INVALID_STATE,
            )

    async def handle_tool_results(
        self, results: Sequence[ToolResult], *, user_id: str = "default_user"
    ) -> GMITurnStream:
        """Record ``results`` in the history (no TOOL_RESULT chunks) and run the next step."""
        if not results:
            raise GMIError("no tool results were given", GMIErrorCode.VALIDATION_ERROR)
        self._ensure_ready()
        turn_input = GMITurnInput(
            interaction_id=f"turn-{uuid.uuid4()}",
            user_id=user_id,
            content=None,
            type=GMIInteractionType.TOOL_RESPONSE,
            metadata={"is_tool_continuation": True, "tool_results": list(results)},
        )
        return self.process_turn_stream(turn_input)

    async def handle_tool_result(
        self, result: ToolResult, *, user_id: str = "default_user"
    ) -> GMITurnStream:
        """`handle_tool_results()` with one result."""
        return await self.handle_tool_results([result], user_id=user_id)

    async def _run_turn(self, turn_input: GMITurnInput, stream: GMITurnStream) -> None:
        turn = TurnRunner(self, turn_input, stream)
        self.state = GMIPrimeState.PROCESSING
        try:
            output = await turn.run()
        finally:
            if self.state in (GMIPrimeState.PROCESSING, GMIPrimeState.AWAITING_TOOL_RESULT):
                self.state = GMIPrimeState.READY
            if self._running is stream:
                self._running = None
        await stream.finish(
            turn.chunk(GMIOutputChunkType.FINAL_RESPONSE_MARKER, output, is_final=True), output
        )
