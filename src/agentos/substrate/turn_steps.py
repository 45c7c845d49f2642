"""A GMI turn's model steps and tool rounds, on the one step loop, as the spec's chunks.

`TurnSteps.run()` drives `agentos.loop.StepLoop` (which builds each attempt's request, runs the
hooks, streams and records each step and runs its tool round: DESIGN §5.22, a round's calls
concurrently, results in call order) and builds each chunk of the turn from the loop's events,
once (spec: Output stream; Billed failures count):

- `TextDeltaEvent` → TEXT_DELTA; `ToolCallEvent` → TOOL_CALL_REQUEST (the GMI runs the call
  itself: `INTERNAL_CALL_METADATA`); `UsageEvent` → USAGE_UPDATE;
- `AttemptFailedEvent` that was billed → USAGE_UPDATE marked ``attempt_failed``, with its hop;
- `StepFinishedEvent` → an LLM_CALL_COMPLETE trace entry and STEP_FINISHED (a
  `StepFinishedPayload`); when a tool round follows, the GMI is AWAITING_TOOL_RESULT and each
  call gets its TOOL_EXECUTION_START trace entry;
- `ToolResultEvent` → TOOL_RESULT; after the round's last result the GMI is PROCESSING again.

Every message the loop records enters the history (``add``); a tool result also gets its
TOOL_EXECUTION_RESULT trace entry. A round stopped early (the turn aborted) has recorded a
result for each call it did not hand on; `announce_stopped()` sends their TOOL_RESULT chunks.
A step stopped early is billed what the gateway settled for it (DESIGN §5.19).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from agentos.core.messages import Message, ToolCall, ToolResult
from agentos.core.usage import ModelUsage
from agentos.llm.gateway import GatewayTurn
from agentos.llm.model import CompletionOptions, ToolDefinition
from agentos.loop import (
    AttemptFailedEvent,
    LoopEvent,
    LoopHooks,
    PromptBuilder,
    StepFinishedEvent,
    StepLoop,
    TextDeltaEvent,
    ToolCallEvent,
    ToolResultEvent,
    ToolRunner,
    ToolsPausedEvent,
    UsageEvent,
)
from agentos.substrate.chunks import GMIOutputChunkType, StepFinishedPayload, ToolResultPayload
from agentos.substrate.state import GMIPrimeState, GMIState
from agentos.substrate.trace import ReasoningEntryType

__all__ = ["EXTERNAL_CALL_METADATA", "INTERNAL_CALL_METADATA", "Emit", "TurnSteps"]

INTERNAL_CALL_METADATA = {"execution_mode": "internal", "requires_external_tool_result": False}
"""A TOOL_CALL_REQUEST's metadata: the GMI runs these calls itself."""
EXTERNAL_CALL_METADATA = {"execution_mode": "external", "requires_external_tool_result": True}
"""A TOOL_CALL_REQUEST's metadata for a call of a tool the host runs (DESIGN §5.24)."""


class Emit(Protocol):
    """Hands one chunk of the turn to its consumer."""

    def __call__(self, type: GMIOutputChunkType, content: Any, **fields: Any) -> Awaitable[None]:
        """Emit a chunk of ``type`` with ``content`` and the chunk's other ``fields``."""
        ...


class TurnSteps:
    """The steps of one turn: what they used, the calls they made, the last step's text."""

    def __init__(
        self, state: GMIState, turn_id: str, emit: Emit, add: Callable[[Message], None]
    ) -> None:
        self.state = state
        self.turn_id = turn_id
        self.emit = emit
        self.add = add
        self.step_usages: list[ModelUsage] = []
        self.billed: list[ModelUsage] = []
        self.tool_calls: list[ToolCall] = []
        """The calls of every step of the turn, in order."""
        self.last_text: str | None = None
        self.paused: tuple[ToolCall, ...] = ()
        """The calls of tools the host runs that stopped the turn for the host (DESIGN §5.24)."""
        self.external: Callable[[str], bool] | None = None
        self.loop: StepLoop | None = None
        self._round_left = 0  # results of the running round still to come

    def usage(self) -> ModelUsage:
        """The turn's usage so far: completed steps once each, billed failures, a step cut short."""
        left_early = self.loop.left_early if self.loop is not None else None
        extra = [left_early] if left_early is not None else []
        return ModelUsage.sum([*self.step_usages, *self.billed, *extra])

    async def run(
        self,
        gateway_turn: GatewayTurn,
        prompt: PromptBuilder,
        run_tool: ToolRunner,
        *,
        options: CompletionOptions,
        tools: Sequence[ToolDefinition],
        hooks: LoopHooks,
        max_steps: int,
        fail_closed: bool,
        external: Callable[[str], bool] | None = None,
    ) -> None:
        """Run the turn's steps, emitting their chunks; raises the failure a step ends with.

        ``external`` names the tools the host runs: a round pauses on their calls (`paused`).
        """
        self.external = external
        self.loop = StepLoop(
            gateway_turn,
            prompt,
            self._record,
            run_tool,
            options=options,
            max_steps=max_steps,
            tools=tools,
            hooks=hooks,
            fail_closed=fail_closed,
            run_all_calls=True,  # the GMI runs every call the model makes (spec: step 6)
            external=external,
        )
        events = self.loop.events()
        try:
            async for event in events:
                await self._on(event)
        finally:
            await events.aclose()  # leaving early stops the loop and aborts its model call

    async def _on(self, event: LoopEvent) -> None:
        emit = self.emit
        if type(event) is TextDeltaEvent:
            await emit(GMIOutputChunkType.TEXT_DELTA, event.text)
        elif type(event) is ToolCallEvent:
            external = self.external is not None and self.external(event.call.name)
            metadata = dict(EXTERNAL_CALL_METADATA if external else INTERNAL_CALL_METADATA)
            await emit(GMIOutputChunkType.TOOL_CALL_REQUEST, [event.call], metadata=metadata)
        elif type(event) is UsageEvent:
            await emit(GMIOutputChunkType.USAGE_UPDATE, event.usage, usage=event.usage)
        elif type(event) is AttemptFailedEvent:
            if event.billed is not None:
                self.billed.append(event.billed)
                hop = event.hop
                metadata = {
                    "attempt_failed": True,
                    "hop": hop.index,
                    "provider_id": hop.provider_id,
                    "model_id": hop.model_id,
                }
                await emit(
                    GMIOutputChunkType.USAGE_UPDATE,
                    event.billed,
                    usage=event.billed,
                    metadata=metadata,
                )
        elif type(event) is StepFinishedEvent:
            await self._step_finished(event)
        elif type(event) is ToolsPausedEvent:
            self.paused = event.calls  # the turn ends here, for the host to run these
            self.state.record(
                ReasoningEntryType.TOOL_CALL_REQUESTED,
                f"paused for the host: {', '.join(call.name for call in event.calls)}",
                {"tool_call_ids": [call.id for call in event.calls]},
                self.turn_id,
            )
        elif type(event) is ToolResultEvent:
            await self._announce(event.result)
            self._round_left -= 1
            if self._round_left == 0:
                self.state.phase = GMIPrimeState.PROCESSING

    async def _step_finished(self, event: StepFinishedEvent) -> None:
        hop = event.hop
        if event.usage is not None:
            self.step_usages.append(event.usage)
        self.tool_calls.extend(event.tool_calls)
        self.last_text = event.text
        self.state.record(
            ReasoningEntryType.LLM_CALL_COMPLETE,
            f"step {event.step_index} finished ({event.finish_reason})",
            {"provider_id": hop.provider_id, "model_id": hop.model_id, "hop": hop.index},
            self.turn_id,
        )
        payload = _payload(event)
        await self.emit(
            GMIOutputChunkType.STEP_FINISHED,
            payload,
            finish_reason=payload.finish_reason,
            usage=payload.usage,
        )
        if event.will_run_tools:
            self.state.phase = GMIPrimeState.AWAITING_TOOL_RESULT
            external = self.external
            running = [c for c in event.tool_calls if external is None or not external(c.name)]
            self._round_left = len(running)
            for call in running:
                self.state.record(
                    ReasoningEntryType.TOOL_EXECUTION_START,
                    f"running tool {call.name}",
                    {"tool_call_id": call.id, "arguments": call.arguments},
                    self.turn_id,
                )

    async def announce_stopped(self) -> None:
        """Announce the results a stopped round recorded (the turn is failing)."""
        if self.loop is None:
            return
        for result in self.loop.unannounced:
            await self._announce(result)
        self.loop.unannounced.clear()

    def _record(self, message: Message) -> None:
        self.add(message)
        result = message.tool_result
        if result is not None:
            self.state.record(
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


def _payload(event: StepFinishedEvent) -> StepFinishedPayload:
    """The STEP_FINISHED payload of a completed step, its text as ``after_model_step`` left it."""
    hop, finish = event.hop, event.finish
    return StepFinishedPayload(
        step_index=event.step_index,
        text=event.text,
        finish_reason=event.finish_reason,
        provider_id=hop.provider_id,
        model_id=hop.model_id,
        hop=hop.index,
        usage=event.usage,
        response_model=event.response_model,
        service_tier=finish.service_tier if finish is not None else None,
        provider_message_id=event.provider_message_id,
        cache_diagnostics=event.cache_diagnostics,
        thinking_blocks=list(event.replay_blocks) or None,
    )
