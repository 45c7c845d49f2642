"""One GMI turn: the runner that produces its chunks (spec: What a turn does, Output stream).

See `agentos.gmi.gmi` for the turn's contract, `agentos.gmi.turn_phases` for what a user turn
does before its first model call and after its last, and `agentos.gmi.turn_stream` for the
stream a caller reads.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import Message, ToolCall, ToolResult
from agentos.core.tool_results import stopped_tool_result
from agentos.core.usage import ModelUsage
from agentos.gmi.chunks import (
    GMIOutput,
    GMIOutputChunk,
    GMIOutputChunkType,
    StepFinishedPayload,
    ToolResultPayload,
)
from agentos.gmi.config import BeforeModelCall, ModelCallInfo, StepInfo
from agentos.gmi.contexts import TASK_CONTEXT_KEY, USER_CONTEXT_KEY, apply_user_context_override
from agentos.gmi.history import DEFAULT_MAX_MESSAGES
from agentos.gmi.model_step import step_finished_payload, stream_model_step
from agentos.gmi.options import forwarded_options, to_completion_options
from agentos.gmi.state import GMIPrimeState
from agentos.gmi.system_prompts import metadata_value, turn_system_prompts
from agentos.gmi.trace import ReasoningEntryType
from agentos.gmi.turn_input import GMITurnInput
from agentos.gmi.turn_phases import TurnContext, after_turn, before_first_call
from agentos.gmi.turn_stream import GMITurnStream
from agentos.llm.gateway import GatewayTurn, Hop
from agentos.llm.model import (
    CacheDiagnosticsRequest,
    CompletionOptions,
    ModelRequest,
    ToolDefinition,
    place_schema_prompt,
)
from agentos.llm.resolve import prefixed_provider
from agentos.tools.context import ToolExecutionContext
from agentos.tools.orchestrator import skipped_by_hook, tool_error_result

if TYPE_CHECKING:
    from agentos.gmi.gmi import GMI

__all__ = ["GMITurnStream", "TurnRunner"]

FAIL_CLOSED = "fail_closed"
"""``metadata["execution_policy"]["tool_failure_mode"]`` that ends a turn on a failed tool."""


class TurnRunner:
    """The state of one running turn."""

    def __init__(self, gmi: GMI, turn_input: GMITurnInput, stream: GMITurnStream) -> None:
        self.gmi = gmi
        self.input = turn_input
        self.stream = stream
        self.turn_id = turn_input.interaction_id or f"turn-{uuid.uuid4()}"
        self.persona = gmi.persona
        self.config = gmi._config
        self.options: dict[str, Any] = dict(turn_input.metadata.get("options") or {})
        self.is_continuation = bool(turn_input.metadata.get("is_tool_continuation"))
        self.turn_messages: list[Message] = []
        self.step_usages: list[ModelUsage] = []
        self.billed: list[ModelUsage] = []
        self.tool_calls: list[ToolCall] = []
        self.last_text: str | None = None
        self.last_message_id: str | None = None
        """The provider's id for the last step's response (cache diagnostics compare with it)."""
        self.unannounced: list[ToolResult] = []
        """Results a stopped round recorded without their TOOL_RESULT chunk yet."""
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

    async def emit(self, type: GMIOutputChunkType, content: Any, **kwargs: Any) -> None:
        """Hand a chunk of this turn to its consumer."""
        await self.stream._emit(self.chunk(type, content, **kwargs))

    def usage(self) -> ModelUsage:
        """The turn's usage so far: completed steps once each, plus billed failures."""
        return ModelUsage.sum([*self.step_usages, *self.billed])

    async def run(self) -> GMIOutput:
        """Run the turn's steps and return its output (errors become an ERROR chunk)."""
        gmi = self.gmi
        gmi._trace(
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
            await after_turn(gmi, self.input, self.turn_id, self.last_text)
        except asyncio.CancelledError:
            reason = gmi._abort_reason
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
        gmi._trace(
            ReasoningEntryType.INTERACTION_END, f"turn {self.turn_id} ended", None, self.turn_id
        )
        return GMIOutput(
            is_final=True,
            response_text=self.last_text,
            tool_calls=list(self.tool_calls),
            usage=self.usage(),
            rag_sources=list(gmi._last_rag_sources),
        )

    async def _fail(self, error: GMIError) -> GMIOutput:
        for result in self.unannounced:
            await self._announce(result)
        self.unannounced.clear()
        self.gmi._trace(
            ReasoningEntryType.ERROR, error.message, {"code": str(error.code)}, self.turn_id
        )
        await self.emit(GMIOutputChunkType.ERROR, error.message, error_details=error.to_dict())
        return GMIOutput(
            is_final=True,
            response_text=None,
            tool_calls=list(self.tool_calls),
            usage=self.usage(),
            error={"code": str(error.code), "message": error.message, "details": error.details},
        )

    async def _apply_contexts(self) -> None:
        gmi = self.gmi
        user = apply_user_context_override(gmi.user_context, self.input.user_context_override)
        user["user_id"] = self.input.user_id
        gmi.user_context = user
        if self.input.task_context_override:
            gmi.task_context = {**gmi.task_context, **self.input.task_context_override}
        await gmi.working_memory.set(USER_CONTEXT_KEY, gmi.user_context)
        await gmi.working_memory.set(TASK_CONTEXT_KEY, gmi.task_context)

    def _record_input(self) -> None:
        history = self.gmi.history
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
        results = self.input.metadata.get("tool_results")
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

        found = await before_first_call(self.gmi, self.input, self.turn_id, announce)
        self.gmi._last_rag_sources = list(found.rag_sources)
        return found

    def _earlier_history(self) -> list[Message]:
        override = metadata_value(self.input.metadata, "conversation_history_for_prompt")
        if isinstance(override, list) and override:
            return list(override)
        current = {id(m) for m in self.turn_messages}
        return [m for m in self.gmi.history.messages() if id(m) not in current]

    def _begin(self) -> GatewayTurn:
        gateway = self.gmi._gateway
        assert gateway is not None
        model = self.options.get("preferred_model_id") or self.options.get("preferredModelId")
        model = model or self.persona.default_model_id
        # Spec: a model whose "provider:" prefix names a provider runs there, on its own
        # credentials (DESIGN §5.20), whatever the persona's provider.
        provider = prefixed_provider(model) or self.persona.default_provider_id
        hint = next(
            (m.text for m in reversed(self.gmi.history.messages()) if m.role.value == "user"), ""
        )

        def on_fallback(error: BaseException, provider_id: str) -> None:
            self.gmi._trace(
                ReasoningEntryType.WARNING,
                f"falling back to {provider_id}: {error}",
                {"provider_id": provider_id},
                self.turn_id,
            )
            hook = self.config.on_fallback
            if hook is not None:
                try:
                    hook(error, provider_id)
                except Exception as exc:
                    self._hook_failed("on_fallback", exc)

        def on_hop_failure(provider_id: str, model_id: str, error: BaseException) -> None:
            self.gmi._trace(
                ReasoningEntryType.WARNING,
                f"hop {provider_id}:{model_id} could not start: {error}",
                {"provider_id": provider_id, "model_id": model_id},
                self.turn_id,
            )

        if self.config.gateway is None:  # a single model: its own provider and model
            provider, model = None, None
        return gateway.begin_turn(
            provider=provider,
            model=model,
            task_hint=hint,
            on_fallback=on_fallback,
            on_hop_failure=on_hop_failure,
        )

    async def _loop(self, found: TurnContext) -> None:
        # Spec (Forward within a turn): a continuation through handle_tool_results() stays on
        # the hop that served the turn it continues; a new user turn starts at the primary.
        continued = self.gmi._gateway_turn if self.is_continuation else None
        gateway_turn = continued or self._begin()
        self.gmi._gateway_turn = gateway_turn
        self.gmi.provider_manager.bind(gateway_turn)
        system_prompts = turn_system_prompts(  # prepared once per user turn
            self.persona, self.input.metadata, self.gmi.user_context, self.config.persona_traits
        )
        context = ToolExecutionContext(
            gmi_id=self.gmi.gmi_id,
            persona_id=self.persona.id,
            user_id=self.input.user_id,
            user_context=dict(self.gmi.user_context),
            session_id=self.input.session_id,
            correlation_id=self.turn_id,
            session_data=self.gmi.session_data,
        )
        tools = self.gmi._orchestrator.list_tools(context)
        schema = metadata_value(self.options, "response_schema")
        if isinstance(schema, dict):
            tools = []  # a schema answer is asked for without tools (spec: Completion options)
        options = to_completion_options(
            forwarded_options(self.persona, self.options, has_tools=bool(tools))
        )
        if isinstance(schema, dict):
            name = metadata_value(self.options, "schema_name")
            options = dataclasses.replace(
                options,
                response_schema=schema,
                schema_name=name if isinstance(name, str) else "response",
            )
        end_user = metadata_value(self.input.metadata, "end_user_id")
        if isinstance(end_user, str) and end_user:
            # The end user's id is the GMI's own to send (spec: Completion options), and only
            # for a session opened with one.
            options = dataclasses.replace(options, user_id=end_user)
        diagnostics = _cache_diagnostics(self.options)
        previous_step_id: str | None = None
        for step_index in range(self.config.max_tool_loop_iterations):
            earlier = self._earlier_history()
            current = list(self.turn_messages)
            if diagnostics is not None:
                # Spec (Cache Diagnostics): the first step compares against the message the
                # turn names, each later step against the previous step's response.
                request = (
                    diagnostics if step_index == 0 else CacheDiagnosticsRequest(previous_step_id)
                )
                options = dataclasses.replace(options, cache_diagnostics=request)
            # Retrieval and memory context go with the turn's first model call only (step 6).
            retrieved = found.retrieved_context if step_index == 0 else None

            def build(
                hop: Hop,
                earlier: list[Message] = earlier,
                current: list[Message] = current,
                step_index: int = step_index,
                retrieved: str | None = retrieved,
                options: CompletionOptions = options,
            ) -> ModelRequest:
                built = self.gmi._prompt_engine.build(
                    provider=hop.provider_id,
                    model=hop.model_id,
                    system_prompts=system_prompts,
                    retrieved_context=retrieved,
                    history=earlier,
                    current_turn=current,
                    tools=tools,
                )
                messages = built.messages
                # Spec (Completion options): a hop whose payload carries no schema gets it as a
                # system message, put there before before_model_call runs so the hook sees it
                # and can remove it; the adapter then adds no copy of its own.
                messages, options = place_schema_prompt(hop.model, messages, options)
                hook = self.config.before_model_call
                if hook is not None:
                    messages = self._call_hook(hook, hop, step_index, messages, tools)
                return ModelRequest(messages, tools, options)

            calls = await self._step(gateway_turn, build, step_index)
            previous_step_id = self.last_message_id
            if not calls:
                return
            await self._run_tools(calls, context)

    def _call_hook(
        self,
        hook: BeforeModelCall,
        hop: Hop,
        step_index: int,
        messages: list[Message],
        tools: Sequence[ToolDefinition] = (),
    ) -> list[Message]:
        info = ModelCallInfo(
            self.turn_id,
            step_index,
            hop.index,
            hop.provider_id,
            hop.model_id,
            list(messages),
            self.persona.system_prompt_text(),
            list(tools),
        )
        try:
            replaced = hook(info)
        except Exception as exc:
            self.gmi._trace(
                ReasoningEntryType.WARNING, f"before_model_call failed: {exc}", None, self.turn_id
            )
            return messages
        if replaced is None:
            return messages
        if not replaced:
            self.gmi._trace(
                ReasoningEntryType.WARNING,
                "before_model_call returned no messages; the built prompt is sent",
                None,
                self.turn_id,
            )
            return messages
        return list(replaced)

    async def _step(
        self, gateway_turn: GatewayTurn, build: Callable[[Hop], ModelRequest], step_index: int
    ) -> list[ToolCall]:
        step = await stream_model_step(gateway_turn, build, self.emit, self.billed)
        hop = gateway_turn.serving_hop
        assert hop is not None
        calls = step.tool_calls
        payload = step_finished_payload(step, hop, step_index)
        self.last_message_id = payload.provider_message_id
        message = step.message()
        replaced = await self._after_step(payload, calls)
        if replaced is not None and step.finish is not None and step.finish.schema_route == "tool":
            # Spec (Hooks): a schema answer returned as a schema tool call stays the JSON the
            # schema validated; only a text answer is replaced.
            replaced = None
        if replaced is not None:
            payload = dataclasses.replace(payload, text=replaced)
            message = dataclasses.replace(message, content=replaced)
        self.gmi.history.add(message)
        self.turn_messages.append(message)
        if step.usage is not None:
            self.step_usages.append(step.usage)
        self.tool_calls.extend(calls)
        self.last_text = payload.text
        self.gmi._trace(
            ReasoningEntryType.LLM_CALL_COMPLETE,
            f"step {step_index} finished ({payload.finish_reason})",
            {"provider_id": hop.provider_id, "model_id": hop.model_id, "hop": hop.index},
            self.turn_id,
        )
        await self.emit(
            GMIOutputChunkType.STEP_FINISHED,
            payload,
            finish_reason=payload.finish_reason,
            usage=payload.usage,
        )
        return calls

    async def _after_step(self, payload: StepFinishedPayload, calls: list[ToolCall]) -> str | None:
        hook = self.config.after_model_step
        if hook is None:
            return None
        info = StepInfo(
            self.turn_id,
            payload.step_index,
            payload.text,
            list(calls),
            payload.finish_reason,
            payload.provider_id,
            payload.model_id,
        )
        try:
            replaced = hook(info)
            if inspect.isawaitable(replaced):
                replaced = await replaced
        except Exception as exc:
            self._hook_failed("after_model_step", exc)
            return None
        return replaced if isinstance(replaced, str) else None

    async def _vetted(self, call: ToolCall) -> ToolCall | None:
        """The call ``before_tool_call`` lets run (``None``: skipped)."""
        hook = self.config.before_tool_call
        if hook is None:
            return call
        try:
            decided = hook(call)
            if inspect.isawaitable(decided):
                decided = await decided
        except Exception as exc:
            self._hook_failed("before_tool_call", exc)
            return call
        return decided if isinstance(decided, ToolCall) or decided is None else call

    def _hook_failed(self, name: str, exc: BaseException) -> None:
        self.gmi._trace(
            ReasoningEntryType.WARNING,
            f"{name} failed: {exc}; the turn goes on without it",
            {"hook": name, "error": type(exc).__name__},
            self.turn_id,
        )

    async def _run_tools(self, calls: list[ToolCall], context: ToolExecutionContext) -> None:
        """Run one tool round: every call in order, each result recorded and announced.

        A failed call under the ``fail_closed`` execution policy stops the round and the turn
        (``TOOL_ERROR``); a round that stops early records an error result for each call it did
        not finish, so the history answers every call of the round.
        """
        self.gmi.state = GMIPrimeState.AWAITING_TOOL_RESULT
        policy = metadata_value(self.input.metadata, "execution_policy") or {}
        fail_closed = metadata_value(policy, "tool_failure_mode") == FAIL_CLOSED
        done: set[str] = set()
        try:
            for call in calls:
                self.gmi._trace(
                    ReasoningEntryType.TOOL_EXECUTION_START,
                    f"running tool {call.name}",
                    {"tool_call_id": call.id, "arguments": call.arguments},
                    self.turn_id,
                )
                vetted = await self._vetted(call)
                if vetted is None:
                    result = skipped_by_hook(call)
                else:
                    result = await self.gmi._orchestrator.process_tool_call(vetted, context)
                self._record(result)
                done.add(call.id)
                await self._announce(result)
                if result.is_error and fail_closed:
                    for rest in calls:
                        if rest.id not in done:
                            skipped = tool_error_result(
                                rest,
                                GMIErrorCode.TOOL_ERROR,
                                f"Tool '{rest.name}' was not run: the round stopped after "
                                f"'{call.name}' failed (tool_failure_mode fail_closed).",
                            )
                            self._record(skipped)
                            done.add(rest.id)
                            await self._announce(skipped)
                    raise GMIError(
                        f"tool '{call.name}' failed and the execution policy is fail_closed",
                        GMIErrorCode.TOOL_ERROR,
                        {
                            "tool_call_id": call.id,
                            "tool_name": call.name,
                            **(result.error_details or {}),
                        },
                    )
        except asyncio.CancelledError:
            for call in calls:
                if call.id not in done:
                    stopped = stopped_tool_result(call)
                    self._record(stopped)
                    self.unannounced.append(stopped)
            raise
        self.gmi.state = GMIPrimeState.PROCESSING

    def _record(self, result: ToolResult) -> None:
        message = Message.tool(result)
        self.gmi.history.add(message)
        self.turn_messages.append(message)
        self.gmi._trace(
            ReasoningEntryType.TOOL_EXECUTION_RESULT,
            f"tool {result.tool_name} {'failed' if result.is_error else 'finished'}",
            {"tool_call_id": result.tool_call_id, "is_error": result.is_error},
            self.turn_id,
        )

    async def _announce(self, result: ToolResult) -> None:
        await self.emit(
            GMIOutputChunkType.TOOL_RESULT,
            ToolResultPayload(
                result.tool_call_id,
                result.tool_name,
                result.output,
                result.is_error,
                result.error_details,
            ),
        )


def _cache_diagnostics(options: dict[str, Any]) -> CacheDiagnosticsRequest | None:
    """The first step's request from ``cache_diagnostics`` (``True`` or ``{previous_message_id}``).

    Not a forwarded completion option (spec: Completion options): the GMI turns it into each
    step's own request.
    """
    value = metadata_value(options, "cache_diagnostics")
    if value is None or value is False:
        return None
    if value is True:
        return CacheDiagnosticsRequest()
    if isinstance(value, str):
        return CacheDiagnosticsRequest(value or None)
    if isinstance(value, dict):
        previous = metadata_value(value, "previous_message_id")
        return CacheDiagnosticsRequest(previous if isinstance(previous, str) else None)
    return None
