"""One session turn on a GMI, as an agent's ``send()`` / ``stream()`` reads it (spec: Sessions).

`GmiTurnRun` is a `Run` (`agentos.api.stream_result`): it takes the session's lease and reads
the store (`SessionHistoryBuffer.start_turn`: one turn at a time per session across handles and
processes, DESIGN.md §5.21), replaces the GMI's history with the store's (no partial message is
ever sent), writes the turn's input, each model step the turn finishes and each tool result to
the store as they come (a step's tool calls and thinking blocks with it; a result as soon as it
is recorded, so a process killed mid-round leaves exactly the results it had, which the next
opening completes as a stopped round would), and folds the GMI's chunks into the stream
parts of `stream_text()`. The send options reach the GMI as one typed `TurnOptions`
(`send_turn_options()`), and the GMI's error reaches the caller as the `GMIError` it raised.
The turn's messages land as one block when it ends. A turn that fails
keeps the steps it finished, its last message marked partial; one that fails before any step
finished keeps nothing. A consumer that stops reading stops the turn and aborts its model
call; what it finished stays, marked partial, and the turn's usage counts the stopped step with
an estimate (DESIGN §5.19).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import Message, ToolCall, ToolResult
from agentos.core.usage import ModelUsage
from agentos.llm.budget import BudgetLike
from agentos.llm.model import FinishReason
from agentos.storage.session_history import SessionHistoryBuffer
from agentos.substrate.chunks import (
    GMIOutput,
    GMIOutputChunk,
    GMIOutputChunkType,
    StepFinishedPayload,
    ToolResultPayload,
)
from agentos.substrate.gmi import GMI
from agentos.substrate.turn_input import GMITurnInput
from agentos.substrate.turn_options import NO_TURN_OPTIONS, TurnOptions
from agentos.substrate.turn_stream import GMITurnStream
from agentos.tools.orchestrator import CALL_TOOL_GATE, ToolGate

from .abort import AbortSignal, abort_reason, is_aborted, wait_aborted
from .call_checks import cache_diagnostics_request
from .gateway_factory import CALL_BUDGET
from .results import (
    GenerateTextResult,
    StepFinishPart,
    StepResult,
    StreamPart,
    TextDeltaPart,
    ToolCallPart,
    ToolResultPart,
)
from .structured import ObjectGenerationError, StructuredSpec
from .turn_record import TurnRecord, labelled

__all__ = ["GmiTurnRun", "TurnFinished", "send_turn_options"]

TurnFinished = Callable[[GMIOutput | None, BaseException | None, ModelUsage], Awaitable[None]]
"""Told when a turn ends: its output (or the error that ended it) and what it used, billed
failed attempts and the steps of a failed turn included."""


def send_turn_options(options: Mapping[str, Any], end_user_id: str | None = None) -> TurnOptions:
    """The typed options of a turn from its checked send options (`agentos.api.call_checks`).

    ``options`` holds the forwarded send keys (``temperature``, ``max_tokens``, ``top_p``,
    ``tool_choice``, ``request_timeout``, ``cache``, ``cache_diagnostics``) and the structured
    spec's ``response_schema`` / ``schema_name``; a blank ``end_user_id`` is anonymous and sends
    none.
    """
    if not options and not end_user_id:
        return NO_TURN_OPTIONS
    return TurnOptions(
        temperature=options.get("temperature"),
        max_tokens=options.get("max_tokens"),
        top_p=options.get("top_p"),
        tool_choice=options.get("tool_choice"),
        request_timeout=options.get("request_timeout"),
        cache=options.get("cache"),
        cache_diagnostics=cache_diagnostics_request(options.get("cache_diagnostics")),
        response_schema=options.get("response_schema"),
        schema_name=options.get("schema_name"),
        end_user_id=end_user_id if end_user_id and end_user_id.strip() else None,
    )


@dataclass(slots=True)
class _Running:
    """A started turn: its stream, its record, its abort watcher, the running step's calls."""

    stream: GMITurnStream
    record: TurnRecord
    watcher: asyncio.Task[None] | None
    calls: list[ToolCall] = field(default_factory=list)
    finished: bool = False


class GmiTurnRun:
    """One turn of a session's GMI: iterate `parts()` once, then read `result()`.

    ``gmi`` gives the GMI when the turn starts (a session builds its GMI on first use);
    ``options`` are the checked send options the GMI gets as `send_turn_options()` types them.
    """

    def __init__(
        self,
        gmi: Callable[[], Awaitable[GMI]],
        history: SessionHistoryBuffer | None,
        user_message: Message,
        *,
        user_id: str,
        session_id: str | None,
        options: dict[str, Any],
        end_user_id: str | None = None,
        after: TurnFinished | None = None,
        structured: StructuredSpec | None = None,
        abort_signal: AbortSignal | asyncio.Event | None = None,
        context: Callable[[str], Awaitable[str | None]] | None = None,
        budget: BudgetLike | None = None,
        block_label: str | None = None,
        tool_gate: ToolGate | None = None,
    ) -> None:
        self._gmi_for_turn = gmi
        self._history = history
        self._input = user_message
        self._user_id = user_id
        self._session_id = session_id
        self._turn_options = send_turn_options(options, end_user_id)
        self._after = after
        self._structured = structured
        self._abort_signal = abort_signal
        self._context = context
        self._budget = budget
        self._block_label = block_label
        self._tool_gate = tool_gate
        self._object: Any = None
        self._steps: list[StepResult] = []
        self._added: list[Message] = []
        self._usage = ModelUsage.zero()
        self._output: GMIOutput | None = None
        self._error: GMIError | None = None

    @staticmethod
    async def _watch(gmi: GMI, signal: AbortSignal | asyncio.Event) -> None:
        """Stop the turn when the signal aborts: as `close()` stops it, the session stays open."""
        await wait_aborted(signal)
        await gmi.abort_turn(GMIError("the turn was aborted by its signal", GMIErrorCode.ABORTED))

    def usage(self) -> ModelUsage:
        """The turn's usage so far: finished steps and billed failed attempts."""
        return self._usage

    def result(self) -> GenerateTextResult:
        """The finished turn as a `GenerateTextResult` (``response_messages``: what it added)."""
        if self._output is None or not self._steps:
            raise GMIError("the turn has not finished a step", GMIErrorCode.INVALID_STATE)
        last = self._steps[-1]
        return GenerateTextResult(
            text=last.text,
            usage=self._usage,
            finish_reason=last.finish_reason,
            tool_calls=[call for step in self._steps for call in step.tool_calls],
            tool_results=[result for step in self._steps for result in step.tool_results],
            steps=list(self._steps),
            response_messages=list(self._added),
            provider_id=last.provider_id,
            model_id=last.model_id,
            object=self._object,
        )

    async def parts(self) -> AsyncIterator[StreamPart]:
        """Run the turn and yield its parts (see the module doc)."""
        turn = await self._begin()
        try:
            async for chunk in turn.stream:
                if chunk.type is GMIOutputChunkType.TEXT_DELTA:  # the common chunk first
                    yield TextDeltaPart(str(chunk.content))
                else:
                    for part in await self._fold(chunk, turn):
                        yield part
            await self._settle(turn)
            turn.finished = True
        finally:
            await self._end(turn)

    async def run(self) -> GenerateTextResult:
        """Run the turn to its end and return its result: `parts()` without the parts."""
        turn = await self._begin()
        try:
            async for chunk in turn.stream:
                if chunk.type is not GMIOutputChunkType.TEXT_DELTA:
                    await self._fold(chunk, turn)
            await self._settle(turn)
            turn.finished = True
        finally:
            await self._end(turn)
        return self.result()

    async def _begin(self) -> _Running:
        """The GMI built, the lease taken, the store read, the GMI's turn started."""
        signal = self._abort_signal
        if signal is not None and is_aborted(signal):
            raise abort_reason(signal)  # a send whose signal has already aborted starts no turn
        gmi = await self._gmi_for_turn()  # built (or rebuilt after a failed build) now
        turn_input = await self._turn_input()
        record = TurnRecord(self._added, self._block_label)
        await self._start_store(gmi, record)
        stream = await self._start(gmi, turn_input, record)
        watcher = asyncio.create_task(self._watch(gmi, signal)) if signal is not None else None
        return _Running(stream, record, watcher)

    async def _fold(self, chunk: GMIOutputChunk, turn: _Running) -> tuple[StreamPart, ...]:
        """What a chunk other than a text delta adds to the turn, and its stream parts."""
        kind = chunk.type
        if kind is GMIOutputChunkType.TOOL_CALL_REQUEST:
            turn.calls.extend(chunk.content)
            return tuple(ToolCallPart(call) for call in chunk.content)
        if kind is GMIOutputChunkType.STEP_FINISHED:
            await turn.record.flush()  # the step is in the GMI's history: store it now
            calls, turn.calls = turn.calls, []
            return (self._step_finished(chunk.content, calls),)
        if kind is GMIOutputChunkType.TOOL_RESULT:
            await turn.record.flush()  # so is the result
            return (self._tool_result(chunk.content),)
        self._note(chunk)
        return ()

    async def _turn_input(self) -> GMITurnInput:
        """The GMI's input: the user's content, the typed options, the memory provider's text."""
        options = self._turn_options
        if self._context is not None:
            provided = await self._context(self._input.text)
            if provided:
                options = dataclasses.replace(options, memory_provider_context=provided)
        content = self._input.content
        return GMITurnInput(
            interaction_id=f"turn-{os.urandom(16).hex()}",  # unique as a uuid4, cheaper
            user_id=self._user_id,
            content=content if isinstance(content, str) else list(content),
            session_id=self._session_id,
            options=options,
        )

    async def _start_store(self, gmi: GMI, record: TurnRecord) -> None:
        """Takes the session's lease and loads the store's history into the GMI.

        The input goes to the store with the turn's first finished step (spec: a turn that
        fails before any step finishes keeps nothing), so a turn costs one write less.
        """
        if self._history is None:
            return
        writer = await self._history.start_turn(name=self._session_id)
        try:
            await gmi.replace_history(self._history.prompt_messages())
        except BaseException:
            await writer.discard()  # frees the session's lease
            raise
        stored_input = self._input
        if self._block_label is not None:
            stored_input = labelled(stored_input, self._block_label)
        record.start(writer, stored_input)

    async def _start(self, gmi: GMI, turn_input: GMITurnInput, record: TurnRecord) -> GMITurnStream:
        """The GMI's turn started under the call's spend budget and tool gate, into ``record``.

        The gate is set even when the call has none, so a turn nested in another call's tool
        never inherits that call's gate.
        """
        token = CALL_BUDGET.set(self._budget) if self._budget is not None else None
        gate_token = CALL_TOOL_GATE.set(self._tool_gate)
        try:
            # Its task copies the budget and gate context.
            return gmi.process_turn_stream(turn_input, record=record)
        except BaseException:
            if record.writer is not None:
                await record.writer.discard()  # nothing ran: the input goes, the lease is freed
            raise
        finally:
            CALL_TOOL_GATE.reset(gate_token)
            if token is not None:
                CALL_BUDGET.reset(token)

    def _step_finished(self, payload: StepFinishedPayload, calls: list[ToolCall]) -> StreamPart:
        step = _step_result(payload, calls)
        if step.usage is not None:
            self._usage = self._usage + step.usage
        self._steps.append(step)
        return StepFinishPart(step)

    def _tool_result(self, payload: ToolResultPayload) -> StreamPart:
        result = _tool_result(payload)
        if self._steps:
            self._steps[-1].tool_results.append(result)
        return ToolResultPart(result)

    def _note(self, chunk: GMIOutputChunk) -> None:
        """A chunk with no stream part: a failed attempt's usage counts; the error is kept."""
        if chunk.type is GMIOutputChunkType.USAGE_UPDATE:
            if chunk.metadata.get("attempt_failed") and chunk.usage is not None:
                self._usage = self._usage + chunk.usage
        elif chunk.type is GMIOutputChunkType.ERROR:
            self._error = _turn_error(chunk)

    async def _settle(self, turn: _Running) -> None:
        """After the last chunk: the output, the last messages, the error or the object."""
        record = turn.record
        self._output = await turn.stream.output()
        self._usage = self._output.usage
        await record.flush()
        signal = self._abort_signal
        if self._error is not None:
            if signal is not None and is_aborted(signal):
                raise abort_reason(signal) from self._error
            raise self._error
        if self._structured is not None and self._steps:
            last = self._steps[-1]
            try:
                self._object = self._structured.parse(last.text, last.finish_reason)
            except ObjectGenerationError:
                if record.writer is not None:
                    await record.writer.discard()  # the turn leaves nothing in the history
                    record.writer = None
                raise

    async def _end(self, turn: _Running) -> None:
        """Closes a turn that did not finish, settles the store, tells ``after``."""
        if turn.watcher is not None:
            turn.watcher.cancel()
        stream, record, finished = turn.stream, turn.record, turn.finished
        if not finished:
            with contextlib.suppress(Exception):
                await stream.aclose()
            if self._output is None:
                # Stopped by its consumer: the turn's own figure counts the step it stopped,
                # estimated (DESIGN §5.19), and steps whose chunks were not read yet.
                self._usage = stream.usage()
            with contextlib.suppress(Exception):
                await record.flush()
        writer = record.writer
        if writer is not None:
            if finished:
                await writer.commit()
            else:
                await writer.fail(has_steps=bool(self._steps))
        if self._after is not None:
            await self._after(self._output if finished else None, self._error, self._usage)


def _turn_error(chunk: GMIOutputChunk) -> GMIError:
    """The GMI's error as the caller gets it: the `GMIError` the turn ended with, as it is."""
    if chunk.error is not None:
        return chunk.error
    return GMIError(str(chunk.content), GMIErrorCode.GMI_PROCESSING_ERROR)


def _tool_result(payload: ToolResultPayload) -> ToolResult:
    return ToolResult(
        payload.tool_call_id, payload.name, payload.result, payload.is_error, payload.error_details
    )


def _step_result(payload: StepFinishedPayload, calls: list[ToolCall]) -> StepResult:
    return StepResult(
        index=payload.step_index,
        text=payload.text,
        tool_calls=list(calls),
        tool_results=[],
        finish_reason=cast("FinishReason", payload.finish_reason),
        usage=payload.usage,
        provider_id=payload.provider_id,
        model_id=payload.model_id,
        replay_blocks=list(payload.thinking_blocks or []),
        response_model=payload.response_model,
        provider_message_id=payload.provider_message_id,
        cache_diagnostics=payload.cache_diagnostics,
    )
