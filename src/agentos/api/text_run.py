"""`TextRun`: a `generate_text()` / `stream_text()` call on the step loop, as stream parts.

No GMI: the caller's messages go to the model, each tool call the model makes runs, its result
goes back, and the model is called again, for at most ``max_steps`` model steps
(`agentos.loop.StepLoop`, which decides how steps, hooks and tool rounds run on every path). A
tool that is unknown, gets bad arguments or raises gives the model an error result instead of
ending the run. A provider failure ends the run with `ProviderError` (code
``LLM_PROVIDER_ERROR``).

With cache diagnostics asked for (``options.cache_diagnostics``), every step sends them: the
first with the request the caller gave, each later one naming the previous step's response
(its ``provider_message_id``, or none when that step reported no id).

A call's ``approve_tool`` gate (``gate``) is asked about each call the before-tool hook lets run;
a `ToolBox` given as ``tools`` is read again before each step, so a tool added meanwhile is
offered and runs.

The loop's events become the stream's parts here, once: `TextDeltaPart`, `ToolCallPart`,
`StepFinishPart` (with its `StepResult`) and `ToolResultPart`; usage reports are not parts.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import Message
from agentos.core.usage import ModelUsage
from agentos.llm.gateway import GatewayTurn, Hop
from agentos.llm.model import CompletionOptions, closing_stream
from agentos.loop import (
    AttemptFailedEvent,
    LoopHooks,
    StepFinishedEvent,
    StepLoop,
    TextDeltaEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from agentos.tools.orchestrator import ToolGate, ToolOrchestrator
from agentos.tools.tool import Tool
from agentos.tools.toolbox import ToolBox

from .results import (
    GenerateTextResult,
    StepFinishPart,
    StepResult,
    StreamPart,
    TextDeltaPart,
    ToolCallPart,
    ToolResultPart,
)
from .structured import StructuredSpec

__all__ = ["TextRun"]


class TextRun:
    """One generation: iterate `parts()` once, then read `result()`.

    Each step runs through the turn's completion gateway, so a retryable failure before output
    moves to the next hop; billed failed attempts count in the usage.
    """

    def __init__(
        self,
        turn: GatewayTurn,
        messages: Sequence[Message],
        tools: Sequence[Tool] | ToolBox,
        options: CompletionOptions,
        max_steps: int,
        structured: StructuredSpec | None = None,
        hooks: LoopHooks | None = None,
        gate: ToolGate | None = None,
    ) -> None:
        self.history: list[Message] = list(messages)
        self._start = len(self.history)
        self.structured = structured
        # The lightweight path runs no capability checks (spec: agent() tools run as given).
        # ``gate`` is the call's approve_tool, asked after the before-tool hook let a call run.
        orchestrator = ToolOrchestrator(tools, check_capabilities=False, gate=gate)
        # A structured step is sent without tools (spec: Completion options). A box's tools are
        # listed again before each step (`OfferedTools`).
        offered = [] if structured is not None else orchestrator.list_tools()
        self.loop = StepLoop(
            turn,
            self._prompt,
            self.history.append,
            orchestrator.process_tool_call,
            options=options,
            max_steps=max_steps,
            tools=offered,
            hooks=hooks,
        )
        self.steps: list[StepResult] = []
        self.billed: list[ModelUsage] = []

    def _prompt(self, hop: Hop, index: int) -> list[Message]:
        """The legacy path sends its whole history with every step (spec; DESIGN §5.4)."""
        return list(self.history)

    async def parts(self) -> AsyncIterator[StreamPart]:
        """Run the steps, yielding the stream's parts (without the closing `FinishPart`)."""
        async with closing_stream(self.loop.events()) as events:
            async for event in events:
                if type(event) is TextDeltaEvent:
                    yield TextDeltaPart(event.text)
                elif type(event) is ToolCallEvent:
                    yield ToolCallPart(event.call)
                elif type(event) is StepFinishedEvent:
                    step = _step_result(event)
                    self.steps.append(step)
                    yield StepFinishPart(step)
                elif type(event) is ToolResultEvent:
                    self.steps[-1].tool_results.append(event.result)
                    yield ToolResultPart(event.result)
                elif type(event) is AttemptFailedEvent and event.billed is not None:
                    self.billed.append(event.billed)

    def result(self) -> GenerateTextResult:
        """The finished generation's result; a structured one's ``object`` is validated here.

        Raises `ObjectGenerationError` when a structured answer does not parse, does not match
        its schema, or was cut off by the output limit.
        """
        if not self.steps:
            raise GMIError("the generation has not run a step", GMIErrorCode.INVALID_STATE)
        last = self.steps[-1]
        parsed = (
            self.structured.parse(last.text, last.finish_reason)
            if self.structured is not None
            else None
        )
        return GenerateTextResult(
            text=last.text,
            usage=self.usage(),
            finish_reason=last.finish_reason,
            tool_calls=[call for step in self.steps for call in step.tool_calls],
            tool_results=[result for step in self.steps for result in step.tool_results],
            steps=list(self.steps),
            response_messages=self.history[self._start :],
            provider_id=last.provider_id,
            model_id=last.model_id,
            object=parsed,
        )

    def usage(self) -> ModelUsage:
        """The usage so far: finished steps, billed failed attempts, a step left early.

        A step its reader left early counts what it is charged, an estimate unless it had
        finished (DESIGN §5.19). A step that reported no usage makes the total cost unknown.
        """
        billed = list(self.billed)
        if self.loop.left_early is not None:
            billed.append(self.loop.left_early)
        return ModelUsage.sum([*(step.usage or ModelUsage() for step in self.steps), *billed])


def _step_result(event: StepFinishedEvent) -> StepResult:
    """The `StepResult` of a finished step; its tool results are added as they come."""
    return StepResult(
        index=event.step_index,
        text=event.text,
        tool_calls=event.tool_calls,
        tool_results=[],
        finish_reason=event.finish_reason,
        usage=event.usage,
        provider_id=event.hop.provider_id,
        model_id=event.hop.model_id,
        replay_blocks=event.replay_blocks,
        response_model=event.response_model,
        provider_message_id=event.provider_message_id,
        cache_diagnostics=event.cache_diagnostics,
    )
