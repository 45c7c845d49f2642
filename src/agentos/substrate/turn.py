"""One GMI turn: the runner that produces its chunks (spec: What a turn does, Output stream).

See `substrate.gmi` for the turn's contract, `substrate.turn_phases` for what a user turn
does before its first model call and after its last, and `agentos.substrate.turn_stream` for the
stream a caller reads. A turn receives the GMI's state (`GMIState`), its services (`GMIServices`)
and the `TurnCarry` it shares with the GMI's other turns; `substrate.turn_request` builds what
it asks the model, `substrate.turn_hooks` the config's hooks, and `substrate.turn_steps` runs
its model steps and tool rounds on the one step loop (`agentos.loop.StepLoop`) as its chunks.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import Message, ToolCall, ToolResult
from agentos.core.usage import ModelUsage
from agentos.llm.gateway import GatewayTurn, Hop
from agentos.substrate.chunks import (
    GMIOutput,
    GMIOutputChunk,
    GMIOutputChunkType,
)
from agentos.substrate.contexts import (
    TASK_CONTEXT_KEY,
    USER_CONTEXT_KEY,
    apply_user_context_override,
)
from agentos.substrate.history import DEFAULT_MAX_MESSAGES
from agentos.substrate.learning_seam import PreparedTurn
from agentos.substrate.services import GMIServices
from agentos.substrate.state import GMIState
from agentos.substrate.system_prompts import turn_system_prompts
from agentos.substrate.trace import ReasoningEntryType
from agentos.substrate.turn_hooks import TurnHooks
from agentos.substrate.turn_input import GMITurnInput
from agentos.substrate.turn_learning import (
    apply_learning,
    continues_carried,
    prepare_learning,
    turn_model_ids,
    turn_preparation,
)
from agentos.substrate.turn_phases import TurnContext, after_turn, before_first_call
from agentos.substrate.turn_request import (
    begin_gateway_turn,
    cache_diagnostics,
    turn_completion_options,
)
from agentos.substrate.turn_steps import TurnSteps
from agentos.substrate.turn_stream import GMITurnStream
from agentos.tools.context import ToolExecutionContext

__all__ = ["MessageSink", "TurnCarry", "TurnRunner"]

MessageSink = Callable[[Message], None]
"""Told of each message a turn adds to the GMI's history after its input, as it adds it (each
model step's assistant message, each tool result), so a host keeps the turn's messages without
reading them back out of the history (`GMI.process_turn_stream(record=...)`)."""

FAIL_CLOSED = "fail_closed"
"""The `TurnOptions.tool_failure_mode` that ends a turn on a failed tool."""


@dataclass(slots=True)
class TurnCarry:
    """What a GMI and its turns share across turns.

    ``gateway_turn`` is the gateway turn of the last user turn, which its continuations go on;
    ``rag_sources`` what that turn retrieved (a continuation's output reports them too);
    ``abort_reason`` why the GMI cancelled the running turn (it ends with that error);
    ``learning`` the last user turn's learning preparation, which its continuations reuse, and
    ``learning_namespace`` the namespace it was prepared under; ``session_id`` the last user
    turn's session, which its continuations' tool calls run for.
    """

    gateway_turn: GatewayTurn | None = None
    rag_sources: list[Any] = field(default_factory=list)
    abort_reason: GMIError | None = None
    learning: PreparedTurn | None = None
    learning_namespace: str = ""
    session_id: str | None = None


class TurnRunner:
    """The state of one running turn."""

    def __init__(
        self,
        state: GMIState,
        services: GMIServices,
        carry: TurnCarry,
        turn_input: GMITurnInput,
        stream: GMITurnStream,
        record: MessageSink | None = None,
    ) -> None:
        self.state = state
        self.services = services
        self.carry = carry
        self.input = turn_input
        self.stream = stream
        self.turn_id = turn_input.interaction_id or f"turn-{uuid.uuid4()}"
        self.persona = state.persona
        self.config = services.config
        self.hooks = TurnHooks(state, services.config, self.turn_id)
        self.options = turn_input.options
        self.is_continuation = turn_input.tool_results is not None
        if not self.is_continuation:
            carry.session_id = turn_input.session_id
        self.turn_messages: list[Message] = []
        self._record = record
        self.steps = TurnSteps(state, self.turn_id, self.emit, self._add)
        stream.usage = self.usage  # a consumer that stops the turn reads what it used

    def chunk(
        self,
        type: GMIOutputChunkType,
        content: Any,
        *,
        is_final: bool = False,
        finish_reason: str | None = None,
        usage: ModelUsage | None = None,
        error_details: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> GMIOutputChunk:
        """A chunk of this turn, stamped with its interaction id and the clock's time."""
        return GMIOutputChunk(
            type,
            content,
            self.turn_id,
            self.config.clock.timestamp(),
            is_final,
            finish_reason,
            usage,
            error_details,
            metadata or {},
        )

    def emit(self, type: GMIOutputChunkType, content: Any, **kwargs: Any) -> Awaitable[None]:
        """Hand a chunk of this turn to its consumer (await the result)."""
        # Not a coroutine of its own: the stream's is returned, one frame less per chunk.
        return self.stream.emit(self.chunk(type, content, **kwargs))

    def usage(self) -> ModelUsage:
        """The turn's usage so far: completed steps once each, plus billed failures."""
        return self.steps.usage()

    async def run(self) -> GMIOutput:
        """Run the turn's steps and return its output (errors become an ERROR chunk)."""
        state = self.state
        state.record(
            ReasoningEntryType.INTERACTION_START,
            f"turn {self.turn_id} started",
            {"input_preview": str(self.input.content or "")[:100]},
            self.turn_id,
        )
        try:
            await self._apply_contexts()
            self._record_input()
            found = await self._prepare()
            await self._loop(found)
            await after_turn(state, self.services, self.input, self.turn_id, self.steps.last_text)
        except asyncio.CancelledError:
            reason = self.carry.abort_reason
            task = asyncio.current_task()
            if reason is None or task is None:
                raise
            task.uncancel()
            return await self._fail(reason)
        except GMIError as exc:
            return await self._fail(exc)
        except Exception as exc:
            return await self._fail(
                GMIError(f"the turn failed: {exc}", GMIErrorCode.GMI_PROCESSING_ERROR)
            )
        state.record(
            ReasoningEntryType.INTERACTION_END, f"turn {self.turn_id} ended", None, self.turn_id
        )
        paused = self.steps.paused
        return GMIOutput(
            # Paused for the host (DESIGN §5.24): not final, and only the host's calls, as an
            # IGMI leaves out of such an output the calls it ran itself (spec: Output stream).
            is_final=not paused,
            response_text=self.steps.last_text,
            tool_calls=list(paused) if paused else list(self.steps.tool_calls),
            usage=self.usage(),
            rag_sources=list(self.carry.rag_sources),
        )

    async def _fail(self, error: GMIError) -> GMIOutput:
        await self.steps.announce_stopped()
        self.state.record(
            ReasoningEntryType.ERROR, error.message, {"code": str(error.code)}, self.turn_id
        )
        chunk = self.chunk(GMIOutputChunkType.ERROR, error.message, error_details=error.to_dict())
        await self.stream.emit(dataclasses.replace(chunk, error=error))  # the error object itself
        return GMIOutput(
            is_final=True,
            response_text=None,
            tool_calls=list(self.steps.tool_calls),
            usage=self.usage(),
            error={"code": str(error.code), "message": error.message, "details": error.details},
        )

    async def _apply_contexts(self) -> None:
        state = self.state
        user = apply_user_context_override(state.user_context, self.input.user_context_override)
        user["user_id"] = self.input.user_id
        state.user_context = user
        if self.input.task_context_override:
            state.task_context = {**state.task_context, **self.input.task_context_override}
        await state.working_memory.set(USER_CONTEXT_KEY, state.user_context)
        await state.working_memory.set(TASK_CONTEXT_KEY, state.task_context)

    def _record_input(self) -> None:
        history = self.state.history
        persona = self.persona
        context = persona.conversation_context_config
        memory_context = (
            persona.memory_config.conversation_context if persona.memory_config else None
        )
        history.max_messages = (
            (context.max_messages if context is not None else None)
            or (memory_context.max_messages if memory_context is not None else None)
            or DEFAULT_MAX_MESSAGES
        )
        results = self.input.tool_results
        if results:
            added = [Message.tool(result) for result in results]
            history.record_input(added)
        elif self.input.content is not None:
            added = [Message.user(self.input.content)]
            history.record_input(added, turn_id=self.turn_id)
        else:
            added = []
        self.turn_messages.extend(added)

    async def _prepare(self) -> TurnContext:
        """Steps 1-3 on a user turn; a continuation keeps its user turn's RAG sources."""
        if self.is_continuation:
            return TurnContext()

        async def announce(sources: list[Any]) -> None:
            await self.emit(
                GMIOutputChunkType.RAG_SOURCES_AVAILABLE, sources, metadata={"count": len(sources)}
            )

        found = await before_first_call(
            self.state, self.services, self.input, self.turn_id, announce
        )
        self.carry.rag_sources = list(found.rag_sources)
        return found

    def _earlier_history(self) -> list[Message]:
        override = self.input.options.conversation_history_for_prompt
        if override:
            return list(override)
        current = {id(m) for m in self.turn_messages}
        return [m for m in self.state.history.messages() if id(m) not in current]

    def _gateway_turn(self) -> GatewayTurn:
        # Spec (Forward within a turn): a continuation through handle_tool_results() stays on
        # the hop that served the turn it continues; a new user turn starts at the primary.
        continued = self.carry.gateway_turn if self.is_continuation else None
        gateway_turn = continued or begin_gateway_turn(
            self.state, self.services, self.hooks, self.options
        )
        self.carry.gateway_turn = gateway_turn
        self.services.provider_manager.bind(gateway_turn)
        return gateway_turn

    async def _learning(self) -> PreparedTurn | None:
        """The turn's learning preparation (`substrate.turn_learning`); ``None``: no learning.

        A continuation reuses the preparation of the user turn it continues (spec: "A tool
        continuation belongs to the turn it continues"), unless its typed options name another
        namespace: "one that runs under another organization than its turn (a resume whose host
        passes another organizationId) is a turn of another namespace", so it prepares again
        (``continuation=True``) under its own (`continues_carried`).
        """
        session = self.config.learning
        if session is None:
            return None
        carried = self.carry.learning
        if carried is not None and continues_carried(
            self.is_continuation, self.options, self.carry.learning_namespace
        ):
            apply_learning(self.state, carried)
            return carried
        model_ids = turn_model_ids(self.persona, self.options, self.config.model)
        preparation = turn_preparation(
            self.input, self.turn_id, model_ids, continuation=self.is_continuation
        )
        prepared = await prepare_learning(
            self.state, session, preparation, self.services.authored_traits, self.config.clock
        )
        self.carry.learning = prepared
        self.carry.learning_namespace = preparation.namespace
        return prepared

    async def _loop(self, found: TurnContext) -> None:
        gateway_turn = self._gateway_turn()
        state = self.state
        learning = await self._learning()
        system_prompts = turn_system_prompts(  # prepared once per user turn
            self.persona,
            self.options,
            state.user_context,
            # With learning, the learner session's section takes the place of persona_traits'.
            self.config.persona_traits if learning is None else None,
        )
        if learning is not None:
            system_prompts.extend(learning.system_prompts)  # priority 2: sorted after the base
        context = self._tool_context()
        options, tools = turn_completion_options(
            self.persona,
            self.options,
            self.services.tool_orchestrator.list_tools(context),
        )
        fail_closed = self.options.tool_failure_mode == FAIL_CLOSED
        diagnostics = cache_diagnostics(self.options)
        if diagnostics is not None:
            # Spec (Cache Diagnostics): the first step compares against the message the turn
            # names; the loop has each later step name the previous step's response.
            options = dataclasses.replace(options, cache_diagnostics=diagnostics)

        def prompt(hop: Hop, step_index: int) -> list[Message]:
            return self.services.prompt_engine.build(
                provider=hop.provider_id,
                model=hop.model_id,
                system_prompts=system_prompts,
                # Retrieval and memory context go with the turn's first model call only.
                retrieved_context=found.retrieved_context if step_index == 0 else None,
                history=self._earlier_history(),
                current_turn=list(self.turn_messages),
                tools=tools,
            ).messages

        async def run_tool(call: ToolCall) -> ToolResult:
            return await self.services.tool_orchestrator.process_tool_call(call, context)

        await self.steps.run(
            gateway_turn,
            prompt,
            run_tool,
            options=options,
            tools=tools,
            hooks=self.hooks.loop_hooks(),
            max_steps=self.options.max_steps or self.config.max_tool_loop_iterations,
            fail_closed=fail_closed,
            external=self.services.tool_orchestrator.is_external,
        )

    def _tool_context(self) -> ToolExecutionContext:
        """Who the turn's tool calls run for (the tools that ask receive it)."""
        state = self.state
        return ToolExecutionContext(
            gmi_id=state.gmi_id,
            persona_id=self.persona.id,
            user_id=self.input.user_id,
            user_context=dict(state.user_context),
            # A continuation's calls run for the session of the turn it continues.
            session_id=self.input.session_id or self.carry.session_id,
            correlation_id=self.turn_id,
            session_data=state.session_data,
        )

    def _add(self, message: Message) -> None:
        """Record a message of this turn in the history."""
        self.state.history.add(message)
        self.turn_messages.append(message)
        if self._record is not None:
            self._record(message)
