"""The `GMI` and its turn loop (spec: What a turn does, Output stream; DESIGN.md §5.12).

`GMI.process_turn_stream()` returns a `GMITurnStream`: iterate it for the `GMIOutputChunk`s;
``await stream.output()`` gives the turn's `GMIOutput`, which the FINAL_RESPONSE_MARKER chunk
(always the last) also carries as its content.

A turn applies its context overrides and records its input. A user turn then scores sentiment,
retrieves (RAG_SOURCES_AVAILABLE) and gathers memory context (`substrate.turn_phases`), asks a
learner session for its personality section (`substrate.turn_learning`) and builds its system
prompts once (`substrate.system_prompts`). Model steps run through a completion gateway (a GMI
configured with a single `ChatModel` wraps it in a gateway with no fallback): within a step each
provider chunk yields its TEXT_DELTA / TOOL_CALL_REQUEST, a usage report its USAGE_UPDATE;
STEP_FINISHED follows the step's last chunk; the step's tool calls then run concurrently
through the tool orchestrator, one TOOL_RESULT each in call order (DESIGN §5.22; the one step
loop, `agentos.loop`, runs them), and the next step follows, for at most
``max_tool_loop_iterations`` model steps. A turn that ends without error then syncs memory,
ingests a turn summary and checks the metaprompts. A failure yields ERROR with its code kept (a
step that fails emits no STEP_FINISHED), and FINAL_RESPONSE_MARKER ends every turn.

The GMI's state is one value (`GMIState`, ``gmi.mind``) that its turns and collaborators receive
with its services (`GMIServices`); the GMI's attributes (``mood``, ``history``, ...) read it.
After a failed turn the GMI is READY again, not ERRORED as the reference leaves it: a session's
next turn must run (spec: Sessions). After `shutdown()` it stays SHUTDOWN.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import Message, ToolCall, ToolResult
from agentos.llm.gateway import GatewayProviderManager
from agentos.persona.definition import PersonaDefinition
from agentos.persona.metaprompt_presets import with_metaprompt_presets
from agentos.substrate.chunks import GMIOutputChunkType
from agentos.substrate.config import GMIConfig
from agentos.substrate.events import GMIEventLog
from agentos.substrate.history import ConversationHistoryManager, DroppedTurn
from agentos.substrate.learning_seam import LearnerSessionLike
from agentos.substrate.mood import GMIMood, PADState
from agentos.substrate.services import GMIServices, resolve_services
from agentos.substrate.state import GMIPrimeState, GMIState
from agentos.substrate.tool_continuation import (
    ExternalToolOutcome,
    continuation_input,
    outcome_result,
    pending_tool_calls,
)
from agentos.substrate.trace import DEFAULT_MAX_TRACE_ENTRIES, ReasoningEntryType, ReasoningTrace
from agentos.substrate.trait_value import checked_trait_value
from agentos.substrate.turn import MessageSink, TurnCarry, TurnRunner
from agentos.substrate.turn_input import GMITurnInput
from agentos.substrate.turn_options import TurnOptions
from agentos.substrate.turn_phases import scrub_dropped_turns
from agentos.substrate.turn_stream import GMITurnStream
from agentos.substrate.working_memory import InMemoryWorkingMemory

__all__ = ["GMI"]


class GMI:
    """A generalised mind instance: one persona, its history and its turn loop."""

    def __init__(self, gmi_id: str | None = None) -> None:
        gmi_id = gmi_id or f"gmi-{uuid.uuid4()}"
        self._mind = GMIState(gmi_id, ReasoningTrace(gmi_id))
        self._config = GMIConfig()
        self._services: GMIServices | None = None
        self._carry = TurnCarry()
        self._running: GMITurnStream | None = None
        self._shutdown_task: asyncio.Task[None] | None = None
        self.provider_manager = GatewayProviderManager()
        """Answers metaprompt calls from the hop that served the current turn."""

    # -- the state, read through the GMI ----------------------------------------------------

    @property
    def mind(self) -> GMIState:
        """The GMI's state as a value (`GMIState`), as its turns and collaborators receive it."""
        return self._mind

    @property
    def gmi_id(self) -> str:
        """The GMI's id."""
        return self._mind.gmi_id

    @property
    def state(self) -> GMIPrimeState:
        """Where the GMI is in its life."""
        return self._mind.phase

    @state.setter
    def state(self, value: GMIPrimeState) -> None:
        self._mind.phase = value

    @property
    def mood(self) -> GMIMood:
        """The current mood (`set_mood()` also sets the PAD state and working memory)."""
        return self._mind.mood

    @mood.setter
    def mood(self, value: GMIMood) -> None:
        self._mind.mood = value

    @property
    def pad(self) -> PADState:
        """The PAD state the mood stands for."""
        return self._mind.pad

    @pad.setter
    def pad(self, value: PADState) -> None:
        self._mind.pad = value

    @property
    def user_context(self) -> dict[str, Any]:
        """The user context (reference: UserContext)."""
        return self._mind.user_context

    @user_context.setter
    def user_context(self, value: dict[str, Any]) -> None:
        self._mind.user_context = value

    @property
    def task_context(self) -> dict[str, Any]:
        """The task context (reference: TaskContext)."""
        return self._mind.task_context

    @task_context.setter
    def task_context(self, value: dict[str, Any]) -> None:
        self._mind.task_context = value

    @property
    def session_data(self) -> dict[str, Any]:
        """The session's own data, handed to each tool call (not a copy)."""
        return self._mind.session_data

    @property
    def history(self) -> ConversationHistoryManager:
        """The conversation history."""
        return self._mind.history

    @property
    def trace(self) -> ReasoningTrace:
        """The reasoning trace."""
        return self._mind.trace

    @property
    def events(self) -> GMIEventLog:
        """The events raised about the user."""
        return self._mind.events

    @property
    def working_memory(self) -> InMemoryWorkingMemory:
        """The session's key-value working memory."""
        return self._mind.working_memory

    @property
    def persona(self) -> PersonaDefinition:
        """The active persona (``NOT_INITIALIZED`` before `initialize()`)."""
        return self._mind.persona

    # -- lifecycle --------------------------------------------------------------------------

    async def initialize(self, persona: PersonaDefinition, config: GMIConfig) -> None:
        """Set the persona and the services; the GMI becomes READY."""
        if self.state not in (GMIPrimeState.IDLE, GMIPrimeState.READY):
            raise GMIError(
                f"cannot initialize a GMI in state {self.state.value}", GMIErrorCode.INVALID_STATE
            )
        config.check()
        self.state = GMIPrimeState.INITIALIZING
        try:
            persona = with_metaprompt_presets(persona)
        except ValueError as exc:
            self.state = GMIPrimeState.IDLE
            raise GMIError(str(exc), GMIErrorCode.GMI_INITIALIZATION_ERROR) from exc
        mind = self._mind
        mind.persona_copy = persona
        mind.clock = config.clock
        self._config = config
        self._services = resolve_services(persona, config, self.provider_manager)
        mind.working_memory = config.working_memory or InMemoryWorkingMemory()
        trace_config = persona.reasoning_trace_config
        limit = trace_config.max_entries if trace_config is not None else None
        max_entries = limit or config.reasoning_trace_max_entries or DEFAULT_MAX_TRACE_ENTRIES
        mind.trace = ReasoningTrace(mind.gmi_id, persona.id, max_entries)
        mind.history.on_turns_dropped(self._forget_turns)
        await mind.restore(persona)
        mind.record(ReasoningEntryType.LIFECYCLE, "GMI initialized", {"persona_id": persona.id})
        self.state = GMIPrimeState.READY

    def _forget_turns(self, turns: list[DroppedTurn]) -> None:
        ids = [turn.turn_id for turn in turns]
        self.trace.forget_turns(ids)
        self.events.forget_turns(ids)
        self._mind.dropped_turns.extend(ids)  # the sentiment history is scrubbed asynchronously

    async def shutdown(self) -> None:
        """Abort a running turn, wait for it (bounded), close memory; overlapping calls share it."""
        if self._shutdown_task is None:
            self._shutdown_task = asyncio.create_task(self._shutdown())
        await asyncio.shield(self._shutdown_task)

    async def _shutdown(self) -> None:
        self.state = GMIPrimeState.SHUTTING_DOWN
        running = self._running
        if running is not None and not running.task.done():
            self._carry.abort_reason = GMIError(
                "the GMI was shut down during the turn", GMIErrorCode.ABORTED
            )
            running.task.cancel()
            timer = asyncio.ensure_future(self._config.clock.sleep(self._config.shutdown_timeout))
            await asyncio.wait({running.task, timer}, return_when=asyncio.FIRST_COMPLETED)
            timer.cancel()  # bounded on the GMI's own clock; the turn itself is never awaited
        runner = self._services.metaprompt_runner if self._services is not None else None
        if runner is not None:
            await runner.aclose()
        await self._mind.close_memories(self._config.memory_bridge)
        self._mind.record(ReasoningEntryType.LIFECYCLE, "GMI shut down")
        self.state = GMIPrimeState.SHUTDOWN

    async def abort_turn(self, reason: GMIError | None = None) -> None:
        """Stop the running turn (its model call aborted); it ends with ``reason`` (ABORTED).

        The GMI stays READY for the next turn; a tool round the turn had started answers its
        unfinished calls. Does nothing when no turn runs.
        """
        running = self._running
        if running is None or running.task.done():
            return
        self._carry.abort_reason = reason or GMIError("the turn was aborted", GMIErrorCode.ABORTED)
        running.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(running.task)
        if self.state is not GMIPrimeState.SHUTTING_DOWN:
            self._carry.abort_reason = None

    # -- turns ------------------------------------------------------------------------------

    def process_turn_stream(
        self, turn_input: GMITurnInput, *, record: MessageSink | None = None
    ) -> GMITurnStream:
        """Start a turn; iterate the returned stream for its chunks.

        ``record`` is told of each message the turn adds after its input, as it adds it.
        """
        self._ensure_ready()
        stream = GMITurnStream(lambda stream: self._run_turn(turn_input, stream, record))
        self._running = stream
        return stream

    def _ensure_ready(self) -> GMIServices:
        if self._mind.persona_copy is None or self._services is None:
            raise GMIError("the GMI is not initialized", GMIErrorCode.NOT_INITIALIZED)
        if self.state is not GMIPrimeState.READY:
            raise GMIError(
                f"the GMI cannot start a turn in state {self.state.value}",
                GMIErrorCode.INVALID_STATE,
            )
        return self._services

    def pending_tool_calls(self) -> list[ToolCall]:
        """The calls of the history's last tool round that no tool result answers yet.

        The round is the last assistant message that requested tools, when nothing but its own
        tool results follows it; otherwise no call is pending.
        """
        return pending_tool_calls(self.history.messages())

    async def handle_tool_results(
        self,
        results: Sequence[ToolResult],
        *,
        user_id: str = "default_user",
        options: TurnOptions | None = None,
    ) -> GMITurnStream:
        """Continue a paused tool round with the host's ``results`` and run the next step.

        The results enter the history (no TOOL_RESULT chunks), each answering a pending call;
        each pending call left out gets an error result ``EXTERNAL_TOOL_NOT_RUN`` after them.
        The step runs on the hop, and with the learning preparation, of the turn it continues
        (prepared again under ``options.learning_namespace`` when that names another one).
        Raises ``VALIDATION_ERROR`` before any work on an empty, unknown or repeated result.
        """
        if not results:
            raise GMIError("no tool results were given", GMIErrorCode.VALIDATION_ERROR)
        self._ensure_ready()
        pending = self.pending_tool_calls()
        return self.process_turn_stream(continuation_input(pending, results, user_id, options))

    async def handle_tool_result(
        self,
        tool_call_id: str,
        tool_name: str,
        outcome: ExternalToolOutcome | Mapping[str, Any],
        *,
        user_id: str = "default_user",
    ) -> GMITurnStream:
        """`handle_tool_results()` with one call's outcome (``{"type": "success", ...}``)."""
        result = outcome_result(tool_call_id, tool_name, outcome)
        return await self.handle_tool_results([result], user_id=user_id)

    async def _run_turn(
        self, turn_input: GMITurnInput, stream: GMITurnStream, record: MessageSink | None
    ) -> None:
        services = self._services
        assert services is not None  # process_turn_stream() checked
        turn = TurnRunner(self._mind, services, self._carry, turn_input, stream, record)
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

    async def _scrub_dropped_turns(self) -> None:
        tracker = self._services.sentiment_tracker if self._services is not None else None
        await scrub_dropped_turns(self._mind, tracker)

    def hydrate_conversation_history(self, messages: Sequence[Message]) -> None:
        """Replace the history as the runtime does to resume a stored turn (drops nothing)."""
        self.history.hydrate_conversation_history(messages)

    def get_learner_session(self) -> LearnerSessionLike | None:
        """The learner session ``GMIConfig.learning`` gave; its host ends it, never the GMI."""
        return self._config.learning

    async def get_working_memory_snapshot(self) -> dict[str, Any]:
        """A deep copy of everything the working memory holds."""
        return await self.working_memory.snapshot()

    # -- mood and metaprompts ---------------------------------------------------------------

    async def set_mood(self, mood: GMIMood) -> None:
        """Set the GMI's mood (and the PAD state it stands for); keep it in working memory."""
        await self._mind.set_mood(mood)

    async def wait_for_metaprompts(self) -> None:
        """Wait for the metaprompts the last turns started (they run in the background)."""
        runner = self._services.metaprompt_runner if self._services is not None else None
        if runner is not None:
            await runner.wait_idle()

    # -- persona state ----------------------------------------------------------------------

    def set_personality_trait(self, trait: str, value: float) -> float | None:
        """Set one HEXACO trait on this GMI's copy of the persona; returns the previous value.

        The change reaches no prompt: the personality section renders the authored traits
        (spec: The personality section). The persona object the GMI was given is not changed.
        """
        value = checked_trait_value(trait, value)
        persona = self.persona
        traits = dict(persona.personality_traits or {})
        previous = traits.get(trait)
        traits[trait] = value
        self._mind.persona_copy = persona.model_copy(
            update={"personality_traits": traits}, deep=True
        )
        self._mind.record(
            ReasoningEntryType.STATE_CHANGE,
            f"personality trait {trait} set to {value}",
            {"trait": trait, "previous": previous, "value": value},
        )
        return float(previous) if isinstance(previous, int | float) else None
