"""One tool round: the calls of a step run concurrently, their results come in call order.

DESIGN §5.22: every call of the round starts at once (each asked of ``before_tool_call`` just
before it runs); each result is recorded (``record``) and handed on in call order, whatever
order the calls finish in. A round that stops early (its task cancelled, its reader gone)
cancels the calls still running and records, in call order, the ``SYS_ABORTED`` error result
(`stopped_tool_result`) for each call it had not handed on, one that had finished included:
a result counts once handed on (a session stores it then), so a stopped round leaves what a
killed process leaves (DESIGN §5.21). Those results are left in ``unannounced`` for the caller
to announce.

With ``fail_closed`` (the GMI's ``execution_policy.tool_failure_mode``), the first failed
result in call order stops the round: the calls after it that have not finished are cancelled
and answered with a ``TOOL_ERROR`` result, each is handed on, and `GMIError` (``TOOL_ERROR``)
is raised.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import Message, ToolCall, ToolResult
from agentos.core.tool_results import stopped_tool_result, tool_error_result

__all__ = ["ToolRound"]


class ToolRound:
    """The calls of one step, run by ``run_call`` (which vets and runs one call, never raising)."""

    def __init__(
        self,
        calls: Sequence[ToolCall],
        run_call: Callable[[ToolCall], Awaitable[ToolResult]],
        record: Callable[[Message], None],
        *,
        fail_closed: bool = False,
    ) -> None:
        self.calls = list(calls)
        self._run_call = run_call
        self._record = record
        self._fail_closed = fail_closed
        self.unannounced: list[ToolResult] = []
        """Results a stopped round recorded without handing them on."""

    async def results(self) -> AsyncIterator[ToolResult]:
        """Run the round, yielding each result (already recorded) in call order."""
        tasks = [asyncio.ensure_future(self._run_call(call)) for call in self.calls]
        handed = 0
        try:
            for call, task in zip(self.calls, tasks, strict=True):
                result = await task
                self._record(Message.tool(result))
                handed += 1
                yield result
                if result.is_error and self._fail_closed:
                    for rest in await self._close_failed(call, handed, tasks):
                        handed += 1
                        yield rest
                    raise _round_failed(call, result)
        except BaseException:
            await _cancel(tasks[handed:])
            for call in self.calls[handed:]:
                result = stopped_tool_result(call)
                self._record(Message.tool(result))
                self.unannounced.append(result)
            raise

    async def _close_failed(
        self, failed: ToolCall, handed: int, tasks: Sequence[asyncio.Future[ToolResult]]
    ) -> list[ToolResult]:
        """Record the rest of a round ``failed`` stopped: finished calls' results, else errors."""
        await _cancel(tasks[handed:])
        closed: list[ToolResult] = []
        for call, task in zip(self.calls[handed:], tasks[handed:], strict=True):
            result = _finished(task)
            if result is None:
                result = tool_error_result(
                    call,
                    GMIErrorCode.TOOL_ERROR,
                    f"Tool '{call.name}' was not run: the round stopped after "
                    f"'{failed.name}' failed (tool_failure_mode fail_closed).",
                )
            self._record(Message.tool(result))
            closed.append(result)
        return closed


def _finished(task: asyncio.Future[ToolResult]) -> ToolResult | None:
    """The task's result when it finished with one, else ``None``."""
    if task.done() and not task.cancelled() and task.exception() is None:
        return task.result()
    return None


async def _cancel(tasks: Sequence[asyncio.Future[ToolResult]]) -> None:
    """Cancel the calls still running and let them end (their own cleanup runs)."""
    running = [task for task in tasks if not task.done()]
    for task in running:
        task.cancel()
    if running:
        await asyncio.gather(*running, return_exceptions=True)


def _round_failed(call: ToolCall, result: ToolResult) -> GMIError:
    return GMIError(
        f"tool '{call.name}' failed and the execution policy is fail_closed",
        GMIErrorCode.TOOL_ERROR,
        {"tool_call_id": call.id, "tool_name": call.name, **(result.error_details or {})},
    )
