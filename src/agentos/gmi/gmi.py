"""The `GMI` and its turn loop (spec: What a turn does, Output stream; DESIGN.md §5.12).

`GMI.process_turn_stream()` returns a `GMITurnStream`: iterate it for the `GMIOutputChunk`s;
``await stream.output()`` gives the turn's `GMIOutput`, which the FINAL_RESPONSE_MARKER chunk
(always the last) also carries as its content.

A turn applies its user and task context overrides and records its input in the history. A user
turn then scores sentiment, retrieves (RAG_SOURCES_AVAILABLE) and gathers memory context through
the optional collaborators of `GMIConfig` (`agentos.gmi.turn_phases`), and builds its system
prompts once (`agentos.gmi.system_prompts`). Model steps run through a completion gateway (a GMI
configured with a single `ChatModel` wraps it in a gateway with no fallback): within a step each
provider chunk yields its TEXT_DELTA / TOOL_CALL_REQUEST, a usage report its USAGE_UPDATE;
STEP_FINISHED follows the step's last chunk; the step's tool calls then run through the tool
orchestrator, one TOOL_RESULT each, and the next step follows, for at most
``max_tool_loop_iterations`` model steps. A turn that ends without error then syncs memory,
ingests a turn summary and checks the metaprompts. A failure yields ERROR with its code kept (a
step that fails emits no STEP_FINISHED), and FINAL_RESPONSE_MARKER ends every turn.

After a failed turn the GMI is READY again, not ERRORED as the reference leaves it: a session's
next turn must run (spec: Sessions). After `shutdown()` it stays SHUTDOWN.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypedDict

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import Message, Role, ToolCall, ToolResult
from agentos.gmi.chunks import (
    GMIOutputChunkType,
)
from agentos.gmi.collaborators import MetapromptRunner, TurnSentimentTracker
from agentos.gmi.config import (
    DEFAULT_MAX_TOOL_LOOP_ITERATIONS,
    FINAL_RESPONSE_MARKER_TEXT,
    BeforeModelCall,
    GMIConfig,
    ModelCallInfo,
)
from agentos.gmi.contexts import (
    TASK_CONTEXT_KEY,
    USER_CONTEXT_KEY,
    initial_task_context,
    initial_user_context,
)
from agentos.gmi.events import GMIEventLog
from agentos.gmi.history import ConversationHistoryManager, DroppedTurn
from agentos.gmi.metaprompts import MetapromptExecutor
from agentos.gmi.mood import GMIMood, PADState, pad_for_mood
from agentos.gmi.prompt_engine import (
    PromptEngine,
)
from agentos.gmi.sentiment_tracker import SentimentTracker
from agentos.gmi.state import GMIPrimeState
from agentos.gmi.trace import DEFAULT_MAX_TRACE_ENTRIES, ReasoningEntryType, ReasoningTrace
from agentos.gmi.turn import TurnRunner
from agentos.gmi.turn_input import GMIInteractionType, GMITurnInput
from agentos.gmi.turn_stream import GMITurnStream
from agentos.gmi.working_memory import InMemoryWorkingMemory
from agentos.llm.gateway import (
    CompletionGateway,
    GatewayDefaults,
    GatewayProviderManager,
    GatewayTurn,
)
from agentos.llm.model import (
    ChatModel,
)
from agentos.persona.definition import HEXACO_TRAITS, PersonaDefinition
from agentos.persona.metaprompt_presets import with_metaprompt_presets
from agentos.tools.orchestrator import ToolOrchestrator, tool_error_result

__all__ = [
    "DEFAULT_MAX_TOOL_LOOP_ITERATIONS",
    "FINAL_RESPONSE_MARKER_TEXT",
    "GMI",
    "BeforeModelCall",
    "GMIConfig",
    "GMITurnStream",
    "ModelCallInfo",
    "MOOD_KEY",
    "ExternalToolOutcome",
]

MOOD_KEY = "current_gmi_mood"
"""The working-memory key that holds the GMI's mood."""


class ExternalToolOutcome(TypedDict, total=False):
    """What a host reports for one call it ran (reference: ToolResultPayload).

    ``{"type": "success", "result": <any JSON>}`` or
    ``{"type": "error", "error": {"code": ..., "message": ..., "details": ...}}``.
    """

    type: Literal["success", "error"]
    result: Any
    error: dict[str, Any]


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
        self.events = GMIEventLog()
        self.provider_manager = GatewayProviderManager()
        """Answers metaprompt calls from the hop that served the current turn."""
        self._sentiment_tracker: TurnSentimentTracker | None = None
        self._metaprompt_runner: MetapromptRunner | None = None
        self._dropped_turns: list[str] = []
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
        tracking = persona.sentiment_tracking
        tracked = tracking is not None and tracking.enabled
        try:
            persona = with_metaprompt_presets(persona)
        except ValueError as exc:
            self.state = GMIPrimeState.IDLE
            raise GMIError(str(exc), GMIErrorCode.GMI_INITIALIZATION_ERROR) from exc
        self._persona = persona
        self._config = config
        self._sentiment_tracker = config.sentiment_tracker or (
            SentimentTracker(config.utility_ai) if tracked else None
        )
        self._metaprompt_runner = config.metaprompt_runner or (
            MetapromptExecutor() if persona.meta_prompts else None
        )
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
        memory = self.working_memory
        default_mood = persona.mood_adaptation.default_mood if persona.mood_adaptation else None
        moods = {mood.value for mood in GMIMood}
        stored_mood = await memory.get(MOOD_KEY)
        mood = next((m for m in (stored_mood, default_mood) if m in moods), GMIMood.NEUTRAL)
        self.mood = GMIMood(mood)
        self.pad = pad_for_mood(self.mood)
        self.user_context = initial_user_context(persona, await memory.get(USER_CONTEXT_KEY))
        self.task_context = initial_task_context(persona, await memory.get(TASK_CONTEXT_KEY))
        await memory.set(MOOD_KEY, self.mood.value)
        await memory.set(USER_CONTEXT_KEY, self.user_context)
        await memory.set(TASK_CONTEXT_KEY, self.task_context)
        for imprint in persona.initial_memory_imprints or []:
            await memory.set(imprint.key, imprint.value)
        self._trace(ReasoningEntryType.LIFECYCLE, "GMI initialized", {"persona_id": persona.id})
        self.state = GMIPrimeState.READY

    def _forget_turns(self, turns: list[DroppedTurn]) -> None:
        ids = [turn.turn_id for turn in turns]
        self.trace.forget_turns(ids)
        self.events.forget_turns(ids)
        self._dropped_turns.extend(ids)  # the sentiment history is scrubbed asynchronously

    async def _scrub_dropped_turns(self) -> None:
        """Scrub what the sentiment tracker keeps about the turns a replace or clear dropped."""
        ids, self._dropped_turns = self._dropped_turns, []
        if ids and self._sentiment_tracker is not None:
            await self._sentiment_tracker.forget_turns(self, ids)

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
        if self._metaprompt_runner is not None:
            await self._metaprompt_runner.aclose()
        await self.working_memory.close()
        self._trace(ReasoningEntryType.LIFECYCLE, "GMI shut down")
        self.state = GMIPrimeState.SHUTDOWN

    async def abort_turn(self, reason: GMIError | None = None) -> None:
        """Stop the running turn (its model call aborted); it ends with ``reason`` (ABORTED).

        The GMI stays READY for the next turn; a tool round the turn had started answers its
        unfinished calls. Does nothing when no turn runs.
        """
        running = self._running
        if running is None or running._task.done():
            return
        self._abort_reason = reason or GMIError("the turn was aborted", GMIErrorCode.ABORTED)
        running._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(running._task)
        if self.state is not GMIPrimeState.SHUTTING_DOWN:
            self._abort_reason = None

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

    def pending_tool_calls(self) -> list[ToolCall]:
        """The calls of the history's last tool round that no tool result answers yet.

        The round is the last assistant message that requested tools, when nothing but its own
        tool results follows it; otherwise no call is pending.
        """
        answered: set[str] = set()
        for message in reversed(self.history.messages()):
            if message.role is Role.TOOL and message.tool_result is not None:
                answered.add(message.tool_result.tool_call_id)
                continue
            if message.role is Role.ASSISTANT:
                return [call for call in message.tool_calls if call.id not in answered]
            return []
        return []

    async def handle_tool_results(
        self, results: Sequence[ToolResult], *, user_id: str = "default_user"
    ) -> GMITurnStream:
        """Continue a paused tool round with the host's ``results`` and run the next step.

        The results enter the history (no TOOL_RESULT chunks), each answering a pending call
        (`pending_tool_calls()`); each pending call the host left out gets an error result
        ``EXTERNAL_TOOL_NOT_RUN`` after them, so the history answers every call of the round.
        The step runs on the hop that served the turn it continues. Raises
        ``VALIDATION_ERROR`` before any work when ``results`` is empty, names a call that is
        not pending, or answers a call twice.
        """
        if not results:
            raise GMIError("no tool results were given", GMIErrorCode.VALIDATION_ERROR)
        self._ensure_ready()
        pending = self.pending_tool_calls()
        pending_ids = {call.id for call in pending}
        given = [result.tool_call_id for result in results]
        unknown = [call_id for call_id in given if call_id not in pending_ids]
        if unknown:
            raise GMIError(
                f"no pending tool call has the id {', '.join(map(repr, unknown))}; pending: "
                f"{', '.join(map(repr, sorted(pending_ids))) or 'none'}",
                GMIErrorCode.VALIDATION_ERROR,
                {"unknown_tool_call_ids": unknown},
            )
        if len(set(given)) != len(given):
            raise GMIError(
                "a tool call was answered twice", GMIErrorCode.VALIDATION_ERROR, {"ids": given}
            )
        left_out = [
            tool_error_result(
                call,
                GMIErrorCode.EXTERNAL_TOOL_NOT_RUN,
                f"The host did not run tool '{call.name}'.",
            )
            for call in pending
            if call.id not in given
        ]
        turn_input = GMITurnInput(
            interaction_id=f"turn-{uuid.uuid4()}",
            user_id=user_id,
            content=None,
            type=GMIInteractionType.TOOL_RESPONSE,
            metadata={"is_tool_continuation": True, "tool_results": [*results, *left_out]},
        )
        return self.process_turn_stream(turn_input)

    async def handle_tool_result(
        self,
        tool_call_id: str,
        tool_name: str,
        outcome: ExternalToolOutcome | Mapping[str, Any],
        *,
        user_id: str = "default_user",
    ) -> GMITurnStream:
        """`handle_tool_results()` with one call's outcome (``{"type": "success", ...}``)."""
        kind = outcome.get("type")
        if kind == "success":
            result = ToolResult(tool_call_id, tool_name, outcome.get("result"))
        elif kind == "error":
            error = dict(outcome.get("error") or {})
            result = ToolResult(tool_call_id, tool_name, error, True, error)
        else:
            raise GMIError(
                f"outcome.type must be 'success' or 'error', got {kind!r}",
                GMIErrorCode.VALIDATION_ERROR,
            )
        return await self.handle_tool_results([result], user_id=user_id)

    # -- history ----------------------------------------------------------------------------

    async def replace_history(self, messages: Sequence[Message]) -> None:
        """Make ``messages`` the whole history; drop what was recorded about turns it lacks.

        The dropped turns' trace entries lose their details, their sentiment trends their
        context and their events their evidence preview (spec: Conversation history).
        """
        self.history.replace_history(messages)
        await self._scrub_dropped_turns()

    async def clear_history(self) -> None:
        """Empty the history; drop what was recorded about its turns."""
        self.history.clear_history()
        await self._scrub_dropped_turns()

    def hydrate_conversation_history(self, messages: Sequence[Message]) -> None:
        """Replace the history as the runtime does to resume a stored turn (drops nothing)."""
        self.history.hydrate_conversation_history(messages)

    async def get_working_memory_snapshot(self) -> dict[str, Any]:
        """A deep copy of everything the working memory holds."""
        return await self.working_memory.snapshot()

    # -- mood and metaprompts ---------------------------------------------------------------

    async def set_mood(self, mood: GMIMood) -> None:
        """Set the GMI's mood (and the PAD state it stands for); keep it in working memory."""
        self.mood = GMIMood(mood)
        self.pad = pad_for_mood(self.mood)
        await self.working_memory.set(MOOD_KEY, self.mood.value)

    async def wait_for_metaprompts(self) -> None:
        """Wait for the metaprompts the last turns started (they run in the background)."""
        if self._metaprompt_runner is not None:
            await self._metaprompt_runner.wait_idle()

    # -- persona state ----------------------------------------------------------------------

    def set_personality_trait(self, trait: str, value: float) -> float | None:
        """Set one HEXACO trait on this GMI's copy of the persona; returns the previous value.

        The change reaches no prompt: the personality section renders the authored traits
        (spec: The personality section). The persona object the GMI was given is not changed.
        """
        if trait not in HEXACO_TRAITS:
            raise GMIError(
                f"unknown personality trait {trait!r}; the traits are {', '.join(HEXACO_TRAITS)}",
                GMIErrorCode.VALIDATION_ERROR,
            )
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or not 0.0 <= value <= 1.0
        ):
            raise GMIError(
                f"personality trait {trait} must be a number from 0 to 1, got {value!r}",
                GMIErrorCode.VALIDATION_ERROR,
            )
        persona = self.persona
        traits = dict(persona.personality_traits or {})
        previous = traits.get(trait)
        traits[trait] = float(value)
        self._persona = persona.model_copy(update={"personality_traits": traits}, deep=True)
        self._trace(
            ReasoningEntryType.STATE_CHANGE,
            f"personality trait {trait} set to {float(value)}",
            {"trait": trait, "previous": previous, "value": float(value)},
        )
        return float(previous) if isinstance(previous, int | float) else None

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
