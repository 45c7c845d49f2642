"""One tool round of a GMI turn (spec: What a turn does, step 5; Output stream).

`ToolRound.run()` runs a step's tool calls in order through the tool orchestrator, each vetted
by ``before_tool_call`` first (a skipped call is answered with an error result): each result is
recorded in the history and the reasoning trace, then announced as a TOOL_RESULT chunk. A failed
call under the ``fail_closed`` execution policy stops the round and the turn (``TOOL_ERROR``); a
round that stops early records an error result for each call it did not finish, so the history
answers every call of the round. The GMI is AWAITING_TOOL_RESULT while the round runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import Message, ToolCall, ToolResult
from agentos.core.tool_results import stopped_tool_result
from agentos.gmi.chunks import GMIOutputChunkType, ToolResultPayload
from agentos.gmi.model_step import Emit
from agentos.gmi.state import GMIPrimeState, GMIState
from agentos.gmi.trace import ReasoningEntryType
from agentos.gmi.turn_hooks import TurnHooks
from agentos.tools.context import ToolExecutionContext
from agentos.tools.orchestrator import ToolOrchestrator, skipped_by_hook, tool_error_result

__all__ = ["ToolRound"]


class ToolRound:
    """The tool rounds of one turn; ``add`` records a message of the turn in its history."""

    def __init__(
        self,
        state: GMIState,
        orchestrator: ToolOrchestrator,
        hooks: TurnHooks,
        turn_id: str,
        emit: Emit,
        add: Callable[[Message], None],
    ) -> None:
        self.state = state
        self.orchestrator = orchestrator
        self.hooks = hooks
        self.turn_id = turn_id
        self.emit = emit
        self.add = add
        self.unannounced: list[ToolResult] = []
        """Results a stopped round recorded without their TOOL_RESULT chunk yet."""

    async def run(
        self, calls: list[ToolCall], context: ToolExecutionContext, *, fail_closed: bool
    ) -> None:
        """Run one round: every call in order, each result recorded and announced."""
        self.state.phase = GMIPrimeState.AWAITING_TOOL_RESULT
        done: set[str] = set()
        try:
            for call in calls:
                self.state.record(
                    ReasoningEntryType.TOOL_EXECUTION_START,
                    f"running tool {call.name}",
                    {"tool_call_id": call.id, "arguments": call.arguments},
                    self.turn_id,
                )
                vetted = await self.hooks.before_tool_call(call)
                if vetted is None:
                    result = skipped_by_hook(call)
                else:
                    result = await self.orchestrator.process_tool_call(vetted, context)
                self._record(result)
                done.add(call.id)
                await self._announce(result)
                if result.is_error and fail_closed:
                    await self._close(calls, done, call, result)
        except asyncio.CancelledError:
            for call in calls:
                if call.id not in done:
                    stopped = stopped_tool_result(call)
                    self._record(stopped)
                    self.unannounced.append(stopped)
            raise
        self.state.phase = GMIPrimeState.PROCESSING

    async def announce_stopped(self) -> None:
        """Announce the results a stopped round recorded (the turn is failing)."""
        for result in self.unannounced:
            await self._announce(result)
        self.unannounced.clear()

    async def _close(
        self, calls: list[ToolCall], done: set[str], failed: ToolCall, result: ToolResult
    ) -> None:
        """Answer the calls after ``failed`` with errors, then fail the turn (``fail_closed``)."""
        for rest in calls:
            if rest.id not in done:
                skipped = tool_error_result(
                    rest,
                    GMIErrorCode.TOOL_ERROR,
                    f"Tool '{rest.name}' was not run: the round stopped after "
                    f"'{failed.name}' failed (tool_failure_mode fail_closed).",
                )
                self._record(skipped)
                done.add(rest.id)
                await self._announce(skipped)
        details: dict[str, Any] = {"tool_call_id": failed.id, "tool_name": failed.name}
        raise GMIError(
            f"tool '{failed.name}' failed and the execution policy is fail_closed",
            GMIErrorCode.TOOL_ERROR,
            {**details, **(result.error_details or {})},
        )

    def _record(self, result: ToolResult) -> None:
        self.add(Message.tool(result))
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
